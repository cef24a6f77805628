"""The host deadline of a step follows its call (issue 21 item 6; docs/cli.md "Deadlines")."""

from __future__ import annotations

from typing import Any

import pytest

from harness.model.scenario import Step
from harness.run.deadlines import BASH_DEFAULT_DEADLINE_S, DEFAULT_CALL_TIMEOUT_S, step_deadline


def _step(tool: str | None = None, op: str | None = None, timeout: float | None = None) -> Step:
    return Step(id="s", index=0, line=1, tool=tool, op=op, args={}, timeout=timeout)


@pytest.mark.parametrize(("step", "args", "call_timeout", "seconds"), [
    (_step("read"), {"path": "fifo"}, None, DEFAULT_CALL_TIMEOUT_S),
    (_step("grep"), {"pattern": "x"}, 12, 12),
    (_step("read", timeout=90), {"path": "big"}, 1, 90),  # the step's own timeout wins
    (_step("bash"), {"command": "make", "timeout": 2}, None, 32),
    (_step("bash"), {"command": "make", "timeout": 2}, 45, 47),
    (_step("bash"), {"command": "make"}, None, BASH_DEFAULT_DEADLINE_S),
    (_step("bash"), {"command": "make", "timeout": True}, None, BASH_DEFAULT_DEADLINE_S),
    (_step(op="task_output"), {"task_id": "t", "block": True, "timeout_ms": 10000}, None, 10 + DEFAULT_CALL_TIMEOUT_S),
    (_step(op="task_output"), {"task_id": "t"}, None, DEFAULT_CALL_TIMEOUT_S),
    (_step(op="task_stop"), {"task_id": "t"}, None, 30),
])
def test_the_deadline_follows_the_call(step: Step, args: Any, call_timeout: float | None, seconds: float) -> None:
    assert step_deadline(step, args, call_timeout).seconds == seconds
