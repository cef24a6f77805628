"""The host deadline of one step: how long the runner waits for the implementation's answer before
it calls the implementation hung (an infrastructure error; the backend is restarted).

The deadline follows the call, so a hanging implementation costs seconds per scenario, not a
minute (docs/cli.md, "Deadlines"):

- a step's own ``timeout:`` wins over everything below;
- ``bash`` with a ``timeout`` argument: that timeout plus ``BASH_GRACE_S`` (the tool kills the
  command at its timeout, waits up to 5 s for it to die, then answers);
- ``bash`` without one: ``BASH_DEFAULT_DEADLINE_S`` (the command may legitimately run long);
- ``task_output`` with ``block``: its wait (``timeout_ms``) plus the call timeout; ``task_stop`` and
  ``cancel``, which end processes: ``BASH_GRACE_S``;
- every other tool and op: the call timeout, ``DEFAULT_CALL_TIMEOUT_S`` unless ``--call-timeout``
  names another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.model.scenario import Step
from tools_impl.protocol.messages import DEFAULT_BLOCK_TIMEOUT_MS

DEFAULT_CALL_TIMEOUT_S = 5.0
BASH_GRACE_S = 30.0
BASH_DEFAULT_DEADLINE_S = 60.0
PROCESS_OPS: tuple[str, ...] = ("task_stop", "cancel")


@dataclass(frozen=True)
class Deadline:
    """``seconds`` to wait, and ``why`` in words (for the message of a call that was not answered)."""

    seconds: float
    why: str


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        return None
    return float(value)


def step_deadline(step: Step, args: Any, call_timeout: float | None = None) -> Deadline:
    """The deadline of ``step`` sent with ``args`` (its arguments after substitution)."""
    if step.timeout is not None:
        return Deadline(step.timeout, "the step's timeout")
    default = DEFAULT_CALL_TIMEOUT_S if call_timeout is None else call_timeout
    given = "--call-timeout" if call_timeout is not None else "the default call timeout (--call-timeout)"
    own = _number(args.get("timeout")) if isinstance(args, dict) else None
    if step.tool == "bash":
        if own is None:
            return Deadline(max(BASH_DEFAULT_DEADLINE_S, default), "bash without a timeout argument")
        return Deadline(own + max(BASH_GRACE_S, default), f"bash's timeout of {own:g} s plus {max(BASH_GRACE_S, default):g} s")
    if step.op == "task_output" and isinstance(args, dict) and args.get("block") is True:
        wait = _number(args.get("timeout_ms", DEFAULT_BLOCK_TIMEOUT_MS)) or 0.0
        return Deadline(wait / 1000 + default, f"task_output's wait of {wait / 1000:g} s plus {given}")
    if step.op in PROCESS_OPS:
        return Deadline(max(BASH_GRACE_S, default), f"{step.op} ends processes")
    return Deadline(default, given)


def describe_unanswered(step: Step, deadline: Deadline) -> str:
    """The message of a step the implementation did not answer in time: names the tool (or op)
    and the deadline."""
    what = f"the {step.tool} call" if step.tool else f"the {step.op} request"
    return f"implementation did not answer {what} within its deadline of {deadline.seconds:g} s ({deadline.why})"
