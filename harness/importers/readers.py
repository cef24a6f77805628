"""Trace readers: Claude Code session JSONL, pi session JSONL, and OpenAI chat-completions /
Anthropic messages logs (JSON or JSON Lines of requests and responses) → ``RecordedSession``; plus
format auto-detection from content.

Readers are liberal about what surrounds the tool calls (unknown entry types, extra fields,
repeated conversation history in logged requests: calls and results are de-duplicated by id) and
strict about the tool calls themselves: a tool block without an id or name, or a result without
the id of its call, is a ``TraceError`` naming the file and line.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from harness.importers.trace import (
    FORMATS,
    JsonObj,
    ParsedRecords,
    RecordedAgent,
    RecordedPlatform,
    RecordedResult,
    RecordedSession,
    ToolCall,
    TraceError,
    image_blocks,
    parse_records,
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
# Claude Code entries that are not conversation messages (ignored, counted in a note).
CLAUDE_NON_MESSAGE_TYPES = ("summary", "system", "file-history-snapshot", "queue-operation")
PI_EVENT_MESSAGE_TYPES = ("message", "message_end")
PI_LEGACY_SESSION_VERSION = 1
USER_INTERRUPT_RE = re.compile(r"\[Request interrupted by user")
# Where the recorded working directory shows the operating system.
CWD_PLATFORMS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\A/Users/"), "macos"),
    (re.compile(r"\A/(?:private/)?var/folders/"), "macos"),
    (re.compile(r"\A[A-Za-z]:[\\/]|\A\\\\"), "windows"),
    (re.compile(r"\A/(?:home|root|srv|opt|mnt|tmp|workspace|work|app|usr|data)(?:/|\Z)"), "linux"),
)
# Agents' system prompts state the platform (Claude Code's <env> block: "Platform: darwin").
PROMPT_PLATFORM_RE = re.compile(r"\b(?:Platform|OS|Operating system)\s*:\s*(darwin|macos|linux|win32|windows)\b",
                                re.IGNORECASE)
PROMPT_CWD_RE = re.compile(r"\bWorking directory:\s*(\S+)")
# Shells that state the exit status in the result text of an unflagged (OpenAI-style) result.
EXIT_STATUS_LINE_RE = re.compile(r"\[(?:Command finished|The command completed) with exit code (\d+)\.?\]")
PLATFORM_WORDS = {"darwin": "macos", "macos": "macos", "linux": "linux", "win32": "windows", "windows": "windows"}
# Why an assistant message's calls may have no result, by the stop reason the message records.
STOP_REASONS: dict[str, str] = {
    "error": "the assistant message ended with an error",
    "aborted": "the assistant message was aborted",
    "length": "the response was cut off at the output-token limit (finish_reason length)",
    "max_tokens": "the response was cut off at the output-token limit (stop_reason max_tokens)",
    "content_filter": "the response was stopped by the content filter",
}


class _Collector:
    """Collects calls and results in trace order, de-duplicated by call id, with what happened
    after each call (to name the reason when its result is missing)."""

    def __init__(self, path: str, parsed: ParsedRecords) -> None:
        self.path = path
        self.parsed = parsed
        self.problems: list[str] = []
        self.notes: list[str] = []
        self.calls: dict[str, ToolCall] = {}
        self.results: dict[str, RecordedResult] = {}
        self.first_prompt = ""
        self.seq = 0  # index of the record being read
        self.call_seq: dict[str, int] = {}
        self.call_stop: dict[str, str] = {}  # call id -> why its assistant message stopped early
        self.events: list[tuple[int, str]] = []  # (seq, reason) of interruptions and API errors
        self.ignored: Counter[str] = Counter()
        self.system_prompt = ""
        self.activity: set[int] = set()  # records that added a call, a result or a prompt

    def at(self, seq: int) -> None:
        self.seq = seq

    def problem(self, line: int, message: str) -> None:
        self.problems.append(f"{self.path}:{line}: {message}")

    def call(self, line: int, where: str, call_id: Any, name: Any, args: Any, *,
             args_problem: str = "", sidechain: bool = False) -> str | None:
        if not isinstance(call_id, str) or not call_id:
            self.problem(line, f"{where}.id: expected the tool call's id (a non-empty string)")
            return None
        if not isinstance(name, str) or not name:
            self.problem(line, f"{where}.name: expected the tool name (a non-empty string)")
            return None
        if call_id in self.calls:
            return None  # logged requests repeat the conversation so far
        if args is None and not args_problem:
            args = {}
        if args is not None and not isinstance(args, dict):
            args_problem = args_problem or f"arguments are not an object ({type(args).__name__})"
            args = None
        self.calls[call_id] = ToolCall(call_id=call_id, name=name, args=args, line=line, args_problem=args_problem,
                                       sidechain=sidechain)
        self.call_seq[call_id] = self.seq
        self.activity.add(self.seq)
        return call_id

    def stopped(self, call_ids: list[str], reason: str) -> None:
        for cid in call_ids:
            self.call_stop.setdefault(cid, reason)

    def event(self, reason: str) -> None:
        self.events.append((self.seq, reason))

    def result(self, line: int, where: str, call_id: Any, content: Any, is_error: Any, *,
               structured: JsonObj | None = None, text: str | None = None) -> None:
        if not isinstance(call_id, str) or not call_id:
            self.problem(line, f"{where}: expected the id of the tool call this result answers (a non-empty string)")
            return
        if call_id in self.results:
            return
        self.activity.add(self.seq)
        self.results[call_id] = RecordedResult(text=text_of_content(content) if text is None else text,
                                               is_error=is_error is True, line=line, images=image_blocks(content),
                                               structured=structured)

    def prompt(self, content: Any) -> None:
        if self.first_prompt:
            return
        text = text_of_content(content).strip()
        if text and not text.startswith(TITLE_SKIP_PREFIXES):
            self.first_prompt = text
            self.activity.add(self.seq)

    def _missing_reason(self, call_id: str) -> str:
        if call_id in self.call_stop:
            return self.call_stop[call_id]
        seq = self.call_seq[call_id]
        for at, reason in self.events:
            if at > seq:
                return reason
        if not any(at > seq for at in self.activity):
            if self.parsed.truncated_line is not None:
                return f"the trace is truncated (line {self.parsed.truncated_line} is incomplete) before its result"
            return "the trace ends before its result"
        return "no result was recorded although the session went on (the recording lost it)"

    def session(self, fmt: str, session_id: str, cwd: str | None, *, surface: str | None = None,
                agent: RecordedAgent | None = None, subagent_of: str | None = None) -> RecordedSession:
        if self.problems:
            raise TraceError(self.problems)
        calls = []
        for c in self.calls.values():
            res = self.results.get(c.call_id)
            missing = "" if res is not None else self._missing_reason(c.call_id)
            calls.append(ToolCall(c.call_id, c.name, c.args, c.line, res, c.args_problem, missing, c.sidechain))
        orphans = len(set(self.results) - set(self.calls))
        notes = list(self.notes)
        if orphans:
            notes.append(f"{orphans} recorded result(s) answer calls that are not in the trace")
        if self.parsed.truncated_line is not None:
            notes.append(f"line {self.parsed.truncated_line} is an incomplete record (the recording was cut off "
                         "mid-write) and is left out")
        if self.parsed.skipped_lines:
            notes.append(f"{len(self.parsed.skipped_lines)} line(s) of invalid JSON left out (--skip-bad-lines): "
                         + ", ".join(str(n) for n in self.parsed.skipped_lines))
        if self.ignored:
            notes.append("entries that are not tool calls, ignored: "
                         + ", ".join(f"{n} {k}" for k, n in sorted(self.ignored.items())))
        sidechain = sum(1 for c in calls if c.sidechain)
        if sidechain:
            notes.append(f"{sidechain} call(s) made by subagents inside the session (sidechains) are imported in "
                         "trace order: they ran on the same files")
        return RecordedSession(path=self.path, format=fmt, session_id=session_id or Path(self.path).stem, cwd=cwd,
                               first_prompt=self.first_prompt, calls=tuple(calls), notes=tuple(notes),
                               surface=surface, platform=detect_platform(cwd, self.system_prompt),
                               agent=agent or RecordedAgent(), subagent_of=subagent_of)


def detect_platform(cwd: str | None, system_prompt: str = "") -> RecordedPlatform:
    """The platform a system prompt states (``Platform: darwin``), else the one the recorded
    working directory's shape shows (``/Users/…`` macOS, ``C:/…`` Windows, ``/home/…`` Linux)."""
    m = PROMPT_PLATFORM_RE.search(system_prompt)
    if m:
        return RecordedPlatform(PLATFORM_WORDS[m.group(1).lower()], f"system prompt {m.group(0)!r}")
    if cwd:
        for pattern, os_name in CWD_PLATFORMS:
            if pattern.search(cwd):
                return RecordedPlatform(os_name, f"cwd {cwd}")
    return RecordedPlatform()


