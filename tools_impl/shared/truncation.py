"""The two families of output limiters (spec limits): the pi engine's whole-line truncation helpers
(``truncate_head`` / ``truncate_tail``, 2000 lines / 50 KB) and the wrapper's byte caps
(``prefix_lines`` for read and grep, ``head_tail_lines`` for bash) with their metadata.

All functions are pure. Byte counts are UTF-8; cuts never fall inside a UTF-8 sequence.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from tools_impl.core.result import TextBlock, ToolResult
from tools_impl.js.text import cut_text_prefix, cut_text_suffix, utf8_len

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 50 * 1024
HEAD_SHARE = 0.45
SEPARATOR = "\n\n"

TruncatedBy = Literal["lines", "bytes"] | None


@dataclass(frozen=True)
class TruncationResult:
    """pi's ``TruncationResult`` (spec limits.1)."""

    content: str
    truncated: bool
    truncated_by: TruncatedBy
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool
    first_line_exceeds_limit: bool
    max_lines: int
    max_bytes: int

    def to_json(self) -> dict[str, Any]:
        """The camel-cased form pi puts in ``details.truncation``."""
        return {
            "content": self.content,
            "truncated": self.truncated,
            "truncatedBy": self.truncated_by,
            "totalLines": self.total_lines,
            "totalBytes": self.total_bytes,
            "outputLines": self.output_lines,
            "outputBytes": self.output_bytes,
            "lastLinePartial": self.last_line_partial,
            "firstLineExceedsLimit": self.first_line_exceeds_limit,
            "maxLines": self.max_lines,
            "maxBytes": self.max_bytes,
        }


def split_lines_for_counting(text: str) -> list[str]:
    """``""`` → ``[]``; otherwise split on ``\\n`` dropping the empty element after a final newline."""
    if text == "":
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def _untruncated(content: str, total_lines: int, total_bytes: int, max_lines: int, max_bytes: int) -> TruncationResult:
    return TruncationResult(content, False, None, total_lines, total_bytes, total_lines, total_bytes,
                            False, False, max_lines, max_bytes)


def truncate_head(content: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES) -> TruncationResult:
    """Keep whole lines from the beginning (spec limits.1 ``truncateHead``)."""
    lines = split_lines_for_counting(content)
    total_lines = len(lines)
    total_bytes = utf8_len(content)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return _untruncated(content, total_lines, total_bytes, max_lines, max_bytes)
    if lines and utf8_len(lines[0]) > max_bytes:
        return TruncationResult("", True, "bytes", total_lines, total_bytes, 0, 0, False, True, max_lines, max_bytes)
    kept: list[str] = []
    used = 0
    truncated_by: TruncatedBy = "lines"
    for i, line in enumerate(lines):
        if i >= max_lines:
            truncated_by = "lines"
            break
        cost = utf8_len(line) + (1 if i > 0 else 0)
        if used + cost > max_bytes:
            truncated_by = "bytes"
            break
        kept.append(line)
        used += cost
    out = "\n".join(kept)
    return TruncationResult(out, True, truncated_by, total_lines, total_bytes, len(kept), utf8_len(out),
                            False, False, max_lines, max_bytes)


def truncate_tail(content: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES) -> TruncationResult:
    """Keep whole lines from the end (spec limits.1 ``truncateTail``), with the partial-last-line exception."""
    lines = split_lines_for_counting(content)
    total_lines = len(lines)
    total_bytes = utf8_len(content)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return _untruncated(content, total_lines, total_bytes, max_lines, max_bytes)
    kept: list[str] = []
    used = 0
    truncated_by: TruncatedBy = "lines"
    partial = False
    for line in reversed(lines):
        if len(kept) >= max_lines:
            truncated_by = "lines"
            break
        cost = utf8_len(line) + (1 if kept else 0)
        if used + cost > max_bytes:
            truncated_by = "bytes"
            if not kept:
                kept.append(cut_text_suffix(line, max_bytes))
                partial = True
            break
        kept.append(line)
        used += cost
    kept.reverse()
    out = "\n".join(kept)
    return TruncationResult(out, True, truncated_by, total_lines, total_bytes, len(kept), utf8_len(out),
                            partial, False, max_lines, max_bytes)


# ---------------------------------------------------------------------------------------------
# Wrapper ("desktop") caps, spec limits.2

NoticeFn = Callable[[Sequence[str]], str]
"""Renders the truncation notice given the body lines that are retained."""


def split_body_lines(text: str) -> list[str]:
    """Strip all trailing newlines, then split on ``\\n``; empty text → no lines."""
    body = text.rstrip("\n")
    return body.split("\n") if body else []


@dataclass(frozen=True)
class LimitOutcome:
    """What a cap did: ``text`` is the limited text; ``retained`` the body lines kept."""

    text: str
    truncated: bool
    original_bytes: int
    retained: tuple[str, ...]


