"""The trace model: what a reader extracts from a recorded agent session (tool calls in order,
each with its recorded result), plus line-numbered JSON record reading shared by the readers.

A trace problem the user can fix (bad JSON, a tool block without an id) is a ``TraceError`` whose
``problems`` are ``file:line: what was expected`` lines.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import HarnessError

FORMATS: tuple[str, ...] = ("claude-code", "pi", "openai", "anthropic")
MAX_TRACE_BYTES = 256 * 1024 * 1024

JsonObj = dict[str, Any]


class TraceError(HarnessError):
    """A trace file cannot be read. ``problems`` holds ``file:line: what was expected`` lines."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class RecordedResult:
    """The tool result as the recorded tool layer reported it: its text and its error flag."""

    text: str
    is_error: bool
    line: int


@dataclass(frozen=True)
class ToolCall:
    """One recorded tool call: the agent's tool name and arguments as sent, where it is in the
    trace, and its result (None when the trace ends before the result was recorded).
    ``args`` is None when the recorded arguments were not a JSON object (e.g. a model wrote
    malformed JSON); ``args_problem`` then says why."""

    call_id: str
    name: str
    args: JsonObj | None
    line: int
    result: RecordedResult | None = None
    args_problem: str = ""


@dataclass(frozen=True)
class RecordedSession:
    """One recorded session: ``cwd`` is the recorded working directory when the trace has it."""

    path: str
    format: str
    session_id: str
    cwd: str | None
    first_prompt: str
    calls: tuple[ToolCall, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)


def read_text(path: str) -> str:
    """The trace file's text; unreadable, oversized or non-UTF-8 files raise ``TraceError``."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_TRACE_BYTES:
            raise TraceError([f"{path}:1: trace is {size} bytes; at most {MAX_TRACE_BYTES} bytes are read"])
        return p.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise TraceError([f"{path}:1: cannot read the trace: {exc.strerror or exc}"]) from None
    except UnicodeDecodeError as exc:
        line = p.read_bytes()[: exc.start].count(b"\n") + 1
        raise TraceError([f"{path}:{line}: expected UTF-8 text ({exc.reason})"]) from None


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _array_records(text: str, path: str, start: int) -> list[tuple[int, Any]]:
    """Elements of a top-level JSON array with the line each one starts on."""
    decoder = json.JSONDecoder()
    out: list[tuple[int, Any]] = []
    i = start + 1
    n = len(text)
    expect_value = True
    while True:
        while i < n and text[i] in " \t\r\n":
            i += 1
        if i >= n:
            raise TraceError([f"{path}:{_line_of(text, i)}: invalid JSON: the array is not closed with ']'"])
        if text[i] == "]":
            return out
        if not expect_value:
            if text[i] != ",":
                raise TraceError([f"{path}:{_line_of(text, i)}: invalid JSON: expected ',' or ']' between array items"])
            i += 1
            expect_value = True
            continue
        try:
            value, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            raise TraceError([f"{path}:{exc.lineno}: invalid JSON: {exc.msg} (column {exc.colno})"]) from None
        out.append((_line_of(text, i), value))
        i = end
        expect_value = False


def json_records(text: str, path: str) -> list[tuple[int, Any]]:
    """The trace as (line, value) records: one per line for JSON Lines, one per element for a
    JSON array, one for a single JSON document. Invalid JSON raises ``TraceError`` naming the
    line (for JSON Lines: every bad line)."""
    stripped = text.lstrip()
    if not stripped:
        raise TraceError([f"{path}:1: expected JSON or JSON Lines, got an empty file"])
    lines = text.split("\n")
    records: list[tuple[int, Any]] = []
    bad: list[str] = []
    for no, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            records.append((no, json.loads(raw)))
        except json.JSONDecodeError as exc:
            bad.append(f"{path}:{no}: invalid JSON: {exc.msg} (column {exc.colno})")
    if not bad:
        if len(records) == 1 and isinstance(records[0][1], list):
            return _array_records(text, path, text.index("["))
        return records
    # Not JSON Lines: maybe one (pretty-printed) JSON document.
    start = len(text) - len(stripped)
    if stripped[0] == "[":
        return _array_records(text, path, start)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        if len(records) >= 1 and stripped[0] == "{" and records[0][0] == _line_of(text, start):
            raise TraceError(bad) from None  # the first line parsed alone: JSON Lines with bad lines
        raise TraceError([f"{path}:{exc.lineno}: invalid JSON: {exc.msg} (column {exc.colno})"]) from None
    return [(_line_of(text, start), value)]


def text_of_content(content: Any) -> str:
    """The text of a message content value: a string, or the ``text`` of its text blocks joined
    by newlines (images and other blocks contribute nothing)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return "\n".join(parts)
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        return str(content["text"])
    return ""