def _blocks(content: Any) -> list[JsonObj]:
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _anthropic_user_prompt(col: _Collector, content: Any) -> None:
    """A user message is the session's prompt unless it only carries tool results."""
    if isinstance(content, str) or not any(b.get("type") == "tool_result" for b in _blocks(content)):
        col.prompt(content)


def _anthropic_blocks(col: _Collector, line: int, where: str, content: Any, *, sidechain: bool = False,
                      structured: JsonObj | None = None) -> list[str]:
    """Anthropic-style content blocks (Claude Code and Anthropic logs): ``tool_use`` calls and
    ``tool_result`` results (``is_error``); ``where`` names the content list in problems.
    Returns the ids of the calls it added."""
    added: list[str] = []
    for i, block in enumerate(_blocks(content), 1):
        sub = f"{where}[{i}]"
        if block.get("type") in ("tool_use", "server_tool_use"):
            cid = col.call(line, sub, block.get("id"), block.get("name"), block.get("input"), sidechain=sidechain)
            if cid:
                added.append(cid)
        elif block.get("type") == "tool_result":
            col.result(line, f"{sub}.tool_use_id", block.get("tool_use_id"), block.get("content"),
                       block.get("is_error"), structured=structured)
        elif block.get("type") == "text" and USER_INTERRUPT_RE.search(str(block.get("text", ""))):
            col.event("the user interrupted the turn before its result was recorded")
    return added


