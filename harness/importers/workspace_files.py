"""The starting workspace of an imported scenario, taken from a directory or a git revision the
user names: ``workspace.files`` entries (text with its encoding, BOM and EOL when the bytes
round-trip exactly, else base64; modes; symlinks; FIFOs; empty directories), within size limits
and with excludes.

``entry_for_file`` is pure (bytes → entry); the readers do the I/O. Problems the user can fix
(a missing directory, an unknown revision, a file over the limit) raise ``WorkspaceSourceError``.
"""

from __future__ import annotations

import base64
import fnmatch
import os
import stat
import subprocess
from dataclasses import dataclass, field
from typing import Any

from harness.errors import HarnessError
from harness.model.scenario import encode_text

DEFAULT_EXCLUDES: tuple[str, ...] = (".git", "node_modules")
DEFAULT_MAX_FILE_BYTES = 1024 * 1024
DEFAULT_MAX_TOTAL_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_FILES = 5000
DEFAULT_FILE_MODE = 0o644
DEFAULT_DIR_MODE = 0o755
GIT_TIMEOUT_S = 120.0
GIT_MODE_FILE = "100644"
GIT_MODE_EXEC = "100755"
GIT_MODE_SYMLINK = "120000"
GIT_MODE_SUBMODULE = "160000"
UTF8_BOM = b"\xef\xbb\xbf"
UTF16LE_BOM = b"\xff\xfe"

Entry = dict[str, Any]


class WorkspaceSourceError(HarnessError):
    """The starting workspace cannot be taken from what the user named."""


@dataclass(frozen=True)
class WorkspaceLimits:
    """Size limits and excludes (glob patterns matched against each path component and against
    the whole relative path)."""

    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES
    max_files: int = DEFAULT_MAX_FILES
    excludes: tuple[str, ...] = DEFAULT_EXCLUDES


@dataclass(frozen=True)
class WorkspaceFiles:
    """The entries (sorted by path) and notes on what was left out."""

    entries: tuple[Entry, ...]
    source: str
    notes: tuple[str, ...] = field(default_factory=tuple)


def excluded(rel: str, excludes: tuple[str, ...]) -> bool:
    parts = rel.split("/")
    return any(fnmatch.fnmatchcase(rel, pat) or any(fnmatch.fnmatchcase(p, pat) for p in parts)
               for pat in excludes)


def _mode_text(mode: int) -> str:
    return f"0{mode & 0o7777:o}"


def entry_for_file(path: str, data: bytes, mode: int | None = None) -> Entry:
    """A workspace entry whose bytes are exactly ``data``: text (UTF-8 or UTF-16LE with BOM;
    LF, CRLF or CR line ends) when it encodes back to the same bytes, else base64."""
    entry: Entry = {"path": path}
    text_entry = _text_entry(data)
    if text_entry is None:
        entry["base64"] = base64.b64encode(data).decode("ascii")
    else:
        entry.update(text_entry)
    if mode is not None and mode & 0o7777 != DEFAULT_FILE_MODE:
        entry["mode"] = _mode_text(mode)
    return entry


def _text_entry(data: bytes) -> Entry | None:
    encoding, bom, body = "utf-8", False, data
    if data.startswith(UTF8_BOM):
        bom, body = True, data[len(UTF8_BOM):]
    elif data.startswith(UTF16LE_BOM):
        encoding, bom, body = "utf-16le", True, data[len(UTF16LE_BOM):]
    try:
        text = body.decode("utf-16-le" if encoding == "utf-16le" else "utf-8")
    except UnicodeDecodeError:
        return None
    if "\x00" in text:
        return None
    crlf = text.count("\r\n")
    lone_cr = text.count("\r") - crlf
    lone_lf = text.count("\n") - crlf
    if crlf and not lone_cr and not lone_lf:
        eol, text = "crlf", text.replace("\r\n", "\n")
    elif lone_cr and not crlf and not lone_lf:
        eol, text = "cr", text.replace("\r", "\n")
    elif not crlf and not lone_cr:
        eol = "lf"
    else:
        return None  # mixed line ends: only base64 keeps them exactly
    if encode_text(text, encoding, bom, eol) != data:
        return None
    out: Entry = {"text": text}
    if encoding != "utf-8":
        out["encoding"] = encoding
    if bom:
        out["bom"] = True
    if eol != "lf":
        out["eol"] = eol
    return out


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
                f"{self.source}: {rel} is {size} bytes, over the per-file limit of {lim.max_file_bytes} bytes; "
                "exclude it (--exclude) or raise --max-file-bytes")
        self.total += size
        self.count += 1
        if self.total > lim.max_total_bytes:
            raise WorkspaceSourceError(
                f"{self.source}: the workspace is over the total limit of {lim.max_total_bytes} bytes "
                f"(reached at {rel}); exclude large paths (--exclude) or raise --max-total-bytes")
        if self.count > lim.max_files:
            raise WorkspaceSourceError(
                f"{self.source}: the workspace has more than {lim.max_files} files; exclude paths (--exclude) "
                "or raise --max-files")


