"""The CI templates for users (ci/github-actions.yml, ci/gitlab-ci.yml) are what ``toolproof
init`` writes: they gate the user's implementation as configured in ``[tool.toolproof]``, never
toolproof's own tests (those run through .ci/run). Every toolproof command in them parses, every
``toolproof:`` name resolves, actionlint and GitLab's schema accept them."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.cli import build_parser
from harness.install.shipped import is_shipped_name, resolve
from harness.scaffold.project import GITHUB_WORKFLOW, GITLAB_FILE, plan
from tests.support.linters import actionlint, gitlab_schema_problems
from tests.support.repo import REPO

CI = REPO / "ci"


def load(name: str) -> dict[Any, Any]:
    data = yaml.safe_load((CI / name).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def github_commands() -> list[str]:
    jobs = load("github-actions.yml")["jobs"]
    return [line for job in jobs.values() for step in job["steps"] if "run" in step
            for line in step["run"].splitlines() if line.strip()]


def gitlab_commands() -> list[str]:
    data = load("gitlab-ci.yml")
    return [line for job in data.values() if isinstance(job, dict)
            for key in ("before_script", "script", "after_script") for line in job.get(key, [])]


def check_command(line: str) -> None:
    """Assert that one shell line's toolproof commands parse and name what exists."""
    inner = re.findall(r"\$\(([^)]*)\)", line)  # command substitutions are commands too
    for part in [*line.replace("&&", ";").split(";"), *inner]:
        argv = shlex.split(part)
        if not argv:
            continue
        if Path(argv[0]).name == "toolproof":
            args = build_parser().parse_args(argv[1:])  # SystemExit on an unknown command or option
            for path in getattr(args, "paths", []) or []:
                if is_shipped_name(path):
                    resolve(path)
        elif argv[:3] == ["python", "-m", "harness.install.shipped"]:
            assert argv[3] == "where", line


def test_the_templates_are_what_toolproof_init_writes(tmp_path: Path) -> None:
    scaffold = plan(tmp_path)
    assert (CI / "github-actions.yml").read_text(encoding="utf-8") == scaffold.files[GITHUB_WORKFLOW]
    assert (CI / "gitlab-ci.yml").read_text(encoding="utf-8") == scaffold.files[GITLAB_FILE]


def test_github_template_gates_the_users_implementation_on_linux_docker_windows_and_pi() -> None:
    data = load("github-actions.yml")
    assert set(data[True]) == {"push", "pull_request", "workflow_dispatch"}  # YAML 1.1 reads `on` as true
    jobs = data["jobs"]
    assert list(jobs) == ["gate", "report", "linux-docker", "windows-pwsh", "pi-releases"]
    assert jobs["gate"]["strategy"]["matrix"]["shard"] == [1, 2]
    gate = "\n".join(step.get("run", "") for step in jobs["gate"]["steps"])
    assert 'toolproof run --shard "${{ matrix.shard }}/2"' in gate and '--markdown "$GITHUB_STEP_SUMMARY"' in gate
    assert any("toolproof merge toolproof-gate-*.json --junit toolproof-gate.xml" in step.get("run", "")
               for step in jobs["report"]["steps"])
    # every job that installs toolproof checks the repository out first (the install may be a wheel in it)
    for name, job in jobs.items():
        uses = [step.get("uses", "") for step in job["steps"]]
        install = next(i for i, step in enumerate(job["steps"]) if "TOOLPROOF_PIP" in step.get("run", ""))
        assert "actions/checkout@v4" in uses[:install], name
    assert any(step.get("uses") == "actions/upload-artifact@v4" for step in jobs["report"]["steps"])
    # the docker job gates the user's adapter in an image built from it, the command resolved inside
    docker = [step.get("run", "") for step in jobs["linux-docker"]["steps"]]
    assert "toolproof images adapter --project . --tag toolproof-adapter:ci" in docker
    assert any(run.startswith('toolproof run --impl "cmd:python3 /opt/adapter/toolproof/adapter.py" '
                              "--backend docker:toolproof-adapter:ci --junit") for run in docker)
    windows = jobs["windows-pwsh"]
    assert windows["runs-on"] == "windows-latest" and windows["defaults"]["run"]["shell"] == "pwsh"
    # issue 21 item 11: a Linux-only tool layer must not turn the workflow red; the Windows and pi
    # jobs are allowed to fail, each with a comment saying how to require it
    assert windows["continue-on-error"] is True
    assert [name for name, job in jobs.items() if job.get("continue-on-error")] == ["windows-pwsh", "pi-releases"]
    text = (CI / "github-actions.yml").read_text(encoding="utf-8")
    assert text.count("delete this line to require") == 2
    pwsh = [step.get("run", "") for step in windows["steps"]]
    # they must run, not skip: on the user's adapter, then live on the reference as a control
    assert [" ".join(run.split()[:9]) for run in pwsh if "toolproof run" in run] == [
        "toolproof run toolproof:windows --tag pwsh --fail-on-skip --no-baseline --junit toolproof-windows.xml",
        "toolproof run toolproof:windows --tag pwsh --impl reference --fail-on-skip --no-baseline"]
    assert "$PSVersionTable.PSVersion.ToString()" in pwsh
    pi = jobs["pi-releases"]
    assert pi["continue-on-error"] is True and pi["strategy"]["matrix"]["pi"] == ["0.79.1", "1.6.0"]
    assert any(step.get("run", "").startswith('toolproof run --impl "pi@${{ matrix.pi }}" --no-baseline')
               for step in pi["steps"])


