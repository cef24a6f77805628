"""The conformance matrix (harness/report/matrix.py): cells, totals, differences, the patch view, the HTML
and Markdown reports, and the ``matrix`` command's inputs and errors — built from RunResult objects
and JSON files written here."""

from __future__ import annotations

import argparse
import io
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cli.matrix_commands import register_cli
from harness.model.results import (
    ERROR,
    FAIL,
    PASS,
    SKIP,
    STALE,
    STATUSES,
    XFAIL,
    RunInfo,
    RunResult,
    ScenarioResult,
    StepResult,
)
from harness.report.matrix import (
    NOT_RUN,
    Matrix,
    MatrixCell,
    PatchCell,
    build_matrix,
    column_label,
    to_html,
    to_markdown,
)


def scen(sid: str, status: str, *, tags: tuple[str, ...] = (), title: str = "", steps: tuple[StepResult, ...] = (),
         message: str = "", reason: str = "") -> ScenarioResult:
    return ScenarioResult(sid, status, path=f"{sid}.yaml", title=title, tags=tags, steps=steps,
                          message=message, reason=reason)


def run(impl: str, version: str, backend: str, *scenarios: ScenarioResult) -> RunResult:
    return RunResult(RunInfo(backend=backend, implementation=impl, version=version), scenarios)


FUZZY_FAIL = (StepResult("step-1", FAIL, ("status: expected result, got raised error (validation)",
                                          "second message")),
              StepResult("files", FAIL, ("files.a.txt: content differs",)))

REF = run("reference", "1.0", "local",
          scen("edit/fuzzy", PASS, tags=("edit", "patch:edit.fuzzy-span"), title="Fuzzy span"),
          scen("edit/guard", PASS, tags=("edit", "patch:edit.fidelity-guard", "patch:edit.fuzzy-span")),
          scen("read/numbers", PASS, tags=("read",)),
          scen("read/win", SKIP, tags=("read",), reason="requires os=windows"),
          scen("solo", PASS))
UPSTREAM = run("pi", "0.9", "cmd:pi",
               scen("edit/fuzzy", FAIL, tags=("edit", "patch:edit.fuzzy-span"), title="Fuzzy span",
                    steps=(StepResult("step-0", PASS), *FUZZY_FAIL)),
               scen("edit/guard", XFAIL, tags=("edit", "patch:edit.fidelity-guard", "patch:edit.fuzzy-span"),
                    steps=(StepResult("step-1", XFAIL, ("text: differs",), reason="known upstream"),),
                    reason="known upstream"),
               scen("read/numbers", STALE, tags=("read",), reason="listed but passes"),
               scen("read/win", SKIP, tags=("read",), reason="requires os=windows"),
               scen("read/extra", ERROR, message="infrastructure: implementation did not answer"))


def matrix_of(*runs: RunResult) -> Matrix:
    return build_matrix([(f"r{i}.json", r) for i, r in enumerate(runs)])


def test_rows_are_grouped_by_first_id_segment_sorted_by_id_with_ungrouped_ids_last() -> None:
    m = matrix_of(REF, UPSTREAM)
    assert [(r.group, r.id) for r in m.rows] == [
        ("edit", "edit/fuzzy"), ("edit", "edit/guard"), ("read", "read/extra"), ("read", "read/numbers"),
        ("read", "read/win"), ("other", "solo")]
    assert [g for g, _ in m.groups] == ["edit", "read", "other"]


def test_column_label_defaults_to_implementation_version_and_backend() -> None:
    m = matrix_of(REF, UPSTREAM)
    assert [c.label for c in m.columns] == ["reference 1.0 [local]", "pi 0.9 [local]"]
    assert column_label(RunInfo(), "out/ref.json") == "ref.json"
    assert column_label(RunInfo(backend="docker")) == "[docker]"


