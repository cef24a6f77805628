"""The backend self-check suite: the same named checks run against every backend (local, cmd:,
docker), in the spirit of inspect_ai's sandbox self_check. Each check builds its own workspace,
talks to the implementation through the backend, and passes, fails (with a message), is skipped
(with a reason), or is an expected failure listed in ``KNOWN_FAILURES`` for that backend.
Every answer a check receives is validated against the protocol's JSON Schema
(``tools_impl/protocol/protocol.schema.json``): a response that does not conform fails the check.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any

import jsonschema

from harness.backends.base import Backend, HelloInfo
from harness.backends.client import Response
from harness.errors import HarnessError
from harness.model.observation import Observation
from harness.model.scenario import Workspace, WorkspaceEntry
from harness.run.workspace_archive import build_archive
from tools_impl.protocol.messages import load_schema

CALL_DEADLINE_S = 30.0
TIMEOUT_CHECK_SLEEP_S = 3.5
LARGE_FILE_BYTES = 4 * 1024 * 1024
LARGE_OUTPUT_BYTES = 3_000_000
LARGE_OUTPUT_MAX_TEXT_BYTES = 64 * 1024
UTF8_TEXT = "名称：值 — ünïcödé ✓ 🙂\n"
CRLF_TEXT = b"one\r\ntwo\r\n\r\nthree"

# Checks known to fail on a backend, with the reason: reported as xfail, and as a failure once
# they pass (so the list cannot go stale silently).
KNOWN_FAILURES: dict[str, dict[str, str]] = {
    "local": {},
    "cmd": {},
    "docker": {},
}


class CheckFailed(Exception):
    pass


@cache
def _schema_validator(defn: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{defn}", "$defs": load_schema()["$defs"]})


def validate_response(op: str, resp: Response, result_defn: str | None) -> None:
    """Raise ``CheckFailed`` unless ``resp`` (the answer to ``op``) is a protocol response and, when
    it succeeded, its result matches ``#/$defs/<result_defn>``."""
    wire: dict[str, Any] = {"id": resp.id, "ok": resp.ok}
    if resp.ok:
        wire["result"] = resp.result
    else:
        wire["error"] = resp.error
    checks = [("response", wire)]
    if resp.ok and result_defn is not None:
        checks.append((result_defn, resp.result))
    for defn, instance in checks:
        error = jsonschema.exceptions.best_match(_schema_validator(defn).iter_errors(instance))
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
            raise CheckFailed(f"the answer to {op!r} does not match the protocol schema ({defn}) at {where}: "
                              f"{error.message}")


class CheckSkipped(Exception):
    pass


@dataclass(frozen=True)
class CheckResult:
    name: str
    status: str  # pass | fail | skip | xfail | error
    message: str = ""
    duration_s: float = 0.0


@dataclass(frozen=True)
class SelfcheckReport:
    backend: str
    results: tuple[CheckResult, ...]

    def summary(self) -> str:
        counts: dict[str, int] = {}
        for r in self.results:
            counts[r.status] = counts.get(r.status, 0) + 1
        return ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))

    @property
    def exit_code(self) -> int:
        statuses = {r.status for r in self.results}
        if "error" in statuses:
            return 2
        return 1 if "fail" in statuses else 0


@dataclass
class _Ctx:
    backend: Backend
    hello: HelloInfo

    @contextmanager
    def workspace(self, *entries: WorkspaceEntry) -> Any:
        root = self.backend.new_workspace(build_archive(Workspace(tuple(entries))), {}, None)
        try:
            yield root
        finally:
            self.backend.drop_workspace(root)

    def need(self, *tools: str) -> None:
        missing = [t for t in tools if t not in self.hello.tools]
        if missing:
            raise CheckSkipped(f"the implementation has no {', '.join(missing)} tool")

    def call(self, tool: str, args: dict[str, Any], deadline_s: float = CALL_DEADLINE_S) -> Observation:
        t0 = time.monotonic()
        resp = self.backend.request("call", {"tool": tool, "args": args}, deadline_s=deadline_s)
        duration = time.monotonic() - t0
        validate_response("call", resp, "toolResult")
        return Observation.from_response(resp, duration)

    def file(self, root: str, path: str) -> Any:
        return self.backend.read_files(root, [path])[path]


def _text_of(obs: Observation) -> str:
    return obs.text if obs.status == "result" else obs.error_message


