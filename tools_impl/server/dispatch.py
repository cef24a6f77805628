"""The tool server: speaks the JSON-lines tool protocol on stdin/stdout.

One JSON object per line in, one per line out, matched by ``id``; the messages are the types of
``tools_impl.protocol.messages``. Every op is a registered handler (``Server.register`` and
``Server.register_ordered``): the protocol's own ops are registered by the server itself, and a
host can add its own chores the same way (``Server.register``; the docker backend's housekeeping
lives in its own in-container supervisor instead). A handler parses its fields into a message (``ProtocolError`` → ``kind: protocol``) and
returns a result; a raised ``ArgumentError`` is answered with ``kind: validation``, ``ToolAborted``
with ``aborted``, ``ToolError`` with ``tool`` (and its ``code``), anything else with ``internal``
(a bug in the server). The server never dies on input.

``call``, ``fs_read`` and blocking task ops run on worker threads so that ``cancel`` and other
requests are served meanwhile; responses may therefore arrive out of order.

Calls honour the tools' execution modes (spec common.7) in arrival order: a ``sequential`` tool
(write, edit, bash) starts only after every earlier call has finished, and any call waits for
earlier sequential calls; ``parallel`` tools (read, grep, glob) overlap each other. So a client
may pipeline ``write`` then ``read`` of one file and observe the write. ``fs_read`` waits for
every earlier call too.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import re
import sys
import tempfile
import threading
import traceback
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any, Protocol

from tools_impl import IMPLEMENTATION_NAME, UPSTREAM_IMPLEMENTATION_NAME, __version__
from tools_impl.bash import tasks
from tools_impl.core.context import ToolContext, WorkspaceState, make_env
from tools_impl.core.errors import ArgumentError, ProtocolError, ToolAborted, ToolError
from tools_impl.core.profile import (
    REFERENCE,
    SURFACES,
    UPSTREAM_PI,
    Profile,
    profile_from_json,
    surface_of,
)
from tools_impl.core.tool import MODE_SEQUENTIAL, ExecutionMode
from tools_impl.js import unicode
from tools_impl.protocol import messages as m
from tools_impl.server.allocator import keep_freed_memory
from tools_impl.server.declaration import dialects_of, features_of
from tools_impl.server.patch_catalogue import all_patch_names, applied_patches
from tools_impl.server.tools import NON_TOOL_OPS, TOOLS, tool_names
from tools_impl.server.workers import Job, WorkerPool
from tools_impl.server.workspace_delivery import clear_directory, describe_path, extract_archive

JsonObj = dict[str, Any]
LONE_SURROGATE_RE = re.compile("[\ud800-\udfff]")
TRACEBACK_LIMIT = 12


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")  # one C-level pass; refuses exactly the surrogates
    except UnicodeEncodeError:
        return True
    return False


class _Result(Protocol):
    def to_json(self) -> Any: ...


Parse = Callable[[JsonObj], Any]
Handle = Callable[[Any, m.RequestId], "_Result | JsonObj"]
Run = Callable[[], "_Result | JsonObj"]
Admit = Callable[[Any, m.RequestId], tuple[ExecutionMode, Run]]

INLINE = "inline"  # answered on the reader thread, in arrival order
# The reading thread is relieved of reading once one piece of work has run this long.
RELAY_DELAY_S = 0.005
# Polls without any work running before the relay sleeps until the next call.
RELAY_IDLE_POLLS = 4
WORKER = "worker"  # answered on a thread of its own (it may block)


@dataclass(frozen=True)
class _Registration:
    parse: Parse
    handle: Handle | None = None
    admit: Admit | None = None
    schedule: str = INLINE


# The optional packages the reference uses when present (each degrades with a clear message).
OPTIONAL_PACKAGES = ("unicodedata2", "stringzilla", "tree-sitter", "tree-sitter-bash", "pypdf", "Pillow")


def package_versions() -> dict[str, str | None]:
    """The installed version of each optional package, ``None`` when missing."""
    found: dict[str, str | None] = {}
    for name in OPTIONAL_PACKAGES:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = None
    return found


def unicode_data_version() -> str:
    """The Unicode version of the character data the default profile normalises with: the
    emulated engine's when it is installed (stdlib or unicodedata2), else the standard library's."""
    try:
        return str(unicode.data_for(unicode.DEFAULT_UNICODE_VERSION).unidata_version)
    except unicode.UnicodeDataUnavailable:
        return unicodedata.unidata_version


def capabilities() -> JsonObj:
    """What this implementation on this host can do (a backend compares it with ``requires``)."""
    is_windows = os.name == "nt"
    case_sensitive = True
    try:
        with tempfile.TemporaryDirectory() as d:
            probe = os.path.join(d, "CaseProbe")
            open(probe, "w").close()
            case_sensitive = not os.path.exists(os.path.join(d, "caseprobe"))
    except OSError:
        pass
    return {
        "os": "windows" if is_windows else ("macos" if sys.platform == "darwin" else "linux"),
        "shell": "pwsh" if is_windows else "bash",
        "symlinks": hasattr(os, "symlink") and not is_windows,
        "fifo": hasattr(os, "mkfifo"),
        "case_sensitive_fs": case_sensitive,
        "root": hasattr(os, "geteuid") and os.geteuid() == 0,
        "python": platform.python_version(),
        "unicode": unicode_data_version(),
        "packages": package_versions(),
        "profile_overlay": True,  # the workspace op applies every Profile field it is sent
    }


def hello_result(profile: Profile, base: Profile, ops: list[str]) -> m.HelloResult:
    """The ``hello`` answer of a server started with profile ``base`` whose current workspace runs
    ``profile``: identity, surfaces, tools, ops, the patches (from the registry,
    ``server/patch_catalogue.py``) and the host's capabilities."""
    return m.HelloResult(
        protocol=m.PROTOCOL_VERSION,
        implementation=IMPLEMENTATION_NAME if base.wrapper else UPSTREAM_IMPLEMENTATION_NAME,
        version=__version__,
        surface=surface_of(profile),
        surfaces=list(SURFACES) if base.wrapper else [surface_of(base)],
        tools=tool_names(base),
        ops=ops,
        patches=applied_patches(profile),
        all_patches=all_patch_names(),
        capabilities=capabilities(),
        dialects=dialects_of(base),
        features=features_of(base),
        absent_patches=[] if base.wrapper else list(all_patch_names()),
    )