def test_a_column_is_named_by_the_implementation_not_its_command_line() -> None:
    """Issue 21 item 12: a run was labelled by its command string."""
    assert column_label(RunInfo(backend="local --impl cmd:python3 toolproof/adapter.py", implementation="my-tools",
                                version="0.1.0")) == "my-tools 0.1.0 [local]"
    assert column_label(RunInfo(backend="cmd:node a.mjs", implementation="mine")) == "mine [local]"
    assert column_label(RunInfo(backend="docker:img:1 --impl cmd:python3 /opt/adapter/a.py",
                                implementation="mine")) == "mine [docker:img:1]"


def test_explicit_labels_override_and_equal_labels_get_their_file_name() -> None:
    m = build_matrix([("a/one.json", REF), ("b/two.json", REF), ("c.json", UPSTREAM)], [None, None, "upstream"])
    assert [c.label for c in m.columns] == ["reference 1.0 [local] (one.json)", "reference 1.0 [local] (two.json)",
                                            "upstream"]
    same_name = build_matrix([("a/r.json", REF), ("b/r.json", REF)])
    assert [c.label for c in same_name.columns] == ["reference 1.0 [local] (r.json) #1",
                                                    "reference 1.0 [local] (r.json) #2"]


def summary(cell: MatrixCell) -> MatrixCell:
    """The cell without its per-step detail."""
    return MatrixCell(cell.status, cell.failing_steps, cell.message, cell.reason)


def test_cells_carry_status_failing_steps_first_message_and_reason() -> None:
    m = matrix_of(REF, UPSTREAM)
    rows = {r.id: r for r in m.rows}
    assert tuple(summary(c) for c in rows["edit/fuzzy"].cells) == (
        MatrixCell(PASS),
        MatrixCell(FAIL, ("step-1", "files"), "status: expected result, got raised error (validation)"))
    assert [(st.id, st.status, st.messages) for st in rows["edit/fuzzy"].cells[1].steps] == [
        ("step-0", PASS, ()), ("step-1", FAIL, FUZZY_FAIL[0].messages), ("files", FAIL, FUZZY_FAIL[1].messages)]
    assert summary(rows["edit/guard"].cells[1]) == MatrixCell(XFAIL, ("step-1",), "text: differs", "known upstream")
    assert rows["read/win"].cells[0] == MatrixCell(SKIP, (), "", "requires os=windows")
    assert rows["read/extra"].cells == (MatrixCell(None), MatrixCell(ERROR, (), "infrastructure: implementation did not answer"))
    assert [c.text for c in rows["read/extra"].cells] == ["—", "error"]
    assert rows["edit/fuzzy"].cells[1].detail == (
        "failing steps: step-1, files\nstatus: expected result, got raised error (validation)")
    assert rows["edit/guard"].cells[1].detail == "failing steps: step-1\ntext: differs\nbaseline: known upstream"


def test_step_baseline_reason_is_used_when_the_scenario_has_none() -> None:
    res = scen("x/y", XFAIL, steps=(StepResult("read", XFAIL, ("text: differs",), reason="wrapper numbers"),))
    assert build_matrix([("r.json", run("i", "", "", res))]).rows[0].cells[0].reason == "wrapper numbers"


def test_runs_differ_on_outcome_but_not_on_a_baseline_relabel() -> None:
    m = matrix_of(REF, UPSTREAM)
    assert {r.id: r.differs for r in m.rows} == {
        "edit/fuzzy": True,      # pass vs fail
        "edit/guard": True,      # pass vs xfail: the upstream run fails it
        "read/extra": False,     # only one run has it
        "read/numbers": False,   # pass vs stale: both pass, the baseline is only stale
        "read/win": False,       # skip vs skip
        "solo": False,
    }
    assert [r.id for r in m.differing] == ["edit/fuzzy", "edit/guard"]


def test_a_skip_is_neutral_unless_skips_differ_is_asked_for() -> None:
    runs = [("a.json", run("a", "", "", scen("t/x", PASS), scen("t/y", FAIL), scen("t/z", PASS))),
            ("b.json", run("b", "", "", scen("t/x", SKIP, reason="no pwsh"), scen("t/y", SKIP, reason="no pwsh"),
                           scen("t/z", FAIL)))]
    assert [r.id for r in build_matrix(runs).differing] == ["t/z"]
    assert [r.id for r in build_matrix(runs, skips_differ=True).differing] == ["t/x", "t/y", "t/z"]


