"""Edit formats other agents send as one text argument, parsed into file operations: the
``apply_patch`` envelope (Codex CLI and others: ``*** Begin Patch`` … ``*** End Patch`` with
Add/Update/Delete File sections and ``@@`` hunks) and SEARCH/REPLACE blocks (Cline's
``replace_in_file``, Roo's ``apply_diff``). Pure functions.

A patch that cannot be parsed, or that holds an operation toolproof has no tool for (delete,
rename, a hunk placed only by its ``@@`` header), raises ``PatchError`` with the reason; the
importer skips the call and reports it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

BEGIN_PATCH = "*** Begin Patch"
END_PATCH = "*** End Patch"
ADD_FILE = "*** Add File: "
DELETE_FILE = "*** Delete File: "
UPDATE_FILE = "*** Update File: "
MOVE_TO = "*** Move to: "
END_OF_FILE = "*** End of File"
HUNK = "@@"

SEARCH_RE = re.compile(r"^(?:-{3,} SEARCH|<{3,} SEARCH)\s*$")
DIVIDER_RE = re.compile(r"^={3,}\s*$")
REPLACE_RE = re.compile(r"^(?:\+{3,} REPLACE|>{3,} REPLACE)\s*$")
ROO_START_LINE_RE = re.compile(r"^:(?:start|end)_line:\s*\d+\s*$")
ROO_SEPARATOR_RE = re.compile(r"^-{3,}\s*$")


class PatchError(Exception):
    """The patch cannot be parsed, or holds an operation toolproof cannot replay."""


@dataclass(frozen=True)
class FileWrite:
    """Create (or replace) ``path`` with ``content``."""

    path: str
    content: str


@dataclass(frozen=True)
class FileEdit:
    """Replace each ``(old, new)`` pair in ``path``, in order (each old text as in the file)."""

    path: str
    edits: tuple[tuple[str, str], ...]


PatchOp = FileWrite | FileEdit


def _hunk_pair(lines: list[str], path: str, number: int) -> tuple[str, str]:
    old: list[str] = []
    new: list[str] = []
    for line in lines:
        mark, text = (line[:1], line[1:]) if line else (" ", "")
        if mark == " ":
            old.append(text)
            new.append(text)
        elif mark == "-":
            old.append(text)
        elif mark == "+":
            new.append(text)
        else:
            raise PatchError(f"hunk {number} of {path}: line {line!r} starts with neither ' ', '-' nor '+'")
    if not old:
        raise PatchError(f"hunk {number} of {path} only adds lines at the place its @@ header names; "
                         "an edit needs text to replace")
    return "\n".join(old), "\n".join(new)


def parse_apply_patch(text: str) -> tuple[PatchOp, ...]:
    """The file operations of an ``apply_patch`` envelope, in order."""
    lines = text.replace("\r\n", "\n").strip("\n").split("\n")
    if not lines or lines[0].strip() != BEGIN_PATCH:
        raise PatchError(f"the patch does not start with {BEGIN_PATCH!r}")
    if lines[-1].strip() != END_PATCH:
        raise PatchError(f"the patch does not end with {END_PATCH!r}")
    body = lines[1:-1]
    ops: list[PatchOp] = []
    i = 0
    while i < len(body):
        line = body[i]
        if line.startswith(ADD_FILE):
            path = line[len(ADD_FILE):].strip()
            i += 1
            content: list[str] = []
            while i < len(body) and body[i].startswith("+"):
                content.append(body[i][1:])
                i += 1
            ops.append(FileWrite(path, "".join(c + "\n" for c in content)))
        elif line.startswith(DELETE_FILE):
            raise PatchError(f"it deletes {line[len(DELETE_FILE):].strip()} and toolproof has no delete tool")
        elif line.startswith(UPDATE_FILE):
            path = line[len(UPDATE_FILE):].strip()
            i += 1
            if i < len(body) and body[i].startswith(MOVE_TO):
                raise PatchError(f"it renames {path} to {body[i][len(MOVE_TO):].strip()} and toolproof has no "
                                 "rename tool")
            hunks: list[list[str]] = []
            current: list[str] | None = None
            while i < len(body) and (not body[i].startswith("*** ") or body[i] == END_OF_FILE):
                row = body[i]
                i += 1
                if row == END_OF_FILE:
                    continue
                if row.startswith(HUNK):
                    current = []
                    hunks.append(current)
                    continue
                if current is None:  # the first hunk may omit its @@ line
                    current = []
                    hunks.append(current)
                current.append(row)
            pairs = tuple(_hunk_pair(h, path, n) for n, h in enumerate(hunks, 1) if h)
            if not pairs:
                raise PatchError(f"the update of {path} has no hunk")
            ops.append(FileEdit(path, pairs))
        elif not line.strip():
            i += 1
        else:
            raise PatchError(f"unexpected line {line!r} (expected an Add, Update or Delete File header)")
    if not ops:
        raise PatchError("the patch changes no file")
    return tuple(ops)


def parse_search_replace(text: str) -> tuple[tuple[str, str], ...]:
    """The ``(search, replace)`` pairs of SEARCH/REPLACE blocks (``------- SEARCH`` or
    ``<<<<<<< SEARCH`` … ``=======`` … ``+++++++ REPLACE`` or ``>>>>>>> REPLACE``; Roo's
    ``:start_line:N`` and ``-------`` lines after SEARCH are location hints and are dropped)."""
    lines = text.replace("\r\n", "\n").split("\n")
    pairs: list[tuple[str, str]] = []
    i = 0
    while i < len(lines):
        if not SEARCH_RE.match(lines[i]):
            if lines[i].strip():
                raise PatchError(f"unexpected line {lines[i]!r} outside a SEARCH/REPLACE block")
            i += 1
            continue
        i += 1
        while i < len(lines) and ROO_START_LINE_RE.match(lines[i]):
            i += 1
        if i < len(lines) and ROO_SEPARATOR_RE.match(lines[i]) and not SEARCH_RE.match(lines[i]):
            i += 1
        search: list[str] = []
        while i < len(lines) and not DIVIDER_RE.match(lines[i]):
            search.append(lines[i])
            i += 1
        if i >= len(lines):
            raise PatchError("a SEARCH block has no ======= divider")
        i += 1
        replace: list[str] = []
        while i < len(lines) and not REPLACE_RE.match(lines[i]):
            replace.append(lines[i])
            i += 1
        if i >= len(lines):
            raise PatchError("a SEARCH block is not closed by REPLACE")
        i += 1
        if not search:
            raise PatchError("a SEARCH block is empty; an edit needs text to replace")
        pairs.append(("\n".join(search), "\n".join(replace)))
    if not pairs:
        raise PatchError("no SEARCH/REPLACE block")
    return tuple(pairs)
