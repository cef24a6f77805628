"""The tool server: speaks the JSON-lines tool protocol (DESIGN §2) on stdin/stdout.

One JSON object per line in, one per line out, matched by ``id``. Ops: ``hello``, ``workspace``,
``call``, ``cancel``, ``task_output``, ``task_stop``, ``task_query``, ``classify``, ``shutdown``.
Responses are ``{"id", "ok": true, "result": …}`` or ``{"id", "ok": false, "error": {"message",
"kind", …}}`` where ``kind`` is ``tool`` (the tool raised; ``message`` is what the model sees),
``aborted``, ``validation`` (host-side argument validation), ``protocol`` (a malformed request)
or ``internal`` (a bug in the server). The server never dies on input.

``fs_read`` and ``drop`` let a container backend read final file states and remove a workspace
in-band. ``call`` and blocking ``task_output`` run on worker threads so that ``cancel`` and other requests
are served meanwhile; responses may therefore arrive out of order.

Calls honour the tools' execution modes (spec §0.7) in arrival order: a ``sequential`` tool
(write, edit, bash) starts only after every earlier call has finished, and any call waits for
earlier sequential calls; ``parallel`` tools (read, grep, glob) overlap each other. So a client
may pipeline ``write`` then ``read`` of one file and observe the write. ``fs_read`` waits for
every earlier call too.
"""

from __future__ import annotations

import json
import os
import platform
import re
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable
from typing import IO, Any

from tools_impl import IMPLEMENTATION_NAME, __version__
from tools_impl.core.context import Session, ToolContext, make_env
from tools_impl.core.errors import ArgumentError, ProtocolError, ToolAborted, ToolError
from tools_impl.core.profile import ALL_PATCHES, REFERENCE, Profile, profile_from_json
from tools_impl.core.tool import MODE_SEQUENTIAL, Tool
from tools_impl.server.tools import NON_TOOL_OPS, TOOLS, tool_names
from tools_impl.server.workspace_delivery import clear_directory, extract_archive

PROTOCOL_VERSION = 1
OPS = ("hello", "workspace", "call", "cancel", "task_output", "task_stop", "task_query", "classify",
       "fs_read", "drop", "shutdown")
SURFACES = ("minimax", "pi")

JsonObj = dict[str, Any]
LONE_SURROGATE_RE = re.compile("[\ud800-\udfff]")


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
    }


