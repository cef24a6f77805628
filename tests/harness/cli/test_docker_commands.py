"""`toolproof images build` and `toolproof docker cleanup`: clear one-line infrastructure errors
(exit 2) when no engine answers, and real results when one does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.docker import docker_engine, docker_image  # noqa: F401  (fixtures)
from tests.support.repo import REPO


def toolproof(*args: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    env = dict(os.environ, **(env_extra or {}))
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=REPO, capture_output=True,
                          text=True, env=env, timeout=120)


def test_docker_cleanup_without_an_engine_is_an_infrastructure_error(tmp_path: Path) -> None:
    proc = toolproof("docker", "cleanup", env_extra={"DOCKER_HOST": f"unix://{tmp_path}/no-such.sock"})
    assert proc.returncode == 2
    assert proc.stderr.startswith("toolproof: infrastructure error: ")
    assert "Traceback" not in proc.stderr


def test_images_build_of_an_unknown_recipe_is_a_clear_error() -> None:
    proc = toolproof("images", "build", "linux-zsh")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "linux-zsh" in proc.stderr


@pytest.mark.docker
def test_images_build_reports_the_cached_image_and_cleanup_counts(docker_image: str) -> None:  # noqa: F811
    proc = toolproof("images", "build", "linux-bash", "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"{docker_image} cached ")
    proc = toolproof("docker", "cleanup", "--run-id", "no-such-run")
    assert (proc.returncode, proc.stdout) == (0, "toolproof: removed 0 leftover container(s) of run no-such-run\n")


@pytest.mark.docker
def test_pwsh_images_cannot_be_built_here_and_say_why(docker_engine: None) -> None:  # noqa: F811
    proc = toolproof("images", "build", "linux-pwsh")
    assert proc.returncode == 2
    assert proc.stderr.startswith("toolproof: infrastructure error: cannot build linux-pwsh")