# -- Claude Code --------------------------------------------------------------------------------

def read_claude_code(path: str, parsed: ParsedRecords) -> RecordedSession:
    """Claude Code session JSONL: ``user``/``assistant`` entries carrying an Anthropic-style
    ``message``; ``cwd``, ``sessionId`` and ``version`` on each entry (the first ones are used);
    ``isSidechain`` entries (subagents); ``isApiErrorMessage`` assistant entries and "[Request
    interrupted by user" texts end a turn; compaction summaries (``isCompactSummary``) are not
    prompts; ``toolUseResult`` is kept as the result's structured record."""
    col = _Collector(path, parsed)
    session_id, cwd, version = "", None, None
    all_sidechain, agent_id, compactions = True, None, 0
    for seq, (line, rec) in enumerate(parsed.records):
        col.at(seq)
        if not isinstance(rec, dict):
            col.problem(line, f"expected a JSON object per line, got {type(rec).__name__}")
            continue
        if not session_id and isinstance(rec.get("sessionId"), str):
            session_id = rec["sessionId"]
        if cwd is None and isinstance(rec.get("cwd"), str) and rec["cwd"]:
            cwd = rec["cwd"]
        if version is None and isinstance(rec.get("version"), str) and rec["version"]:
            version = rec["version"]
        kind = rec.get("type")
        if kind == "system" and rec.get("subtype") == "compact_boundary":
            compactions += 1
        if kind not in CLAUDE_TYPES:
            col.ignored[str(kind) if isinstance(kind, str) else "untyped"] += 1
            continue
        msg = rec.get("message")
        if not isinstance(msg, dict):
            col.problem(line, "message: expected an object with role and content")
            continue
        sidechain = rec.get("isSidechain") is True
        all_sidechain = all_sidechain and sidechain
        if agent_id is None and isinstance(rec.get("agentId"), str):
            agent_id = rec["agentId"]
        content = msg.get("content")
        if kind == "assistant" and rec.get("isApiErrorMessage") is True:
            col.event(f"the assistant turn ended with an API error ({text_of_content(content).strip()[:120]})")
            continue
        if kind == "user" and not rec.get("isMeta") and not rec.get("isCompactSummary") \
                and isinstance(content, (str, list)):
            if isinstance(content, str) and USER_INTERRUPT_RE.search(content):
                col.event("the user interrupted the turn before its result was recorded")
            elif not sidechain:
                _anthropic_user_prompt(col, content)
        structured = rec.get("toolUseResult") if isinstance(rec.get("toolUseResult"), dict) else None
        added = _anthropic_blocks(col, line, "message.content", content, sidechain=sidechain, structured=structured)
        stop = msg.get("stop_reason")
        if added and isinstance(stop, str) and stop in STOP_REASONS:
            col.stopped(added, STOP_REASONS[stop])
    if compactions:
        col.notes.append(f"the conversation was compacted {compactions} time(s); the file keeps every call, "
                         "so nothing is lost")
    subagent_of = session_id if (all_sidechain and col.calls and (agent_id or Path(path).name.startswith("agent-"))) \
        else None
    agent = RecordedAgent("Claude Code", version, "" if version else "the Claude Code version is not recorded")
    return col.session("claude-code", session_id if not subagent_of else f"{session_id}-{agent_id or Path(path).stem}",
                       cwd, surface="claude-code", agent=agent, subagent_of=subagent_of)


