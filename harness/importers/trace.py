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
    """The tool result as the recorded tool layer reported it: its text and its error flag;
    ``images`` counts image blocks (never compared); ``structured`` is the agent's own
    structured record of the result when the trace carries one (Claude Code's
    ``toolUseResult``, a Codex ``metadata`` object)."""

    text: str
    is_error: bool
    line: int
    images: int = 0
    structured: JsonObj | None = None


@dataclass(frozen=True)
class ToolCall:
    """One recorded tool call: the agent's tool name and arguments as sent, where it is in the
    trace, and its result (None when none was recorded; ``missing_reason`` then says why:
    the assistant message ended with an error or abort, the user interrupted, the trace is
    truncated or ends). ``args`` is None when the recorded arguments were not a JSON object
    (e.g. a model wrote malformed JSON); ``args_problem`` then says why. ``sidechain`` marks
    calls a subagent made inside the session (Claude Code ``isSidechain``)."""

    call_id: str
    name: str
    args: JsonObj | None
    line: int
    result: RecordedResult | None = None
    args_problem: str = ""
    missing_reason: str = ""
    sidechain: bool = False


@dataclass(frozen=True)
class RecordedPlatform:
    """The operating system the session ran on (``linux``, ``macos``, ``windows``; None when the
    trace does not show it) and what showed it (``cwd /Users/ana/shop``)."""

    os: str | None = None
    evidence: str = ""


@dataclass(frozen=True)
class RecordedAgent:
    """The agent (``Claude Code``, ``pi``, ``Codex CLI``…) and the version the trace records
    (``version``: the agent's release when recorded, else what the trace shows instead, e.g.
    pi's session-format version in ``detail``)."""

    name: str = ""
    version: str | None = None
    detail: str = ""


@dataclass(frozen=True)
class RecordedSession:
    """One recorded session: ``cwd`` is the recorded working directory when the trace has it;
    ``surface`` is the tool surface the calls were made on (``claude-code``, ``pi``, ``minimax``;
    None when the trace does not say); ``subagent_of`` names the parent session of a subagent
    transcript (a Claude Code ``agent-*.jsonl`` file)."""

    path: str
    format: str
    session_id: str
    cwd: str | None
    first_prompt: str
    calls: tuple[ToolCall, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)
    surface: str | None = None
    platform: RecordedPlatform = field(default_factory=RecordedPlatform)
    agent: RecordedAgent = field(default_factory=RecordedAgent)
    subagent_of: str | None = None


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


@dataclass(frozen=True)
class ParsedRecords:
    """A trace's JSON records with their lines; ``truncated_line`` is the line of an incomplete
    last record (the writer stopped mid-line) that was left out; ``skipped_lines`` are invalid
    JSON Lines left out on request (``skip_bad_lines``)."""

    records: list[tuple[int, Any]]
    truncated_line: int | None = None
    skipped_lines: tuple[int, ...] = ()


def parse_records(text: str, path: str, *, skip_bad_lines: bool = False) -> ParsedRecords:
    """The trace as (line, value) records: one per line for JSON Lines, one per element for a
    JSON array, one for a single JSON document. Invalid JSON raises ``TraceError`` naming the
    line (for JSON Lines: every bad line), except an incomplete last line of JSON Lines without
    a final newline — a recording cut off mid-write — which is left out and reported as
    ``truncated_line``; ``skip_bad_lines`` leaves every other invalid JSON line out as well."""
    stripped = text.lstrip()
    if not stripped:
        raise TraceError([f"{path}:1: expected JSON or JSON Lines, got an empty file"])
    lines = text.split("\n")
    records: list[tuple[int, Any]] = []
    bad: list[tuple[int, str]] = []
    for no, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            records.append((no, json.loads(raw)))
        except json.JSONDecodeError as exc:
            bad.append((no, f"{path}:{no}: invalid JSON: {exc.msg} (column {exc.colno})"))
    if not bad:
        if len(records) == 1 and isinstance(records[0][1], list):
            return ParsedRecords(_array_records(text, path, text.index("[")))
        return ParsedRecords(records)
    start = len(text) - len(stripped)
    jsonl = bool(records) and stripped[0] == "{" and records[0][0] == _line_of(text, start)
    if jsonl:
        last_line = len(lines) if lines[-1].strip() else None
        truncated = last_line if bad[-1][0] == last_line else None  # no newline after it: cut off mid-write
        rest = [b for b in bad if b[0] != truncated]
        if rest and not skip_bad_lines:
            raise TraceError([m for _, m in rest])
        return ParsedRecords(records, truncated, tuple(n for n, _ in rest))
    # Not JSON Lines: maybe one (pretty-printed) JSON document.
    if stripped[0] == "[":
        return ParsedRecords(_array_records(text, path, start))
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceError([f"{path}:{exc.lineno}: invalid JSON: {exc.msg} (column {exc.colno})"]) from None
    return ParsedRecords([(_line_of(text, start), value)])


def json_records(text: str, path: str) -> list[tuple[int, Any]]:
    """``parse_records(text, path).records``."""
    return parse_records(text, path).records


def image_blocks(content: Any) -> int:
    """How many image blocks a message content value holds (Anthropic ``image``, pi ``image``,
    OpenAI ``image_url``/``input_image``)."""
    if not isinstance(content, list):
        return 0
    return sum(1 for b in content if isinstance(b, dict) and b.get("type") in ("image", "image_url", "input_image"))


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
