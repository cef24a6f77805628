"""The straightforward line diff the optimised ``tools_impl.shared.line_diff`` replaced: a regex
tokenizer, a token-by-token Myers walk over interned ids, and patch and numbered-diff builders
that split every component whole. Kept only as an oracle: the optimised module must give the
same values, byte for byte (tests/tools_impl/shared/test_line_diff_equivalence.py).
"""
from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from tools_impl.core.profile import REFERENCE

DIFF_MAX_EDIT_LENGTH = REFERENCE.diff_max_edit_length
DIFF_TIMEOUT_MS = REFERENCE.diff_timeout_ms
PATCH_CONTEXT_LINES = 4
NUMBERED_CONTEXT_LINES = 4
NO_NEWLINE_MARKER = "\\ No newline at end of file"
OMITTED_TOO_LARGE_TEXT = f"(diff omitted: more than {DIFF_MAX_EDIT_LENGTH} lines changed)"
OMITTED_TIMEOUT_TEXT = f"(diff omitted: computing it exceeded {DIFF_TIMEOUT_MS} ms)"

OmissionReason = Literal["too_large", "timeout"]
OMITTED_TOO_LARGE: OmissionReason = "too_large"
OMITTED_TIMEOUT: OmissionReason = "timeout"

# jsdiff's tokenizer splits on this pattern with a capture group and glues each separator back
# onto the line before it.
_LINE_SPLIT_RE = re.compile(r"(\n|\r\n)")

_COMMON = 0
_ADDED = 1
_REMOVED = 2


@dataclass(frozen=True)
class Change:
    """One component of a line diff: ``count`` tokens (lines) of ``value``, added, removed or common."""

    value: str
    added: bool
    removed: bool
    count: int


@dataclass(frozen=True)
class DiffBounds:
    """jsdiff's ``maxEditLength`` and ``timeout`` options; ``None`` means unbounded."""

    max_edit_length: int | None = DIFF_MAX_EDIT_LENGTH
    timeout_ms: float | None = DIFF_TIMEOUT_MS


UNBOUNDED = DiffBounds(max_edit_length=None, timeout_ms=None)
DEFAULT_DIFF_BOUNDS = DiffBounds()


@dataclass(frozen=True)
class DiffOmitted:
    """A bounded diff that was abandoned: ``reason`` is ``'too_large'`` or ``'timeout'``."""

    reason: OmissionReason


def tokenize_lines(text: str) -> list[str]:
    """jsdiff's line tokens: each line with its terminator; no empty final token."""
    parts = _LINE_SPLIT_RE.split(text)
    if not parts[-1]:
        parts.pop()
    lines: list[str] = []
    for i, part in enumerate(parts):
        if i % 2:
            lines[-1] += part
        else:
            lines.append(part)
    # jsdiff's removeEmpty: drop falsy tokens.
    return [line for line in lines if line]


# A component is a reversed linked list node: (count, kind, previous component).
_Component = tuple[int, int, "_Component | None"]


def _push(last: _Component | None, kind: int) -> _Component:
    if last is not None and last[1] == kind:
        return (last[0] + 1, kind, last[2])
    return (1, kind, last)


Clock = Callable[[], float]  # seconds, monotonic


def _myers(
    old: list[int], new: list[int], bounds: DiffBounds, clock: Clock = time.monotonic
) -> _Component | DiffOmitted | None:
    """jsdiff's ``diffWithOptionsObj``: the last component of the edit script, or an omission."""
    old_len, new_len = len(old), len(new)
    max_edit = old_len + new_len
    if bounds.max_edit_length is not None:
        max_edit = min(max_edit, bounds.max_edit_length)
    deadline = None if bounds.timeout_ms is None else clock() + bounds.timeout_ms / 1000.0

    # Seed: the common prefix (edit length 0).
    o = -1
    while o + 1 < new_len and o + 1 < old_len and old[o + 1] == new[o + 1]:
        o += 1
    comp: _Component | None = (o + 1, _COMMON, None) if o >= 0 else None
    if o + 1 >= old_len and o + 1 >= new_len:
        return comp

    offset = old_len + new_len + 2
    # best[offset + diagonal] = (oldPos, component); diagonal = oldPos - newPos.
    best: list[tuple[int, _Component | None] | None] = [None] * (2 * offset + 1)
    best[offset] = (o, comp)
    min_diag = -offset
    max_diag = offset
    edit_length = 1
    while edit_length <= max_edit:
        if deadline is not None and clock() > deadline:
            return DiffOmitted(OMITTED_TIMEOUT)
        for diag in range(max(min_diag, -edit_length), min(max_diag, edit_length) + 1, 2):
            idx = offset + diag
            remove_path = best[idx - 1]
            add_path = best[idx + 1]
            if remove_path is not None:
                best[idx - 1] = None
            if add_path is not None and not 0 <= add_path[0] - diag < new_len:
                add_path = None
            if remove_path is not None and not remove_path[0] + 1 < old_len:
                remove_path = None
            # Branch from the path that got furthest into the old text; ties go to removal.
            if add_path is not None and (remove_path is None or remove_path[0] < add_path[0]):
                old_pos = add_path[0]
                comp = _push(add_path[1], _ADDED)
            elif remove_path is not None:
                old_pos = remove_path[0] + 1
                comp = _push(remove_path[1], _REMOVED)
            else:
                best[idx] = None
                continue
            new_pos = old_pos - diag
            common = 0
            while new_pos + 1 < new_len and old_pos + 1 < old_len and old[old_pos + 1] == new[new_pos + 1]:
                new_pos += 1
                old_pos += 1
                common += 1
            if common:
                comp = (common, _COMMON, comp)
            if old_pos + 1 >= old_len and new_pos + 1 >= new_len:
                return comp
            best[idx] = (old_pos, comp)
            if old_pos + 1 >= old_len:
                max_diag = min(max_diag, diag - 1)
            if new_pos + 1 >= new_len:
                min_diag = max(min_diag, diag + 1)
        edit_length += 1
    if deadline is not None and clock() > deadline:
        return DiffOmitted(OMITTED_TIMEOUT)
    return DiffOmitted(OMITTED_TOO_LARGE)


