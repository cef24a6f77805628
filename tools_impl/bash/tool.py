"""The ``bash`` tool: the MiniMax wrapper's dispatch (spec bash.1–3), its 24 KiB head+tail cap
(spec bash.10) and ``envSanitized`` reporting (spec bash.env.4) around the engine (``bash_engine``) and the
background-task layer (``tasks``).

Which path runs a foreground command: the **managed** path (a task raced against the soft yield,
``Profile.bash_soft_yield_ms``, auto-promoted to a background task when it is still running) when
the turn can consume background output (``Profile.can_consume_background_output``, which the host
also uses as ``allowBashAutoPromotion``) — the reference default; otherwise the **direct** path
(the engine inline). Both return engine failures as isError results with the engine's text.

Interpretation notes:
- The sanitising spawn hook runs inside the engine on every path (as in the reference, where the
  background executor carries it). A refused spawn (the rm-shim preflight) is therefore the
  returned error text on the direct and managed paths; explicit background waits until the hook
  has run and reports a refusal as a start failure (``<bash_error>…</bash_error>``,
  ``details.status = 'failed'``), which also makes its ``envSanitized`` report deterministic.
- ``Profile.wrapper = False`` runs the bare pi engine: the raw ``timeout`` (no default, no cap),
  no sanitising spawn hook, no caps, and engine errors are raised.
"""

from __future__ import annotations

import re
from typing import Any

from tools_impl.bash.engine import SpawnHook, engine_env, run_command, sanitizing_hook
from tools_impl.bash.tasks import MODE_BACKGROUND, manager_for, run_managed_foreground
from tools_impl.bash.timeouts import resolve_foreground_timeout
from tools_impl.bash.trash import host_trash_result, resolve_agent_bash_env_policy
from tools_impl.core.context import ToolContext, WorkspaceState
from tools_impl.core.errors import ToolAborted, ToolError
from tools_impl.core.profile import REFERENCE
from tools_impl.core.result import ToolResult, text_result
from tools_impl.core.tool import MODE_SEQUENTIAL, Tool, by_surface, keep_arguments
from tools_impl.js.text import finite_number, utf8_len
from tools_impl.shared.truncation import apply_desktop_text_limit, continuation_hint, head_tail_lines

NAME = "bash"
MAX_BACKGROUND_BASH_TIMEOUT_SECONDS = REFERENCE.bash_max_background_timeout_s

SCHEMA: dict[str, Any] = {
    "properties": {
        "command": {"type": "string"},
        "timeout": {"type": "number", "maximum": MAX_BACKGROUND_BASH_TIMEOUT_SECONDS},
        "run_in_background": {"type": "boolean"},
    },
    "required": ["command"],
}
UPSTREAM_SCHEMA: dict[str, Any] = {
    "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}},
    "required": ["command"],
}

BACKGROUND_OUTPUT_UNAVAILABLE_TEXT = (
    "<bash_error>Background Bash requires native task_output. This Turn is missing task_output, so "
    "asynchronous Bash cannot be executed. Run the command in the foreground instead.</bash_error>"
)
STATUS_BACKGROUND_OUTPUT_UNAVAILABLE = "background_output_unavailable"
CODE_BACKGROUND_OUTPUT_UNAVAILABLE = "BASH_BACKGROUND_OUTPUT_UNAVAILABLE"
BACKGROUND_NOT_ENABLED_TEXT = "<bash_error>Background bash execution is not enabled</bash_error>"
STATUS_BACKGROUND_NOT_ENABLED = "background_not_enabled"
BASH_ERROR_TEMPLATE = "<bash_error>{message}</bash_error>"
BACKGROUND_START_FAILED = "Local background bash failed to start"
MANAGED_START_FAILED = "Local managed bash failed to start"
STATUS_FAILED = "failed"
STATUS_STARTED = "started"
STATUS_AUTO_PROMOTED = "auto_promoted"
STATUS_COMPLETED = "completed"

BACKGROUND_RESULT_TEMPLATE = (
    '<bash_background task_id="{task_id}">\n'
    "{lead} The owning conversation will automatically resume when it finishes; use "
    "task_query/task_output to inspect incremental output and task_stop to cancel it.\n"
    "</bash_background>"
)
LEAD_STARTED = "Started local background bash task."
LEAD_AUTO_PROMOTED = ("The command is still running and was yielded to a managed background task without "
                      "restarting it.")

