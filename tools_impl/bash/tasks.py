"""Background bash tasks (spec bash.tasks): task creation, the managed-foreground soft-yield and
auto-promotion, the ``maxRunMs`` watchdog, terminal states, and the protocol operations
``task_output`` / ``task_stop`` / ``task_query``.

One ``TaskManager`` per ``WorkspaceState`` lives in ``workspace.state["tasks"]``. Task ids look like
``bash-1a2b3c4d`` (``bash-`` + 8 hex digits). States: ``queued`` → ``running`` → ``succeeded`` |
``failed`` | ``canceled``. Each task runs the engine (``bash_engine.run_command``) on its own
thread with its own abort signal; the same process keeps running when a managed foreground call
is auto-promoted.

Terminal states (spec bash.tasks.3): watchdog (abort reason ``TIMEOUT``) → ``failed``, error
``{message: "Background bash exceeded maxRunMs (<ms>ms)", code: "TIMEOUT"}``, status text
``Background bash timed out after <ms>ms (exceeded maxRunMs): <err>``; ``task_stop`` (or the
owning call's abort) → ``canceled``, code ``BASH_CANCELED``, text ``Background bash canceled: <err>``;
other engine errors → ``failed``, code ``BASH_FAILED``, text ``Background bash failed: <err>``;
``<err>`` is the engine's message. The status text is appended to the task output as
``\\n<bash_status>…</bash_status>\\n`` when output had been streamed, and is the whole output
otherwise.

Protocol operations (all results are JSON objects):

``task_output {task_id, block?: bool = false, timeout_ms?: number = 30000, since?: int = 0}`` →
``{task_id, status, output, since, next_since, done, exit_code?, error?, text?, skipped?}``.
``output`` is the task output from offset ``since`` (offsets count Unicode code points of the
task's output text); pass ``next_since`` back to get only what is new. With ``block`` the call
waits until the task is done or ``timeout_ms`` elapses. ``exit_code`` (int or null) is present
once the command exited; ``error`` ``{message, code}`` for ``failed``/``canceled``; ``text`` is the
final result text (the engine's result text on success, the status text otherwise) once done.
Only the last ``TASK_OUTPUT_MAX_CHARS`` characters are retained; ``skipped`` counts characters
that were dropped before ``since``.

``task_stop {task_id}`` → the task's state (as ``task_query``) plus ``stopped: bool`` (false when
it had already finished). A running task is aborted through the engine's kill sequence (TERM traps
run) and the call waits for it to end (at most ``STOP_WAIT_S``).

``task_query {task_id?}`` → one task's state ``{task_id, kind, status, description, command,
metadata, pid, created_at, started_at, ended_at, exit_code, error, output_chars, done}``, or
``{tasks: [state, …]}`` without ``task_id``.

Unknown task ids raise ``ToolError`` (``No background task with id "<id>"``).
"""

from __future__ import annotations

import dataclasses
import secrets
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tools_impl.bash.engine import (
    EVENT_COMMAND_DISPATCHED,
    EVENT_SPAWN_FAILED,
    OBSERVE,
    EngineResult,
    ProcessObserver,
    SpawnHook,
    SpawnInputs,
    run_command,
)
from tools_impl.bash.timeouts import cap_background_bash_max_run_ms, resolve_background_bash_max_run_ms
from tools_impl.core.context import ToolContext, WorkspaceState
from tools_impl.core.errors import ToolAborted, ToolError
from tools_impl.core.profile import Profile
from tools_impl.js.text import js_number
from tools_impl.protocol.messages import (
    TaskErrorInfo,
    TaskList,
    TaskOutputRequest,
    TaskOutputResult,
    TaskQueryRequest,
    TaskState,
    TaskStopRequest,
)

SESSION_KEY = "tasks"
TASK_ID_PREFIX = "bash-"
TASK_ID_HEX_BYTES = 4
KIND_BASH = "bash"

QUEUED = "queued"
RUNNING = "running"
SUCCEEDED = "succeeded"
FAILED = "failed"
CANCELED = "canceled"

MODE_MANAGED = "managed_foreground"
MODE_BACKGROUND = "explicit_background"
MODE_PROMOTED = "auto_promoted"

ABORT_TIMEOUT = "TIMEOUT"
ABORT_USER = "USER"

CODE_TIMEOUT = "TIMEOUT"
CODE_CANCELED = "BASH_CANCELED"
CODE_FAILED = "BASH_FAILED"

WATCHDOG_MESSAGE = "Background bash exceeded maxRunMs ({ms}ms)"
WATCHDOG_TEXT = "Background bash timed out after {ms}ms (exceeded maxRunMs): {err}"
CANCELED_TEXT = "Background bash canceled: {err}"
FAILED_TEXT = "Background bash failed: {err}"
STATUS_WRAP = "\n<bash_status>{text}</bash_status>\n"
UNKNOWN_TASK = 'No background task with id "{task_id}"'