def from_directory(directory: str, limits: WorkspaceLimits = WorkspaceLimits()) -> WorkspaceFiles:
    """Every file, symlink, FIFO and empty directory under ``directory`` (symlinks are not
    followed). A symlink whose absolute target lies inside ``directory`` is made relative."""
    root = os.path.abspath(directory)
    if not os.path.isdir(root):
        raise WorkspaceSourceError(f"--workspace-dir {directory}: not a directory")
    budget = _Budget(limits, directory)
    entries: list[Entry] = []
    notes: list[str] = []
    for cur, dirs, files in os.walk(root, onerror=None):
        rel_dir = os.path.relpath(cur, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        kept_dirs = [d for d in sorted(dirs) if not excluded(rel_dir + d, limits.excludes)]
        dirs[:] = [d for d in kept_dirs if not os.path.islink(os.path.join(cur, d))]
        names = [n for n in sorted(files) if not excluded(rel_dir + n, limits.excludes)]
        names += [d for d in kept_dirs if os.path.islink(os.path.join(cur, d))]
        if rel_dir and not names and not dirs:
            st = os.lstat(cur)
            entry: Entry = {"path": rel_dir.rstrip("/"), "dir": True}
            if stat.S_IMODE(st.st_mode) != DEFAULT_DIR_MODE:
                entry["mode"] = _mode_text(st.st_mode)
            entries.append(entry)
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
                    entries.append({"path": rel, "symlink": target})
                elif stat.S_ISFIFO(st.st_mode):
                    entries.append({"path": rel, "fifo": True})
                elif stat.S_ISREG(st.st_mode):
                    budget.add(rel, st.st_size)
                    with open(full, "rb") as fh:
                        data = fh.read(limits.max_file_bytes + 1)
                    if len(data) > limits.max_file_bytes:
                        raise WorkspaceSourceError(f"{directory}: {rel} grew while it was read; try again")
                    entries.append(entry_for_file(rel, data, stat.S_IMODE(st.st_mode)))
                else:
                    notes.append(f"{rel} is a special file (socket or device) and is left out")
            except OSError as exc:
                raise WorkspaceSourceError(f"{directory}: cannot read {rel}: {exc.strerror or exc}") from None
    return WorkspaceFiles(tuple(sorted(entries, key=lambda e: e["path"])), f"directory {directory}", tuple(notes))


def _git(repo: str, args: list[str], stdin: bytes | None = None) -> bytes:
    try:
        proc = subprocess.run(["git", "-C", repo, *args], input=stdin, capture_output=True, timeout=GIT_TIMEOUT_S,
                              check=False)
    except FileNotFoundError:
        raise WorkspaceSourceError("--git-rev needs git, which is not installed") from None
    except subprocess.TimeoutExpired:
        raise WorkspaceSourceError(f"git {args[0]} in {repo} did not finish in {GIT_TIMEOUT_S:g} s") from None
    if proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise WorkspaceSourceError(f"--git-rev: git {args[0]} failed in {repo}: {msg[0] if msg else proc.returncode}")
    return proc.stdout


def from_git(repo: str, rev: str, limits: WorkspaceLimits = WorkspaceLimits()) -> WorkspaceFiles:
    """The tree of ``rev`` in the repository ``repo`` (files with their exec bit, symlinks;
    submodules are left out with a note)."""
    if not os.path.isdir(repo):
        raise WorkspaceSourceError(f"--repo {repo}: not a directory")
    source = f"git revision {rev}"
    commit = _git(repo, ["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"]).decode().strip()
    listing = _git(repo, ["ls-tree", "-r", "-l", "-z", "--full-tree", commit])
    budget = _Budget(limits, source)
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
    entries: list[Entry] = []
    for mode, sha, rel in wanted:
        data = blobs[sha]
        if mode == GIT_MODE_SYMLINK:
            entries.append({"path": rel, "symlink": data.decode("utf-8", "surrogateescape")})
        else:
            entries.append(entry_for_file(rel, data, 0o755 if mode == GIT_MODE_EXEC else DEFAULT_FILE_MODE))
    return WorkspaceFiles(tuple(sorted(entries, key=lambda e: e["path"])), source, tuple(notes))


def _cat_blobs(repo: str, shas: list[str]) -> dict[str, bytes]:
    unique = list(dict.fromkeys(shas))
    if not unique:
        return {}
    out = _git(repo, ["cat-file", "--batch"], ("\n".join(unique) + "\n").encode())
    blobs: dict[str, bytes] = {}
    pos = 0
    for sha in unique:
        header_end = out.index(b"\n", pos)
        header = out[pos:header_end].decode().split()
        size = int(header[2])
        blobs[sha] = out[header_end + 1: header_end + 1 + size]
        pos = header_end + 1 + size + 1
    return blobs
