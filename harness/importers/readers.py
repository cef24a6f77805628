"""Trace readers: Claude Code session JSONL, pi session JSONL, and OpenAI chat-completions /
Anthropic messages logs (JSON or JSON Lines of requests and responses) → ``RecordedSession``; plus
format auto-detection from content.

Readers are liberal about what surrounds the tool calls (unknown entry types, extra fields,
repeated conversation history in logged requests: calls and results are de-duplicated by id) and
strict about the tool calls themselves: a tool block without an id or name, or a result without
the id of its call, is a ``TraceError`` naming the file and line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from harness.importers.trace import (
    FORMATS,
    JsonObj,
    RecordedResult,
    RecordedSession,
    ToolCall,
    TraceError,
    json_records,
    read_text,
    text_of_content,
)

DETECT_RECORDS = 200
TITLE_SKIP_PREFIXES = ("<", "Caveat:")
# Loggers of OpenAI-style tool results have no error flag; these openings are how tool layers
# conventionally report a failure in the result text.
OPENAI_ERROR_RE = re.compile(r"\A\s*(?:error\b|Error\b|ERROR\b|<tool_use_error>)")
CLAUDE_TYPES = ("user", "assistant")
CLAUDE_MARKERS = ("sessionId", "parentUuid", "uuid")
PI_EVENT_MESSAGE_TYPES = ("message", "message_end")


class _Collector:
    """Collects calls and results in trace order, de-duplicated by call id."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.problems: list[str] = []
        self.notes: list[str] = []
        self.calls: dict[str, ToolCall] = {}
        self.results: dict[str, RecordedResult] = {}
        self.first_prompt = ""
        self.orphans = 0

    def problem(self, line: int, message: str) -> None:
        self.problems.append(f"{self.path}:{line}: {message}")

    def call(self, line: int, where: str, call_id: Any, name: Any, args: Any, *,
             args_problem: str = "") -> None:
        if not isinstance(call_id, str) or not call_id:
            self.problem(line, f"{where}.id: expected the tool call's id (a non-empty string)")
            return
        if not isinstance(name, str) or not name:
            self.problem(line, f"{where}.name: expected the tool name (a non-empty string)")
            return
        if call_id in self.calls:
            return  # logged requests repeat the conversation so far
        if args is None and not args_problem:
            args = {}
        if args is not None and not isinstance(args, dict):
            args_problem = args_problem or f"arguments are not an object ({type(args).__name__})"
            args = None
        self.calls[call_id] = ToolCall(call_id=call_id, name=name, args=args, line=line, args_problem=args_problem)

    def result(self, line: int, where: str, call_id: Any, content: Any, is_error: Any) -> None:
        if not isinstance(call_id, str) or not call_id:
            self.problem(line, f"{where}: expected the id of the tool call this result answers (a non-empty string)")
            return
        if call_id in self.results:
            return
        self.results[call_id] = RecordedResult(text=text_of_content(content), is_error=is_error is True, line=line)

    def prompt(self, content: Any) -> None:
        if self.first_prompt:
            return
        text = text_of_content(content).strip()
        if text and not text.startswith(TITLE_SKIP_PREFIXES):
            self.first_prompt = text

    def session(self, fmt: str, session_id: str, cwd: str | None) -> RecordedSession:
        if self.problems:
            raise TraceError(self.problems)
        calls = []
        for c in self.calls.values():
            res = self.results.get(c.call_id)
            calls.append(ToolCall(c.call_id, c.name, c.args, c.line, res, c.args_problem))
        orphans = len(set(self.results) - set(self.calls))
        notes = list(self.notes)
        if orphans:
            notes.append(f"{orphans} recorded result(s) answer calls that are not in the trace")
        return RecordedSession(path=self.path, format=fmt, session_id=session_id or Path(self.path).stem, cwd=cwd,
                       first_prompt=self.first_prompt, calls=tuple(calls), notes=tuple(notes))


def _blocks(content: Any) -> list[JsonObj]:
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _anthropic_user_prompt(col: _Collector, content: Any) -> None:
    """A user message is the session's prompt unless it only carries tool results."""
    if isinstance(content, str) or not any(b.get("type") == "tool_result" for b in _blocks(content)):
        col.prompt(content)


def _anthropic_blocks(col: _Collector, line: int, where: str, content: Any) -> None:
    """Anthropic-style content blocks (Claude Code and Anthropic logs): ``tool_use`` calls and
    ``tool_result`` results (``is_error``); ``where`` names the content list in problems."""
    for i, block in enumerate(_blocks(content), 1):
        sub = f"{where}[{i}]"
        if block.get("type") == "tool_use":
            col.call(line, sub, block.get("id"), block.get("name"), block.get("input"))
        elif block.get("type") == "tool_result":
            col.result(line, f"{sub}.tool_use_id", block.get("tool_use_id"), block.get("content"),
                       block.get("is_error"))


# -- Claude Code --------------------------------------------------------------------------------

