"""toolproof's own CI (.github/workflows/ci.yml) stays in step with .ci/run and really gates.

- actionlint accepts it; the Linux job runs .ci/run itself, the Windows and macOS jobs install and
  run the suite as the README's test command does, and the pi release it names is .ci/run's.
- The Windows job cannot pass by skipping: its PowerShell steps, run here (no PowerShell on PATH)
  exactly as written apart from the venv's paths, fail instead of passing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.linters import actionlint
from tests.support.powershell import REQUIRE_ENV
from tests.support.repo import REPO

WORKFLOW = REPO / ".github" / "workflows" / "ci.yml"
CI_RUN = (REPO / ".ci" / "run").read_text(encoding="utf-8")


def workflow() -> dict[Any, Any]:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def runs(job: str) -> list[str]:
    return [step["run"] for step in workflow()["jobs"][job]["steps"] if "run" in step]


def ci_test_command() -> str:
    found = re.search(r'^TEST_CMD="(.+)"$', CI_RUN, re.MULTILINE)
    assert found, ".ci/run no longer defines TEST_CMD"
    return found.group(1)


def test_actionlint_accepts_the_workflow() -> None:
    assert actionlint(WORKFLOW) == []


def test_the_linux_job_is_ci_run_and_the_other_oses_run_the_same_test_command() -> None:
    assert "bash .ci/run" in runs("linux")
    install, test = ci_test_command().split(" && ")[1:]
    assert install == ".venv/bin/pip install -q -e '.[test]'" and test == ".venv/bin/python -m pytest -n 2"
    for job, scripts in (("macos", ".venv/bin/"), ("windows", ".venv\\Scripts\\")):
        text = "\n".join(runs(job))
        assert f"{scripts}pip install -q -e '.[test]'" in text or f"{scripts}python -m pip install -q -e '.[test]'" in text, job
        assert f"{scripts}python -m pytest -n 2" in text, job


def test_the_workflow_names_the_pi_release_of_ci_run() -> None:
    found = re.search(r'^PI_VERSION="([0-9.]+)"$', CI_RUN, re.MULTILINE)
    assert found, ".ci/run no longer sets PI_VERSION"
    assert workflow()["env"]["PI_VERSION"] == found.group(1)
    assert 'ci/pi-setup.sh --print env "$PI_VERSION"' in CI_RUN


def test_the_windows_job_requires_powershell() -> None:
    job = workflow()["jobs"]["windows"]
    assert job["env"][REQUIRE_ENV] == "1"
    assert job["defaults"]["run"]["shell"] == "pwsh"
    assert not job.get("continue-on-error")


def _without_powershell() -> dict[str, str]:
    """This environment with every PATH entry that holds a PowerShell left out."""
    env = dict(os.environ)
    kept = [d for d in env.get("PATH", "").split(os.pathsep)
            if not any((Path(d) / name).exists() for name in ("pwsh", "powershell", "pwsh.exe", "powershell.exe"))]
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), *kept])
    env[REQUIRE_ENV] = "1"
    return env


def _as_here(command: str, summary: Path) -> list[str]:
    """A Windows step's command line for this machine: the venv's python and toolproof, the step
    summary as a file; nothing else changes."""
    command = " ".join(command.split())
    command = command.replace("\"$env:GITHUB_STEP_SUMMARY\"", str(summary))
    command = command.replace(".venv\\Scripts\\python", sys.executable)
    command = command.replace(".venv\\Scripts\\toolproof", f"{sys.executable} -m harness.cli")
    assert "\\" not in command and "$env:" not in command, command
    return command.split()


@pytest.mark.slow
def test_the_windows_powershell_steps_fail_where_no_powershell_runs(tmp_path: Path) -> None:
    """The suite step with TOOLPROOF_REQUIRE_PWSH=1 (on the live PowerShell tests: running the
    whole suite inside the suite is not needed to see them fail) and the --fail-on-skip scenario
    step, each exactly as the workflow writes it, must exit non-zero without a PowerShell."""
    env = _without_powershell()
    steps = runs("windows")
    suite = next(s for s in steps if "-m pytest" in s)
    scenarios = next(s for s in steps if "--fail-on-skip" in s)

    argv = [*_as_here(suite, tmp_path / "summary.md"), "tests/tools_impl/bash/test_powershell.py", "-p", "no:xdist", "-q"]
    argv.remove("-n")
    argv.remove("2")
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode != 0, done.stdout[-2000:]
    assert f"{REQUIRE_ENV}=1 but no PowerShell executable" in done.stdout

    argv = _as_here(scenarios, tmp_path / "summary.md")
    argv[argv.index("--junit") + 1] = str(tmp_path / "windows.xml")
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert "--fail-on-skip makes that a failure" in done.stdout + done.stderr