DESCRIPTION_MAX_CHARS = 80
TASK_OUTPUT_MAX_CHARS = 1_000_000
STOP_WAIT_S = 10.0
WAIT_SLICE_S = 0.02
DISPATCH_WAIT_S = 5.0  # the longest a promoted call waits for its command_dispatched fact


# -- pure functions (spec bash.2) ---------------------------------------------------------------

def _ms_text(ms: float) -> str:
    return js_number(ms)


def task_description(command: str) -> str:
    """The head of the command: its first non-empty line, at most ``DESCRIPTION_MAX_CHARS``."""
    first = next((ln.strip() for ln in command.splitlines() if ln.strip()), "")
    return first if len(first) <= DESCRIPTION_MAX_CHARS else first[: DESCRIPTION_MAX_CHARS - 1] + "…"


def new_task_id() -> str:
    return TASK_ID_PREFIX + secrets.token_hex(TASK_ID_HEX_BYTES)


# -- the task -------------------------------------------------------------------------------

class BashTask:
    """One background bash command: its process, output, state and terminal result."""

    def __init__(self, task_id: str, command: str, metadata: dict[str, Any], *, timeout: float | None,
                 max_run_ms: float) -> None:
        self.id = task_id
        self.command = command
        self.description = task_description(command)
        self.metadata = metadata
        self.timeout = timeout
        self.max_run_ms = max_run_ms
        self.status = QUEUED
        self.created_at = time.time()
        self.started_at: float | None = None
        self.ended_at: float | None = None
        self.pid: int | None = None
        self.abort = threading.Event()
        self.abort_reason: str | None = None
        self.done = threading.Event()
        # set once the command was handed to its shell (or failed to start), whichever comes first
        self.dispatched = threading.Event()
        self.exit_code: int | None = None
        self.exited = False
        self.error: TaskErrorInfo | None = None
        self.engine_error: ToolError | None = None
        self.result: EngineResult | None = None
        self.final_text: str | None = None
        self.delivered = False
        self.executor_details: dict[str, Any] = {}
        self.spawn_error: ToolError | None = None
        self.spawn_prepared = threading.Event()  # the spawn hook ran (or failed, or never will)
        self._lock = threading.Condition()
        self._chunks: list[str] = []
        self._chars = 0  # total characters ever appended
        self._base = 0  # offset of the first retained character
        self._streamed = False
        self._watchdog: threading.Timer | None = None

    # -- output -------------------------------------------------------------------------
    def append_output(self, text: str) -> None:
        if not text:
            return
        with self._lock:
            self._chunks.append(text)
            self._chars += len(text)
            self._streamed = True
            retained = self._chars - self._base
            if retained > TASK_OUTPUT_MAX_CHARS:
                joined = "".join(self._chunks)
                drop = retained - TASK_OUTPUT_MAX_CHARS
                self._chunks = [joined[drop:]]
                self._base += drop
            self._lock.notify_all()

    def output_since(self, since: int) -> tuple[str, int, int]:
        """(text from ``since``, next offset, characters skipped because they were dropped)."""
        with self._lock:
            start = max(since, self._base)
            skipped = start - since if since < self._base else 0
            if start >= self._chars:
                return "", self._chars, skipped
            joined = "".join(self._chunks)
            self._chunks = [joined]
            return joined[start - self._base:], self._chars, skipped

    @property
    def output_chars(self) -> int:
        return self._chars

    # -- lifecycle ----------------------------------------------------------------------
    def wait_dispatched(self, profile: Profile, observer: ProcessObserver | None) -> None:
        """When process facts are observed, wait (bounded) until the command was dispatched: the
        facts of a start belong to the call's answer, so a slow start never moves them after it."""
        if OBSERVE.of(profile)(observer) is None:
            return
        deadline = time.monotonic() + DISPATCH_WAIT_S
        while not (self.dispatched.is_set() or self.done.is_set()) and time.monotonic() < deadline:
            self.dispatched.wait(WAIT_SLICE_S)

    def request_abort(self, reason: str) -> bool:
        """Abort the command (kill sequence). False when it has already finished."""
        if self.done.is_set():
            return False
        if self.abort_reason is None:
            self.abort_reason = reason
        self.abort.set()
        return True

    def _on_watchdog(self) -> None:
        self.request_abort(ABORT_TIMEOUT)

    def run(self, *, cwd: str, env: Mapping[str, str], profile: Profile,
            spawn_hook: SpawnHook | None = None, observer: ProcessObserver | None = None) -> None:
        """Thread body: run the engine and record the terminal state.

        ``spawn_hook`` is the sanitising hook (it reports removed names through its own sink);
        its ``ToolError`` is the task's failure and is also kept in ``spawn_error``.
        """
        self.status = RUNNING
        self.started_at = time.time()
        self._watchdog = threading.Timer(self.max_run_ms / 1000, self._on_watchdog)
        self._watchdog.daemon = True
        self._watchdog.start()

        def on_spawn(pid: int) -> None:
            self.pid = pid

        def observe(fact: dict[str, Any]) -> None:
            try:
                if observer is not None:
                    observer(fact)
            finally:
                if fact.get("event") in (EVENT_COMMAND_DISPATCHED, EVENT_SPAWN_FAILED):
                    self.dispatched.set()

        def hook(inputs: SpawnInputs) -> SpawnInputs:
            try:
                return spawn_hook(inputs) if spawn_hook is not None else inputs
            except ToolError as exc:
                self.spawn_error = exc
                raise
            finally:
                self.spawn_prepared.set()

        try:
            result = run_command(self.command, cwd=cwd, env=env, profile=profile, timeout=self.timeout,
                                 abort=self.abort, spawn_hook=hook, on_data=self.append_output,
                                 on_spawn=on_spawn, observer=observe, managed=True)
        except ToolAborted as exc:
            self.engine_error = exc
            if self.abort_reason == ABORT_TIMEOUT:
                ms = _ms_text(self.max_run_ms)
                self._finish(FAILED, TaskErrorInfo(WATCHDOG_MESSAGE.format(ms=ms), CODE_TIMEOUT),
                             WATCHDOG_TEXT.format(ms=ms, err=exc.message))
            else:
                self._finish(CANCELED, TaskErrorInfo(exc.message, CODE_CANCELED), CANCELED_TEXT.format(err=exc.message))
        except ToolError as exc:
            self.engine_error = exc
            self.exit_code = getattr(exc, "exit_code", None)
            self.exited = self.exit_code is not None
            self._finish(FAILED, TaskErrorInfo(exc.message, CODE_FAILED), FAILED_TEXT.format(err=exc.message))
        except Exception as exc:  # an engine bug must still end the task
            msg = f"{type(exc).__name__}: {exc}"
            self._finish(FAILED, TaskErrorInfo(msg, CODE_FAILED), FAILED_TEXT.format(err=msg))
        else:
            self.result = result
            self.exit_code = result.exit_code
            self.exited = True
            self._finish(SUCCEEDED, None, None)

    def _finish(self, status: str, error: TaskErrorInfo | None, status_text: str | None) -> None:
        self.spawn_prepared.set()
        if self._watchdog is not None:
            self._watchdog.cancel()
        with self._lock:
            if status_text is not None:
                if self._streamed:
                    self._chunks.append(STATUS_WRAP.format(text=status_text))
                    self._chars += len(self._chunks[-1])
                else:
                    self._chunks.append(status_text)
                    self._chars += len(status_text)
                self.final_text = status_text
            elif self.result is not None:
                self.final_text = self.result.text
            self.error = error
            self.status = status
            self.ended_at = time.time()
            self._lock.notify_all()
        self.done.set()

    # -- views --------------------------------------------------------------------------
    def state(self) -> TaskState:
        return TaskState(self.id, KIND_BASH, self.status, self.description, self.command, dict(self.metadata),
                         self.pid, self.created_at, self.started_at, self.ended_at, self.exit_code, self.error,
                         self.output_chars, self.done.is_set())


