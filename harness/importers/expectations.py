"""Expectations from recorded results: the ``expect`` mapping of an imported step, for the
``--expect`` modes ``none``, ``status`` (default), ``outcome`` and ``text``. Pure functions.

``outcome`` adds what a faithful replay must reproduce whatever the tool layer's wording: the
exit code of a failed command (as the target surface states it), the content a write left, the
replacement text an edit put in the file. ``text`` compares the recorded text only for steps
whose recorded surface is the target surface (a pi session replayed on ``pi``); everywhere
else it falls back to the outcome checks, because another tool layer's wording can never match.

Recorded errors map onto the way the reference tool layer reports that tool's failures on the
target surface (``ERROR_AS_IS_ERROR``: a returned result with ``is_error: true``; otherwise a
raised error, ``status: error``). In ``text`` mode the recorded text is first normalised —
Claude Code's ``<tool_use_error>`` wrapper and trailing ``<system-reminder>`` blocks removed,
echoed absolute paths made relative as the replay passes them, the workspace root replaced by
``$WORKSPACE``, read output renumbered for the target surface — and becomes an exact expectation
when it is short, deterministic and in the target's own format, else a ``startswith`` of its
stable prefix (cut before the first volatile token: durations, task ids, temp files, times).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from harness.importers.trace import JsonObj, RecordedResult

EXPECT_MODES: tuple[str, ...] = ("none", "status", "outcome", "text")
DEFAULT_EXPECT_MODE = "status"
ERROR_AS_IS_ERROR: frozenset[tuple[str, str]] = frozenset({("minimax", "bash")})
# Tools whose result text echoes the path argument exactly as it was passed.
PATH_ECHO_TOOLS: tuple[str, ...] = ("write", "edit")
EXACT_MAX_BYTES = 2048
EXACT_MAX_LINES = 40
PREFIX_MAX_LINES = 5
PREFIX_MAX_CHARS = 400
MIN_PREFIX_CHARS = 4
READ_NUMBER_WIDTH = 6
READ_ARROW = "→"
WORKSPACE_TOKEN = "$WORKSPACE"

TOOL_USE_ERROR_RE = re.compile(r"\A\s*<tool_use_error>(.*)</tool_use_error>\s*\Z", re.DOTALL)
TRAILING_REMINDER_RE = re.compile(r"\s*<system-reminder>.*?</system-reminder>\s*\Z", re.DOTALL)
NUMBERED_LINE_RE = re.compile(r"^\s*(\d+)([\t→])(.*)$")
VOLATILE_RE = re.compile(
    r"\b\d+(?:\.\d+)?\s?(?:ms|s)\b"                 # durations
    r"|pi-bash-[0-9a-f]{16}\.log"                    # temp output files
    r"|\bbash-[0-9a-f]{8}\b|\bbash_\d+\b"            # background task / shell ids
    r"|\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}"           # timestamps
    r"|\b\d+\.\d{3,}\b"                               # measured times (duration_ms 1018.59493)
    r"|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b"  # commit and object hashes
)
# Claude Code cancels the other calls of a parallel batch when one fails; they never ran.
SIBLING_CANCELLED_RE = re.compile(r"Sibling tool call errored|Cancelled: parallel tool call")
# How recorded shells state a non-zero exit code (Claude Code "Exit code 2" first; pi and the
# reference "Command exited with code 2" last; OpenHands "[Command finished with exit code 2]").
EXIT_CODE_RES: tuple[re.Pattern[str], ...] = (
    re.compile(r"\A\s*(?:Error: )?Exit code (\d+)\b"),
    re.compile(r"Command exited with code (\d+)\s*\Z"),
    re.compile(r"\[(?:Command finished|The command completed) with exit code (\d+)\.?\]"),
    re.compile(r"\bexit(?:ed with)? code:? (\d+)\b", re.IGNORECASE),
)
TARGET_EXIT_STATUS = "Command exited with code {code}"
# The call never ran: the user rejected or interrupted it, or permission was missing.
NOT_RUN_RE = re.compile(
    r"The user doesn't want to proceed with this tool use|\[Request interrupted by user"
    r"|haven't granted it yet|\AOperation aborted\Z"
)


@dataclass(frozen=True)
class TextContext:
    """What text normalisation needs: the target tool and surface, the recorded workspace root,
    path arguments as recorded and as replayed, and the first line a read started at."""

    tool: str
    surface: str
    root: str | None = None
    path_pairs: tuple[tuple[str, str], ...] = ()
    read_start: int = 1


def sibling_cancelled(result: RecordedResult) -> bool:
    """True when Claude Code cancelled the call because a parallel call of the same turn failed."""
    return result.is_error and bool(SIBLING_CANCELLED_RE.search(result.text[:300]))


def recorded_exit_code(result: RecordedResult) -> int | None:
    """The exit code a recorded shell result states (Codex's metadata first), or None."""
    if result.structured is not None:
        code = result.structured.get("exit_code", result.structured.get("exitCode"))
        if isinstance(code, int) and not isinstance(code, bool):
            return code
    if not result.is_error:
        return 0 if result.structured is None else None
    for pattern in EXIT_CODE_RES:
        m = pattern.search(result.text)
        if m:
            return int(m.group(1))
    return None


def _text_lines(text: str) -> list[str]:
    """The distinct non-blank lines of ``text`` (line ends of any kind dropped)."""
    out: list[str] = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line.strip() and line not in out:
            out.append(line)
    return out


def file_outcome(tool: str, args: JsonObj, surface: str) -> dict[str, Any]:
    """The file check a successful step implies: a write leaves exactly its content; an edit
    leaves each line of its replacement text in the file."""
    if tool == "write":
        return {str(args["path"]): {"text": args["content"]}}
    if tool == "edit":
        if surface == "pi":
            news = [str(e["newText"]) for e in args["edits"]]
        else:
            news = [str(args["new_string"])]
        lines = [ln for n in news for ln in _text_lines(n)]
        if lines:
            return {str(args.get("path", args.get("file_path"))): {"contains": list(dict.fromkeys(lines))}}
    return {}


def not_run(result: RecordedResult) -> bool:
    """True when the recorded result says the call was rejected or interrupted before it ran."""
    return result.is_error and bool(NOT_RUN_RE.search(result.text))


def error_as_is_error(tool: str, surface: str) -> bool:
    return (surface, tool) in ERROR_AS_IS_ERROR


def _strip_wrappers(text: str) -> str:
    m = TOOL_USE_ERROR_RE.match(text)
    if m:
        text = m.group(1)
    while True:
        m2 = TRAILING_REMINDER_RE.search(text)
        if not m2 or m2.start() == 0:
            return text
        text = text[: m2.start()]


def _replace_root(text: str, root: str | None) -> str:
    if not root:
        return text
    base = root.rstrip("/\\")
    if not base:
        return text
    return re.sub(re.escape(base) + r"(?![\w.\-])", lambda _m: WORKSPACE_TOKEN, text)


def _read_lines(text: str) -> tuple[list[tuple[int, str]], str] | None:
    """The numbered lines at the start of a read result and their separator, or None when the
    result is not line-numbered."""
    out: list[tuple[int, str]] = []
    sep = ""
    for line in text.split("\n"):
        m = NUMBERED_LINE_RE.match(line)
        if not m:
            break
        out.append((int(m.group(1)), m.group(3)))
        sep = sep or m.group(2)
    return (out, sep) if out else None


def _read_for_surface(text: str, surface: str, start: int) -> tuple[str, bool]:
    """(text in the target surface's read format, whether it is exactly that format). minimax
    numbers lines ``String(n).padStart(6) + '→'``; pi returns the raw text."""
    numbered = _read_lines(text)
    if text.startswith("<system-reminder>"):  # a notice instead of content (an empty file)
        return text, True
    if surface == "minimax":
        if numbered and numbered[1] == READ_ARROW:
            return text, True
        if numbered:
            lines = numbered[0]
        else:
            raw = text[:-1] if text.endswith("\n") else text  # a final newline gets no number
            lines = [(start + i, s) for i, s in enumerate(raw.split("\n")[:PREFIX_MAX_LINES + 1])]
        return "\n".join(str(n).rjust(READ_NUMBER_WIDTH) + READ_ARROW + s for n, s in lines), False
    if numbered:
        return "\n".join(s for _, s in numbered[0]), False
    return text, True


def normalise_text(text: str, ctx: TextContext) -> tuple[str, bool]:
    """The recorded text as the replay should show it, and whether an exact comparison makes
    sense (False when it was converted from another tool layer's format)."""
    text = _strip_wrappers(text)
    exact_ok = ctx.tool != "bash"  # shells' output framing (trailing newline, trimming) varies by layer
    if ctx.tool in PATH_ECHO_TOOLS:
        for raw, rel in sorted(ctx.path_pairs, key=lambda p: len(p[0]), reverse=True):
            text = text.replace(raw, rel)
    text = _replace_root(text, ctx.root)
    if ctx.tool == "read":
        text, same_format = _read_for_surface(text, ctx.surface, ctx.read_start)
        exact_ok = exact_ok and same_format
    return text, exact_ok


def text_matcher(text: str, exact_ok: bool) -> str | dict[str, Any] | None:
    """An exact string, ``{startswith: prefix}``, or None when no stable prefix is left."""
    volatile = VOLATILE_RE.search(text)
    if (exact_ok and volatile is None and len(text.encode("utf-8")) <= EXACT_MAX_BYTES
            and text.count("\n") < EXACT_MAX_LINES):
        return text
    stable = text[: volatile.start()] if volatile else text
    lines = stable.split("\n")
    prefix = "\n".join(lines[:PREFIX_MAX_LINES])
    if len(lines) > PREFIX_MAX_LINES:
        prefix += "\n"
    prefix = prefix[:PREFIX_MAX_CHARS]
    if len(prefix.strip()) < MIN_PREFIX_CHARS:
        return None
    return {"startswith": prefix}


def build_expect(result: RecordedResult, mode: str, ctx: TextContext, *, text_allowed: bool = True,
                 args: JsonObj | None = None, last_part: bool = True) -> dict[str, Any]:
    """The ``expect`` mapping of one imported step (empty: omit ``expect``). ``text_allowed``
    is False for steps that carry only part of a recorded call (a split multi-edit) and for
    steps recorded on another surface than the target's; ``args`` are the step's arguments
    (for the file outcome); ``last_part`` is False for the earlier steps of a split call."""
    out = _status_expect(result, mode, ctx)
    if mode in ("none", "status"):
        return out
    if mode == "text" and text_allowed:
        _add_text(out, result, ctx)
        if not result.is_error and args is not None and last_part:
            _add_files(out, ctx, args)
        return out
    _add_outcome(out, result, ctx, args, last_part)
    return out


def _add_files(out: dict[str, Any], ctx: TextContext, args: JsonObj) -> None:
    files = file_outcome(ctx.tool, args, ctx.surface)
    if files:
        out["files"] = files


def _add_outcome(out: dict[str, Any], result: RecordedResult, ctx: TextContext, args: JsonObj | None,
                 last_part: bool) -> None:
    if ctx.tool == "bash":
        code = recorded_exit_code(result)
        if code:
            key = "text" if error_as_is_error("bash", ctx.surface) else "error"
            out[key] = {"endswith": TARGET_EXIT_STATUS.format(code=code)}
        return
    if not result.is_error and args is not None and last_part:
        _add_files(out, ctx, args)


def _add_text(out: dict[str, Any], result: RecordedResult, ctx: TextContext) -> None:
    key = "error" if out.get("status") == "error" else "text"
    text, exact_ok = normalise_text(result.text, ctx)
    matcher = text_matcher(text, exact_ok)
    if matcher is not None:
        out[key] = matcher


def _status_expect(result: RecordedResult, mode: str, ctx: TextContext) -> dict[str, Any]:
    as_is_error = error_as_is_error(ctx.tool, ctx.surface)
    if mode == "none":
        if not result.is_error:
            return {}
        return {"is_error": True} if as_is_error else {"status": "error"}
    if result.is_error and not as_is_error:
        return {"status": "error"}
    return {"status": "result", "is_error": result.is_error}