def _build_values(last: _Component | None, old_tokens: list[str], new_tokens: list[str]) -> list[Change]:
    chain: list[tuple[int, int]] = []
    node = last
    while node is not None:
        chain.append((node[0], node[1]))
        node = node[2]
    chain.reverse()
    changes: list[Change] = []
    old_pos = new_pos = 0
    for count, kind in chain:
        if kind == _REMOVED:
            changes.append(Change("".join(old_tokens[old_pos : old_pos + count]), False, True, count))
            old_pos += count
        else:
            changes.append(Change("".join(new_tokens[new_pos : new_pos + count]), kind == _ADDED, False, count))
            new_pos += count
            if kind == _COMMON:
                old_pos += count
    return changes


def diff_lines_bounded(
    old: str, new: str, bounds: DiffBounds = UNBOUNDED, clock: Clock = time.monotonic
) -> list[Change] | DiffOmitted:
    """jsdiff ``diffLines(old, new, {maxEditLength, timeout})``; ``DiffOmitted`` where jsdiff
    returns ``undefined``."""
    old_tokens = tokenize_lines(old)
    new_tokens = tokenize_lines(new)
    ids: dict[str, int] = {}
    old_ids = [ids.setdefault(t, len(ids)) for t in old_tokens]
    new_ids = [ids.setdefault(t, len(ids)) for t in new_tokens]
    result = _myers(old_ids, new_ids, bounds, clock)
    if isinstance(result, DiffOmitted):
        return result
    return _build_values(result, old_tokens, new_tokens)


def diff_lines(old: str, new: str) -> list[Change]:
    """jsdiff 8.0.4 ``diffLines(old, new)`` with default options."""
    result = diff_lines_bounded(old, new, UNBOUNDED)
    assert not isinstance(result, DiffOmitted)  # unbounded diffs always complete
    return result


# ---------------------------------------------------------------------------------------------
# Unified patch (jsdiff structuredPatch + formatPatch)


def _split_patch_lines(text: str) -> list[str]:
    """jsdiff's ``splitLines``: lines keeping their ``\\n``, no empty final element."""
    pieces = [piece + "\n" for piece in text.split("\n")]
    if text.endswith("\n"):
        pieces.pop()
    else:
        pieces[-1] = pieces[-1][:-1]
    return pieces


@dataclass(frozen=True)
class Hunk:
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    lines: tuple[str, ...]


def structured_hunks(changes: list[Change], context: int = PATCH_CONTEXT_LINES) -> list[Hunk]:
    """jsdiff ``structuredPatch`` hunks for a finished line diff (with no-newline markers)."""
    parts: list[tuple[bool, list[str]]] = [
        (c.added or c.removed, _split_patch_lines(c.value)) for c in changes
    ]
    parts.append((False, []))  # jsdiff appends an empty common component to flush the last hunk
    hunks: list[Hunk] = []
    old_range_start = new_range_start = 0
    cur: list[str] = []
    old_line = new_line = 1
    for i, (is_change, lines) in enumerate(parts):
        if is_change:
            change = changes[i]
            if not old_range_start:
                old_range_start = old_line
                new_range_start = new_line
                if i > 0:
                    prev_lines = parts[i - 1][1]
                    cur = [" " + line for line in prev_lines[-context:]] if context > 0 else []
                    old_range_start -= len(cur)
                    new_range_start -= len(cur)
            sign = "+" if change.added else "-"
            cur.extend(sign + line for line in lines)
            if change.added:
                new_line += len(lines)
            else:
                old_line += len(lines)
        else:
            if old_range_start:
                if len(lines) <= context * 2 and i < len(parts) - 2:
                    cur.extend(" " + line for line in lines)
                else:
                    context_size = min(len(lines), context)
                    cur.extend(" " + line for line in lines[:context_size])
                    hunks.append(
                        Hunk(
                            old_range_start,
                            old_line - old_range_start + context_size,
                            new_range_start,
                            new_line - new_range_start + context_size,
                            tuple(_mark_missing_newlines(cur)),
                        )
                    )
                    old_range_start = new_range_start = 0
                    cur = []
            old_line += len(lines)
            new_line += len(lines)
    return hunks


