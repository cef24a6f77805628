"""House rules that CI enforces: the tree is ruff-clean and the packages are mypy-clean."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.repo import REPO


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True, timeout=600)


def test_ruff_reports_no_problems() -> None:
    proc = _run("ruff", "check", "--no-cache", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
def test_mypy_reports_no_problems_in_the_packages() -> None:
    proc = _run("mypy", "--cache-dir", "/dev/null", "tools_impl", "harness")
    assert proc.returncode == 0, proc.stdout + proc.stderr
