"""Starting workspaces a scenario references instead of inlining (``workspace.from``): a
directory, a tar archive, or a git revision, read into ``WorkspaceEntry`` members (files with
their modes, symlinks, FIFOs, empty directories), within size limits and with excludes; and a
content digest (``sha256``) that pins what was referenced.

Paths in ``workspace.from`` are relative to the scenario file's directory. Archives and git
revisions are cached per process (keyed by the archive's size and mtime, or the resolved
commit), so the parts of a split import share one read. Problems the user can fix (a missing
directory, an unknown revision, a file over the limit) raise ``WorkspaceSourceError``.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import stat
import subprocess
import tarfile
from dataclasses import dataclass
from functools import lru_cache

from harness.errors import HarnessError
from harness.model.scenario import WorkspaceEntry

SOURCE_KINDS: tuple[str, ...] = ("dir", "archive", "repo")
DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_TOTAL_BYTES = 512 * 1024 * 1024
DEFAULT_MAX_FILES = 100_000
DEFAULT_FILE_MODE = 0o644
DEFAULT_DIR_MODE = 0o755
GIT_TIMEOUT_S = 120.0
GIT_MODE_EXEC = "100755"
GIT_MODE_SYMLINK = "120000"
GIT_MODE_SUBMODULE = "160000"
ARCHIVE_CACHE_SIZE = 16


class WorkspaceSourceError(HarnessError):
    """A referenced starting workspace cannot be read. ``limit`` names the limit a workspace
    went over (``file``, ``total``, ``count``), else ''."""

    def __init__(self, message: str, limit: str = "") -> None:
        super().__init__(message)
        self.limit = limit


@dataclass(frozen=True)
class WorkspaceLimits:
    """Size limits and excludes (glob patterns matched against each path component and against
    the whole relative path)."""

    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES
    max_files: int = DEFAULT_MAX_FILES
    excludes: tuple[str, ...] = ()


@dataclass(frozen=True)
class SourceRead:
    """The members read (sorted by path), what was left out, and the git commit a revision
    resolved to (for ``repo`` sources)."""

    entries: tuple[WorkspaceEntry, ...]
    notes: tuple[str, ...] = ()
    commit: str | None = None


def excluded(rel: str, excludes: tuple[str, ...]) -> bool:
    parts = rel.split("/")
    return any(fnmatch.fnmatchcase(rel, pat) or any(fnmatch.fnmatchcase(p, pat) for p in parts)
               for pat in excludes)


def entries_digest(entries: tuple[WorkspaceEntry, ...]) -> str:
    """A SHA-256 over paths, kinds, modes, link targets and bytes (order-independent)."""
    h = hashlib.sha256()
    for e in sorted(entries, key=lambda x: x.path):
        default = DEFAULT_DIR_MODE if e.kind == "dir" else DEFAULT_FILE_MODE
        mode = default if e.mode is None or e.kind == "symlink" else e.mode & 0o7777
        h.update(f"{e.path}\0{e.kind}\0{mode:o}\0{e.target or ''}\0{len(e.data)}\0".encode("utf-8", "surrogateescape"))
        h.update(e.data)
    return h.hexdigest()


class _Budget:
    def __init__(self, limits: WorkspaceLimits, source: str) -> None:
        self.limits = limits
        self.source = source
        self.total = 0
        self.count = 0

    def add(self, rel: str, size: int) -> None:
        lim = self.limits
        if size > lim.max_file_bytes:
            raise WorkspaceSourceError(
                f"{self.source}: {rel} is {size} bytes, over the per-file limit of {lim.max_file_bytes} bytes", "file")
        self.total += size
        self.count += 1
        if self.total > lim.max_total_bytes:
            raise WorkspaceSourceError(
                f"{self.source}: the workspace is over the total limit of {lim.max_total_bytes} bytes "
                f"(reached at {rel})", "total")
        if self.count > lim.max_files:
            raise WorkspaceSourceError(f"{self.source}: the workspace has more than {lim.max_files} files", "count")


def read_directory(directory: str, limits: WorkspaceLimits = WorkspaceLimits()) -> SourceRead:
    """Every file, symlink, FIFO and empty directory under ``directory`` (symlinks are not
    followed). A symlink whose absolute target lies inside ``directory`` is made relative."""
    root = os.path.abspath(directory)
    if not os.path.isdir(root):
        raise WorkspaceSourceError(f"{directory}: not a directory")
    budget = _Budget(limits, directory)
    entries: list[WorkspaceEntry] = []
    notes: list[str] = []
    for cur, dirs, files in os.walk(root):
        rel_dir = os.path.relpath(cur, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        kept_dirs = [d for d in sorted(dirs) if not excluded(rel_dir + d, limits.excludes)]
        dirs[:] = [d for d in kept_dirs if not os.path.islink(os.path.join(cur, d))]
        names = [n for n in sorted(files) if not excluded(rel_dir + n, limits.excludes)]
        names += [d for d in kept_dirs if os.path.islink(os.path.join(cur, d))]
        if rel_dir and not names and not dirs:
            mode = stat.S_IMODE(os.lstat(cur).st_mode)
            entries.append(WorkspaceEntry(rel_dir.rstrip("/"), "dir", mode=None if mode == DEFAULT_DIR_MODE else mode))
        for name in names:
            full = os.path.join(cur, name)
            rel = rel_dir + name
            try:
                st = os.lstat(full)
                if stat.S_ISLNK(st.st_mode):
                    target = os.readlink(full)
                    if os.path.isabs(target) and (target == root or target.startswith(root + os.sep)):
                        target = os.path.relpath(target, os.path.dirname(full))
                    elif os.path.isabs(target):
                        notes.append(f"symlink {rel} points outside the workspace ({target})")
                    entries.append(WorkspaceEntry(rel, "symlink", target=target))
                elif stat.S_ISFIFO(st.st_mode):
                    entries.append(WorkspaceEntry(rel, "fifo"))
                elif stat.S_ISREG(st.st_mode):
                    budget.add(rel, st.st_size)
                    with open(full, "rb") as fh:
                        data = fh.read(limits.max_file_bytes + 1)
                    if len(data) > limits.max_file_bytes:
                        raise WorkspaceSourceError(f"{directory}: {rel} grew while it was read; try again")
                    mode = stat.S_IMODE(st.st_mode)
                    entries.append(WorkspaceEntry(rel, "file", data, mode=None if mode == DEFAULT_FILE_MODE else mode))
                else:
                    notes.append(f"{rel} is a special file (socket or device) and is left out")
            except OSError as exc:
                raise WorkspaceSourceError(f"{directory}: cannot read {rel}: {exc.strerror or exc}") from None
    return SourceRead(tuple(sorted(entries, key=lambda e: e.path)), tuple(notes))


def _git(repo: str, args: list[str], stdin: bytes | None = None) -> bytes:
    try:
        proc = subprocess.run(["git", "-C", repo, *args], input=stdin, capture_output=True, timeout=GIT_TIMEOUT_S,
                              check=False)
    except FileNotFoundError:
        raise WorkspaceSourceError("a git workspace source needs git, which is not installed") from None
    except subprocess.TimeoutExpired:
        raise WorkspaceSourceError(f"git {args[0]} in {repo} did not finish in {GIT_TIMEOUT_S:g} s") from None
    if proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise WorkspaceSourceError(f"git {args[0]} failed in {repo}: {msg[0] if msg else proc.returncode}")
    return proc.stdout


def resolve_commit(repo: str, rev: str) -> str:
    """The full commit id ``rev`` names in ``repo``."""
    if not os.path.isdir(repo):
        raise WorkspaceSourceError(f"{repo}: not a directory")
    out = _git(repo, ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"])
    return out.decode().strip()


def read_git(repo: str, rev: str, limits: WorkspaceLimits = WorkspaceLimits()) -> SourceRead:
    """The tree of ``rev`` in the repository ``repo`` (files with their exec bit, symlinks;
    submodules are left out with a note)."""
    commit = resolve_commit(repo, rev)
    return _read_commit(os.path.abspath(repo), commit, limits)


@lru_cache(maxsize=ARCHIVE_CACHE_SIZE)
def _read_commit(repo: str, commit: str, limits: WorkspaceLimits) -> SourceRead:
    listing = _git(repo, ["ls-tree", "-r", "-l", "-z", "--full-tree", commit])
    budget = _Budget(limits, f"git revision {commit[:12]}")
    wanted: list[tuple[str, str, str]] = []
    notes: list[str] = []
    for item in listing.split(b"\0"):
        if not item:
            continue
        meta, _, raw_path = item.partition(b"\t")
        mode, _kind, sha, size = meta.decode().split()
        rel = raw_path.decode("utf-8", "surrogateescape")
        if excluded(rel, limits.excludes):
            continue
        if mode == GIT_MODE_SUBMODULE:
            notes.append(f"submodule {rel} is left out")
            continue
        if mode != GIT_MODE_SYMLINK:
            budget.add(rel, int(size))
        wanted.append((mode, sha, rel))
    blobs = _cat_blobs(repo, [sha for _, sha, _ in wanted])
    entries: list[WorkspaceEntry] = []
    for mode, sha, rel in wanted:
        data = blobs[sha]
        if mode == GIT_MODE_SYMLINK:
            entries.append(WorkspaceEntry(rel, "symlink", target=data.decode("utf-8", "surrogateescape")))
        else:
            entries.append(WorkspaceEntry(rel, "file", data, mode=0o755 if mode == GIT_MODE_EXEC else None))
    return SourceRead(tuple(sorted(entries, key=lambda e: e.path)), tuple(notes), commit)


def _cat_blobs(repo: str, shas: list[str]) -> dict[str, bytes]:
    unique = list(dict.fromkeys(shas))
    if not unique:
        return {}
    out = _git(repo, ["cat-file", "--batch"], ("\n".join(unique) + "\n").encode())
    blobs: dict[str, bytes] = {}
    pos = 0
    for sha in unique:
        header_end = out.index(b"\n", pos)
        size = int(out[pos:header_end].decode().split()[2])
        blobs[sha] = out[header_end + 1: header_end + 1 + size]
        pos = header_end + 1 + size + 1
    return blobs


def _member_path(name: str, archive: str) -> str | None:
    rel = name.replace("\\", "/")
    while rel.startswith("./"):
        rel = rel[2:]
    rel = rel.rstrip("/")
    if not rel or rel == ".":
        return None
    if rel.startswith("/") or any(part == ".." for part in rel.split("/")):
        raise WorkspaceSourceError(f"{archive}: member {name!r} would land outside the workspace")
    return rel


def read_archive(path: str, limits: WorkspaceLimits = WorkspaceLimits()) -> SourceRead:
    """The members of a tar archive (plain, gzip, bzip2 or xz): files with their modes,
    symlinks, FIFOs, empty directories. Hard links become copies of their target."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise WorkspaceSourceError(f"{path}: cannot read the archive: {exc.strerror or exc}") from None
    return _read_archive(os.path.abspath(path), st.st_size, st.st_mtime_ns, limits)