def _mark_missing_newlines(lines: list[str]) -> list[str]:
    out: list[str] = []
    for line in lines:
        if line.endswith("\n"):
            out.append(line[:-1])
        else:
            out.append(line)
            out.append(NO_NEWLINE_MARKER)
    return out


def format_patch(old_name: str, new_name: str, hunks: list[Hunk]) -> str:
    """jsdiff ``formatPatch`` with ``FILE_HEADERS_ONLY`` and undefined headers."""
    out = [f"--- {old_name}", f"+++ {new_name}"]
    for h in hunks:
        # Unified-diff quirk jsdiff follows: an empty range starts one line earlier.
        old_start = h.old_start - 1 if h.old_lines == 0 else h.old_start
        new_start = h.new_start - 1 if h.new_lines == 0 else h.new_start
        out.append(f"@@ -{old_start},{h.old_lines} +{new_start},{h.new_lines} @@")
        out.extend(h.lines)
    return "\n".join(out) + "\n"


def patch_from_changes(
    old_name: str, new_name: str, changes: list[Change], context: int = PATCH_CONTEXT_LINES
) -> str:
    return format_patch(old_name, new_name, structured_hunks(changes, context))


def create_two_files_patch(old_name: str, new_name: str, old: str, new: str, context: int = PATCH_CONTEXT_LINES) -> str:
    """jsdiff ``createTwoFilesPatch(old_name, new_name, old, new, undefined, undefined,
    {context, headerOptions: FILE_HEADERS_ONLY})``."""
    return patch_from_changes(old_name, new_name, diff_lines(old, new), context)


# ---------------------------------------------------------------------------------------------
# Numbered diff (pi generateDiffString)


def numbered_diff_from_changes(
    old: str, new: str, changes: list[Change], context: int = NUMBERED_CONTEXT_LINES
) -> tuple[str, int | None]:
    """pi's ``generateDiffString`` over an already computed ``diff_lines(old, new)``."""
    width = len(str(max(len(old.split("\n")), len(new.split("\n")))))
    marker = " " + " " * width + " ..."
    output: list[str] = []
    old_no = new_no = 1
    last_was_change = False
    first_changed: int | None = None

    def ctx(line: str) -> str:
        return f" {str(old_no).rjust(width)} {line}"

    for i, part in enumerate(changes):
        raw = part.value.split("\n")
        if raw[-1] == "":
            raw.pop()
        if part.added or part.removed:
            if first_changed is None:
                first_changed = new_no
            for line in raw:
                if part.added:
                    output.append(f"+{str(new_no).rjust(width)} {line}")
                    new_no += 1
                else:
                    output.append(f"-{str(old_no).rjust(width)} {line}")
                    old_no += 1
            last_was_change = True
            continue
        next_is_change = i < len(changes) - 1 and (changes[i + 1].added or changes[i + 1].removed)
        if last_was_change and next_is_change:
            if len(raw) <= context * 2:
                shown_runs: list[list[str] | None] = [raw]
            else:
                shown_runs = [raw[:context], None, raw[len(raw) - context :]]
        elif last_was_change:
            shown_runs = [raw[:context]]
            if len(raw) > context:
                shown_runs.append(None)
        elif next_is_change:
            shown_runs = []
            if len(raw) > context:
                shown_runs.append(None)
            shown_runs.append(raw[max(0, len(raw) - context) :])
        else:
            shown_runs = []
            old_no += len(raw)
            new_no += len(raw)
        shown = sum(len(run) for run in shown_runs if run is not None)
        skipped = len(raw) - shown if shown_runs else 0
        for run in shown_runs:
            if run is None:
                output.append(marker)
                old_no += skipped
                new_no += skipped
                continue
            for line in run:
                output.append(ctx(line))
                old_no += 1
                new_no += 1
        last_was_change = False
    return "\n".join(output), first_changed


def numbered_diff(old: str, new: str) -> tuple[str, int | None]:
    """pi's ``generateDiffString(old, new)``: ``(diff, firstChangedLine)``."""
    return numbered_diff_from_changes(old, new, diff_lines(old, new))


def first_changed_line(old: str, new: str) -> int | None:
    """``firstChangedLine`` without running the diff: jsdiff always opens with the maximal
    common prefix of line tokens, so the first change starts right after it."""
    old_tokens = tokenize_lines(old)
    new_tokens = tokenize_lines(new)
    n = 0
    limit = min(len(old_tokens), len(new_tokens))
    while n < limit and old_tokens[n] == new_tokens[n]:
        n += 1
    if n == len(old_tokens) and n == len(new_tokens):
        return None
    return n + 1