def check_utf8_round_trip(c: _Ctx) -> None:
    data = UTF8_TEXT.encode("utf-8")
    with c.workspace(WorkspaceEntry("ünï/名称.txt", "file", data)) as root:
        got = c.file(root, "ünï/名称.txt")
        if got.data != data:
            raise CheckFailed(f"workspace file bytes changed: {got.data!r}")
        c.need("write")
        obs = c.call("write", {"path": "out.txt", "content": UTF8_TEXT})
        if obs.status != "result" or obs.is_error:
            raise CheckFailed(f"write failed: {_text_of(obs)!r}")
        got = c.file(root, "out.txt")
        if got.data != data:
            raise CheckFailed(f"written bytes differ: expected {data!r}, got {got.data!r}")


def check_crlf_preserved(c: _Ctx) -> None:
    with c.workspace(WorkspaceEntry("crlf.txt", "file", CRLF_TEXT)) as root:
        got = c.file(root, "crlf.txt")
        if got.data != CRLF_TEXT:
            raise CheckFailed(f"CRLF file changed on the way in: {got.data!r}")
        c.need("write")
        c.call("write", {"path": "w.txt", "content": CRLF_TEXT.decode()})
        got = c.file(root, "w.txt")
        if got.data != CRLF_TEXT:
            raise CheckFailed(f"write changed CRLF content: {got.data!r}")


def check_binary_files(c: _Ctx) -> None:
    data = bytes(range(256)) * 4
    big = os.urandom(LARGE_FILE_BYTES)
    with c.workspace(WorkspaceEntry("b.bin", "file", data), WorkspaceEntry("big.bin", "file", big)) as root:
        states = c.backend.read_files(root, ["b.bin", "big.bin"])
        if states["b.bin"].data != data:
            raise CheckFailed("binary file bytes changed")
        if states["big.bin"].data != big:
            raise CheckFailed(f"a {LARGE_FILE_BYTES}-byte file did not round-trip")


def check_cwd_is_workspace(c: _Ctx) -> None:
    c.need("bash")
    with c.workspace(WorkspaceEntry("marker.txt", "file", b"x")) as root:
        obs = c.call("bash", {"command": "pwd; ls"})
        text = _text_of(obs)
        lines = text.split("\n")
        if lines[0] not in (root, os.path.realpath(root)) or "marker.txt" not in lines:
            raise CheckFailed(f"bash did not run in the workspace {root!r}: {text!r}")


def check_timeouts_kill_children(c: _Ctx) -> None:
    c.need("bash")
    with c.workspace() as root:
        cmd = "(sleep 2; echo alive > survivor.txt) & sleep 30"
        obs = c.call("bash", {"command": cmd, "timeout": 1})
        text = _text_of(obs)
        if "timed out" not in text:
            raise CheckFailed(f"expected a timeout, got {obs.status}: {text!r}")
        if obs.duration_s > 10:
            raise CheckFailed(f"the timeout took {obs.duration_s:.1f} s")
        time.sleep(TIMEOUT_CHECK_SLEEP_S)
        if c.file(root, "survivor.txt").exists:
            raise CheckFailed("a child of the timed-out command survived and wrote survivor.txt")


def check_early_term_exit_is_not_timeout(c: _Ctx) -> None:
    c.need("bash")
    with c.workspace():
        obs = c.call("bash", {"command": "echo before; kill -TERM $$", "timeout": 20})
        text = _text_of(obs)
        if "timed out" in text or "aborted" in text:
            raise CheckFailed(f"a command that exited on SIGTERM was reported as {text!r}")
        if obs.duration_s > 10:
            raise CheckFailed(f"took {obs.duration_s:.1f} s; the command exits at once")
        if "before" not in text:
            raise CheckFailed(f"output lost: {text!r}")


def check_large_outputs(c: _Ctx) -> None:
    c.need("bash")
    with c.workspace():
        obs = c.call("bash", {"command": f"head -c {LARGE_OUTPUT_BYTES} /dev/zero | tr '\\0' 'x'; echo; echo end"})
        text = _text_of(obs)
        size = len(text.encode("utf-8"))
        if size > LARGE_OUTPUT_MAX_TEXT_BYTES:
            raise CheckFailed(f"a {LARGE_OUTPUT_BYTES}-byte output came back untruncated ({size} bytes)")
        if "end" not in text:
            raise CheckFailed(f"the tail of a large output is missing: {text[-200:]!r}")


