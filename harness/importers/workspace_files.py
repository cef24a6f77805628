"""The starting workspace of an imported scenario, taken from a directory, a tar archive or a
git revision the user names (read by ``harness.corpus.workspace_source``, the same reader the
loader uses for ``workspace.from``): referenced from the scenario by default, or inlined as
``workspace.files`` entries (text with its encoding, BOM and EOL when the bytes round-trip
exactly, else base64; modes; symlinks; FIFOs; empty directories) with ``--inline-workspace``.

``entry_for_file`` is pure (bytes → entry). Problems the user can fix (a missing directory, an
unknown revision, a file over the limit) raise ``WorkspaceSourceError`` naming the option.
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass, field
from typing import Any

from harness.corpus.workspace_source import (
    SourceRead,
    WorkspaceLimits,
    WorkspaceSourceError,
    entries_digest,
    read_archive,
    read_directory,
    read_git,
    resolve_commit,
)
from harness.model.scenario import WorkspaceEntry, encode_text

DEFAULT_EXCLUDES: tuple[str, ...] = (".git", "node_modules")
DEFAULT_MAX_FILE_BYTES = 1024 * 1024
DEFAULT_MAX_TOTAL_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_FILES = 5000
DEFAULT_FILE_MODE = 0o644
DEFAULT_DIR_MODE = 0o755
UTF8_BOM = b"\xef\xbb\xbf"
UTF16LE_BOM = b"\xff\xfe"
IMPORT_LIMITS = WorkspaceLimits(DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_TOTAL_BYTES, DEFAULT_MAX_FILES, DEFAULT_EXCLUDES)
LIMIT_ADVICE = {
    "file": "exclude it (--exclude) or raise --max-file-bytes",
    "total": "exclude large paths (--exclude) or raise --max-total-bytes",
    "count": "exclude paths (--exclude) or raise --max-files",
}

Entry = dict[str, Any]

__all__ = ["IMPORT_LIMITS", "WorkspaceFiles", "WorkspaceLimits", "WorkspaceSourceError", "entry_for_file",
           "from_archive", "from_directory", "from_git"]


@dataclass(frozen=True)
class WorkspaceFiles:
    """The starting workspace: ``entries`` in the inline form (``workspace.files`` mappings,
    sorted by path), ``members`` as read, notes on what was left out, and where it came from
    (``kind`` dir/archive/repo, the absolute ``location``, the resolved ``rev`` of a repo, the
    ``excludes`` applied) so a scenario can reference it instead of inlining it."""

    entries: tuple[Entry, ...]
    source: str
    notes: tuple[str, ...] = field(default_factory=tuple)
    members: tuple[WorkspaceEntry, ...] = ()
    kind: str = ""
    location: str = ""
    rev: str | None = None
    excludes: tuple[str, ...] = ()

    def digest(self) -> str:
        return entries_digest(self.members)


def _mode_text(mode: int) -> str:
    return f"0{mode & 0o7777:o}"


def inline_entry(member: WorkspaceEntry) -> Entry:
    """The ``workspace.files`` mapping of one member."""
    if member.kind == "file":
        return entry_for_file(member.path, member.data, DEFAULT_FILE_MODE if member.mode is None else member.mode)
    entry: Entry = {"path": member.path}
    if member.kind == "symlink":
        entry["symlink"] = member.target or ""
    elif member.kind == "fifo":
        entry["fifo"] = True
    else:
        entry["dir"] = True
        if member.mode is not None and member.mode != DEFAULT_DIR_MODE:
            entry["mode"] = _mode_text(member.mode)
    return entry


def _files(read: SourceRead, source: str, kind: str, location: str, limits: WorkspaceLimits,
           rev: str | None = None) -> WorkspaceFiles:
    return WorkspaceFiles(tuple(inline_entry(m) for m in read.entries), source, read.notes, read.entries, kind,
                          os.path.abspath(location), rev, limits.excludes)


def _advised(exc: WorkspaceSourceError, option: str) -> WorkspaceSourceError:
    message = str(exc)
    if exc.limit:
        return WorkspaceSourceError(f"{message}; {LIMIT_ADVICE[exc.limit]}", exc.limit)
    return WorkspaceSourceError(f"{option}: {message}")


def from_directory(directory: str, limits: WorkspaceLimits = IMPORT_LIMITS) -> WorkspaceFiles:
    """Every file, symlink, FIFO and empty directory under ``directory`` (symlinks are not
    followed; an absolute target inside ``directory`` is made relative)."""
    try:
        read = read_directory(directory, limits)
    except WorkspaceSourceError as exc:
        raise _advised(exc, "--workspace-dir") from None
    return _files(read, f"directory {directory}", "dir", directory, limits)


def from_archive(archive: str, limits: WorkspaceLimits = IMPORT_LIMITS) -> WorkspaceFiles:
    """The members of a tar archive (plain or compressed)."""
    try:
        read = read_archive(archive, limits)
    except WorkspaceSourceError as exc:
        raise _advised(exc, "--workspace-archive") from None
    return _files(read, f"archive {archive}", "archive", archive, limits)


def from_git(repo: str, rev: str, limits: WorkspaceLimits = IMPORT_LIMITS) -> WorkspaceFiles:
    """The tree of ``rev`` in the repository ``repo`` (files with their exec bit, symlinks;
    submodules are left out with a note); the scenario pins the resolved commit."""
    try:
        commit = resolve_commit(repo, rev)
        read = read_git(repo, commit, limits)
    except WorkspaceSourceError as exc:
        raise _advised(exc, "--git") from None
    return _files(read, f"git revision {rev}", "repo", repo, limits, commit)


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