def test_totals_count_every_status_and_the_scenarios_a_run_lacks() -> None:
    totals = matrix_of(REF, UPSTREAM).totals()
    assert totals[0] == {PASS: 4, FAIL: 0, ERROR: 0, SKIP: 1, XFAIL: 0, STALE: 0, NOT_RUN: 1}
    assert totals[1] == {PASS: 0, FAIL: 1, ERROR: 1, SKIP: 1, XFAIL: 1, STALE: 1, NOT_RUN: 1}


def test_mismatched_corpora_are_noted_per_run() -> None:
    assert matrix_of(REF, UPSTREAM).notes() == (
        "2 of 6 scenario(s) are not in every run; their missing cells show — (not run).",
        "reference 1.0 [local]: 1 scenario(s) not run.",
        "pi 0.9 [local]: 1 scenario(s) not run.")
    assert matrix_of(REF, REF).notes() == ()


def test_patch_view_counts_each_runs_outcomes_on_the_scenarios_pinning_the_patch() -> None:
    prows = matrix_of(REF, UPSTREAM).patch_rows()
    assert [(p.patch, p.scenario_ids) for p in prows] == [
        ("edit.fidelity-guard", ("edit/guard",)), ("edit.fuzzy-span", ("edit/fuzzy", "edit/guard"))]
    assert prows[1].cells == (PatchCell(passed=2), PatchCell(failed=2))
    assert [(c.verdict, c.text) for c in prows[1].cells] == [("all pass", "all pass 2/2"), ("all fail", "all fail 0/2")]
    assert prows[1].differs


def test_patch_cell_verdicts_and_text() -> None:
    assert PatchCell(passed=1, failed=2).text == "mixed 1/3"
    assert PatchCell(passed=2, errors=1).text == "mixed 2/2 (1 error)"
    assert PatchCell(skipped=2, not_run=1).text == "untested (2 skip, 1 not run)"
    assert PatchCell(failed=1, skipped=1).text == "all fail 0/1 (1 skip)"
    assert PatchCell().verdict == "untested"


# -- HTML -------------------------------------------------------------------------------------

HOSTILE = "<script>alert('x')</script> & \"quoted\""


def hostile_matrix() -> Matrix:
    bad = scen("edit/evil", FAIL, title=HOSTILE, tags=("patch:<b>p</b>",),
               steps=(StepResult("s<1>", FAIL, (HOSTILE,)),))
    return build_matrix([("a.json", run("ref", "1", "local", bad)), ("b.json", run("x", "", "y", bad))],
                        [f"lab {HOSTILE}", None])


def test_html_escapes_untrusted_titles_messages_tags_and_labels() -> None:
    page = to_html(hostile_matrix())
    assert "<script>alert" not in page
    assert page.count("<script>") == 1  # the page's own filter script
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; &quot;quoted&quot;" in page
    assert '<span class="tag">&lt;b&gt;p&lt;/b&gt;</span>' in page
    assert "failing steps: s&lt;1&gt;" in page
    assert "<b>p</b>" not in page


@given(st.text(max_size=40), st.text(max_size=40))
def test_html_of_any_title_and_message_contains_only_the_pages_own_markup(title: str, message: str) -> None:
    """Whatever text a results file carries, the page has exactly one script element and every
    ``<`` of the untrusted text arrives escaped."""
    res = scen("t/x", FAIL, title=title, steps=(StepResult("s", FAIL, (message,)),))
    page = to_html(build_matrix([("a.json", run("i", "", "", res))]))
    assert page.count("<script") == 1
    assert html_escaped(title) in page
    assert html_escaped(message) in page


def html_escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;").replace(
        "'", "&#x27;")


def test_html_is_one_self_contained_file() -> None:
    page = to_html(matrix_of(REF, UPSTREAM))
    assert page.startswith("<!DOCTYPE html>\n")
    assert not re.search(r"https?://|<link\b|\bsrc=|@import|url\(", page)
    assert page.count("<style>") == 1 and page.count("<script>") == 1