# -- pi ---------------------------------------------------------------------------------------

def read_pi(path: str, parsed: ParsedRecords) -> RecordedSession:
    """pi session JSONL (header ``{"type": "session", "version", "id", "cwd"}`` then ``message``
    entries whose ``message`` is a pi-ai message: assistant ``toolCall`` blocks, ``toolResult``
    messages); also pi's ``--mode json`` event stream (``message_end`` events). Entries are taken
    in file order — the order the calls touched the file system — even across branches. An
    assistant message with ``stopReason`` ``error``/``aborted`` names why its calls have no
    result. pi does not record its own release: the session-format version stands in."""
    col = _Collector(path, parsed)
    session_id, cwd = "", None
    format_version: Any = None
    header = False
    for seq, (line, rec) in enumerate(parsed.records):
        col.at(seq)
        if not isinstance(rec, dict):
            col.problem(line, f"expected a JSON object per line, got {type(rec).__name__}")
            continue
        kind = rec.get("type")
        if kind == "session":
            header = True
            session_id = session_id or str(rec.get("id") or "")
            format_version = rec.get("version", PI_LEGACY_SESSION_VERSION) if format_version is None else format_version
            if cwd is None and isinstance(rec.get("cwd"), str) and rec["cwd"]:
                cwd = rec["cwd"]
            continue
        if kind not in PI_EVENT_MESSAGE_TYPES:
            col.ignored[str(kind) if isinstance(kind, str) else "untyped"] += 1
            continue
        msg = rec.get("message")
        if not isinstance(msg, dict):
            col.problem(line, "message: expected an object with a role")
            continue
        role = msg.get("role")
        if role == "user":
            col.prompt(msg.get("content"))
        elif role == "assistant":
            added = []
            for i, block in enumerate(_blocks(msg.get("content")), 1):
                if block.get("type") == "toolCall":
                    cid = col.call(line, f"message.content[{i}]", block.get("id"), block.get("name"),
                                   block.get("arguments"))
                    if cid:
                        added.append(cid)
            stop = msg.get("stopReason")
            if added and isinstance(stop, str) and stop in STOP_REASONS:
                detail = msg.get("errorMessage")
                col.stopped(added, STOP_REASONS[stop] + (f" ({str(detail)[:120]})" if detail else ""))
        elif role == "toolResult":
            details = msg.get("details") if isinstance(msg.get("details"), dict) else None
            col.result(line, "message.toolCallId", msg.get("toolCallId"), msg.get("content"), msg.get("isError"),
                       structured=details)
        elif role == "bashExecution":
            col.notes.append(f"{path}:{line}: a shell command the user ran ({msg.get('command')!r}) "
                             "is not a tool call and is not imported")
        else:
            col.ignored[f"{role} message"] += 1
    if header:
        detail = f"session format v{format_version}" + (
            ", legacy linear sessions, so an older pi" if format_version == PI_LEGACY_SESSION_VERSION else "")
    else:
        detail = "a --mode json event stream"
    agent = RecordedAgent("pi", None, detail + "; pi does not record its release in a session")
    return col.session("pi", session_id, cwd, surface="pi", agent=agent)


