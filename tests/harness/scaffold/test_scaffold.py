"""``toolproof init``: what it writes, that it never overwrites without ``--force``, and that an
existing pyproject.toml only gains the ``[tool.toolproof]`` table."""

from __future__ import annotations

import io
import json
import re
import tomllib
from pathlib import Path

import pytest

from harness.cli import main
from harness.cli.config import load_config
from harness.errors import UsageError
from harness.install.origin import from_direct_url
from harness.install.shipped import shipped_root
from harness.report.baseline import load_baseline
from harness.scaffold.project import GITHUB_WORKFLOW, GITLAB_FILE, implementation_name, named_adapter, plan

SPEC = ("--pip-spec", "toolproof==0.1.0")  # the install source is tested on its own below


def init(root: Path, *argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(["init", "--root", str(root), *argv], out), out.getvalue()


def test_the_default_plan_is_the_python_adapter_its_scenario_baseline_config_and_both_ci_files(tmp_path: Path) -> None:
    p = plan(tmp_path, implementation="my-tools")
    assert sorted(p.files) == [".github/workflows/toolproof.yml", ".gitlab-ci.yml", "toolproof/adapter.py",
                               "toolproof/baseline.yaml", "toolproof/scenarios/write-then-read.yaml"]
    example = (shipped_root() / "examples" / "python-adapter" / "adapter.py").read_text(encoding="utf-8")
    assert p.files["toolproof/adapter.py"] == example.replace('IMPLEMENTATION = "example-python-adapter"',
                                                              'IMPLEMENTATION = "my-tools"')
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
    assert "toolproof images adapter --project . --tag toolproof-adapter:ci --node" in p.files[GITLAB_FILE]
    assert 'toolproof run --impl "cmd:node /opt/adapter/gate/adapter.mjs" --backend docker:toolproof-adapter:ci' in p.files[GITLAB_FILE]
    assert 'const IMPLEMENTATION = "' + p.implementation + '";' in p.files["gate/adapter.mjs"]
    with pytest.raises(UsageError, match="--adapter 'ruby': expected one of python, node"):
        plan(tmp_path, adapter="ruby")
    with pytest.raises(UsageError, match="--ci circle: expected github, gitlab or none"):
        plan(tmp_path, ci=("circle",))


def test_an_existing_pyproject_keeps_everything_and_gains_the_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    original = '[project]\nname = "mine"\n\n[tool.ruff]\nline-length = 100\n'
    (tmp_path / "pyproject.toml").write_text(original, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out = init(tmp_path, "--no-run", "--ci", "none")
    assert code == 0, out
    text = (tmp_path / "pyproject.toml").read_text(encoding="utf-8")
    assert text.startswith(original + "\n[tool.toolproof]\n")
    assert tomllib.loads(text)["tool"]["ruff"] == {"line-length": 100}
    assert "toolproof: updated pyproject.toml ([tool.toolproof])" in out
    assert load_config(tmp_path).impl == "cmd:{python} toolproof/adapter.py"


def test_nothing_is_overwritten_without_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert init(tmp_path, "--no-run", *SPEC)[0] == 0
    (tmp_path / "toolproof" / "adapter.py").write_text("# mine\n", encoding="utf-8")
    assert init(tmp_path, "--no-run", *SPEC)[0] == 2
    err = capsys.readouterr().err
    assert err == ("toolproof: error: init would overwrite toolproof/adapter.py, toolproof/scenarios/write-then-read.yaml, "
                   "toolproof/baseline.yaml, .github/workflows/toolproof.yml, .gitlab-ci.yml, pyproject.toml "
                   "(its [tool.toolproof] table); pass --force to replace them\n")
    assert (tmp_path / "toolproof" / "adapter.py").read_text(encoding="utf-8") == "# mine\n"
    assert init(tmp_path, "--no-run", "--force", "--adapter", "node", *SPEC)[0] == 0
    text = (tmp_path / "pyproject.toml").read_text(encoding="utf-8")
    assert text.count("[tool.toolproof]") == 1 and 'impl = "cmd:node toolproof/adapter.mjs"' in text


def test_init_runs_the_gate_once_and_lists_its_failures_in_the_baseline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    code, out = init(tmp_path, "--ci", "none")
    assert code == 0, out
    baseline = (tmp_path / "toolproof" / "baseline.yaml").read_text(encoding="utf-8")
    name = tmp_path.name.lower()
    assert baseline.startswith(f"# Known failures of {name}, your implementation")  # the header stays
    # one entry per failing step, pinned to its mismatch, its reason an (unreviewed) placeholder; the
    # example adapter returns text for an offset past the end, where the call fails (spec read.6)
    assert re.search(r"\n  - id: read/offset-beyond-end\n    step: \S+\n    mismatch:.*\n(      .*\n)*    reason: 'TODO: review",
                     baseline), baseline
    assert "mine/write-then-read" not in baseline  # it passes
    assert main(["run"], io.StringIO()) == 0  # the gate passes from the first commit


def test_init_writes_a_baseline_that_belongs_to_the_users_implementation(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 21 item 9: the baseline init filled named the example adapter (114 entries of
    ``implementation: example-python-adapter``); it is the user's, and init says so."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "Acme_Tools"\nversion = "1"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out = init(tmp_path, "--ci", "none")
    assert code == 0, out
    assert 'IMPLEMENTATION = "acme_tools"' in (tmp_path / "toolproof" / "adapter.py").read_text(encoding="utf-8")
    baseline = load_baseline(str(tmp_path / "toolproof" / "baseline.yaml"))
    assert baseline.implementation == "acme_tools" and baseline.entries
    assert f"toolproof: {len(baseline.entries)} known failure(s) of acme_tools listed in toolproof/baseline.yaml" in out
    assert "those of the adapter as scaffolded" in out and "toolproof baseline update --results r.json --write" in out
    results = tmp_path / "r.json"
    assert main(["run", "--json", str(results)], io.StringIO()) == 0
    assert json.loads(results.read_text(encoding="utf-8"))["run"]["implementation"] == "acme_tools"


def test_the_implementation_is_named_after_the_project_or_its_directory(tmp_path: Path) -> None:
    assert implementation_name(tmp_path / "nope") == "nope"
    (tmp_path / "My Repo").mkdir()
    assert implementation_name(tmp_path / "My Repo") == "my-repo"
    (tmp_path / "My Repo" / "pyproject.toml").write_text('[project]\nname = "widgets"\n', encoding="utf-8")
    assert implementation_name(tmp_path / "My Repo") == "widgets"
    assert named_adapter('X = 1\nIMPLEMENTATION = "example"\n', "mine", "x") == 'X = 1\nIMPLEMENTATION = "mine"\n'
    with pytest.raises(AssertionError):
        named_adapter("no constant here\n", "mine", "x")


@pytest.mark.parametrize(("direct_url", "kind", "spec"), [
    (None, "index", "toolproof==0.1.0"),
    ({"url": "https://example.invalid/t.git", "vcs_info": {"vcs": "git", "commit_id": "abc123"}},
     "vcs", "toolproof @ git+https://example.invalid/t.git@abc123"),
    ({"url": "https://example.invalid/t.git", "vcs_info": {"vcs": "git", "commit_id": "abc"}, "subdirectory": "py"},
     "vcs", "toolproof @ git+https://example.invalid/t.git@abc#subdirectory=py"),
    ({"url": "https://example.invalid/toolproof-0.1.0-py3-none-any.whl", "archive_info": {}},
     "url", "toolproof @ https://example.invalid/toolproof-0.1.0-py3-none-any.whl"),
    ({"url": "file:///tmp/dist/toolproof-0.1.0-py3-none-any.whl", "archive_info": {}}, "file", ""),
    ({"url": "file:///src/toolproof", "dir_info": {"editable": True}}, "directory", ""),
])
def test_ci_installs_toolproof_the_way_it_was_installed(direct_url: dict[str, object] | None, kind: str, spec: str) -> None:
    """Issue 21 item 2: the CI init wrote installed ``toolproof==0.1.0``, which is on no index."""
    source = from_direct_url(direct_url, "0.1.0")
    assert (source.kind, source.spec) == (kind, spec)
    if kind in ("file", "directory"):
        assert source.file is not None and source.file.name in ("toolproof-0.1.0-py3-none-any.whl", "toolproof")


def test_a_wheel_install_puts_the_wheel_into_the_repository_for_ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wheel = tmp_path / "dist" / "toolproof-0.1.0-py3-none-any.whl"
    wheel.parent.mkdir()
    wheel.write_bytes(b"PK wheel bytes")
    source = from_direct_url({"url": wheel.as_uri(), "archive_info": {}}, "0.1.0")
    monkeypatch.setattr("harness.cli.init_commands.installed_from", lambda: source)
    repo = tmp_path / "repo"
    repo.mkdir()
    code, out = init(repo, "--no-run", "--ci", "github")
    assert code == 0, out
    assert (repo / "toolproof" / wheel.name).read_bytes() == b"PK wheel bytes"
    workflow = (repo / GITHUB_WORKFLOW).read_text(encoding="utf-8")
    assert f'TOOLPROOF_PIP: "./toolproof/{wheel.name}"' in workflow
    assert f"toolproof: CI installs toolproof from toolproof/{wheel.name}, a copy of {wheel}" in out
    assert ": commit it" in out
    wheel.unlink()  # gone since: say so instead of writing CI that cannot install
    code, out = init(tmp_path / "repo", "--no-run", "--ci", "github", "--force")
    assert code == 2


def test_pip_spec_still_wins_and_is_said(tmp_path: Path) -> None:
    code, out = init(tmp_path, "--no-run", "--ci", "gitlab", "--pip-spec", "toolproof @ git+https://example.invalid/t.git@v1")
    assert code == 0, out
    assert 'TOOLPROOF_PIP: "toolproof @ git+https://example.invalid/t.git@v1"' in (tmp_path / GITLAB_FILE).read_text(encoding="utf-8")
    assert "toolproof: CI installs toolproof as toolproof @ git+https://example.invalid/t.git@v1, as --pip-spec says" in out
