"""The conformance matrix of two real runs: a few tiny scenarios run through the harness on the
local backend (the reference profile) and on ``cmd:`` with the reference server in upstream mode,
both written as ``--json`` results, then combined by the ``matrix`` command."""

from __future__ import annotations

import argparse
import io
import shlex
import sys
import textwrap
from pathlib import Path

import pytest

from harness.backends.cmd import CmdBackend
from harness.backends.local import LocalBackend
from harness.cli.matrix_commands import register_cli
from harness.corpus.loader import load_corpus
from harness.model.results import FAIL, PASS, SKIP
from harness.report.matrix import PatchCell, build_matrix, load_run
from harness.report.writers import write_reports
from harness.run.runner import Runner
from tools_impl import __version__

SCENARIOS = {
    "edit-fuzzy.yaml": """\
        id: edit/fuzzy-span
        title: A fuzzy match rewrites only the matched span
        tags: [edit, fuzzy, "patch:edit.fuzzy-span"]
        workspace:
          files:
            - {path: cfg.txt, text: "名称：值\\n备注：“旧”   \\n"}
        steps:
          - tool: edit
            args: {file_path: cfg.txt, old_string: "名称:值", new_string: "名称:新值"}
            expect:
              text: "Successfully replaced 1 block(s) in cfg.txt."
        files:
          cfg.txt: {text: "名称:新值\\n备注：“旧”   \\n"}
        """,
    "read-raw.yaml": """\
        id: read/raw-text
        title: <b>Bare</b> read returns the text without line numbers
        tags: [read, upstream]
        steps:
          - id: write
            tool: write
            args: {path: a.txt, content: "alpha\\n"}
          - id: read
            tool: read
            args: {path: a.txt}
            expect: {text: "alpha\\n"}
        """,
    "write-new.yaml": """\
        id: write/new-file
        title: write creates a file
        tags: [write]
        steps:
          - tool: write
            args: {path: n.txt, content: "x\\n"}
        files:
          n.txt: {text: "x\\n"}
        """,
    "windows-only.yaml": """\
        id: windows/only
        tags: [bash, windows]
        requires: {os: windows, shell: pwsh}
        steps:
          - tool: bash
            args: {command: "Write-Output hi"}
            expect: {text: "hi\\n"}
        """,
}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    root = tmp_path_factory.mktemp("matrix-runs")
    for name, text in SCENARIOS.items():
        (root / name).write_text(textwrap.dedent(text), encoding="utf-8")
    corpus = load_corpus([root])
    upstream = f"{shlex.quote(sys.executable)} -m tools_impl.server --upstream"
    ref = Runner(LocalBackend, backend_label="local").run(corpus)
    up = Runner(lambda: CmdBackend(upstream), backend_label=f"cmd:{upstream}").run(corpus)
    paths = (str(root / "out/reference.json"), str(root / "out/upstream.json"))
    write_reports(ref, json_path=paths[0])
    write_reports(up, json_path=paths[1])
    return paths


def test_matrix_of_reference_and_upstream_runs(results: tuple[str, str]) -> None:
    ref, up = results
    m = build_matrix([(ref, load_run(ref)), (up, load_run(up))])
    assert m.columns[0].label == f"toolproof-reference {__version__} [local]"
    assert m.columns[1].label == f"toolproof-reference-upstream {__version__} [local]"  # not the command line
    rows = {r.id: r for r in m.rows}
    assert list(rows) == ["edit/fuzzy-span", "read/raw-text", "windows/only", "write/new-file"]
    assert [c.status for c in rows["edit/fuzzy-span"].cells] == [PASS, FAIL]
    # the upstream server speaks the pi surface: the edit reaches it mapped, and without the patch
    # its fuzzy match normalises the whole file
    assert rows["edit/fuzzy-span"].cells[1].failing_steps == ("files",)
    assert rows["edit/fuzzy-span"].cells[1].message.startswith("files.cfg.txt: content differs")
    assert [c.status for c in rows["read/raw-text"].cells] == [FAIL, PASS]
    assert rows["read/raw-text"].cells[0].failing_steps == ("read",)
    assert [c.status for c in rows["windows/only"].cells] == [SKIP, SKIP]
    assert [c.status for c in rows["write/new-file"].cells] == [PASS, PASS]
    assert [r.id for r in m.differing] == ["edit/fuzzy-span", "read/raw-text"]
    assert [(t[PASS], t[FAIL], t[SKIP]) for t in m.totals()] == [(2, 1, 1), (2, 1, 1)]
    [patch] = m.patch_rows()
    assert (patch.patch, patch.scenario_ids, patch.cells) == (
        "edit.fuzzy-span", ("edit/fuzzy-span",), (PatchCell(passed=1), PatchCell(failed=1)))
    assert m.notes() == ()


def test_matrix_command_on_real_results_writes_both_reports(results: tuple[str, str], tmp_path: Path) -> None:
    ref, up = results
    parser = argparse.ArgumentParser(prog="toolproof")
    register_cli(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["matrix", ref, "--label", f"upstream pi={up}", "--label", f"MiniMax={ref}",
                              "--html", str(tmp_path / "m.html"), "--markdown", str(tmp_path / "m.md")])
    out = io.StringIO()
    assert args.func(args, out) == 0
    assert out.getvalue() == "toolproof: matrix of 4 scenarios × 2 runs, 2 differ\n"
    md = (tmp_path / "m.md").read_text(encoding="utf-8")
    assert "| `edit.fuzzy-span` ≠ | 1 | all pass 1/1 | all fail 0/1 |\n" in md
    assert "| `edit/fuzzy-span` ≠ | `edit.fuzzy-span` | ✅ pass | ❌ fail (files) |\n" in md
    assert "| `read/raw-text` ≠ |  | ❌ fail (read) | ✅ pass |\n" in md
    assert "windows/only" not in md
    assert "2 scenario(s) that every run passes (or every run skips) are not listed.\n" in md
    page = (tmp_path / "m.html").read_text(encoding="utf-8")
    assert '<th scope="col">MiniMax</th><th scope="col">upstream pi</th>' in page
    assert '<span class="title">&lt;b&gt;Bare&lt;/b&gt; read returns the text without line numbers</span>' in page