def check_symlinks(c: _Ctx) -> None:
    if not c.hello.capabilities.symlinks:
        raise CheckSkipped("the backend has no symlinks")
    with c.workspace(WorkspaceEntry("target.txt", "file", b"t"), WorkspaceEntry("rel", "symlink", target="target.txt"),
                     WorkspaceEntry("out", "symlink", target="/nonexistent/elsewhere")) as root:
        states = c.backend.read_files(root, ["rel", "out"])
        for name, target in (("rel", "target.txt"), ("out", "/nonexistent/elsewhere")):
            st = states[name]
            if st.kind != "symlink" or st.target != target:
                raise CheckFailed(f"{name}: expected a symlink to {target!r}, got {st.kind} {st.target!r}")


def check_fifo_guard(c: _Ctx) -> None:
    if not c.hello.capabilities.fifo:
        raise CheckSkipped("the backend has no FIFOs")
    with c.workspace(WorkspaceEntry("pipe", "fifo")) as root:
        if c.file(root, "pipe").kind != "fifo":
            raise CheckFailed("the workspace FIFO was not created as a FIFO")
        c.need("read")
        obs = c.call("read", {"path": "pipe"}, deadline_s=CALL_DEADLINE_S)
        text = _text_of(obs)
        if "named pipe (FIFO)" not in text:
            raise CheckFailed(f"reading a FIFO should be refused by the guard, got {text!r}")


def check_protocol_schema(c: _Ctx) -> None:
    validate_response("hello", c.backend.request("hello", {}, deadline_s=CALL_DEADLINE_S), "helloResult")
    with c.workspace():
        if "cancel" in c.hello.ops:
            resp = c.backend.request("cancel", {"target": "selfcheck-nothing"}, deadline_s=CALL_DEADLINE_S)
            validate_response("cancel", resp, "cancelResult")
        if "task_query" in c.hello.ops:
            validate_response("task_query", c.backend.request("task_query", {}, deadline_s=CALL_DEADLINE_S),
                              "taskQueryResult")
        # an error answer: a tool that no implementation has
        validate_response("call", c.backend.request("call", {"tool": "selfcheck-no-such-tool", "args": {}},
                                                    deadline_s=CALL_DEADLINE_S), None)


CHECKS: dict[str, Callable[[_Ctx], None]] = {
    "utf8_round_trip": check_utf8_round_trip,
    "crlf_preserved": check_crlf_preserved,
    "binary_files": check_binary_files,
    "cwd_is_workspace": check_cwd_is_workspace,
    "timeouts_kill_children": check_timeouts_kill_children,
    "early_term_exit_is_not_timeout": check_early_term_exit_is_not_timeout,
    "large_outputs": check_large_outputs,
    "symlinks": check_symlinks,
    "fifo_guard": check_fifo_guard,
    "protocol_schema": check_protocol_schema,
}


def run_selfcheck(factory: Callable[[], Backend], label: str, only: Sequence[str] = ()) -> SelfcheckReport:
    """Run the named checks (all by default) on one backend instance; restart it after an error."""
    unknown = [n for n in only if n not in CHECKS]
    if unknown:
        raise HarnessError(f"unknown self-check {unknown[0]!r}; known: {', '.join(CHECKS)}")
    backend = factory()
    known = KNOWN_FAILURES.get(backend.name, {})
    results: list[CheckResult] = []
    try:
        try:
            hello = backend.start()
        except HarnessError as exc:
            return SelfcheckReport(label, (CheckResult("start", "error", str(exc)),))
        dirty = False
        for name, fn in CHECKS.items():
            if only and name not in only:
                continue
            t0 = time.monotonic()
            try:
                if dirty:
                    backend.restart()
                    hello = backend.hello if hasattr(backend, "hello") and backend.hello else hello  # type: ignore[attr-defined]
                    dirty = False
                fn(_Ctx(backend, hello))
                status, msg = "pass", ""
            except CheckSkipped as exc:
                status, msg = "skip", str(exc)
            except CheckFailed as exc:
                status, msg = "fail", str(exc)
            except HarnessError as exc:
                status, msg, dirty = "error", f"infrastructure: {exc}", True
            if name in known:
                if status == "fail":
                    status, msg = "xfail", f"known failure on {backend.name}: {known[name]} ({msg})"
                elif status == "pass":
                    status, msg = "fail", f"listed as a known failure on {backend.name} but passes; remove it"
            results.append(CheckResult(name, status, msg, time.monotonic() - t0))
    finally:
        backend.close()
    return SelfcheckReport(label, tuple(results))
