"""``toolproof init``: what it writes, that it never overwrites without ``--force``, and that an
existing pyproject.toml only gains the ``[tool.toolproof]`` table."""

from __future__ import annotations

import io
import re
import tomllib
from pathlib import Path

import pytest

from harness.cli import main
from harness.cli.config import load_config
from harness.corpus.shipped import shipped_root
from harness.errors import UsageError
from harness.scaffold import GITHUB_WORKFLOW, GITLAB_FILE, plan


def init(root: Path, *argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(["init", "--root", str(root), *argv], out), out.getvalue()


def test_the_default_plan_is_the_python_adapter_its_scenario_baseline_config_and_both_ci_files(tmp_path: Path) -> None:
    p = plan(tmp_path)
    assert sorted(p.files) == [".github/workflows/toolproof.yml", ".gitlab-ci.yml", "toolproof/adapter.py",
                               "toolproof/baseline.yaml", "toolproof/scenarios/write-then-read.yaml"]
    example = (shipped_root() / "examples" / "python-adapter" / "adapter.py").read_text(encoding="utf-8")
    assert p.files["toolproof/adapter.py"] == example
    assert tomllib.loads(p.pyproject)["tool"]["toolproof"] == {
        "impl": "cmd:{python} toolproof/adapter.py", "backend": "local", "paths": ["toolproof:", "toolproof/scenarios"],
        "baseline": "toolproof/baseline.yaml", "jobs": "auto"}
    assert "@@" not in p.files[GITHUB_WORKFLOW] + p.files[GITLAB_FILE]


def test_node_adapter_and_ci_choices(tmp_path: Path) -> None:
    p = plan(tmp_path, adapter="node", directory="gate", ci=("gitlab",), pip_spec="toolproof @ git+https://example.invalid/t.git")
    assert sorted(p.files) == [".gitlab-ci.yml", "gate/adapter.mjs", "gate/baseline.yaml", "gate/scenarios/write-then-read.yaml"]
    assert 'impl = "cmd:node gate/adapter.mjs"' in p.pyproject
    assert 'TOOLPROOF_PIP: "toolproof @ git+https://example.invalid/t.git"' in p.files[GITLAB_FILE]
    assert "apt-get install -y -qq nodejs npm" in p.files[GITLAB_FILE]
    # the docker job builds the adapter's image with the Node runtime and runs node inside it
    assert "toolproof images adapter gate/adapter.mjs --tag toolproof-adapter:ci --node" in p.files[GITLAB_FILE]
    assert 'toolproof run --impl "cmd:node /opt/adapter/adapter.mjs" --backend docker:toolproof-adapter:ci' in p.files[GITLAB_FILE]
    with pytest.raises(UsageError, match="--adapter 'ruby': expected one of python, node"):
        plan(tmp_path, adapter="ruby")
    with pytest.raises(UsageError, match="--ci circle: expected github, gitlab or none"):
        plan(tmp_path, ci=("circle",))


def test_an_existing_pyproject_keeps_everything_and_gains_the_table(tmp_path: Path) -> None:
    original = '[project]\nname = "mine"\n\n[tool.ruff]\nline-length = 100\n'
    (tmp_path / "pyproject.toml").write_text(original, encoding="utf-8")
    code, out = init(tmp_path, "--no-run", "--ci", "none")
    assert code == 0, out
    text = (tmp_path / "pyproject.toml").read_text(encoding="utf-8")
    assert text.startswith(original + "\n[tool.toolproof]\n")
    assert tomllib.loads(text)["tool"]["ruff"] == {"line-length": 100}
    assert "toolproof: updated pyproject.toml ([tool.toolproof])" in out
    assert load_config(tmp_path).impl == "cmd:{python} toolproof/adapter.py"


def test_nothing_is_overwritten_without_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert init(tmp_path, "--no-run")[0] == 0
    (tmp_path / "toolproof" / "adapter.py").write_text("# mine\n", encoding="utf-8")
    assert init(tmp_path, "--no-run")[0] == 2
    err = capsys.readouterr().err
    assert err == ("toolproof: error: init would overwrite toolproof/adapter.py, toolproof/scenarios/write-then-read.yaml, "
                   "toolproof/baseline.yaml, .github/workflows/toolproof.yml, .gitlab-ci.yml, pyproject.toml "
                   "(its [tool.toolproof] table); pass --force to replace them\n")
    assert (tmp_path / "toolproof" / "adapter.py").read_text(encoding="utf-8") == "# mine\n"
    assert init(tmp_path, "--no-run", "--force", "--adapter", "node")[0] == 0
    text = (tmp_path / "pyproject.toml").read_text(encoding="utf-8")
    assert text.count("[tool.toolproof]") == 1 and 'impl = "cmd:node toolproof/adapter.mjs"' in text


def test_init_runs_the_gate_once_and_lists_its_failures_in_the_baseline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    code, out = init(tmp_path, "--ci", "none")
    assert code == 0, out
    baseline = (tmp_path / "toolproof" / "baseline.yaml").read_text(encoding="utf-8")
    assert baseline.startswith("# Known failures of example-python-adapter:")  # the header stays
    # one entry per failing step, pinned to its mismatch, its reason an (unreviewed) placeholder
    assert re.search(r"\n  - id: read/binary-nul-bytes\n    step: \S+\n    mismatch:.*\n(      .*\n)*    reason: 'TODO: review",
                     baseline), baseline
    assert "mine/write-then-read" not in baseline  # it passes
    assert main(["run"], io.StringIO()) == 0  # the gate passes from the first commit