def describe_path(path: str) -> JsonObj:
    """The state of one path for ``fs_read``: kind, mode, base64 data of regular files, link target."""
    import base64
    import stat as st

    try:
        info = os.lstat(path)
    except OSError:
        return {"kind": "absent"}
    mode = st.S_IMODE(info.st_mode)
    if st.S_ISLNK(info.st_mode):
        return {"kind": "symlink", "mode": mode, "target": os.readlink(path)}
    if st.S_ISDIR(info.st_mode):
        return {"kind": "dir", "mode": mode}
    if st.S_ISFIFO(info.st_mode):
        return {"kind": "fifo", "mode": mode}
    if st.S_ISREG(info.st_mode):
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            return {"kind": "file", "mode": mode, "error": str(exc)}
        return {"kind": "file", "mode": mode, "data": base64.b64encode(data).decode("ascii")}
    return {"kind": "other", "mode": mode}


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
    """Owns the current session, in-flight calls and the output stream."""

    def __init__(self, out: IO[str], profile: Profile = REFERENCE) -> None:
        self._out = out
        self._write_lock = threading.Lock()
        self._base_profile = profile
        self._session = Session(root=os.getcwd(), env=make_env(None), profile=profile)
        self._inflight: dict[Any, ToolContext] = {}
        self._inflight_lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._sequencer = CallSequencer()
        self.running = True

    # -- output ---------------------------------------------------------------------------
    def send(self, obj: JsonObj) -> None:
        # A lone surrogate (e.g. echoed from a request's "\\ud83d") cannot be written as UTF-8;
        # escape it the way JSON.stringify does.
        line = LONE_SURROGATE_RE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", json.dumps(obj, ensure_ascii=False))
        with self._write_lock:
            self._out.write(line + "\n")
            self._out.flush()

    def ok(self, rid: Any, result: Any) -> None:
        self.send({"id": rid, "ok": True, "result": result})

    def fail(self, rid: Any, message: str, kind: str, **extra: Any) -> None:
        err: JsonObj = {"message": message, "kind": kind}
        err.update({k: v for k, v in extra.items() if v is not None})
        self.send({"id": rid, "ok": False, "error": err})

    # -- input ----------------------------------------------------------------------------
    def handle_line(self, line: str) -> None:
        if not line.strip():
            return
        try:
            req = json.loads(line)
        except json.JSONDecodeError as exc:
            self.fail(None, f"request is not valid JSON: {exc.msg} at column {exc.colno}", "protocol")
            return
        if not isinstance(req, dict):
            self.fail(None, "request must be a JSON object", "protocol")
            return
        rid = req.get("id")
        op = req.get("op")
        handler: Callable[[Any, JsonObj], None] | None = {
            "hello": self.op_hello,
            "workspace": self.op_workspace,
            "call": self.op_call,
            "cancel": self.op_cancel,
            "task_output": self.op_task,
            "task_stop": self.op_task,
            "task_query": self.op_task,
            "classify": self.op_classify,
            "fs_read": self.op_fs_read,
            "drop": self.op_drop,
            "shutdown": self.op_shutdown,
        }.get(op) if isinstance(op, str) else None
        if handler is None:
            known = ", ".join(OPS)
            what = "missing field 'op'" if op is None else f"unknown op {op!r}"
            self.fail(rid, f"{what}; expected one of: {known}", "protocol")
            return
        try:
            handler(rid, req)
        except ProtocolError as exc:
            self.fail(rid, str(exc), "protocol")
        except Exception as exc:  # a server bug must not kill the server
            self.fail(rid, f"internal error: {type(exc).__name__}: {exc}", "internal",
                      traceback=traceback.format_exc(limit=8))

    # -- ops ------------------------------------------------------------------------------
    def op_hello(self, rid: Any, req: JsonObj) -> None:
        self.ok(rid, {
            "protocol": PROTOCOL_VERSION,
            "implementation": IMPLEMENTATION_NAME,
            "version": __version__,
            "surface": "minimax" if self._session.profile.wrapper else "pi",
            "surfaces": list(SURFACES),
            "tools": tool_names(),
            "ops": list(OPS),
            "patches": sorted(self._session.profile.patches),
            "all_patches": list(ALL_PATCHES),
            "capabilities": capabilities(),
        })

    def op_workspace(self, rid: Any, req: JsonObj) -> None:
        root = req.get("root")
        if not isinstance(root, str) or not root:
            raise ProtocolError("workspace: field 'root' must be a non-empty string")
        env = req.get("env")
        if env is not None and (not isinstance(env, dict)
                                or not all(isinstance(v, (str, type(None))) for v in env.values())):
            raise ProtocolError("workspace: field 'env' must be an object of string (or null) values")
        prof_obj = req.get("profile")
        if prof_obj is not None and not isinstance(prof_obj, dict):
            raise ProtocolError("workspace: field 'profile' must be an object")
        try:
            profile = profile_from_json(prof_obj, self._base_profile)
        except ValueError as exc:
            raise ProtocolError(f"workspace: {exc}") from exc
        root = os.path.abspath(root)
        archive = req.get("archive")
        if req.get("clean") or archive is not None:
            clear_directory(root)
        members = 0
        if archive is not None:
            if not isinstance(archive, str):
                raise ProtocolError("workspace: field 'archive' must be a base64 string")
            try:
                members = extract_archive(root, archive)
            except Exception as exc:
                raise ProtocolError(f"workspace: archive could not be extracted: {exc}") from exc
        elif not os.path.isdir(root):
            os.makedirs(root, exist_ok=True)
        self._stop_session_tasks()
        self._session = Session(root=root, env=make_env(env), profile=profile)
        self.ok(rid, {"root": root, "members": members, "patches": sorted(profile.patches),
                      "wrapper": profile.wrapper})

    def op_call(self, rid: Any, req: JsonObj) -> None:
        tool = req.get("tool")
        if not isinstance(tool, str):
            raise ProtocolError("call: field 'tool' must be a string")
        args = req.get("args", {})
        spec = TOOLS.get(tool)
        if spec is None:
            self.fail(rid, f"Tool {tool} not found", "validation")
            return
        ctx = ToolContext(self._session, call_id=str(req.get("call_id") or rid))
        with self._inflight_lock:
            self._inflight[rid] = ctx
        ticket = self._sequencer.admit(spec.mode)
        t = threading.Thread(target=self._run_call, args=(rid, spec, args, ctx, ticket), daemon=True)
        self._threads.append(t)
        t.start()

    def _run_call(self, rid: Any, tool: Tool, args: Any, ctx: ToolContext, ticket: int) -> None:
        try:
            self._sequencer.wait_turn(ticket)
            self.ok(rid, tool.call(args, ctx).to_json())
        except ArgumentError as exc:
            self.fail(rid, exc.message, "validation")
        except ToolAborted as exc:
            self.fail(rid, exc.message, "aborted")
        except ToolError as exc:
            self.fail(rid, exc.message, "tool", code=exc.code)
        except Exception as exc:
            self.fail(rid, f"internal error: {type(exc).__name__}: {exc}", "internal",
                      traceback=traceback.format_exc(limit=12))
        finally:
            self._sequencer.done(ticket)
            with self._inflight_lock:
                self._inflight.pop(rid, None)

    def op_cancel(self, rid: Any, req: JsonObj) -> None:
        target = req.get("target")
        with self._inflight_lock:
            ctx = self._inflight.get(target)
        if ctx is not None:
            ctx.abort.set()
        self.ok(rid, {"cancelled": ctx is not None})

    def op_task(self, rid: Any, req: JsonObj) -> None:
        from tools_impl.bash import tasks  # bash's background tasks

        op = req["op"]
        session = self._session

        def run() -> None:
            try:
                self.ok(rid, tasks.handle_op(session, op, req))
            except ToolError as exc:
                self.fail(rid, exc.message, "tool", code=exc.code)
            except ProtocolError as exc:
                self.fail(rid, str(exc), "protocol")
            except Exception as exc:
                self.fail(rid, f"internal error: {type(exc).__name__}: {exc}", "internal",
                          traceback=traceback.format_exc(limit=12))

        t = threading.Thread(target=run, daemon=True)
        self._threads.append(t)
        t.start()

    def op_classify(self, rid: Any, req: JsonObj) -> None:
        command = req.get("command")
        if not isinstance(command, str):
            raise ProtocolError("classify: field 'command' must be a string")
        rules = req.get("rules", [])
        if not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
            raise ProtocolError("classify: field 'rules' must be a list of strings")
        options = req.get("options", {})
        if not isinstance(options, dict):
            raise ProtocolError("classify: field 'options' must be an object")
        self.ok(rid, NON_TOOL_OPS["classify"](command, rules, options))

    def op_fs_read(self, rid: Any, req: JsonObj) -> None:
        paths = req.get("paths")
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            raise ProtocolError("fs_read: field 'paths' must be a list of strings")
        root = self._session.root
        ticket = self._sequencer.admit(MODE_SEQUENTIAL)

        def run() -> None:
            try:
                self._sequencer.wait_turn(ticket)
                self.ok(rid, {"files": {p: describe_path(os.path.join(root, p)) for p in paths}})
            except Exception as exc:
                self.fail(rid, f"internal error: {type(exc).__name__}: {exc}", "internal")
            finally:
                self._sequencer.done(ticket)

        t = threading.Thread(target=run, daemon=True)
        self._threads.append(t)
        t.start()

    def op_drop(self, rid: Any, req: JsonObj) -> None:
        root = req.get("root")
        if not isinstance(root, str) or not root:
            raise ProtocolError("drop: field 'root' must be a non-empty string")
        self._stop_session_tasks()
        clear_directory(root)
        try:
            os.rmdir(root)
        except OSError:
            pass
        self.ok(rid, {"dropped": root})

    def op_shutdown(self, rid: Any, req: JsonObj) -> None:
        self._stop_session_tasks()
        self.running = False
        self.ok(rid, {"bye": True})

    def _stop_session_tasks(self) -> None:
        try:
            from tools_impl.bash import tasks
        except ImportError:
            return
        stop_all = getattr(tasks, "stop_all", None)
        if stop_all is not None:
            stop_all(self._session)

    def wait_idle(self, timeout: float = 5.0) -> None:
        for t in list(self._threads):
            t.join(timeout)