CAP_STRATEGY = "head_tail_lines"
CAP_NOTICE_WITH_PATH = (
    "[desktop bash output truncated: original_bytes={original_bytes}; head+tail shown; boundary lines may be "
    "UTF-8 byte-truncated; Full output: {path}]"
)
CAP_NOTICE_NO_PATH = (
    "[desktop bash output truncated: original_bytes={original_bytes}; head+tail shown; boundary lines may be "
    "UTF-8 byte-truncated; rerun with a narrower command or redirect output to a file and use read.]"
)
HINT_READ_INSTRUCTION = "Read the full output at {path}; continue long reads with the returned next_offset."
HINT_BASH_INSTRUCTION = ("Do not blindly rerun a potentially side-effecting command; narrow it or redirect "
                         "output to a file, then use read.")
# JavaScript /Full output:\s*(.+?)\](?:\n|$)/gi — `$` without the m flag is end of input only.
FULL_OUTPUT_RE = re.compile(r"Full output:\s*(.+?)\](?:\n|\Z)", re.IGNORECASE)
ENV_SANITIZED_KEY = "envSanitized"
SPAWN_PREPARE_WAIT_S = 10.0


# -- pure helpers (spec bash.2, spec bash.3, spec bash.10, spec bash.env.4) ---------------------------------------------------

def full_output_path_from_text(text: str) -> str | None:
    """The last ``Full output: <path>]`` in an engine error message."""
    matches = FULL_OUTPUT_RE.findall(text)
    return matches[-1] if matches else None


def background_result_text(task_id: str, status: str) -> str:
    lead = LEAD_AUTO_PROMOTED if status == STATUS_AUTO_PROMOTED else LEAD_STARTED
    return BACKGROUND_RESULT_TEMPLATE.format(task_id=task_id, lead=lead)


def cap_bash_result(result: ToolResult, max_bytes: int) -> ToolResult:
    """The wrapper's 24 KiB head+tail cap (spec bash.10); ``is_error`` is preserved."""
    text = result.text
    details = result.details or {}
    path = details.get("fullOutputPath")
    has_path = isinstance(path, str) and path != ""

    def notice(_kept: object) -> str:
        if has_path:
            return CAP_NOTICE_WITH_PATH.format(original_bytes=outcome_bytes, path=path)
        return CAP_NOTICE_NO_PATH.format(original_bytes=outcome_bytes)

    outcome_bytes = utf8_len(text)
    outcome = head_tail_lines(text, max_bytes, notice, outcome_bytes)
    if not outcome.truncated:
        return result
    if has_path:
        hint = continuation_hint("read", ["path"], HINT_READ_INSTRUCTION.format(path=path))
    else:
        hint = continuation_hint("bash", [], HINT_BASH_INSTRUCTION)
    return apply_desktop_text_limit(result, outcome.text, strategy=CAP_STRATEGY,
                                    original_bytes=outcome.original_bytes, max_bytes=max_bytes, hint=hint)


def report_env_sanitized(result: ToolResult, removed: tuple[str, ...] | list[str], workspace: WorkspaceState) -> ToolResult:
    """spec bash.env.4: names (never values) only the first time the workspace sees a non-empty list."""
    details = dict(result.details or {})
    had_key = ENV_SANITIZED_KEY in details
    details.pop(ENV_SANITIZED_KEY, None)
    with workspace.lock:
        first = bool(removed) and not workspace.bash_env_reported
        if first:
            workspace.bash_env_reported = True
    if first:
        details[ENV_SANITIZED_KEY] = list(removed)
    elif not had_key:
        return result
    return ToolResult(result.tool_name, result.content, details or None, result.is_error)


# -- environment ----------------------------------------------------------------------------

def _sanitizing_hook(ctx: ToolContext, removed: list[str]) -> SpawnHook:
    """The agent policy's sanitising spawn hook (spec bash.env.3); removed names land in ``removed``."""
    return sanitizing_hook(resolve_agent_bash_env_policy(ctx), ctx.profile, removed)


# -- dispatch -------------------------------------------------------------------------------

def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    if not ctx.profile.wrapper:
        return _execute_upstream(args, ctx)
    ctx.check_abort()
    profile = ctx.profile
    command = str(args["command"])
    background = args.get("run_in_background") is True
    if background and profile.can_consume_background_output is not True:
        return text_result(NAME, BACKGROUND_OUTPUT_UNAVAILABLE_TEXT, {
            "status": STATUS_BACKGROUND_OUTPUT_UNAVAILABLE,
            "error_code": CODE_BACKGROUND_OUTPUT_UNAVAILABLE,
        }, is_error=True)
    trash_result = host_trash_result(args, ctx)
    if trash_result is not None:
        return cap_bash_result(trash_result, profile.bash_max_bytes)
    if background:
        return _explicit_background(command, args.get("timeout"), ctx)
    timeout = resolve_foreground_timeout(args.get("timeout"), profile)
    if profile.can_consume_background_output is not False:
        return _managed_foreground(command, timeout, ctx)
    return _direct_foreground(command, timeout, ctx)