# -- OpenAI / Anthropic logs -----------------------------------------------------------------------

def _log_messages(rec: Any, where: str) -> Iterator[tuple[str, JsonObj]]:
    """Every message of one logged record, in order: a request's ``messages`` (or Responses
    ``input`` items), then a response's message(s) (``choices[].message``, Responses ``output``
    items, an Anthropic message). Wrappers ``request``/``body``/``response``/``payload`` are
    unwrapped; a bare message or a list of records is accepted too."""
    if isinstance(rec, list):
        for i, item in enumerate(rec, 1):
            yield from _log_messages(item, f"{where}[{i}]")
        return
    if not isinstance(rec, dict):
        return
    prefix = f"{where}." if where else ""
    for key in ("request", "body", "response", "payload"):
        if isinstance(rec.get(key), (dict, list)):
            yield from _log_messages(rec[key], f"{prefix}{key}")
    for key in ("messages", "input", "output"):
        items = rec.get(key)
        if isinstance(items, list):
            for i, m in enumerate(items, 1):
                if isinstance(m, dict):
                    yield f"{prefix}{key}[{i}]", m
    choices = rec.get("choices")
    if isinstance(choices, list):
        for i, ch in enumerate(choices, 1):
            if isinstance(ch, dict) and isinstance(ch.get("message"), dict):
                msg = dict(ch["message"])
                if isinstance(ch.get("finish_reason"), str):
                    msg.setdefault("finish_reason", ch["finish_reason"])
                yield f"{prefix}choices[{i}].message", msg
    if ("role" in rec and "content" in rec) or "tool_calls" in rec or rec.get("type") in RESPONSES_ITEM_TYPES:
        yield where or "(message)", rec


RESPONSES_CALL_TYPES = ("function_call", "custom_tool_call", "local_shell_call")
RESPONSES_OUTPUT_TYPES = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")
RESPONSES_ITEM_TYPES = (*RESPONSES_CALL_TYPES, *RESPONSES_OUTPUT_TYPES)