class TaskManager:
    """The background tasks of one workspace."""

    def __init__(self) -> None:
        self._tasks: dict[str, BashTask] = {}
        self._lock = threading.Lock()

    def start(self, ctx: ToolContext, command: str, *, timeout: float | None, execution_mode: str,
              env: Mapping[str, str], spawn_hook: SpawnHook | None = None,
              observer: ProcessObserver | None = None) -> BashTask:
        """Create a task (``queued``) and start its engine thread.

        ``env`` is the engine's environment base; ``spawn_hook`` (the sanitising hook) runs in the
        task's thread right before the spawn, like in the foreground engine.
        """
        profile = ctx.profile
        max_run_ms = cap_background_bash_max_run_ms(resolve_background_bash_max_run_ms(timeout, profile), profile)
        workspace = ctx.workspace
        session_id = workspace.state.setdefault("session_id", uuid.uuid4().hex)
        metadata: dict[str, Any] = {
            "parentSessionId": session_id,
            "parentTurnId": ctx.call_id,
            "command": command,
        }
        if timeout is not None:
            metadata["timeoutSeconds"] = timeout
        metadata["maxRunMs"] = max_run_ms
        metadata["executionMode"] = execution_mode
        with self._lock:
            task_id = new_task_id()
            while task_id in self._tasks:
                task_id = new_task_id()
            task = BashTask(task_id, command, metadata, timeout=timeout, max_run_ms=max_run_ms)
            self._tasks[task_id] = task
        t = threading.Thread(target=task.run, kwargs={"cwd": ctx.root, "env": dict(env), "profile": profile,
                                                      "spawn_hook": spawn_hook, "observer": observer},
                             name=f"bash-task-{task_id}", daemon=True)
        t.start()
        return task

    def get(self, task_id: str) -> BashTask:
        with self._lock:
            task = self._tasks.get(task_id)
        if task is None:
            raise ToolError(UNKNOWN_TASK.format(task_id=task_id))
        return task

    def all(self) -> list[BashTask]:
        with self._lock:
            return list(self._tasks.values())

    def stop(self, task_id: str, wait_s: float = STOP_WAIT_S) -> tuple[BashTask, bool]:
        task = self.get(task_id)
        stopped = task.request_abort(ABORT_USER)
        if stopped:
            task.done.wait(wait_s)
        return task, stopped

    def stop_all(self) -> None:
        for task in self.all():
            task.request_abort(ABORT_USER)