def test_html_table_has_headers_and_states_every_status_as_text() -> None:
    page = to_html(matrix_of(REF, UPSTREAM))
    assert '<th scope="col">reference 1.0 [local]</th><th scope="col">pi 0.9 [local]</th>' in page
    assert '<th scope="rowgroup" class="group" colspan="4">edit <span class="muted">(2)</span></th>' in page
    row = re.search(r'<tr class="row differs" data-differs="1" data-search="edit/fuzzy fuzzy span edit '
                    r'patch:edit.fuzzy-span">(.*?)</tr>', page, re.S)
    assert row is not None
    cells = row.group(1)
    assert '<th scope="row" class="sid"><code>edit/fuzzy</code><span class="flag">differs</span>' in cells
    assert '<td><span class="st st-pass">pass</span></td>' in cells
    assert ('<td title="failing steps: step-1, files&#10;status: expected result, got raised error (validation)">'
            .replace("&#10;", "\n") in cells)
    assert ('<div class="fstep"><div class="sthead">step <code>step-1</code> <span class="st st-fail">fail</span></div>'
            '<div class="pair"><div class="mine"><pre class="msg">status: expected result, got raised error (validation)\n'
            'second message</pre></div></div></div>') in cells
    assert ('<div class="sthead">step <code>files</code> <span class="st st-fail">fail</span></div>'
            '<div class="pair"><div class="mine"><pre class="msg">files.a.txt: content differs</pre>') in cells
    assert '<span class="st st-notrun" title="not run">—<span class="sr"> not run</span></span>' in page
    assert '<tr class="row" data-differs="0" data-search="solo">' in page


def test_html_footer_totals_per_run() -> None:
    page = to_html(matrix_of(REF, UPSTREAM))
    foot = page[page.index("<tfoot>"):page.index("</tfoot>")]
    assert ('<tr><th scope="row" colspan="2"><span class="st st-pass">pass</span></th>'
            '<td class="num">4</td><td class="num">0</td></tr>') in foot
    assert ('<tr><th scope="row" colspan="2"><span class="st st-notrun">— not run</span></th>'
            '<td class="num">1</td><td class="num">1</td></tr>') in foot
    assert '<tr><th scope="row" colspan="2">total</th><td class="num">6</td><td class="num">6</td></tr>' in foot


def test_html_patch_view_and_notes() -> None:
    page = to_html(matrix_of(REF, UPSTREAM))
    assert ('<tr class="differs"><th scope="row" class="sid"><code>edit.fuzzy-span</code>'
            '<span class="flag">differs</span></th><td class="num" title="edit/fuzzy\nedit/guard">2</td>'
            '<td><span class="st st-all-pass">all pass 2/2</span></td>'
            '<td><span class="st st-all-fail">all fail 0/2</span></td></tr>') in page
    assert "<p>pi 0.9 [local]: 1 scenario(s) not run.</p>" in page
    assert '<input type="checkbox" id="only-diff"> Only differences (2)' in page


def test_html_clips_very_long_messages() -> None:
    long = "\n".join(f"line {i}" for i in range(100))
    res = scen("t/x", FAIL, steps=(StepResult("s", FAIL, (long,)),))
    page = to_html(build_matrix([("a.json", run("i", "", "", res))]))
    assert "line 59\n… (40 more lines)</pre>" in page
    assert "line 60" not in page[page.index("<pre"):]


# -- Markdown ---------------------------------------------------------------------------------