def _explicit_background(command: str, raw_timeout: object, ctx: ToolContext) -> ToolResult:
    removed: list[str] = []
    task = manager_for(ctx.workspace).start(ctx, command, timeout=finite_number(raw_timeout),
                                          execution_mode=MODE_BACKGROUND, env=engine_env(ctx.env, ctx.home),
                                          spawn_hook=_sanitizing_hook(ctx, removed), observer=ctx.observe_process)
    # Wait until the spawn hook has run so that a refused spawn is a start failure and the
    # envSanitized report is deterministic.
    task.spawn_prepared.wait(SPAWN_PREPARE_WAIT_S)
    if task.spawn_error is not None:
        text = BASH_ERROR_TEMPLATE.format(message=task.spawn_error.message or BACKGROUND_START_FAILED)
        return text_result(NAME, text, {"status": STATUS_FAILED}, is_error=True)
    # The start's process facts belong to this answer, on a slow machine as on a fast one.
    task.wait_dispatched(ctx.profile, ctx.observe_process)
    details = {**task.executor_details, "status": STATUS_STARTED, "task_id": task.id}
    result = text_result(NAME, background_result_text(task.id, STATUS_STARTED), details)
    return report_env_sanitized(result, removed, ctx.workspace)


def _managed_foreground(command: str, timeout: float, ctx: ToolContext) -> ToolResult:
    removed: list[str] = []
    outcome = run_managed_foreground(ctx, command, timeout=timeout, env=engine_env(ctx.env, ctx.home),
                                     spawn_hook=_sanitizing_hook(ctx, removed), observer=ctx.observe_process)
    task = outcome.task
    if outcome.status != STATUS_COMPLETED:
        details = {**task.executor_details, "status": STATUS_AUTO_PROMOTED, "task_id": task.id}
        result = text_result(NAME, background_result_text(task.id, STATUS_AUTO_PROMOTED), details)
        return report_env_sanitized(result, removed, ctx.workspace)
    if task.result is not None:
        executor = dict(task.result.details or {})
        text, is_error = task.result.text, False
    else:
        err = task.engine_error
        text = err.message if err is not None else (task.final_text or MANAGED_START_FAILED)
        path = full_output_path_from_text(text)
        executor = {"fullOutputPath": path} if path is not None else {}
        is_error = True
    details = {**task.executor_details, **executor, "status": STATUS_COMPLETED, "task_id": task.id}
    result = cap_bash_result(text_result(NAME, text, details, is_error=is_error), ctx.profile.bash_max_bytes)
    return report_env_sanitized(result, removed, ctx.workspace)


def _direct_foreground(command: str, timeout: float, ctx: ToolContext) -> ToolResult:
    removed: list[str] = []
    try:
        res = run_command(command, cwd=ctx.root, env=engine_env(ctx.env, ctx.home), profile=ctx.profile,
                          timeout=timeout, abort=ctx.abort, spawn_hook=_sanitizing_hook(ctx, removed),
                          observer=ctx.observe_process)
        result = text_result(NAME, res.text, res.details)
    except ToolAborted:
        raise
    except ToolError as exc:
        if ctx.abort.is_set():
            raise
        path = full_output_path_from_text(exc.message)
        result = text_result(NAME, exc.message, {"fullOutputPath": path} if path is not None else None,
                             is_error=True)
    result = cap_bash_result(result, ctx.profile.bash_max_bytes)
    return report_env_sanitized(result, removed, ctx.workspace)


def _execute_upstream(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Bare pi engine: raw timeout, no sanitising hook, no caps; errors are raised."""
    if ctx.abort.is_set():
        raise ToolAborted("Command aborted")
    timeout = finite_number(args.get("timeout"))
    res = run_command(str(args["command"]), cwd=ctx.root, env=engine_env(ctx.env, ctx.home),
                      profile=ctx.profile, timeout=timeout, abort=ctx.abort, observer=ctx.observe_process)
    return text_result(NAME, res.text, res.details)


TOOL = Tool(NAME, MODE_SEQUENTIAL, by_surface(SCHEMA, UPSTREAM_SCHEMA), keep_arguments, execute)