def serve(inp: IO[str] = sys.stdin, out: IO[str] = sys.stdout, profile: Profile = REFERENCE,
          server_class: type[Server] = Server) -> int:
    """Serve requests from ``inp`` until ``shutdown`` or end of input."""
    server = server_class(out, profile)
    for line in inp:
        server.handle_line(line)
        if not server.running:
            break
    server.wait_idle()
    return 0


def serve_stdio(profile: Profile = REFERENCE, server_class: type[Server] = Server) -> int:
    """``serve`` on this process's stdin/stdout as line-buffered UTF-8 regardless of the host
    locale: the protocol is UTF-8 JSON."""
    inp = open(sys.stdin.fileno(), encoding="utf-8", errors="surrogateescape", closefd=False)
    out = open(sys.stdout.fileno(), "w", encoding="utf-8", errors="surrogateescape", closefd=False,
               buffering=1)
    return serve(inp, out, profile, server_class)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tools_impl.server",
                                     description="Serve the toolproof tool protocol on stdin/stdout.")
    parser.add_argument("--upstream", action="store_true", help="emulate upstream pi (engine only, patches off)")
    args = parser.parse_args(argv)
    from tools_impl.core.profile import UPSTREAM_PI

    return serve_stdio(UPSTREAM_PI if args.upstream else REFERENCE)

