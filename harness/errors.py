"""Error types of the harness. User mistakes get their own types and messages that say where and
what to do; the CLI prints them without a traceback.
"""

from __future__ import annotations


class HarnessError(Exception):
    """Base class of errors the CLI reports without a traceback."""


class ScenarioError(HarnessError):
    """A scenario or baseline file is invalid. ``problems`` holds ``file:line: field: what was
    expected`` lines."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


class UsageError(HarnessError):
    """The command line or a configuration value is wrong."""


class InfrastructureError(HarnessError):
    """The backend or implementation failed (no engine, image missing, server hung or died).
    Reported separately from behaviour failures and never counted as a pass."""


class DeadlineExceeded(InfrastructureError):
    """The implementation did not answer a request within its deadline (``op``, ``deadline_s``)."""

    def __init__(self, message: str, op: str = "", deadline_s: float = 0.0) -> None:
        super().__init__(message)
        self.op = op
        self.deadline_s = deadline_s


class EmptySelection(HarnessError):
    """The paths and filters selected no scenario (a typo in ``-k`` or ``--tag``, an empty
    directory): exit code ``EXIT_EMPTY``, so that a gate that tests nothing does not pass."""
