"""The line-diff engine behind the write and edit receipts (spec edit.9, spec write.3).

Owns three pure functions and their bounded variants:

- ``diff_lines``: a line diff whose alignment equals jsdiff 8.0.4 ``diffLines`` (Myers O(ND)
  with jsdiff's diagonal exploration order, tie-breaking and edge-of-graph pruning; lines keep
  their ``\\n`` / ``\\r\\n`` terminator, so ``"a\\n"`` and ``"a"`` are different tokens);
- ``create_two_files_patch``: jsdiff ``createTwoFilesPatch(old, new, a, b, undefined, undefined,
  {context: 4, headerOptions: FILE_HEADERS_ONLY})``;
- ``numbered_diff``: pi's ``generateDiffString`` (numbered diff plus ``firstChangedLine``).

``compute_receipts`` assembles the edit tool's ``details`` including the post-seed
``edit.diff-bounds`` omission texts. Standard library only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from tools_impl.core.profile import REFERENCE
from tools_impl.js.text import js_number

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
    """jsdiff's line tokens: each line with its terminator; no empty final token.

    jsdiff splits on ``/(\n|\r\n)/`` and glues each separator back onto the line before it; a
    ``\r`` before ``\n`` therefore always ends up in its line, so this is a split after every
    ``\n`` (its ``removeEmpty`` can only drop an empty final piece).
    """
    lines = text.split("\n")
    last = lines.pop()
    tokens = [line + "\n" for line in lines]
    if last:
        tokens.append(last)
    return tokens


# A component is a reversed linked list node: (count, kind, previous component).
_Component = tuple[int, int, "_Component | None"]


def _push(last: _Component | None, kind: int) -> _Component:
    if last is not None and last[1] == kind:
        return (last[0] + 1, kind, last[2])
    return (1, kind, last)


Clock = Callable[[], float]  # seconds, monotonic


_PREFIX_SCAN = 64


def common_line_prefix(old: str, new: str) -> tuple[int, int]:
    """``(chars, tokens)`` of the longest common prefix of whole line tokens: the seed of
    jsdiff's walk. A ``\n`` before the first differing character ends a token the two texts
    share; the token holding that character (or ending one text early) differs, unless the
    texts are equal."""
    same = _common_len_at(old, 0, new, 0)
    return old.rfind("\n", 0, same) + 1, old.count("\n", 0, same)


def _token_end(text: str, pos: int) -> int:
    """Where the token starting at ``pos`` (``< len(text)``) ends: after its ``\n``, or at the end."""
    nl = text.find("\n", pos)
    return len(text) if nl < 0 else nl + 1


def _advance(text: str, pos: int, n: int) -> int:
    """Offset ``n`` tokens after the token start ``pos`` (C-level counts over blocks)."""
    remaining = n
    while remaining:
        found = text.count("\n", pos, pos + _ADVANCE_BLOCK)
        if found >= remaining:
            for _ in range(remaining):
                pos = text.index("\n", pos) + 1
            return pos
        if pos + _ADVANCE_BLOCK >= len(text):
            return len(text)  # the last of the n tokens is the open one at the end
        remaining -= found
        pos += _ADVANCE_BLOCK
    return pos


_ADVANCE_BLOCK = 1 << 16
_CHAR_SNAKE_FIRST_STEP = 256


def _common_len_at(a: str, ia: int, b: str, ib: int) -> int:
    """Length of the longest common prefix of ``a[ia:]`` and ``b[ib:]``, comparing slices of
    doubling length (then halving inside the first that differs)."""
    size = min(len(a) - ia, len(b) - ib)
    lo, step = 0, _CHAR_SNAKE_FIRST_STEP
    while lo < size:
        m = min(step, size - lo)
        if a.startswith(b[ib + lo : ib + lo + m], ia + lo):  # one slice copied, not two
            lo += m
            step *= 2
            continue
        hi = lo + m
        while hi - lo > _PREFIX_SCAN:
            mid = (lo + hi) // 2
            if a.startswith(b[ib + lo : ib + mid], ia + lo):
                lo = mid
            else:
                hi = mid
        while a[ia + lo] == b[ib + lo]:
            lo += 1
        return lo
    return lo


def _char_snake(old: str, new: str, oc: int, nc: int) -> tuple[int, int, int]:
    """``(tokens, oc', nc')``: how many whole tokens are equal from the token starts ``oc`` /
    ``nc`` on (what ``_snake`` counts over token lists), and the token starts after them."""
    same = _common_len_at(old, oc, new, nc)
    tokens = old.count("\n", oc, oc + same)
    if oc + same == len(old) and nc + same == len(new) and same and old[-1] != "\n":
        return tokens + 1, len(old), len(new)  # the open last tokens are equal too
    if not tokens:
        return 0, oc, nc
    end = old.rfind("\n", oc, oc + same) + 1
    return tokens, end, nc + (end - oc)


# Per diagonal: (oldPos, component, start of old token oldPos + 1, start of new token newPos + 1).
_Path = tuple[int, "_Component | None", int, int]


def _myers_text(
    old: str, new: str, old_len: int, new_len: int, bounds: DiffBounds, clock: Clock = time.monotonic
) -> _Component | DiffOmitted | None:
    """``_myers`` over the texts themselves (``old_len``/``new_len`` tokens, none in common at the
    start): the same walk, each path also carrying where its next tokens start, tokens compared
    as text and snakes measured on the characters. No list of lines is ever built."""
    max_edit = old_len + new_len
    if bounds.max_edit_length is not None:
        max_edit = min(max_edit, bounds.max_edit_length)
    deadline = None if bounds.timeout_ms is None else clock() + bounds.timeout_ms / 1000.0
    if old_len == 0 and new_len == 0:
        return None
    offset = old_len + new_len + 2
    best: list[_Path | None] = [None] * (2 * offset + 1)
    best[offset] = (-1, None, 0, 0)
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
            if add_path is not None and (remove_path is None or remove_path[0] < add_path[0]):
                old_pos = add_path[0]
                comp = _push(add_path[1], _ADDED)
                oc, nc = add_path[2], _token_end(new, add_path[3])
            elif remove_path is not None:
                old_pos = remove_path[0] + 1
                comp = _push(remove_path[1], _REMOVED)
                oc, nc = _token_end(old, remove_path[2]), remove_path[3]
            else:
                best[idx] = None
                continue
            new_pos = old_pos - diag
            common = 0
            if new_pos + 1 < new_len and old_pos + 1 < old_len:
                end = _token_end(old, oc)
                if old[oc:end] == new[nc : nc + (end - oc)] and _token_end(new, nc) - nc == end - oc:
                    common, oc, nc = _char_snake(old, new, oc, nc)
            if common:
                new_pos += common
                old_pos += common
                comp = (common, _COMMON, comp)
            if old_pos + 1 >= old_len and new_pos + 1 >= new_len:
                return comp
            best[idx] = (old_pos, comp, oc, nc)
            if old_pos + 1 >= old_len:
                max_diag = min(max_diag, diag - 1)
            if new_pos + 1 >= new_len:
                min_diag = max(min_diag, diag + 1)
        edit_length += 1
    if deadline is not None and clock() > deadline:
        return DiffOmitted(OMITTED_TIMEOUT)
    return DiffOmitted(OMITTED_TOO_LARGE)


def _token_count(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _values_from_text(last: _Component | None, old: str, new: str) -> list[Change]:
    """``_build_values`` with each value sliced out of the texts."""
    chain: list[tuple[int, int]] = []
    node = last
    while node is not None:
        chain.append((node[0], node[1]))
        node = node[2]
    chain.reverse()
    changes: list[Change] = []
    oc = nc = 0
    for count, kind in chain:
        if kind == _REMOVED:
            end = _advance(old, oc, count)
            changes.append(Change(old[oc:end], False, True, count))
            oc = end
        else:
            end = _advance(new, nc, count)
            changes.append(Change(new[nc:end], kind == _ADDED, False, count))
            if kind == _COMMON:
                oc += end - nc
            nc = end
    return changes


def diff_lines_bounded(
    old: str, new: str, bounds: DiffBounds = UNBOUNDED, clock: Clock = time.monotonic
) -> list[Change] | DiffOmitted:
    """jsdiff ``diffLines(old, new, {maxEditLength, timeout})``; ``DiffOmitted`` where jsdiff
    returns ``undefined``.

    The common prefix of line tokens (jsdiff's first snake) is found on the characters: the walk
    after it sees positions and diagonals shifted alike in both texts, so it takes the same steps
    on the rest alone, and its edit length never needs to exceed the rest's token count, under
    the same bounds. The walk then runs on the rest's text (``_myers_text``), never splitting it
    into lines."""
    if old == new:  # one common run (the rests below would both hold the same open last line)
        return [Change(old, False, False, _token_count(old))] if old else []
    chars, tokens = common_line_prefix(old, new)
    old_rest, new_rest = old[chars:], new[chars:]
    result = _myers_text(old_rest, new_rest, _token_count(old_rest), _token_count(new_rest), bounds, clock)
    if isinstance(result, DiffOmitted):
        return result
    changes = _values_from_text(result, old_rest, new_rest)
    if tokens:
        changes.insert(0, Change(old[:chars], False, False, tokens))
    return changes


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


def _patch_head(text: str, k: int) -> list[str]:
    """``_split_patch_lines(text)[:k]`` finding only the first ``k`` line ends (no copy of the rest)."""
    pos = 0
    for _ in range(k):
        nl = text.find("\n", pos)
        if nl < 0:
            return _split_patch_lines(text)[:k]
        pos = nl + 1
    return [part + "\n" for part in text[: pos - 1].split("\n")] if k > 0 else []


def _patch_tail(text: str, k: int) -> list[str]:
    """``_split_patch_lines(text)[-k:]`` (``k > 0``) finding only the last ``k`` line ends (no
    copy of the rest)."""
    ends = text.endswith("\n")
    stop = len(text) - 1 if ends else len(text)
    cut = stop
    for _ in range(k):
        cut = text.rfind("\n", 0, cut)
        if cut < 0:
            return _split_patch_lines(text)[-k:]
    lines = [part + "\n" for part in text[cut + 1 : stop].split("\n")]
    if not ends:
        lines[-1] = lines[-1][:-1]
    return lines


def structured_hunks(changes: list[Change], context: int = PATCH_CONTEXT_LINES) -> list[Hunk]:
    """jsdiff ``structuredPatch`` hunks for a finished line diff (with no-newline markers).

    Common runs are never split whole: only their line count and the context lines at their
    ends are taken, so a one-line edit of a large file costs a few C-level scans.
    """
    hunks: list[Hunk] = []
    old_range_start = new_range_start = 0
    cur: list[str] = []
    old_line = new_line = 1
    n = len(changes)
    # jsdiff appends an empty common component (index n) to flush the last hunk
    for i in range(n + 1):
        change = changes[i] if i < n else None
        if change is not None and (change.added or change.removed):
            lines = _split_patch_lines(change.value)
            if not old_range_start:
                old_range_start = old_line
                new_range_start = new_line
                if i > 0:
                    # the component before an opening change is always a common run
                    prev = changes[i - 1].value
                    cur = [" " + line for line in _patch_tail(prev, context)] if context > 0 else []
                    old_range_start -= len(cur)
                    new_range_start -= len(cur)
            sign = "+" if change.added else "-"
            cur.extend(sign + line for line in lines)
            if change.added:
                new_line += len(lines)
            else:
                old_line += len(lines)
        else:
            value = "" if change is None else change.value
            count = change.count if change is not None else 0  # its lines, as jsdiff's splitLines counts them
            if old_range_start:
                if count <= context * 2 and i < n - 1:
                    cur.extend(" " + line for line in _split_patch_lines(value))
                else:
                    context_size = min(count, context)
                    cur.extend(" " + line for line in (_patch_head(value, context_size) if value else []))
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
            old_line += count
            new_line += count
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


def _raw_lines(value: str) -> str:
    """The text whose ``split("\\n")`` is pi's ``raw`` lines of a diff part (one trailing
    newline dropped, as pi pops the empty last element)."""
    return value[:-1] if value.endswith("\n") else value


def _raw_head(value: str, k: int) -> list[str]:
    """``_raw_lines(value).split("\\n", k)[:k]`` without copying the rest of ``value``."""
    pos = 0
    stop = len(value) - 1 if value.endswith("\n") else len(value)
    for _ in range(k):
        nl = value.find("\n", pos, stop)
        if nl < 0:
            return value[:stop].split("\n")[:k]
        pos = nl + 1
    return value[: pos - 1].split("\n") if k > 0 else []


def _raw_tail(value: str, k: int) -> list[str]:
    """``_raw_lines(value).rsplit("\\n", k)[-k:]`` (``[]`` for ``k <= 0``) without copying the
    rest of ``value``."""
    if k <= 0:
        return []
    stop = len(value) - 1 if value.endswith("\n") else len(value)
    cut = stop
    for _ in range(k):
        cut = value.rfind("\n", 0, cut)
        if cut < 0:
            return value[:stop].rsplit("\n", k)[-k:]
    return value[cut + 1 : stop].split("\n")


def numbered_diff_from_changes(
    old: str, new: str, changes: list[Change], context: int = NUMBERED_CONTEXT_LINES
) -> tuple[str, int | None]:
    """pi's ``generateDiffString`` over an already computed ``diff_lines(old, new)``.

    Only the context lines shown of a common run are split out of it; its length is counted.
    """
    # old.count("\n") + 1 and new.count("\n") + 1, from the token counts the diff already has
    old_tokens = sum(c.count for c in changes if not c.added)
    new_tokens = sum(c.count for c in changes if not c.removed)
    width = len(str(max(old_tokens + (0 if old and not old.endswith("\n") else 1),
                        new_tokens + (0 if new and not new.endswith("\n") else 1))))
    marker = " " + " " * width + " ..."
    output: list[str] = []
    old_no = new_no = 1
    last_was_change = False
    first_changed: int | None = None

    def ctx(line: str) -> str:
        return f" {str(old_no).rjust(width)} {line}"

    for i, part in enumerate(changes):
        if part.added or part.removed:
            if first_changed is None:
                first_changed = new_no
            for line in _raw_lines(part.value).split("\n"):
                if part.added:
                    output.append(f"+{str(new_no).rjust(width)} {line}")
                    new_no += 1
                else:
                    output.append(f"-{str(old_no).rjust(width)} {line}")
                    old_no += 1
            last_was_change = True
            continue
        total = part.count  # = _raw_lines(part.value).count("\n") + 1: a part is never empty
        value = part.value
        next_is_change = i < len(changes) - 1 and (changes[i + 1].added or changes[i + 1].removed)
        if last_was_change and next_is_change:
            if total <= context * 2:
                shown_runs: list[list[str] | None] = [_raw_lines(value).split("\n")]
            else:
                shown_runs = [_raw_head(value, context), None, _raw_tail(value, context)]
        elif last_was_change:
            shown_runs = [_raw_head(value, context)]
            if total > context:
                shown_runs.append(None)
        elif next_is_change:
            shown_runs = []
            if total > context:
                shown_runs.append(None)
            shown_runs.append(_raw_tail(value, min(total, context)))
        else:
            shown_runs = []
            old_no += total
            new_no += total
        shown = sum(len(run) for run in shown_runs if run is not None)
        skipped = total - shown if shown_runs else 0
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
    if old == new:
        return None
    return common_line_prefix(old, new)[1] + 1


def omission_text(reason: OmissionReason, bounds: DiffBounds = DEFAULT_DIFF_BOUNDS) -> str:
    """The ``edit.diff-bounds`` notice that replaces the numbered diff."""
    if reason == OMITTED_TIMEOUT:
        return f"(diff omitted: computing it exceeded {_js_int(bounds.timeout_ms)} ms)"
    return f"(diff omitted: more than {_js_int(bounds.max_edit_length)} lines changed)"


def _js_int(x: float | None) -> str:
    return "Infinity" if x is None else js_number(x)



def compute_receipts(
    path: str,
    old: str,
    new: str,
    *,
    bounded: bool,
    bounds: DiffBounds = DEFAULT_DIFF_BOUNDS,
    clock: Clock = time.monotonic,
) -> dict[str, object]:
    """The edit tool's receipts (spec edit.9) for ``old`` → ``new`` of ``path``.

    Unbounded: ``{"diff", "patch", "firstChangedLine"}``. Bounded (toggle ``edit.diff-bounds``)
    and over a limit: ``{"diff": <omission text>, "firstChangedLine", "diffOmitted":
    'too_large'|'timeout'}`` without ``patch``. ``firstChangedLine`` is left out when the texts
    are identical (JavaScript ``undefined``).
    """
    changes = diff_lines_bounded(old, new, bounds if bounded else UNBOUNDED, clock)
    details: dict[str, object]
    if isinstance(changes, DiffOmitted):
        details = {"diff": omission_text(changes.reason, bounds)}
        first = first_changed_line(old, new)
        if first is not None:
            details["firstChangedLine"] = first
        details["diffOmitted"] = changes.reason
        return details
    text, first = numbered_diff_from_changes(old, new, changes)
    details = {"diff": text, "patch": patch_from_changes(path, path, changes)}
    if first is not None:
        details["firstChangedLine"] = first
    return details