def test_markdown_summary_is_exact() -> None:
    assert to_markdown(matrix_of(REF, UPSTREAM)) == """\
## toolproof conformance matrix

6 scenarios × 2 run(s); 2 scenario(s) where the runs disagree.

> 2 of 6 scenario(s) are not in every run; their missing cells show — (not run).
> reference 1.0 \\[local\\]: 1 scenario(s) not run.
> pi 0.9 \\[local\\]: 1 scenario(s) not run.

| status | reference 1.0 \\[local\\] | pi 0.9 \\[local\\] |
| --- | ---: | ---: |
| ✅ pass | 4 | 0 |
| ❌ fail | 0 | 1 |
| 💥 error | 0 | 1 |
| ⏭️ skip | 1 | 1 |
| 🟡 xfail | 0 | 1 |
| 🧟 stale | 0 | 1 |
| — not run | 1 | 1 |

### Patches

| patch | scenarios | reference 1.0 \\[local\\] | pi 0.9 \\[local\\] |
| --- | ---: | --- | --- |
| `edit.fidelity-guard` ≠ | 1 | all pass 1/1 | all fail 0/1 |
| `edit.fuzzy-span` ≠ | 2 | all pass 2/2 | all fail 0/2 |

### Scenarios

| scenario | patches | reference 1.0 \\[local\\] | pi 0.9 \\[local\\] |
| --- | --- | --- | --- |
| `edit/fuzzy` ≠ | `edit.fuzzy-span` | ✅ pass | ❌ fail (step-1, files) |
| `edit/guard` ≠ | `edit.fidelity-guard`, `edit.fuzzy-span` | ✅ pass | 🟡 xfail (step-1) |
| `read/extra` |  | — | 💥 error |
| `read/numbers` |  | ✅ pass | 🧟 stale |
| `solo` |  | ✅ pass | — |

1 scenario(s) that every run passes (or every run skips) are not listed.
≠ marks a scenario (or patch) on which the runs disagree.
"""


def test_markdown_caps_rows_and_says_how_many_were_omitted() -> None:
    many = run("i", "", "", *(scen(f"t/{n:02}", FAIL) for n in range(7)), scen("t/ok", PASS))
    text = to_markdown(build_matrix([("a.json", many)]), max_rows=3)
    assert [ln.split(" | ")[0] for ln in text.splitlines() if ln.startswith("| `t/")] == [
        "| `t/00`", "| `t/01`", "| `t/02`"]
    assert "… 4 more scenario(s) omitted (see the HTML report).\n" in text
    assert "1 scenario(s) that every run passes (or every run skips) are not listed.\n" in text


def test_markdown_says_so_when_every_run_passes_or_skips_alike() -> None:
    text = to_markdown(matrix_of(run("a", "", "", scen("t/x", PASS), scen("t/y", SKIP)),
                                 run("b", "", "", scen("t/x", PASS), scen("t/y", SKIP))))
    assert text.endswith("### Scenarios\n\nAll 2 scenarios pass or are skipped alike in every run.\n")


def test_empty_results_make_an_empty_matrix_not_an_error() -> None:
    m = matrix_of(run("a", "", "local"))
    assert m.rows == () and m.totals() == ({k: 0 for k in (*STATUSES, NOT_RUN)},)
    assert to_markdown(m).endswith("### Scenarios\n\nNo scenarios in these results.\n")
    assert "0 scenarios × 1 run(s)" in to_html(m)


def test_markdown_neutralises_html_pipes_and_emphasis() -> None:
    text = to_markdown(hostile_matrix())
    assert "<script>" not in text and "<b>" not in text
    assert "| lab &lt;script&gt;alert('x')&lt;/script&gt; &amp; \"quoted\" |" in text
    assert "| &lt;b&gt;p&lt;/b&gt; |" in text
    sid_row = next(ln for ln in text.splitlines() if ln.startswith("| `edit/evil`"))
    assert sid_row == "| `edit/evil` | &lt;b&gt;p&lt;/b&gt; | ❌ fail (s&lt;1&gt;) | ❌ fail (s&lt;1&gt;) |"
    odd = to_markdown(build_matrix([("a.json", run("i", "", "", scen("a|b_c", FAIL)))]))
    assert "| a\\|b\\_c |  | ❌ fail |" in odd


# -- the command ------------------------------------------------------------------------------

def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="toolproof")
    register_cli(p.add_subparsers(dest="command", required=True))
    return p


def invoke(*argv: str) -> tuple[int, str]:
    args = parser().parse_args(["matrix", *argv])
    out = io.StringIO()
    return args.func(args, out), out.getvalue()


def write_json(path: Path, r: RunResult) -> str:
    path.write_text(r.dumps(), encoding="utf-8")
    return str(path)


