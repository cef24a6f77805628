"""Regression tests for user-facing rough edges fixed while reviewing the harness: user mistakes
end in a one-line error and the usage/infrastructure exit code, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from tests.support.repo import FIXTURES


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
    from harness.errors import ScenarioError
    from harness.report.baseline import load_baseline

    path = tmp_path / "impl.yaml"
    path.write_text("implementation: impl\nentries:\n  - id: a\n    reason: [unclosed\n", encoding="utf-8")
    with pytest.raises(ScenarioError) as info:
        load_baseline(str(path))
    assert info.value.problems == [f"{path}:5: (yaml): expected ',' or ']', but got '<stream end>'"]


def test_baseline_update_write_failure_is_a_one_line_error_not_a_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results.json"
    results.write_text('{"run": {"implementation": "x"}, "scenarios": [{"id": "a", "status": "fail"}]}',
                       encoding="utf-8")
    (tmp_path / "plain-file").write_text("", encoding="utf-8")
    target = tmp_path / "plain-file" / "x.yaml"
    code = main(["baseline", "update", "--results", str(results), "--baseline", str(target), "--write"])
    err = capsys.readouterr().err
    assert code == 2
    assert err == (f"toolproof: error: cannot write baseline {target}: "
                   f"[Errno 17] File exists: '{tmp_path / 'plain-file'}'\n")


def test_import_into_an_unwritable_place_is_a_one_line_error_not_a_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    traces = FIXTURES / "traces"
    (tmp_path / "plain-file").write_text("", encoding="utf-8")
    out_dir = tmp_path / "plain-file" / "o"
    code = main(["import", str(traces / "pi-session.jsonl"), "--workspace-dir", str(traces / "proj"),
                 "--out", str(out_dir), "--surface", "pi"])
    err = capsys.readouterr().err
    assert code == 2
    assert err == (f"toolproof: error: --out {out_dir}: cannot create the directory: "
                   f"[Errno 20] Not a directory: '{out_dir}'\n")
