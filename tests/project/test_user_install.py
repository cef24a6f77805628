"""A new user's first hour, end to end and outside the checkout: build the wheel, install it into
a fresh venv, ``toolproof init`` in an empty git repository, then plain ``toolproof run`` runs the
configured gate (the shipped corpus from the installed package, the user's own scenario, the
baseline ``init`` filled) and passes; the scaffolded GitHub workflow passes actionlint and the
GitLab file GitLab's schema."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.docker import docker_engine, docker_image  # noqa: F401  (fixtures)
from tests.support.linters import actionlint, gitlab_schema_problems
from tests.support.repo import REPO

pytestmark = pytest.mark.slow


def sh(argv: list[str], cwd: Path, timeout: float = 600, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "CI": "true", **(env or {})})


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The venv's bin directory, with toolproof installed from a wheel built from a clean copy."""
    base = tmp_path_factory.mktemp("user")
    src = base / "src"
    files = sh(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], REPO).stdout.split("\0")
    for rel in filter(None, files):
        if (REPO / rel).is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            (src / rel).write_bytes((REPO / rel).read_bytes())
    built = sh([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(base / "dist"), str(src)], base)
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = (base / "dist").glob("toolproof-*.whl")
    venv = base / "venv"
    assert sh([sys.executable, "-m", "venv", str(venv)], base).returncode == 0
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    done = sh([str(bindir / "python"), "-m", "pip", "install", "-q", str(wheel)], base)
    assert done.returncode == 0, done.stderr[-3000:]
    return bindir


def empty_repo(path: Path) -> Path:
    path.mkdir()
    assert sh(["git", "init", "-q"], path).returncode == 0
    return path


def test_wheel_install_init_and_plain_run_gate_the_example_adapter(installed: Path, tmp_path: Path) -> None:
    toolproof = str(installed / "toolproof")
    repo = empty_repo(tmp_path / "my-tools")
    assert sh([toolproof, "--version"], repo).stdout == "toolproof 0.1.0\n"

    init = sh([toolproof, "init"], repo)
    assert init.returncode == 0, init.stdout + init.stderr
    for rel in ("toolproof/adapter.py", "toolproof/baseline.yaml", "toolproof/scenarios/write-then-read.yaml",
                ".github/workflows/toolproof.yml", ".gitlab-ci.yml", "pyproject.toml"):
        assert (repo / rel).is_file(), rel
    assert "known failure(s) listed in toolproof/baseline.yaml with TODO reasons" in init.stdout

    run = sh([toolproof, "run", "--json", "r.json"], repo)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr
    results = json.loads((repo / "r.json").read_text(encoding="utf-8"))
    assert results["run"]["implementation"] == "example-python-adapter"
    paths = {s["id"]: s["path"] for s in results["scenarios"]}
    assert paths["mine/write-then-read"] == "toolproof/scenarios/write-then-read.yaml"
    # the shipped corpus came from the installed package, not from a checkout
    assert Path(paths["write/new-file"]).is_relative_to(installed.parent), paths["write/new-file"]
    assert "_shipped" in Path(paths["write/new-file"]).parts
    counts = results["counts"]
    assert counts["pass"] >= 10 and counts["fail"] == counts["error"] == counts["stale"] == 0, counts
    assert results["scenarios"][[s["id"] for s in results["scenarios"]].index("mine/write-then-read")]["status"] == "pass"

    # a typo in the selection is not a pass
    assert sh([toolproof, "run", "-k", "no-such-scenario"], repo).returncode == 5

    assert actionlint(repo / ".github" / "workflows" / "toolproof.yml") == []
    assert gitlab_schema_problems(repo / ".gitlab-ci.yml") == ""


def test_the_node_example_adapter_scaffolds_and_passes_its_gate(installed: Path, tmp_path: Path) -> None:
    import shutil

    if not shutil.which("node"):
        pytest.skip("no node on PATH for the Node example adapter")
    toolproof = str(installed / "toolproof")
    repo = empty_repo(tmp_path / "node-tools")
    init = sh([toolproof, "init", "--adapter", "node", "--ci", "github"], repo)
    assert init.returncode == 0, init.stdout + init.stderr
    assert (repo / "toolproof" / "adapter.mjs").is_file() and not (repo / ".gitlab-ci.yml").exists()
    assert 'impl = "cmd:node toolproof/adapter.mjs"' in (repo / "pyproject.toml").read_text(encoding="utf-8")
    run = sh([toolproof, "run"], repo)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr
    assert "[local --impl cmd:node toolproof/adapter.mjs example-node-adapter]" in run.stdout
    workflow = (repo / ".github" / "workflows" / "toolproof.yml").read_text(encoding="utf-8")
    assert "actions/setup-node@v4" in workflow
    assert actionlint(repo / ".github" / "workflows" / "toolproof.yml") == []


@pytest.mark.docker
def test_the_scaffolded_docker_job_gates_the_adapter_in_its_image(installed: Path, tmp_path: Path,
                                                                  docker_image: str) -> None:  # noqa: F811
    """The workflow's own docker commands, run from the installed wheel in a scaffolded repo (the
    gate narrowed to a few scenarios by PATHS, so the test stays short)."""
    import shlex

    import yaml

    repo = empty_repo(tmp_path / "docker-tools")
    assert sh([str(installed / "toolproof"), "init", "--ci", "github"], repo).returncode == 0
    workflow = yaml.safe_load((repo / ".github" / "workflows" / "toolproof.yml").read_text(encoding="utf-8"))
    runs = [step["run"] for step in workflow["jobs"]["linux-docker"]["steps"] if "run" in step]
    build = next(r for r in runs if r.startswith("toolproof images adapter"))
    gate = next(r for r in runs if r.startswith("toolproof run"))
    argv = [str(installed / "toolproof"), *shlex.split(build)[1:]]
    done = sh(argv, repo)
    assert done.returncode == 0, done.stdout + done.stderr
    gate_argv = [a for a in shlex.split(gate)[1:] if "GITHUB_STEP_SUMMARY" not in a and a != "--markdown"]
    paths = ["toolproof:read/missing-file.yaml", "toolproof:bash/cases/exit-bare.yaml", "toolproof/scenarios"]
    done = sh([str(installed / "toolproof"), *gate_argv, *paths], repo)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    results = json.loads((repo / "toolproof-docker.json").read_text(encoding="utf-8"))
    assert results["run"]["implementation"] == "example-python-adapter"
    assert {s["id"]: s["status"] for s in results["scenarios"]} == {
        "read/missing-file": "pass", "bash/cases/exit-bare": "pass", "mine/write-then-read": "pass"}
    assert "docker:toolproof-adapter:ci --impl cmd:python3 /opt/adapter/adapter.py" in done.stdout