def test_matrix_command_writes_html_and_markdown(tmp_path: Path) -> None:
    a, b = write_json(tmp_path / "ref.json", REF), write_json(tmp_path / "up.json", UPSTREAM)
    code, out = invoke(a, b, "--html", str(tmp_path / "out/m.html"), "--markdown", str(tmp_path / "out/m.md"))
    assert (code, out) == (0, "toolproof: matrix of 6 scenarios × 2 runs, 2 differ\n")
    assert (tmp_path / "out/m.md").read_text(encoding="utf-8") == to_markdown(matrix_of(REF, UPSTREAM))
    assert "<h1>toolproof conformance matrix</h1>" in (tmp_path / "out/m.html").read_text(encoding="utf-8")


def test_matrix_command_prints_markdown_without_outputs_and_takes_labels(tmp_path: Path) -> None:
    a, b = write_json(tmp_path / "ref.json", REF), write_json(tmp_path / "up.json", UPSTREAM)
    code, out = invoke(a, "--label", f"MiniMax={a}", "--label", f"upstream pi={b}")
    assert code == 0
    assert "| status | MiniMax | upstream pi |\n" in out
    code, out = invoke(a, b, "--label", f"pi={Path(b).parent}/./{Path(b).name}")
    assert "| status | reference 1.0 \\[local\\] | pi |\n" in out
    assert out.startswith("## toolproof conformance matrix\n")


@pytest.mark.parametrize(("content", "message"), [
    (None, "toolproof: error: cannot read results {p}: [Errno 2] No such file or directory: '{p}'"),
    ("{nope", "toolproof: error: {p}:1: not a toolproof JSON results file (Expecting property name enclosed "
              "in double quotes)"),
    ('{"a": 1}', "toolproof: error: {p}: not a toolproof JSON results file (no 'scenarios' list)"),
    ('{"scenarios": [{"id": "x", "status": "passed"}]}',
     "toolproof: error: {p}: not a toolproof JSON results file (scenario 'x': status 'passed' is not one of "
     "pass, fail, error, skip, xfail, stale)"),
    ('{"scenarios": [{"id": "x", "status": "pass", "tags": "edit"}]}',
     "toolproof: error: {p}: not a toolproof JSON results file (scenario 'x': 'tags' is not a list of strings)"),
    ('{"scenarios": [{"id": "x", "status": "pass", "steps": [{"status": "pass"}]}]}',
     "toolproof: error: {p}: not a toolproof JSON results file (scenario 'x': steps[0] has no 'id' or a status "
     "that is not one of pass, fail, error, skip, xfail, stale)"),
    ('{"scenarios": [{"id": "x", "status": "pass"}, {"id": "x", "status": "fail"}]}',
     "toolproof: error: {p}: not a toolproof JSON results file (scenario 'x' appears twice)"),
    ('{"scenarios": ["x"]}', "toolproof: error: {p}: not a toolproof JSON results file (scenarios[0] is not an object)"),
    ('{"format": 9, "scenarios": []}', "toolproof: error: {p}: results format 9 is not supported (expected 1)"),
    ('{"scenarios": [], "run": {"jobs": "many"}}',
     "toolproof: error: {p}: not a toolproof JSON results file (ValueError: invalid literal for int() with base "
     "10: 'many')"),
])
def test_bad_results_file_is_one_line_naming_the_file_and_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str) -> None:
    good = write_json(tmp_path / "good.json", REF)
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content, encoding="utf-8")
    code, out = invoke(good, str(bad), "--html", str(tmp_path / "m.html"))
    err = capsys.readouterr().err
    assert (code, out) == (2, "")
    assert err == message.format(p=bad) + "\n"
    assert not (tmp_path / "m.html").exists()


def test_label_without_a_file_and_no_inputs_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert invoke("--label", "justaname") == (2, "")
    assert capsys.readouterr().err == "toolproof: error: --label 'justaname': expected NAME=RESULTS.json\n"
    assert invoke() == (2, "")
    assert capsys.readouterr().err == "toolproof: error: matrix: no results files given\n"


