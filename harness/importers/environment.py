"""Environment and platform as data (docs/importers.md, "Bash commands"): what an imported shell
command needs of the replay host, decided once at import time from the command and its recorded
result, and written into the scenario so that a replay skips with the reason instead of failing
in the tool layer.

- Refused (the call is skipped with its reason): commands that reach the network (``curl``,
  ``git push``, ``npm install``…: a replay must not, and cannot reproduce them), that read a Claude
  Code background-task output file outside the workspace, that ran without their program on the
  recording's host (exit 127), that need installed dependencies the replay workspace does not hold
  (``npm test`` without ``node_modules``), that need a git repository where the replay has none,
  and pi's "Command aborted" (the user stopped it mid-run; no replay stops at the same moment).
- Contained (``when: {isolation: container}``): commands that reach outside the workspace (``~``,
  absolute paths, ``..``, ``sudo``) and background commands. They run in the container (``--backend
  docker``) and skip, with the reason, on a host backend: a replay never runs them on the host.
- Platform-bound (``when: {os: …}``): BSD ``sed -i ''``, ``open``, ``pbcopy``, macOS or Windows
  paths… skip elsewhere with the reason (``--platform any`` drops the condition).
- Programs (``when: {programs: […]}``): the programs the command runs beyond those every replay host
  has; a replay host without one skips the step with the reason (``harness.run.programs``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.importers.commands import CommandFacts
from harness.importers.expectations import recorded_exit_code
from harness.importers.trace import RecordedResult

CONTAINED: dict[str, Any] = {"isolation": "container"}
COMMAND_ABORTED_RE = re.compile(r"Command aborted\s*\Z")
NOT_FOUND_RES: tuple[re.Pattern[str], ...] = (
    re.compile(r"command not found: ([\w.+-]+)"),  # zsh
    re.compile(r"(?:^|\n)(?:\S+: )?(?:line \d+: )?([\w.+-]+): command not found"),  # bash, sh
    re.compile(r"'([\w.+-]+)' is not recognized as an internal or external command"),
)
EXIT_COMMAND_NOT_FOUND = 127
ABORTED_REASON = ("aborted by the user while it ran (pi \"Command aborted\"): a replay cannot stop the command at "
                  "the same moment, so its result cannot be reproduced")


@dataclass(frozen=True)
class BashDecision:
    """What the import does with one shell command: ``skip`` (why it is refused), else the step's
    ``when`` conditions, with ``contained`` and ``platform`` saying why they were added."""

    skip: str = ""
    when: dict[str, Any] = field(default_factory=dict)
    contained: str = ""
    platform: str = ""
    programs: tuple[str, ...] = ()


def aborted(result: RecordedResult) -> bool:
    """pi's bash result of a command the user aborted while it ran."""
    return result.is_error and bool(COMMAND_ABORTED_RE.search(result.text))


def missing_on_recording_host(result: RecordedResult) -> str | None:
    """The program the recording's shell could not find (exit 127, "command not found")."""
    code = recorded_exit_code(result)
    for pattern in NOT_FOUND_RES:
        m = pattern.search(result.text)
        if m and (code == EXIT_COMMAND_NOT_FOUND or result.is_error):
            return m.group(1)
    return None


def decide(facts: CommandFacts, result: RecordedResult, *, background: bool, platform_any: bool,
           git_repository: bool, has_path: Callable[[str], bool]) -> BashDecision:
    """The decision for one shell command (see the module docstring). ``has_path``: whether the
    replay workspace holds a path (``node_modules``)."""
    if facts.network:
        return BashDecision(skip=f"reaches the network ({facts.network}): a replay must not run it, and cannot "
                                 "reproduce it")
    if facts.task_output:
        return BashDecision(skip=f"reads a Claude Code background-task output file outside the workspace "
                                 f"({facts.task_output}): the replay has no such file")
    missing = missing_on_recording_host(result)
    if missing:
        return BashDecision(skip=f"the recording's host did not have {missing} (command not found); a replay host "
                                 "that has it answers differently")
    if facts.dependencies and not has_path(facts.dependencies[0]):
        directory, why = facts.dependencies
        return BashDecision(skip=f"needs the project's installed dependencies ({directory} is not in the replay "
                                 f"workspace): {why}")
    if not git_repository and _uses_git_history(facts):
        return BashDecision(skip="needs a git repository (the replay workspace is none: pass --git REPO@REV or "
                                 "--git-init)")
    when: dict[str, Any] = {}
    contained = ""
    if facts.outside:
        contained = "reaches outside the workspace: " + "; ".join(facts.outside)
    elif background:
        contained = "runs in the background"
    if contained:
        when.update(CONTAINED)
    platform = ""
    if facts.platform and not platform_any:
        os_name, why = facts.platform
        when["os"] = os_name
        platform = f"{why}: runs only on {os_name}"
    if facts.programs:
        when["programs"] = list(facts.programs)
    return BashDecision(when=when, contained=contained, platform=platform, programs=facts.programs)


def _uses_git_history(facts: CommandFacts) -> bool:
    """A ``git`` command other than ``init``, ``--version`` or ``config`` (which work anywhere)."""
    return any(c[0].rsplit("/", 1)[-1] == "git" and (len(c) < 2 or c[1] not in ("init", "--version", "config"))
               for c in facts.commands)