def _log_meta(records: list[tuple[int, Any]]) -> tuple[str, str | None, RecordedAgent, str]:
    """Session id, cwd, agent (Codex CLI's ``session_meta``) and system prompt of a log."""
    session_id, cwd, agent, system = "", None, RecordedAgent(), ""
    for _, top in records:
        nested = [top.get(k) for k in ("request", "body", "payload")] if isinstance(top, dict) else []
        for rec in (top, *nested):
            if not isinstance(rec, dict):
                continue
            keys: tuple[str, ...] = ("session_id", "sessionId", "conversation_id")
            if isinstance(top, dict) and top.get("type") == "session_meta" and rec is top.get("payload"):
                keys = ("id", *keys)  # a Codex CLI rollout's session_meta payload
            for key in keys:
                if not session_id and isinstance(rec.get(key), str):
                    session_id = rec[key]
            if cwd is None and isinstance(rec.get("cwd"), str):
                cwd = rec["cwd"]
            if not agent.name and isinstance(rec.get("cli_version"), str):
                originator = str(rec.get("originator") or "codex")
                name = "Codex CLI" if originator.startswith("codex") else originator
                agent = RecordedAgent(name, rec["cli_version"], f"originator {originator}")
            if not system:
                if isinstance(rec.get("system"), (str, list)):
                    system = text_of_content(rec["system"])
                elif isinstance(rec.get("instructions"), str):
                    system = rec["instructions"]
                for key in ("messages", "input"):  # chat-completions messages, Responses input items
                    for m in rec.get(key) or [] if isinstance(rec.get(key), list) else []:
                        if isinstance(m, dict) and m.get("role") in ("system", "developer") and not system:
                            system = text_of_content(m.get("content"))
    if cwd is None:
        m = PROMPT_CWD_RE.search(system)
        cwd = m.group(1) if m else None
    return session_id, cwd, agent, system


def _unflagged_error(text: str) -> bool:
    """An OpenAI-style result (no error flag) that reports a failure: its text opens with
    ``Error``, or a shell states a non-zero exit code (OpenHands)."""
    m = EXIT_STATUS_LINE_RE.search(text)
    return bool(OPENAI_ERROR_RE.match(text)) or (m is not None and m.group(1) != "0")


def _openai_arguments(raw: Any) -> tuple[Any, str]:
    if isinstance(raw, str):
        try:
            return (json.loads(raw) if raw.strip() else {}), ""
        except json.JSONDecodeError as exc:
            return None, f"arguments are not valid JSON ({exc.msg})"
    return raw, ""


def _responses_output(output: Any) -> tuple[str, JsonObj | None]:
    """A Responses ``function_call_output`` value: its text and, when it is Codex's JSON
    envelope ``{"output": …, "metadata": {"exit_code": …}}``, the metadata."""
    if isinstance(output, str):
        try:
            value = json.loads(output)
        except json.JSONDecodeError:
            return output, None
        if isinstance(value, dict) and isinstance(value.get("output"), str):
            meta = value.get("metadata")
            return value["output"], meta if isinstance(meta, dict) else None
        return output, None
    return text_of_content(output), None