def read_claude_code(path: str, records: list[tuple[int, Any]]) -> RecordedSession:
    """Claude Code session JSONL: ``user``/``assistant`` entries carrying an Anthropic-style
    ``message``; ``cwd`` and ``sessionId`` on each entry (the first ones are used)."""
    col = _Collector(path)
    session_id, cwd = "", None
    for line, rec in records:
        if not isinstance(rec, dict):
            col.problem(line, f"expected a JSON object per line, got {type(rec).__name__}")
            continue
        if not session_id and isinstance(rec.get("sessionId"), str):
            session_id = rec["sessionId"]
        if cwd is None and isinstance(rec.get("cwd"), str) and rec["cwd"]:
            cwd = rec["cwd"]
        if rec.get("type") not in CLAUDE_TYPES:
            continue
        msg = rec.get("message")
        if not isinstance(msg, dict):
            col.problem(line, "message: expected an object with role and content")
            continue
        content = msg.get("content")
        if rec["type"] == "user" and not rec.get("isMeta") and isinstance(content, (str, list)):
            _anthropic_user_prompt(col, content)
        _anthropic_blocks(col, line, "message.content", content)
    return col.session("claude-code", session_id, cwd)


# -- pi ---------------------------------------------------------------------------------------

def read_pi(path: str, records: list[tuple[int, Any]]) -> RecordedSession:
    """pi session JSONL (header ``{"type": "session", "id", "cwd"}`` then ``message`` entries
    whose ``message`` is a pi-ai message: assistant ``toolCall`` blocks, ``toolResult``
    messages); also pi's ``--mode json`` event stream (``message_end`` events). Entries are taken
    in file order — the order the calls touched the file system — even across branches."""
    col = _Collector(path)
    session_id, cwd = "", None
    for line, rec in records:
        if not isinstance(rec, dict):
            col.problem(line, f"expected a JSON object per line, got {type(rec).__name__}")
            continue
        kind = rec.get("type")
        if kind == "session":
            session_id = session_id or str(rec.get("id") or "")
            if cwd is None and isinstance(rec.get("cwd"), str) and rec["cwd"]:
                cwd = rec["cwd"]
            continue
        if kind not in PI_EVENT_MESSAGE_TYPES:
            continue
        msg = rec.get("message")
        if not isinstance(msg, dict):
            col.problem(line, "message: expected an object with a role")
            continue
        role = msg.get("role")
        if role == "user":
            col.prompt(msg.get("content"))
        elif role == "assistant":
            for i, block in enumerate(_blocks(msg.get("content")), 1):
                if block.get("type") == "toolCall":
                    col.call(line, f"message.content[{i}]", block.get("id"), block.get("name"),
                             block.get("arguments"))
        elif role == "toolResult":
            col.result(line, "message.toolCallId", msg.get("toolCallId"), msg.get("content"), msg.get("isError"))
        elif role == "bashExecution":
            col.notes.append(f"{path}:{line}: a shell command the user ran ({msg.get('command')!r}) "
                             "is not a tool call and is not imported")
    return col.session("pi", session_id, cwd)


# -- OpenAI / Anthropic logs -----------------------------------------------------------------------

def _log_messages(rec: Any, where: str) -> Iterator[tuple[str, JsonObj]]:
    """Every message of one logged record, in order: a request's ``messages``, then a response's
    message(s). Wrappers ``request``/``response``/``body`` are unwrapped; a bare message or a
    list of records is accepted too."""
    if isinstance(rec, list):
        for i, item in enumerate(rec, 1):
            yield from _log_messages(item, f"{where}[{i}]")
        return
    if not isinstance(rec, dict):
        return
    for key in ("request", "body", "response"):
        if isinstance(rec.get(key), (dict, list)):
            yield from _log_messages(rec[key], f"{where}.{key}" if where else key)
    messages = rec.get("messages")
    if isinstance(messages, list):
        for i, m in enumerate(messages, 1):
            if isinstance(m, dict):
                yield f"{where + '.' if where else ''}messages[{i}]", m
    choices = rec.get("choices")
    if isinstance(choices, list):
        for i, ch in enumerate(choices, 1):
            if isinstance(ch, dict) and isinstance(ch.get("message"), dict):
                yield f"{where + '.' if where else ''}choices[{i}].message", ch["message"]
    if ("role" in rec and "content" in rec) or "tool_calls" in rec:
        yield where or "(message)", rec


def _log_meta(records: list[tuple[int, Any]]) -> tuple[str, str | None]:
    session_id, cwd = "", None
    for _, top in records:
        nested = [top.get(k) for k in ("request", "body")] if isinstance(top, dict) else []
        for rec in (top, *nested):
            if not isinstance(rec, dict):
                continue
            for key in ("session_id", "sessionId", "conversation_id"):
                if not session_id and isinstance(rec.get(key), str):
                    session_id = rec[key]
            if cwd is None and isinstance(rec.get("cwd"), str):
                cwd = rec["cwd"]
    return session_id, cwd