class _CallFailed(Exception):
    """A call that raised after its process observer had reported facts (spec bash.16): the
    error is answered with the facts beside it (``error.process_events``)."""

    def __init__(self, error: Exception, events: list[JsonObj]) -> None:
        super().__init__(str(error))
        self.error = error
        self.events = events


def error_info(exc: Exception) -> m.ErrorInfo:
    """The protocol error object for ``exc``."""
    if isinstance(exc, _CallFailed):
        inner = error_info(exc.error)
        return m.ErrorInfo(inner.message, inner.kind, inner.code, inner.traceback,
                           {**inner.extra, m.PROCESS_EVENTS_FIELD: exc.events})
    if isinstance(exc, ArgumentError):
        return m.ErrorInfo(exc.message, m.KIND_VALIDATION)
    if isinstance(exc, ToolAborted):
        return m.ErrorInfo(exc.message, m.KIND_ABORTED)
    if isinstance(exc, ToolError):
        return m.ErrorInfo(exc.message, m.KIND_TOOL, exc.code)
    if isinstance(exc, ProtocolError):
        return m.ErrorInfo(str(exc), m.KIND_PROTOCOL)
    # a server bug must not kill the server
    return m.ErrorInfo(f"internal error: {type(exc).__name__}: {exc}", m.KIND_INTERNAL,
                       traceback="".join(traceback.format_exception(exc, limit=TRACEBACK_LIMIT)))