def test_unwritable_output_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write_json(tmp_path / "ref.json", REF)
    (tmp_path / "file").write_text("", encoding="utf-8")
    assert invoke(a, "--markdown", str(tmp_path / "file/m.md")) == (2, "")
    err = capsys.readouterr().err
    assert err.startswith(f"toolproof: error: cannot write report {tmp_path / 'file/m.md'}: ")
    assert err.count("\n") == 1


def test_results_written_by_run_json_round_trip_through_the_matrix(tmp_path: Path) -> None:
    path = write_json(tmp_path / "r.json", UPSTREAM)
    obj = json.loads(Path(path).read_text(encoding="utf-8"))
    assert obj["format"] == 1
    code, out = invoke(path)
    assert code == 0
    assert "| `edit/guard` |  | 🟡 xfail (step-1) |" not in out  # one run: no ≠ marks, patches shown
    assert "| `edit/guard` | `edit.fidelity-guard`, `edit.fuzzy-span` | 🟡 xfail (step-1) |" in out


def test_a_failing_cell_shows_every_failing_step_coloured_beside_the_other_runs_output() -> None:
    diff = "[read] text: not equal\n--- expected\n+++ actual\n@@ -1 +1 @@\n-     1→alpha\n+alpha"
    ref = scen("read/raw", PASS, steps=(StepResult("read", PASS, observation={"status": "result", "text": "     1→alpha"}),
                                        StepResult("files", PASS)))
    pi = scen("read/raw", FAIL, steps=(StepResult("read", FAIL, (diff,), observation={"status": "result", "text": "alpha"}),
                                       StepResult("files", FAIL, ("files.a.txt: content differs",))))
    page = to_html(build_matrix([("ref.json", run("ref", "1", "local", ref)), ("pi.json", run("pi", "2", "cmd:pi", pi))]))
    assert ('<pre class="msg">[read] text: not equal\n<span class="dh">--- expected</span>\n<span class="dh">+++ actual</span>\n'
            '<span class="dhunk">@@ -1 +1 @@</span>\n<span class="ddel">-     1→alpha</span>\n'
            '<span class="dadd">+alpha</span></pre>') in page
    assert ('<div class="cap">pi 2 [local] answered</div><pre class="out">alpha</pre></div>'
            '<div class="theirs"><div class="cap">ref 1 [local] answered</div><pre class="out">     1→alpha</pre></div>') in page
    assert '<div class="sthead">step <code>files</code> <span class="st st-fail">fail</span></div>' in page


def test_matrix_runs_the_paths_on_each_impl_in_one_command(tmp_path: Path) -> None:
    import shlex
    import sys

    from harness import __version__
    from harness.cli import main
    from harness.report.matrix import load_run
    from tests.support.repo import FIXTURES

    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "w.yaml").write_text("id: m/w\nsteps:\n  - {tool: write, args: {path: a.txt, content: x},"
                                   " expect: {text: 'Successfully wrote 1 bytes to a.txt'}}\n", encoding="utf-8")
    fake = "cmd:" + shlex.join([sys.executable, str(FIXTURES / "fake_server.py")])
    out = io.StringIO()
    code = main(["matrix", "--impl", "reference", "--impl", fake, str(corpus), "--markdown", str(tmp_path / "m.md"),
                 "--json-dir", str(tmp_path / "runs")], out)
    assert code == 0, out.getvalue()
    assert out.getvalue().endswith("toolproof: matrix of 1 scenarios × 2 runs, 1 differ\n")
    md = (tmp_path / "m.md").read_text(encoding="utf-8")
    assert "| ✅ pass | 1 | 0 |\n| ❌ fail | 0 | 1 |\n" in md
    assert "| `m/w` ≠ |  | ✅ pass | ❌ fail (step-1) |\n" in md
    # the columns are named by what answered hello, not by the --impl text
    assert f"| status | toolproof-reference {__version__} \\[local\\] | fake 0 \\[local\\] |\n" in md
    saved = sorted((tmp_path / "runs").iterdir())
    assert [p.name for p in saved][1] == "reference.json"
    assert load_run(str(saved[1])).scenarios[0].status == PASS and load_run(str(saved[0])).scenarios[0].status == FAIL