def read_openai(path: str, records: list[tuple[int, Any]]) -> RecordedSession:
    """OpenAI chat-completions logs: assistant ``tool_calls`` (``function.arguments`` is a JSON
    string) and ``role: tool`` messages with ``tool_call_id``. Results have no error flag; a
    result whose text opens with ``Error``/``error`` (or carries ``is_error: true``) is taken as
    a recorded error."""
    import json

    col = _Collector(path)
    for line, rec in records:
        for where, msg in _log_messages(rec, ""):
            role = msg.get("role")
            if role == "user":
                col.prompt(msg.get("content"))
            elif role == "assistant":
                calls = msg.get("tool_calls")
                for i, tc in enumerate(calls if isinstance(calls, list) else [], 1):
                    sub = f"{where}.tool_calls[{i}]"
                    if not isinstance(tc, dict):
                        col.problem(line, f"{sub}: expected an object with id and function")
                        continue
                    fn = tc.get("function")
                    if not isinstance(fn, dict):
                        col.problem(line, f"{sub}.function: expected an object with name and arguments")
                        continue
                    raw = fn.get("arguments")
                    args: Any = raw
                    problem = ""
                    if isinstance(raw, str):
                        try:
                            args = json.loads(raw) if raw.strip() else {}
                        except json.JSONDecodeError as exc:
                            args, problem = None, f"arguments are not valid JSON ({exc.msg})"
                    col.call(line, sub, tc.get("id"), fn.get("name"), args, args_problem=problem)
            elif role == "tool":
                text = text_of_content(msg.get("content"))
                err = msg.get("is_error") is True or bool(OPENAI_ERROR_RE.match(text))
                col.result(line, f"{where}.tool_call_id", msg.get("tool_call_id"), text, err)
    session_id, cwd = _log_meta(records)
    return col.session("openai", session_id, cwd)


def read_anthropic(path: str, records: list[tuple[int, Any]]) -> RecordedSession:
    """Anthropic messages logs: assistant ``tool_use`` blocks and user ``tool_result`` blocks
    (``is_error``), in requests' ``messages`` and in responses (``{"type": "message", …}``)."""
    col = _Collector(path)
    for line, rec in records:
        for where, msg in _log_messages(rec, ""):
            role = msg.get("role")
            content = msg.get("content")
            if role == "user":
                _anthropic_user_prompt(col, content)
            _anthropic_blocks(col, line, f"{where}.content", content)
    session_id, cwd = _log_meta(records)
    return col.session("anthropic", session_id, cwd)


READERS: dict[str, Callable[[str, list[tuple[int, Any]]], RecordedSession]] = {
    "claude-code": read_claude_code,
    "pi": read_pi,
    "openai": read_openai,
    "anthropic": read_anthropic,
}


# -- detection --------------------------------------------------------------------------------------

def _record_format(rec: Any) -> str | None:
    """The format one record proves, or None when it is not decisive."""
    if isinstance(rec, list):
        for item in rec:
            found = _record_format(item)
            if found:
                return found
        return None
    if not isinstance(rec, dict):
        return None
    kind = rec.get("type")
    if kind in CLAUDE_TYPES and isinstance(rec.get("message"), dict) and any(k in rec for k in CLAUDE_MARKERS):
        return "claude-code"
    if kind == "session" and ("cwd" in rec or "version" in rec):
        return "pi"
    if kind in PI_EVENT_MESSAGE_TYPES and isinstance(rec.get("message"), dict):
        role = rec["message"].get("role")
        blocks = _blocks(rec["message"].get("content"))
        if role in ("toolResult", "bashExecution") or any(b.get("type") == "toolCall" for b in blocks):
            return "pi"
    for _, msg in _log_messages(rec, ""):
        if "tool_calls" in msg or msg.get("role") == "tool" or "tool_call_id" in msg:
            return "openai"
        if any(b.get("type") in ("tool_use", "tool_result") for b in _blocks(msg.get("content"))):
            return "anthropic"
    if "choices" in rec:
        return "openai"
    return None


def detect_format(path: str, records: list[tuple[int, Any]]) -> str:
    """The trace format, decided from content; ``TraceError`` when nothing is decisive."""
    for _, rec in records[:DETECT_RECORDS]:
        found = _record_format(rec)
        if found:
            return found
    raise TraceError([f"{path}:1: cannot tell the trace format (expected Claude Code or pi session JSONL, "
                      "or an OpenAI chat-completions / Anthropic messages log with tool calls); "
                      f"pass --format {'|'.join(FORMATS)}"])


def read_trace(path: str, fmt: str = "auto") -> RecordedSession:
    """Read one trace file (``fmt``: ``auto`` or one of ``FORMATS``)."""
    if fmt != "auto" and fmt not in READERS:
        raise TraceError([f"{path}:1: unknown format {fmt!r}; expected auto or one of {', '.join(FORMATS)}"])
    records = json_records(read_text(path), path)
    chosen = detect_format(path, records) if fmt == "auto" else fmt
    return READERS[chosen](path, records)