class CallSequencer:
    """Admits calls in arrival order by execution mode: a sequential call runs alone after every
    earlier call; a parallel call runs once no earlier sequential call is pending or running."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._next = 0
        self._pending: dict[int, str] = {}  # ticket -> mode, until the call finishes

    def admit(self, mode: str) -> int:
        """Take a ticket; must be called in arrival order (the reader thread)."""
        with self._cond:
            ticket = self._next
            self._next += 1
            self._pending[ticket] = mode
            return ticket

    def _may_start(self, ticket: int) -> bool:
        earlier = [m for t, m in self._pending.items() if t < ticket]
        if self._pending[ticket] == MODE_SEQUENTIAL:
            return not earlier
        return MODE_SEQUENTIAL not in earlier

    def wait_turn(self, ticket: int) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._may_start(ticket))

    def done(self, ticket: int) -> None:
        with self._cond:
            self._pending.pop(ticket, None)
            self._cond.notify_all()


class Server:
    """Owns the current session, in-flight calls, the op handlers and the output stream."""

    def __init__(self, out: IO[str], profile: Profile = REFERENCE) -> None:
        self._out = out
        self._write_lock = threading.Lock()
        self._base_profile = profile
        self._workspace = WorkspaceState(root=os.getcwd(), env=make_env(None), profile=profile)
        self._inflight: dict[Any, ToolContext] = {}
        self._inflight_lock = threading.Lock()
        self._workers = WorkerPool()
        self._sequencer = CallSequencer()
        self._handlers: dict[str, _Registration] = {}
        self.running = True
        self.register(m.HelloRequest.OP, m.HelloRequest.from_fields, self.op_hello)
        self.register(m.WorkspaceRequest.OP, m.WorkspaceRequest.from_fields, self.op_workspace)
        self.register_ordered(m.CallRequest.OP, m.CallRequest.from_fields, self.admit_call)
        self.register(m.CancelRequest.OP, m.CancelRequest.from_fields, self.op_cancel)
        self.register(m.TaskOutputRequest.OP, m.TaskOutputRequest.from_fields,
                      lambda req, _rid: tasks.task_output(self._workspace, req), worker=True)
        self.register(m.TaskStopRequest.OP, m.TaskStopRequest.from_fields,
                      lambda req, _rid: tasks.task_stop(self._workspace, req), worker=True)
        self.register(m.TaskQueryRequest.OP, m.TaskQueryRequest.from_fields,
                      lambda req, _rid: tasks.task_query(self._workspace, req), worker=True)
        self.register(m.ClassifyRequest.OP, m.ClassifyRequest.from_fields, self.op_classify)
        self.register_ordered(m.FsReadRequest.OP, m.FsReadRequest.from_fields, self.admit_fs_read)
        self.register(m.DropRequest.OP, m.DropRequest.from_fields, self.op_drop)
        self.register(m.ShutdownRequest.OP, m.ShutdownRequest.from_fields, self.op_shutdown)

    # -- registration ---------------------------------------------------------------------
    def register(self, op: str, parse: Parse, handle: Handle, *, worker: bool = False) -> None:
        """Serve ``op``: ``parse(fields)`` (raising ``ProtocolError``) then ``handle(message, id)``
        returns the result (a message type or a JSON object). ``worker`` runs ``handle`` on a
        thread of its own (for a handler that may block); otherwise it runs on the reader thread."""
        self._handlers[op] = _Registration(parse, handle=handle, schedule=WORKER if worker else INLINE)

    def register_ordered(self, op: str, parse: Parse, admit: Admit) -> None:
        """Serve ``op`` in call order: ``admit(message, id)`` runs on the reader thread and returns
        the execution mode and the work; the work runs on a worker thread once every earlier call
        its mode must wait for has finished."""
        self._handlers[op] = _Registration(parse, admit=admit)

    @property
    def ops(self) -> list[str]:
        return list(self._handlers)

    # -- output ---------------------------------------------------------------------------
    def send(self, response: m.ResponseMessage) -> None:
        # A lone surrogate (e.g. echoed from a request's "\\ud83d") cannot be written as UTF-8;
        # escape it the way JSON.stringify does.
        line = json.dumps(response.to_json(), ensure_ascii=False)
        if not line.isascii() and _has_surrogate(line):
            line = LONE_SURROGATE_RE.sub(lambda mt: f"\\u{ord(mt.group(0)):04x}", line)
        with self._write_lock:
            self._out.write(line + "\n")
            self._out.flush()

    def ok(self, rid: m.RequestId, result: _Result | JsonObj) -> None:
        self.send(m.OkResponse(rid, result if isinstance(result, dict) else result.to_json()))

    def fail(self, rid: m.RequestId, message: str, kind: str, code: str | None = None,
             traceback_text: str | None = None) -> None:
        self.send(m.ErrorResponse(rid, m.ErrorInfo(message, kind, code, traceback_text)))

    def fail_with(self, rid: m.RequestId, exc: Exception) -> None:
        """Answer with the error ``exc`` in the protocol's terms."""
        self.send(m.ErrorResponse(rid, error_info(exc)))

    def _answer(self, rid: m.RequestId, work: Callable[[], _Result | JsonObj]) -> None:
        """Run ``work`` and send its result, or the error it raised."""
        try:
            result = work()
        except Exception as exc:
            self.fail_with(rid, exc)
        else:
            self.ok(rid, result)

    def _spawn(self, target: Callable[[], None]) -> None:
        self._workers.submit(target)

    # -- input ----------------------------------------------------------------------------
    def handle_line(self, line: str) -> None:
        """Parse and answer one request line; work that must not block the reader runs on a
        worker thread."""
        job = self.accept_line(line)
        if job is not None:
            self._spawn(job)

    def accept_line(self, line: str) -> Job | None:
        """Parse and admit one request line in arrival order: inline ops and every error are
        answered here; the work of an ordered op (a call, ``fs_read``) or a worker op is
        returned, to be run on a thread other than the one reading the input."""
        if not line or line.isspace():  # (not line.strip(): no copy of a long line)
            return None
        try:
            rid, op, req = m.parse_request_line(line)
        except ProtocolError as exc:
            self.fail(None, str(exc), m.KIND_PROTOCOL)
            return None
        reg = self._handlers.get(op) if op is not None else None
        if reg is None:
            self.fail(rid, m.unknown_op_message(req.get("op"), self.ops), m.KIND_PROTOCOL)
            return None
        try:
            message = reg.parse(req)
            if reg.admit is not None:
                mode, run = reg.admit(message, rid)
            handle = reg.handle
        except Exception as exc:
            self.fail_with(rid, exc)
            return None
        if reg.admit is not None:
            ticket = self._sequencer.admit(mode)

            def ordered() -> None:
                try:
                    self._sequencer.wait_turn(ticket)
                    self._answer(rid, run)
                finally:
                    self._sequencer.done(ticket)

            return ordered
        if handle is not None and reg.schedule == WORKER:
            return lambda: self._answer(rid, lambda: handle(message, rid))
        if handle is not None:
            self._answer(rid, lambda: handle(message, rid))
        return None

    def serve_input(self, inp: IO[str] | Utf8Lines) -> None:
        """Serve request lines from ``inp`` until ``shutdown`` or end of input.

        One thread at a time reads ``inp`` and runs the work a line brings (a call) itself, so a
        call starts at once on the thread that read it. A relay thread watches: when one piece
        of work has run for a whole ``RELAY_DELAY_S``, the relay takes over the reading (so
        ``cancel`` and later requests are served meanwhile) and the thread that ran the work
        leaves when it is done. The relay polls only while calls come; idle, it sleeps until
        the next call starts."""
        finished = threading.Event()
        cond = threading.Condition()
        state = {"epoch": 0, "running": False, "taken": -1, "sleeping": False, "stop": False}

        def lead() -> None:
            handed_over = False
            try:
                while True:
                    line = inp.readline()
                    if not line:
                        return
                    job = self.accept_line(line)
                    if not self.running:
                        if job is not None:
                            self._spawn(job)
                        return
                    if job is None:
                        continue
                    with cond:
                        state["epoch"] += 1
                        epoch = state["epoch"]
                        state["running"] = True
                        if state["sleeping"]:
                            state["sleeping"] = False
                            cond.notify_all()
                    try:
                        job()
                    finally:
                        with cond:
                            handed_over = state["taken"] == epoch
                            if not handed_over:  # else "running" is the new reader's already
                                state["running"] = False
                    if handed_over:
                        return  # the relay reads on
            finally:
                if not handed_over:
                    finished.set()

        def relay() -> None:
            with cond:
                seen = -1
                idle = 0
                while True:
                    if state["stop"]:
                        return
                    if idle >= RELAY_IDLE_POLLS:
                        state["sleeping"] = True
                        cond.wait()
                        seen, idle = -1, 0
                        continue
                    cond.wait(RELAY_DELAY_S)
                    if state["stop"]:
                        return
                    if not state["running"]:
                        seen = -1
                        idle += 1
                    elif seen == state["epoch"]:  # the same work for a whole interval
                        state["taken"] = seen
                        state["running"] = False  # that work is no longer the reader's
                        break
                    else:
                        seen, idle = int(state["epoch"]), 0
            self._spawn(relay)  # a relay for the new reader
            lead()

        self._spawn(relay)
        try:
            lead()
            finished.wait()
        finally:
            with cond:
                state["stop"] = True
                cond.notify_all()

    # -- ops ------------------------------------------------------------------------------
    def op_hello(self, req: m.HelloRequest, rid: m.RequestId) -> m.HelloResult:
        return hello_result(self._workspace.profile, self._base_profile, self.ops)

    def op_workspace(self, req: m.WorkspaceRequest, rid: m.RequestId) -> m.WorkspaceResult:
        try:
            profile = profile_from_json(req.profile, self._base_profile)
        except ValueError as exc:
            raise ProtocolError(f"workspace: {exc}") from exc
        root = os.path.abspath(req.root)
        if profile.shell_path and not os.path.isabs(profile.shell_path):
            # a relative shellPath names a shell inside the workspace (protocol.schema.json)
            profile = profile.replace(shell_path=os.path.join(root, profile.shell_path))
        if profile.taskkill_standin_root and not os.path.isabs(profile.taskkill_standin_root):
            # so does a relative taskkill stand-in root (spec patch.bash.win-taskkill)
            profile = profile.replace(taskkill_standin_root=os.path.join(root, profile.taskkill_standin_root))
        if req.clean or req.archive is not None:
            clear_directory(root)
        members = 0
        if req.archive is not None:
            try:
                members = extract_archive(root, req.archive)
            except Exception as exc:
                raise ProtocolError(f"workspace: archive could not be extracted: {exc}") from exc
        elif not os.path.isdir(root):
            os.makedirs(root, exist_ok=True)
        self._stop_session_tasks()
        self._workspace = WorkspaceState(root=root, env=make_env(req.env), profile=profile)
        return m.WorkspaceResult(root, members, applied_patches(profile), profile.wrapper)

    def admit_call(self, req: m.CallRequest, rid: m.RequestId) -> tuple[ExecutionMode, Run]:
        tool = TOOLS.get(req.tool)
        if tool is None:
            raise ArgumentError(f"Tool {req.tool} not found")
        ctx = ToolContext(self._workspace, call_id=req.call_id or str(rid))
        with self._inflight_lock:
            self._inflight[rid] = ctx

        def run() -> JsonObj:
            try:
                out: JsonObj = tool.call(req.args, ctx).to_json()
            except Exception as exc:
                events = ctx.observed_process_events()
                if events:
                    raise _CallFailed(exc, events) from exc
                raise
            finally:
                with self._inflight_lock:
                    self._inflight.pop(rid, None)
            events = ctx.observed_process_events()
            if events:  # spec bash.16: model-invisible, beside content/details
                out[m.PROCESS_EVENTS_FIELD] = [m.ProcessEvent.from_json(e).to_json() for e in events]
            return out

        return tool.mode, run

    def op_cancel(self, req: m.CancelRequest, rid: m.RequestId) -> m.CancelResult:
        with self._inflight_lock:
            ctx = self._inflight.get(req.target)
        if ctx is not None:
            ctx.abort.set()
        return m.CancelResult(ctx is not None)

    def op_classify(self, req: m.ClassifyRequest, rid: m.RequestId) -> m.ClassifyResult:
        return m.ClassifyResult(NON_TOOL_OPS["classify"](req.command, req.rules, req.options))

    def admit_fs_read(self, req: m.FsReadRequest, rid: m.RequestId) -> tuple[ExecutionMode, Run]:
        root = self._workspace.root
        return MODE_SEQUENTIAL, lambda: m.FsReadResult({p: describe_path(os.path.join(root, p)) for p in req.paths})

    def op_drop(self, req: m.DropRequest, rid: m.RequestId) -> m.DropResult:
        self._stop_session_tasks()
        clear_directory(req.root)
        try:
            os.rmdir(req.root)
        except OSError:
            pass
        return m.DropResult(req.root)

    def op_shutdown(self, req: m.ShutdownRequest, rid: m.RequestId) -> m.ShutdownResult:
        self._stop_session_tasks()
        self.running = False
        return m.ShutdownResult()

    def _stop_session_tasks(self) -> None:
        tasks.stop_all(self._workspace)

    def wait_idle(self, timeout: float = 5.0) -> None:
        """Wait (up to ``timeout`` seconds in all) for every call and worker op to finish."""
        self._workers.wait_idle(timeout)