def read_openai(path: str, parsed: ParsedRecords) -> RecordedSession:
    """OpenAI logs: chat-completions (assistant ``tool_calls`` whose ``function.arguments`` is a
    JSON string; ``role: tool`` messages with ``tool_call_id``), Responses API items
    (``function_call``/``custom_tool_call`` and their ``*_output``), and Codex CLI rollouts
    (``session_meta`` and ``response_item`` payloads). Results have no error flag; a result
    whose text opens with ``Error``/``error`` (or carries ``is_error: true``, or a non-zero
    ``exit_code`` in Codex's metadata) is taken as a recorded error."""
    col = _Collector(path, parsed)
    for seq, (line, rec) in enumerate(parsed.records):
        col.at(seq)
        for where, msg in _log_messages(rec, ""):
            role, kind = msg.get("role"), msg.get("type")
            if kind in RESPONSES_CALL_TYPES:
                if kind == "custom_tool_call":
                    raw_input = msg.get("input")
                    args, problem = ({"input": raw_input}, "") if isinstance(raw_input, str) else (raw_input, "")
                elif kind == "local_shell_call":
                    action = msg.get("action")
                    args, problem = (action if isinstance(action, dict) else None), ""
                    if args is not None:
                        args = {k: v for k, v in args.items() if k != "type"}
                else:
                    args, problem = _openai_arguments(msg.get("arguments"))
                name = "local_shell" if kind == "local_shell_call" else msg.get("name")
                col.call(line, where, msg.get("call_id") or msg.get("id"), name, args, args_problem=problem)
            elif kind in RESPONSES_OUTPUT_TYPES:
                text, meta = _responses_output(msg.get("output"))
                code = meta.get("exit_code") if meta else None
                err = msg.get("is_error") is True or _unflagged_error(text) or (isinstance(code, int) and code != 0)
                col.result(line, f"{where}.call_id", msg.get("call_id"), msg.get("output"), err,
                           structured=meta, text=text)
            elif role == "user":
                col.prompt(msg.get("content"))
            elif role == "assistant":
                calls = msg.get("tool_calls")
                added = []
                for i, tc in enumerate(calls if isinstance(calls, list) else [], 1):
                    sub = f"{where}.tool_calls[{i}]"
                    if not isinstance(tc, dict):
                        col.problem(line, f"{sub}: expected an object with id and function")
                        continue
                    fn = tc.get("function")
                    if not isinstance(fn, dict):
                        col.problem(line, f"{sub}.function: expected an object with name and arguments")
                        continue
                    args, problem = _openai_arguments(fn.get("arguments"))
                    cid = col.call(line, sub, tc.get("id"), fn.get("name"), args, args_problem=problem)
                    if cid:
                        added.append(cid)
                stop = msg.get("finish_reason")
                if added and isinstance(stop, str) and stop in STOP_REASONS:
                    col.stopped(added, STOP_REASONS[stop])
            elif role == "tool":
                text = text_of_content(msg.get("content"))
                err = msg.get("is_error") is True or _unflagged_error(text)
                col.result(line, f"{where}.tool_call_id", msg.get("tool_call_id"), msg.get("content"), err)
    session_id, cwd, agent, system = _log_meta(parsed.records)
    col.system_prompt = system
    return col.session("openai", session_id, cwd, agent=agent)


def read_anthropic(path: str, parsed: ParsedRecords) -> RecordedSession:
    """Anthropic messages logs: assistant ``tool_use`` blocks and user ``tool_result`` blocks
    (``is_error``), in requests' ``messages`` and in responses (``{"type": "message", …}``);
    a response's ``stop_reason`` ``max_tokens`` names why its calls have no result."""
    col = _Collector(path, parsed)
    for seq, (line, rec) in enumerate(parsed.records):
        col.at(seq)
        for where, msg in _log_messages(rec, ""):
            role = msg.get("role")
            content = msg.get("content")
            if role == "user":
                _anthropic_user_prompt(col, content)
            added = _anthropic_blocks(col, line, f"{where}.content", content)
            stop = msg.get("stop_reason")
            if added and isinstance(stop, str) and stop in STOP_REASONS:
                col.stopped(added, STOP_REASONS[stop])
    session_id, cwd, agent, system = _log_meta(parsed.records)
    col.system_prompt = system
    return col.session("anthropic", session_id, cwd, agent=agent)


READERS: dict[str, Callable[[str, ParsedRecords], RecordedSession]] = {
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
    if kind == "session_meta" or (kind == "response_item" and isinstance(rec.get("payload"), dict)):
        return "openai"  # a Codex CLI rollout
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
        if "tool_calls" in msg or msg.get("role") == "tool" or "tool_call_id" in msg \
                or msg.get("type") in RESPONSES_ITEM_TYPES:
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


def read_trace(path: str, fmt: str = "auto", *, skip_bad_lines: bool = False) -> RecordedSession:
    """Read one trace file (``fmt``: ``auto`` or one of ``FORMATS``); ``skip_bad_lines`` leaves
    invalid JSON Lines out (noted) instead of refusing the file."""
    if fmt != "auto" and fmt not in READERS:
        raise TraceError([f"{path}:1: unknown format {fmt!r}; expected auto or one of {', '.join(FORMATS)}"])
    parsed = parse_records(read_text(path), path, skip_bad_lines=skip_bad_lines)
    chosen = detect_format(path, parsed.records) if fmt == "auto" else fmt
    return READERS[chosen](path, parsed)