@lru_cache(maxsize=ARCHIVE_CACHE_SIZE)
def _read_archive(path: str, size: int, mtime_ns: int, limits: WorkspaceLimits) -> SourceRead:
    budget = _Budget(limits, path)
    files: dict[str, WorkspaceEntry] = {}
    dirs: dict[str, int] = {}
    notes: list[str] = []
    try:
        with tarfile.open(path, mode="r:*") as tar:
            for member in tar:
                rel = _member_path(member.name, path)
                if rel is None or excluded(rel, limits.excludes):
                    continue
                mode = member.mode & 0o7777
                if member.isdir():
                    dirs[rel] = mode
                elif member.issym():
                    files[rel] = WorkspaceEntry(rel, "symlink", target=member.linkname)
                elif member.isfifo():
                    files[rel] = WorkspaceEntry(rel, "fifo")
                elif member.isfile() or member.islnk():
                    budget.add(rel, member.size)
                    fh = tar.extractfile(member)
                    data = fh.read() if fh is not None else b""
                    files[rel] = WorkspaceEntry(rel, "file", data, mode=None if mode == DEFAULT_FILE_MODE else mode)
                else:
                    notes.append(f"{rel} is a device file and is left out")
    except (OSError, tarfile.TarError, EOFError) as exc:
        raise WorkspaceSourceError(f"{path}: not a readable tar archive ({exc})") from None
    parents = {"/".join(p.split("/")[:i]) for p in [*files, *dirs] for i in range(1, p.count("/") + 1)}
    for rel, mode in dirs.items():
        if rel not in parents:
            files[rel] = WorkspaceEntry(rel, "dir", mode=None if mode == DEFAULT_DIR_MODE else mode)
    return SourceRead(tuple(sorted(files.values(), key=lambda e: e.path)), tuple(notes))


def read_source(kind: str, location: str, rev: str | None = None,
                limits: WorkspaceLimits = WorkspaceLimits()) -> SourceRead:
    """Read a ``workspace.from`` source: ``dir`` (a directory), ``archive`` (a tar file) or
    ``repo`` (a git repository, at ``rev``)."""
    if kind == "dir":
        return read_directory(location, limits)
    if kind == "archive":
        return read_archive(location, limits)
    if kind == "repo":
        return read_git(location, rev or "HEAD", limits)
    raise WorkspaceSourceError(f"unknown workspace source kind {kind!r}; expected one of {', '.join(SOURCE_KINDS)}")
