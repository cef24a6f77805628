"""Regression tests for user-facing rough edges fixed while reviewing the harness: user mistakes
end in a one-line error and the usage/infrastructure exit code, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main


@pytest.mark.parametrize("command", [["merge"], ["baseline", "update", "--results"]])
def test_malformed_results_file_is_a_one_line_error_not_a_traceback(
        command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    bad = tmp_path / "results.json"
    bad.write_text('{"scenarios": ["x"]}', encoding="utf-8")
    code = main([*command, str(bad)])
    err = capsys.readouterr().err
    assert code == 2
    assert err == f"toolproof: error: {bad}: not a toolproof JSON results file (scenarios[0] is not an object)\n"


def test_baseline_yaml_syntax_error_names_the_line_of_the_error(tmp_path: Path) -> None:
    from harness.baseline import load_baseline
    from harness.errors import ScenarioError

    path = tmp_path / "impl.yaml"
    path.write_text("implementation: impl\nentries:\n  - id: a\n    reason: [unclosed\n", encoding="utf-8")
    with pytest.raises(ScenarioError) as info:
        load_baseline(str(path))
    assert info.value.problems == [f"{path}:5: (yaml): expected ',' or ']', but got '<stream end>'"]
