"""The user-facing CI templates parse as YAML, have the jobs the README promises, and every
toolproof command, script and image they name exists in this repository."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.cli import build_parser
from harness.images import RECIPES
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
            for key in ("script", "after_script") for line in job.get(key, [])]


def check_command(line: str) -> None:
    """Assert that one shell line refers only to things that exist here."""
    for part in line.split("&&"):
        argv = shlex.split(part)
        if not argv:
            continue
        if argv[0] == "bash":
            assert (REPO / argv[1]).is_file(), f"{line}: no such script {argv[1]}"
        elif Path(argv[0]).name == "toolproof":
            build_parser().parse_args(argv[1:])  # SystemExit on an unknown command or option
            if argv[1] == "run":
                assert (REPO / argv[2]).is_dir(), f"{line}: no such corpus directory {argv[2]}"
        elif argv[1:3] == ["-m", "harness.images.build"]:
            assert argv[3] in RECIPES, f"{line}: unknown image {argv[3]}"


def test_github_template_has_a_linux_docker_job_and_a_windows_pwsh_job() -> None:
    data = load("github-actions.yml")
    assert data[True] == {"push": None, "pull_request": None}  # YAML 1.1 reads the key `on` as true
    jobs = data["jobs"]
    assert jobs["linux-docker"]["runs-on"] == "ubuntu-latest"
    assert jobs["windows-pwsh"]["runs-on"] == "windows-latest"
    assert jobs["windows-pwsh"]["defaults"]["run"]["shell"] == "pwsh"
    linux = "\n".join(step.get("run", "") for step in jobs["linux-docker"]["steps"])
    windows = "\n".join(step.get("run", "") for step in jobs["windows-pwsh"]["steps"])
    assert "bash ci/docker-setup.sh" in linux and "bash ci/docker-teardown.sh" in linux
    assert "--backend docker" in linux
    assert "--backend local" in windows


def test_gitlab_template_drives_a_remote_dind_engine_through_docker_host() -> None:
    data = load("gitlab-ci.yml")
    linux = data["linux-docker"]
    assert linux["variables"]["DOCKER_HOST"] == "tcp://docker:2375"
    assert linux["services"][0]["name"] == "docker:dind"
    assert "bash ci/docker-teardown.sh" in linux["after_script"]
    assert any("--backend docker" in line for line in linux["script"])
    assert any("--backend local" in line for line in data["windows-pwsh"]["script"])


@pytest.mark.parametrize("line", github_commands() + gitlab_commands())
def test_template_commands_reference_existing_scripts_commands_and_images(line: str) -> None:
    check_command(line)


def test_ci_scripts_exist_and_are_bash() -> None:
    for name in ("docker-setup.sh", "docker-teardown.sh"):
        text = (CI / name).read_text(encoding="utf-8")
        assert text.startswith("#!/usr/bin/env bash\n"), name


@pytest.mark.parametrize("line", [
    "toolproof frobnicate scenarios",
    ".venv/bin/toolproof run scenarios --backend docker --no-such-option",
    "bash ci/no-such-script.sh",
    "python -m harness.images.build no-such-image",
])
def test_command_check_rejects_what_does_not_exist(line: str) -> None:
    with pytest.raises((AssertionError, SystemExit)):
        check_command(line)
