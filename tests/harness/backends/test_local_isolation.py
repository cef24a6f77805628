"""The local backend gives every scenario a fresh, empty HOME of its own: a replayed session that
runs ``rm ~/x`` or ``mkdir -p ~/.x`` never touches the real home directory, and nothing one
scenario leaves in its HOME reaches the next."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from harness.backends.local import LocalBackend
from harness.cli import main
from harness.corpus.loader import load_corpus, parse_scenario_text
from harness.model.results import PASS
from harness.run.runner import Runner, run_scenario

SESSION_CWD = "/home/someone/project"


def claude_code_session(commands: list[str]) -> str:
    """A Claude Code session JSONL whose assistant ran ``commands`` with the Bash tool."""
    lines: list[dict[str, object]] = [
        {"type": "user", "sessionId": "home-test", "cwd": SESSION_CWD, "uuid": "u0",
         "message": {"role": "user", "content": "tidy up my home directory"}}]
    for i, command in enumerate(commands, 1):
        lines.append({"type": "assistant", "sessionId": "home-test", "cwd": SESSION_CWD, "uuid": f"a{i}",
                      "message": {"role": "assistant", "content": [
                          {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": command}}]}})
        lines.append({"type": "user", "sessionId": "home-test", "cwd": SESSION_CWD, "uuid": f"r{i}",
                      "message": {"role": "user", "content": [
                          {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "", "is_error": False}]}})
    return "".join(json.dumps(line) + "\n" for line in lines)


def test_an_imported_rm_of_a_home_file_replayed_on_local_leaves_the_real_home_untouched(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_home = tmp_path / "real-home"
    real_home.mkdir()
    (real_home / "x").write_text("precious\n")
    monkeypatch.setenv("HOME", str(real_home))
    trace = tmp_path / "session.jsonl"
    trace.write_text(claude_code_session(["rm ~/x; echo rm=$?", "mkdir -p ~/.x && touch ~/.x/made; ls -A ~"]))
    start = tmp_path / "start"
    start.mkdir()
    (start / "README.md").write_text("project\n")
    out_dir = tmp_path / "imported"
    code = main(["import", str(trace), "--workspace-dir", str(start), "--out", str(out_dir), "--expect", "status"],
                out=io.StringIO())
    assert code == 0
    scenarios = load_corpus([out_dir])
    assert [s.args["command"] for s in scenarios[0].steps] == [
        "rm ~/x; echo rm=$?", "mkdir -p ~/.x && touch ~/.x/made; ls -A ~"]
    run = Runner(LocalBackend, backend_label="local").run(scenarios)
    assert run.scenarios[0].status == PASS, run.scenarios[0].failure_text
    assert (real_home / "x").read_text() == "precious\n"
    assert sorted(p.name for p in real_home.iterdir()) == ["x"]


PLANT = """\
id: local/plant
steps:
  - tool: bash
    args: {command: "echo $HOME; touch ~/planted; mkdir -p ~/locked/in && chmod 000 ~/locked/in ~/locked; echo ok"}
    expect: {text: {contains: "ok"}}
"""
CHECK = """\
id: local/check
steps:
  - tool: bash
    args: {command: "find ~ -mindepth 1 | wc -l"}
    expect: {text: "0\\n"}
"""


def test_each_scenario_gets_an_empty_home_and_the_backend_removes_it(tmp_path: Path) -> None:
    backend = LocalBackend()
    try:
        plant = run_scenario(backend, parse_scenario_text(PLANT, "<plant>"))
        assert plant.status == PASS, plant.failure_text
        home = backend.home_dir
        check = run_scenario(backend, parse_scenario_text(CHECK, "<check>"))
        assert check.status == PASS, check.failure_text
        hello = backend.start()
        assert hello.capabilities.get("home") == home
        assert Path.home() not in Path(home).parents
    finally:
        backend.close()
    assert not Path(home).exists()