def prefix_lines(text: str, max_bytes: int, notice: NoticeFn, original_bytes: int | None = None) -> LimitOutcome:
    """Keep the largest whole-line prefix that fits with ``\\n\\n`` + notice (spec limits.2, prefix strategy)."""
    orig = utf8_len(text) if original_bytes is None else original_bytes
    if orig <= max_bytes:
        return LimitOutcome(text, False, orig, ())
    lines = split_body_lines(text)
    best: tuple[str, int] | None = None
    body_bytes = -1
    for count in range(1, len(lines) + 1):
        body_bytes += utf8_len(lines[count - 1]) + 1
        if body_bytes + 2 > max_bytes:
            break  # the body alone no longer fits; larger counts cannot either
        kept = lines[:count]
        candidate = "\n".join(kept) + SEPARATOR + notice(kept)
        if utf8_len(candidate) <= max_bytes:
            best = (candidate, count)
    if best is None:
        return LimitOutcome(cut_text_prefix(notice([]), max_bytes), True, orig, ())
    return LimitOutcome(best[0], True, orig, tuple(lines[: best[1]]))


def head_tail_lines(text: str, max_bytes: int, notice: NoticeFn, original_bytes: int | None = None) -> LimitOutcome:
    """Keep a 45 % head and a 55 % tail of whole lines around the notice (spec limits.2, head+tail)."""
    orig = utf8_len(text) if original_bytes is None else original_bytes
    if orig <= max_bytes:
        return LimitOutcome(text, False, orig, ())
    lines = split_body_lines(text)
    note = cut_text_prefix(notice([]), max_bytes)
    body_budget = max(0, max_bytes - utf8_len(note) - 4)
    head_budget = math.floor(body_budget * HEAD_SHARE)
    tail_budget = body_budget - head_budget

    head_count = 0
    head_bytes = 0
    for i, line in enumerate(lines):
        cost = utf8_len(line) + (1 if i > 0 else 0)
        if head_bytes + cost > head_budget:
            break
        head_bytes += cost
        head_count += 1
    head = "\n".join(lines[:head_count])
    if head_count == 0 and lines and utf8_len(lines[0]) > head_budget:
        head = cut_text_prefix(lines[0], head_budget)

    rest = lines[head_count:]
    tail_lines: list[str] = []
    tail_bytes = 0
    idx = len(rest)
    while idx > 0:
        line = rest[idx - 1]
        cost = utf8_len(line) + (1 if tail_lines else 0)
        if tail_bytes + cost > tail_budget:
            break
        tail_lines.append(line)
        tail_bytes += cost
        idx -= 1
    tail_lines.reverse()
    whole_tail = "\n".join(tail_lines)
    tail = whole_tail
    if idx > 0:
        before = rest[idx - 1]
        remaining = tail_budget - utf8_len(whole_tail) - (1 if whole_tail else 0)
        if utf8_len(before) > tail_budget and remaining > 0:
            piece = cut_text_suffix(before, remaining)
            tail = piece + ("\n" + whole_tail if whole_tail else "")
    out = SEPARATOR.join(p for p in (head, note, tail) if p)
    if utf8_len(out) > max_bytes:
        out = cut_text_prefix(out, max_bytes)
    return LimitOutcome(out, True, orig, tuple(lines[:head_count]))


def continuation_hint(tool: str, preserve_args: Sequence[str], instruction: str) -> dict[str, Any]:
    return {"tool": tool, "preserve_args": list(preserve_args), "instruction": instruction}


def continuation(next_offset: float, offset_unit: str, hint: dict[str, Any]) -> dict[str, Any]:
    """``details.desktop_output_continuation`` of a paged result (grep's and glob's file pages)."""
    return {"has_more": True, "next_offset": next_offset, "offset_unit": offset_unit, "continuation_hint": hint}


def apply_desktop_text_limit(
    result: ToolResult,
    limited_text: str,
    *,
    strategy: str,
    original_bytes: int,
    max_bytes: int,
    next_offset: float | None = None,
    offset_unit: str | None = None,
    hint: dict[str, Any] | None = None,
) -> ToolResult:
    """Replace the first text block with ``limited_text`` and record the truncation (spec limits.2 metadata)."""
    blocks: list[Any] = []
    replaced = False
    for block in result.content:
        if isinstance(block, TextBlock):
            if not replaced:
                blocks.append(TextBlock(limited_text))
                replaced = True
            continue
        blocks.append(block)
    if not replaced:
        blocks.insert(0, TextBlock(limited_text))
    meta: dict[str, Any] = {
        "truncated": True,
        "has_more": True,
        "strategy": strategy,
        "original_bytes": original_bytes,
        "returned_bytes": utf8_len(limited_text),
        "max_bytes": max_bytes,
    }
    if next_offset is not None:
        meta["next_offset"] = next_offset
    if offset_unit is not None:
        meta["offset_unit"] = offset_unit
    if hint is not None:
        meta["continuation_hint"] = hint
    details = dict(result.details or {})
    details["desktop_output_truncation"] = meta
    if hint is not None:
        cont: dict[str, Any] = {"has_more": True}
        if next_offset is not None:
            cont["next_offset"] = next_offset
        if offset_unit is not None:
            cont["offset_unit"] = offset_unit
        cont["continuation_hint"] = hint
        details["desktop_output_continuation"] = cont
    return ToolResult(result.tool_name, tuple(blocks), details, result.is_error)