Extension = Callable[[Server], None]


INPUT_BUFFER_BYTES = 1 << 16


class Utf8Lines:
    """Request lines from a byte stream, each decoded as UTF-8 in one pass (a text stream
    decodes a long line piece by piece and joins the pieces)."""

    def __init__(self, raw: IO[bytes]) -> None:
        self._raw = raw

    def readline(self) -> str:
        return self._raw.readline().decode("utf-8", "surrogateescape")


def serve(inp: IO[str] | Utf8Lines = sys.stdin, out: IO[str] = sys.stdout, profile: Profile = REFERENCE,
          extend: Extension | None = None) -> int:
    """Serve requests from ``inp`` until ``shutdown`` or end of input; ``extend`` may register
    further ops on the server first."""
    server = Server(out, profile)
    if extend is not None:
        extend(server)
    server.serve_input(inp)
    server.wait_idle()
    return 0


def serve_stdio(profile: Profile = REFERENCE, extend: Extension | None = None) -> int:
    """``serve`` on this process's stdin/stdout as line-buffered UTF-8 regardless of the host
    locale: the protocol is UTF-8 JSON. The process keeps the memory large calls free for the
    next call (``allocator``)."""
    keep_freed_memory()
    inp = Utf8Lines(open(sys.stdin.fileno(), "rb", buffering=INPUT_BUFFER_BYTES, closefd=False))
    out = open(sys.stdout.fileno(), "w", encoding="utf-8", errors="surrogateescape", closefd=False,
               buffering=1)
    return serve(inp, out, profile, extend)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools_impl.server",
                                     description="Serve the toolproof tool protocol on stdin/stdout.")
    parser.add_argument("--upstream", action="store_true", help="emulate upstream pi (engine only, patches off)")
    args = parser.parse_args(argv)
    return serve_stdio(UPSTREAM_PI if args.upstream else REFERENCE)