def test_no_template_runs_toolproofs_own_tests_or_scripts() -> None:
    for name in ("github-actions.yml", "gitlab-ci.yml"):
        text = (CI / name).read_text(encoding="utf-8")
        for project_only in ("pip install -e", "ci/docker-setup.sh", "pytest", ".[test]"):
            assert project_only not in text, (name, project_only)


def test_gitlab_template_shards_and_drives_a_remote_dind_engine() -> None:
    data = load("gitlab-ci.yml")
    assert data["gate"]["parallel"] == 2
    assert any('--shard "$CI_NODE_INDEX/$CI_NODE_TOTAL"' in line for line in data["gate"]["script"])
    linux = data["linux-docker"]
    assert linux["variables"]["DOCKER_HOST"] == "tcp://docker:2375"
    assert linux["services"][0]["name"] == "docker:dind"
    assert linux["script"][1:] == [
        "toolproof images adapter --project . --tag toolproof-adapter:ci",
        'toolproof run --impl "cmd:python3 /opt/adapter/toolproof/adapter.py" --backend docker:toolproof-adapter:ci '
        "--junit toolproof-docker.xml --json toolproof-docker.json --markdown toolproof-docker.md"]
    assert "docker.io" in linux["script"][0]  # the docker backend runs each container with the docker CLI
    windows = data["windows-pwsh"]["script"]
    assert [line for line in windows if "--fail-on-skip" in line and "--impl reference" in line]
    assert data["windows-pwsh"]["artifacts"]["reports"]["junit"] == "toolproof-windows*.xml"
    assert data["pi-releases"]["allow_failure"] is True
    assert data["windows-pwsh"]["allow_failure"] is True
    assert [name for name, job in data.items() if isinstance(job, dict) and job.get("allow_failure")] == [
        "windows-pwsh", "pi-releases"]
    assert (CI / "gitlab-ci.yml").read_text(encoding="utf-8").count("delete this line to require") == 2
    assert any(line.startswith('toolproof run --impl "pi@$PI_VERSION" --no-baseline') for line in data["pi-releases"]["script"])


@pytest.mark.parametrize("line", github_commands() + gitlab_commands())
def test_template_commands_parse_and_name_what_exists(line: str) -> None:
    check_command(line)


@pytest.mark.parametrize("line", [
    "toolproof frobnicate scenarios",
    "toolproof run --backend docker --no-such-option",
    "toolproof run toolproof:no-such-group",
])
def test_command_check_rejects_what_does_not_exist(line: str) -> None:
    from harness.errors import UsageError

    with pytest.raises((AssertionError, SystemExit, UsageError)):
        check_command(line)


@pytest.mark.slow
def test_actionlint_accepts_the_github_template() -> None:
    assert actionlint(CI / "github-actions.yml") == []


def test_actionlint_is_a_real_check(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ matrix.nope }}\n")
    assert [p["kind"] for p in actionlint(bad)] == ["expression"]


def test_gitlab_schema_accepts_the_gitlab_template_and_rejects_a_broken_one(tmp_path: Path) -> None:
    assert gitlab_schema_problems(CI / "gitlab-ci.yml") == ""
    bad = tmp_path / "bad.yml"
    bad.write_text("job:\n  script: 3\n  parallel: many\n")
    assert gitlab_schema_problems(bad) != ""


def test_ci_scripts_of_the_projects_own_ci_exist_and_are_bash() -> None:
    for name in ("docker-setup.sh", "docker-teardown.sh"):
        text = (CI / name).read_text(encoding="utf-8")
        assert text.startswith("#!/usr/bin/env bash\n"), name