def manager_for(workspace: WorkspaceState) -> TaskManager:
    """The workspace's task manager, created on first use."""
    with workspace.lock:
        mgr = workspace.state.get(SESSION_KEY)
        if not isinstance(mgr, TaskManager):
            mgr = TaskManager()
            workspace.state[SESSION_KEY] = mgr
        return mgr


def stop_all(workspace: WorkspaceState) -> None:
    """Abort every running task of ``workspace`` (graceful kill sequence; does not wait)."""
    mgr = workspace.state.get(SESSION_KEY)
    if isinstance(mgr, TaskManager):
        mgr.stop_all()


# -- managed foreground (spec bash.tasks.2) -------------------------------------------------------------

@dataclass(frozen=True)
class ManagedOutcome:
    """``completed`` (the command finished within the soft yield) or ``auto_promoted``."""

    status: str
    task: BashTask


def run_managed_foreground(ctx: ToolContext, command: str, *, timeout: float, env: Mapping[str, str],
                           spawn_hook: SpawnHook | None = None,
                           observer: ProcessObserver | None = None) -> ManagedOutcome:
    """Start the command as a task and race it against ``Profile.bash_soft_yield_ms``.

    The call's abort signal is forwarded to the task until it completes or is promoted; a
    canceled completion raises ``ToolAborted`` with the engine's message.
    """
    mgr = manager_for(ctx.workspace)
    task = mgr.start(ctx, command, timeout=timeout, execution_mode=MODE_MANAGED, env=env,
                     spawn_hook=spawn_hook, observer=observer)
    soft_yield_s = ctx.profile.bash_soft_yield_ms / 1000
    deadline = time.monotonic() + soft_yield_s
    while not task.done.is_set():
        if ctx.abort.is_set():
            task.request_abort(ABORT_USER)
            task.done.wait()
            break
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        task.done.wait(min(WAIT_SLICE_S, remaining))
    if not task.done.is_set():
        task.wait_dispatched(ctx.profile, observer)
        task.metadata["executionMode"] = MODE_PROMOTED
        task.metadata["foregroundSoftYieldMs"] = ctx.profile.bash_soft_yield_ms
        return ManagedOutcome(MODE_PROMOTED, task)
    task.delivered = True
    task.metadata["executionMode"] = MODE_MANAGED
    task.metadata["completionOrigin"] = "foreground"
    if task.status == CANCELED:
        err = task.engine_error
        raise ToolAborted(err.message if err is not None else "Command aborted")
    return ManagedOutcome("completed", task)


# -- protocol operations ----------------------------------------------------------------------


def task_output(workspace: WorkspaceState, req: TaskOutputRequest) -> TaskOutputResult:
    task = manager_for(workspace).get(req.task_id)
    if req.block:
        task.done.wait(req.timeout_ms / 1000)
    done = task.done.is_set()
    text, next_since, skipped = task.output_since(req.since)
    if not done:
        return TaskOutputResult(task.id, task.status, text, req.since, next_since, False, skipped=skipped)
    return TaskOutputResult(task.id, task.status, text, req.since, next_since, True, exited=task.exited,
                            exit_code=task.exit_code, error=task.error, text=task.final_text, skipped=skipped)


def task_stop(workspace: WorkspaceState, req: TaskStopRequest) -> TaskState:
    task, stopped = manager_for(workspace).stop(req.task_id)
    return dataclasses.replace(task.state(), stopped=stopped)


def task_query(workspace: WorkspaceState, req: TaskQueryRequest) -> TaskState | TaskList:
    mgr = manager_for(workspace)
    if req.task_id is None:
        return TaskList([t.state() for t in mgr.all()])
    return mgr.get(req.task_id).state()
