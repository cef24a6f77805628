"""Background bash tasks (spec bash.tasks) with real processes: explicit background, managed
auto-promotion, the watchdog, task_stop, the task ops, and the same over the real server."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.processes import alive, group_members, proc_available, read_pid, wait_until
from tests.support.repo import REPO
from tools_impl.bash import tasks
from tools_impl.bash import tool as bash
from tools_impl.core.context import ToolContext, make_context
from tools_impl.core.errors import ToolError
from tools_impl.core.profile import REFERENCE, Profile
from tools_impl.protocol.messages import REQUESTS_BY_OP

pytestmark = pytest.mark.skipif(sys.platform == "win32" or not proc_available(),
                                reason="POSIX process groups and /proc needed")

BACKGROUND_RE = re.compile(
    r'\A<bash_background task_id="(bash-[0-9a-f]{8})">\n'
    r"Started local background bash task\. The owning conversation will automatically resume when it "
    r"finishes; use task_query/task_output to inspect incremental output and task_stop to cancel it\.\n"
    r"</bash_background>\Z"
)
PROMOTED_TEXT = (
    '<bash_background task_id="{tid}">\n'
    "The command is still running and was yielded to a managed background task without restarting it. "
    "The owning conversation will automatically resume when it finishes; use task_query/task_output to "
    "inspect incremental output and task_stop to cancel it.\n"
    "</bash_background>"
)


def ctx_for(tmp_path: Path, profile: Profile = REFERENCE) -> ToolContext:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    return make_context(str(ws), {"TMPDIR": str(tmp_path), "CI": None, "GITHUB_ACTIONS": None,
                                  "MAVIS_BASH_ENV_SANITIZE": None}, profile)


def start_background(ctx: ToolContext, command: str, **extra: Any) -> str:
    res = bash.execute({"command": command, "run_in_background": True, **extra}, ctx)
    m = BACKGROUND_RE.match(res.text)
    assert m, res.text
    assert res.details == {"status": "started", "task_id": m.group(1)}
    assert not res.is_error
    return m.group(1)


TASK_OPS: dict[str, Any] = {"task_output": tasks.task_output, "task_stop": tasks.task_stop,
                            "task_query": tasks.task_query}


def task_op(ctx: ToolContext, op: str, fields: dict[str, Any]) -> dict[str, Any]:
    """One task protocol op as the server runs it: fields parsed into the message, result as JSON."""
    result = TASK_OPS[op](ctx.workspace, REQUESTS_BY_OP[op].from_fields(fields)).to_json()
    assert isinstance(result, dict)
    return result


def output(ctx: ToolContext, tid: str, **req: Any) -> dict[str, Any]:
    return task_op(ctx, "task_output", {"op": "task_output", "task_id": tid, **req})


def wait_for_text(ctx: ToolContext, tid: str, needle: str, timeout: float = 30) -> None:
    assert wait_until(lambda: needle in output(ctx, tid)["output"], timeout), output(ctx, tid)


# -- explicit background --------------------------------------------------------------------

def test_explicit_background_returns_task_id_and_blocking_output_gets_everything(tmp_path: Path) -> None:
    ctx = ctx_for(tmp_path)
    tid = start_background(ctx, "echo start; sleep 0.3; echo end")
    out = output(ctx, tid, block=True, timeout_ms=30000)
    assert out == {"task_id": tid, "status": "succeeded", "output": "start\nend\n", "since": 0,
                   "next_since": 10, "done": True, "exit_code": 0, "text": "start\nend\n"}


def test_task_output_since_returns_only_new_text(tmp_path: Path) -> None:
    ctx = ctx_for(tmp_path)
    gate = tmp_path / "go"  # "two" is printed only once the test has read "one" (no sleep race)
    tid = start_background(ctx, f"echo one; while [ ! -e {gate} ]; do sleep 0.02; done; echo two")
    wait_for_text(ctx, tid, "one\n")
    first = output(ctx, tid)
    assert first["output"] == "one\n" and first["done"] is False and first["status"] == "running"
    gate.touch()
    rest = output(ctx, tid, since=first["next_since"], block=True, timeout_ms=30000)
    assert rest["output"] == "two\n"
    assert rest["next_since"] == 8


def test_nonblocking_task_output_of_queued_or_running_task_has_no_exit_code(tmp_path: Path) -> None:
    ctx = ctx_for(tmp_path)
    tid = start_background(ctx, "sleep 30")
    out = output(ctx, tid)
    assert out["done"] is False and "exit_code" not in out and "error" not in out
    task_op(ctx, "task_stop", {"task_id": tid})


def test_background_failure_appends_bash_status_after_streamed_output(tmp_path: Path) -> None:
    ctx = ctx_for(tmp_path)
    tid = start_background(ctx, "echo out; exit 3")
    out = output(ctx, tid, block=True, timeout_ms=30000)
    status_text = "Background bash failed: out\n\n\nCommand exited with code 3"
    assert out["status"] == "failed"
    assert out["exit_code"] == 3
    assert out["error"] == {"message": "out\n\n\nCommand exited with code 3", "code": "BASH_FAILED"}
    assert out["output"] == f"out\n\n<bash_status>{status_text}</bash_status>\n"
    assert out["text"] == status_text


def test_background_failure_without_output_is_the_status_text(tmp_path: Path) -> None:
    ctx = ctx_for(tmp_path)
    tid = start_background(ctx, "exit 4")
    out = output(ctx, tid, block=True, timeout_ms=30000)
    assert out["output"] == "Background bash failed: (no output)\n\nCommand exited with code 4"


def test_explicit_background_has_no_default_timeout_but_honours_given_one(tmp_path: Path) -> None:
    ctx = ctx_for(tmp_path)
    tid = start_background(ctx, "sleep 5")
    task = tasks.manager_for(ctx.workspace).get(tid)
    assert task.timeout is None
    assert task.metadata["maxRunMs"] == 1_800_000
    assert "timeoutSeconds" not in task.metadata
    task_op(ctx, "task_stop", {"task_id": tid})
    tid2 = start_background(ctx, "sleep 5", timeout=0.3)
    out = output(ctx, tid2, block=True, timeout_ms=30000)
    assert out["status"] == "failed"
    assert out["text"] == "Background bash failed: Command timed out after 0.3 seconds"


def test_task_stop_cancels_through_graceful_kill_running_term_trap(tmp_path: Path) -> None:
    ctx = ctx_for(tmp_path)
    tid = start_background(ctx, "trap 'echo cleanup' TERM; echo ready; sleep 60")
    wait_for_text(ctx, tid, "ready\n")
    stopped = task_op(ctx, "task_stop", {"op": "task_stop", "task_id": tid})
    assert stopped["stopped"] is True
    assert stopped["status"] == "canceled"
    assert stopped["error"]["code"] == "BASH_CANCELED"
    assert stopped["error"]["message"].endswith("cleanup\n\n\nCommand aborted")
    out = output(ctx, tid)
    assert "cleanup\n" in out["output"]
    assert out["output"].endswith(f"\n<bash_status>Background bash canceled: {stopped['error']['message']}"
                                  "</bash_status>\n")
    assert group_members(stopped["pid"]) == []
    again = task_op(ctx, "task_stop", {"task_id": tid})
    assert again["stopped"] is False and again["status"] == "canceled"


def test_watchdog_fails_task_after_max_run_ms(tmp_path: Path) -> None:
    ctx = ctx_for(tmp_path, REFERENCE.replace(bash_background_max_run_ms=400))
    tid = start_background(ctx, "sleep 30")
    out = output(ctx, tid, block=True, timeout_ms=30000)
    assert out["status"] == "failed"
    assert out["error"] == {"message": "Background bash exceeded maxRunMs (400ms)", "code": "TIMEOUT"}
    assert out["output"] == "Background bash timed out after 400ms (exceeded maxRunMs): Command aborted"
    assert tasks.manager_for(ctx.workspace).get(tid).metadata["maxRunMs"] == 400


def test_unknown_task_id_raises_clear_error(tmp_path: Path) -> None:
    ctx = ctx_for(tmp_path)
    for op in ("task_output", "task_stop", "task_query"):
        with pytest.raises(ToolError) as info:
            task_op(ctx, op, {"task_id": "bash-00000000"})
        assert info.value.message == 'No background task with id "bash-00000000"'


def test_task_query_lists_tasks_and_reports_one(tmp_path: Path) -> None:
    ctx = ctx_for(tmp_path)
    tid = start_background(ctx, "echo hi")
    output(ctx, tid, block=True, timeout_ms=30000)
    one = task_op(ctx, "task_query", {"task_id": tid})
    assert one["task_id"] == tid and one["kind"] == "bash" and one["status"] == "succeeded"
    assert one["command"] == "echo hi" and one["description"] == "echo hi" and one["done"] is True
    assert one["metadata"]["executionMode"] == "explicit_background"
    listed = task_op(ctx, "task_query", {})
    assert [t["task_id"] for t in listed["tasks"]] == [tid]


def test_stop_all_stops_every_running_task_of_the_session(tmp_path: Path) -> None:
    ctx = ctx_for(tmp_path)
    tids = [start_background(ctx, "sleep 30") for _ in range(2)]
    tasks.stop_all(ctx.workspace)
    for tid in tids:
        assert output(ctx, tid, block=True, timeout_ms=30000)["status"] == "canceled"


# -- managed foreground -----------------------------------------------------------------------

def test_managed_foreground_auto_promotes_and_keeps_the_same_process(tmp_path: Path) -> None:
    ctx = ctx_for(tmp_path, REFERENCE.replace(bash_soft_yield_ms=300))
    pidfile = tmp_path / "pid"
    gate = tmp_path / "go"  # the command cannot finish before the test releases it: no soft-yield race
    start = time.monotonic()
    res = bash.execute({"command": f"echo $$ > {pidfile}; echo first; while [ ! -e {gate} ]; do sleep 0.02; done; "
                                   "echo second"}, ctx)
    assert time.monotonic() - start < 10  # returned at the soft yield, not when the command ended
    gate.touch()
    tid = (res.details or {})["task_id"]
    assert res.text == PROMOTED_TEXT.format(tid=tid)
    assert res.details == {"status": "auto_promoted", "task_id": tid}
    assert not res.is_error
    shell_pid = read_pid(str(pidfile))
    out = output(ctx, tid, block=True, timeout_ms=30000)
    assert out["output"] == "first\nsecond\n"
    assert out["status"] == "succeeded"
    task = tasks.manager_for(ctx.workspace).get(tid)
    assert task.pid == shell_pid
    assert task.metadata["executionMode"] == "auto_promoted"
    assert task.metadata["foregroundSoftYieldMs"] == 300
    assert task.metadata["timeoutSeconds"] == 120


def test_promoted_task_keeps_the_foreground_timeout(tmp_path: Path) -> None:
    ctx = ctx_for(tmp_path, REFERENCE.replace(bash_soft_yield_ms=100))
    res = bash.execute({"command": "sleep 5", "timeout": 0.5}, ctx)
    tid = (res.details or {})["task_id"]
    out = output(ctx, tid, block=True, timeout_ms=30000)
    assert out["text"] == "Background bash failed: Command timed out after 0.5 seconds"


def test_managed_completion_marks_metadata_foreground(tmp_path: Path) -> None:
    ctx = ctx_for(tmp_path)
    res = bash.execute({"command": "echo hi"}, ctx)
    task = tasks.manager_for(ctx.workspace).get((res.details or {})["task_id"])
    assert task.metadata["executionMode"] == "managed_foreground"
    assert task.metadata["completionOrigin"] == "foreground"
    assert task.delivered


# -- pure functions ---------------------------------------------------------------------------

def test_task_description_is_first_line_head() -> None:
    assert tasks.task_description("\n  echo a\necho b") == "echo a"
    assert len(tasks.task_description("x" * 200)) == 80


# -- over the real server ---------------------------------------------------------------------

class _Server:
    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "tools_impl.server"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     cwd=REPO, text=True)
        self.n = 0

    def send(self, **req: Any) -> dict[str, Any]:
        assert self.proc.stdin and self.proc.stdout
        self.n += 1
        req["id"] = self.n
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        while True:
            resp = json.loads(self.proc.stdout.readline())
            if resp.get("id") == self.n:
                return resp

    def close(self) -> int:
        self.send(op="shutdown")
        assert self.proc.stdin
        self.proc.stdin.close()
        return self.proc.wait(10)


@pytest.mark.slow
def test_task_ops_over_the_protocol(tmp_path: Path) -> None:
    srv = _Server()
    try:
        ws = tmp_path / "ws"
        r = srv.send(op="workspace", root=str(ws), env={"TMPDIR": str(tmp_path), "CI": None},
                     profile={"bash_soft_yield_ms": 200})
        assert r["ok"], r
        gate = tmp_path / "go"  # released after the promotion was observed: no soft-yield race
        r = srv.send(op="call", tool="bash",
                     args={"command": f"echo a; while [ ! -e {gate} ]; do sleep 0.02; done; echo b"})
        assert r["ok"], r
        tid = r["result"]["details"]["task_id"]
        assert r["result"]["details"]["status"] == "auto_promoted"
        gate.touch()
        r = srv.send(op="task_output", task_id=tid, block=True, timeout_ms=30000)
        assert r["ok"] and r["result"]["output"] == "a\nb\n" and r["result"]["status"] == "succeeded"
        r = srv.send(op="call", tool="bash",
                     args={"command": "trap 'echo bye' TERM; echo up; sleep 60", "run_in_background": True})
        tid2 = r["result"]["details"]["task_id"]
        assert wait_until(lambda: "up" in srv.send(op="task_output", task_id=tid2)["result"]["output"], 30)
        r = srv.send(op="task_stop", task_id=tid2)
        assert r["ok"] and r["result"]["status"] == "canceled" and r["result"]["stopped"] is True
        r = srv.send(op="task_output", task_id=tid2)
        assert "bye\n" in r["result"]["output"]
        r = srv.send(op="task_query")
        assert {t["task_id"] for t in r["result"]["tasks"]} == {tid, tid2}
        r = srv.send(op="task_output", task_id="bash-ffffffff")
        assert r["ok"] is False
        assert r["error"] == {"message": 'No background task with id "bash-ffffffff"', "kind": "tool"}
        r = srv.send(op="task_output")
        assert r["ok"] is False and r["error"]["kind"] == "protocol"
    finally:
        assert srv.close() == 0


@pytest.mark.slow
def test_server_shutdown_kills_running_task_groups(tmp_path: Path) -> None:
    srv = _Server()
    pidfile = tmp_path / "pid"
    ws = tmp_path / "ws"
    assert srv.send(op="workspace", root=str(ws), env={"TMPDIR": str(tmp_path)})["ok"]
    r = srv.send(op="call", tool="bash",
                 args={"command": f"trap '' TERM; echo $$ > {pidfile}; sleep 60", "run_in_background": True})
    assert r["ok"], r
    pid = read_pid(str(pidfile))
    assert alive(pid)
    assert srv.close() == 0
    gone = wait_until(lambda: group_members(pid) == [], 15)
    assert gone, [(m, Path(f"/proc/{m}/cmdline").read_bytes()) for m in group_members(pid)]
