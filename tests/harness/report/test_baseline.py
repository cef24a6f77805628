"""Baselines: listed failures become expected failures, listed passes become stale (gate fails),
and ``update_baseline`` regenerates the list."""

from __future__ import annotations

import pytest

from harness.errors import ScenarioError
from harness.model.results import FAIL, PASS, STALE, XFAIL, RunInfo, RunResult, ScenarioResult, StepResult
from harness.report.baseline import (
    TODO_REASON,
    Baseline,
    BaselineEntry,
    apply_baseline,
    load_baseline,
    parse_baseline_text,
    update_baseline,
)
from tests.support.repo import REPO


def run_of(*results: ScenarioResult) -> RunResult:
    return RunResult(RunInfo(implementation="impl"), results)


def failing(sid: str, step: str = "step-1") -> ScenarioResult:
    return ScenarioResult(sid, FAIL, steps=(StepResult(step, FAIL, ("text: not equal",)), StepResult("other", PASS)))


def passing(sid: str, step: str = "step-1") -> ScenarioResult:
    return ScenarioResult(sid, PASS, steps=(StepResult(step, PASS), StepResult("other", PASS)))


def test_listed_failure_is_an_expected_failure_and_the_gate_passes() -> None:
    base = Baseline("impl", (BaselineEntry("a", "known bug"),), "b.yaml")
    run = apply_baseline(run_of(failing("a")), base)
    assert (run.scenarios[0].status, run.scenarios[0].reason) == (XFAIL, "known bug")
    assert run.exit_code == 0


def test_unlisted_failure_fails_the_gate() -> None:
    run = apply_baseline(run_of(failing("a")), Baseline("impl", (BaselineEntry("z", "other"),)))
    assert run.scenarios[0].status == FAIL
    assert run.exit_code == 1


def test_listed_entry_that_now_passes_is_stale_and_fails_the_gate() -> None:
    base = Baseline("impl", (BaselineEntry("a", "known bug"),), "b.yaml")
    run = apply_baseline(run_of(passing("a")), base)
    assert run.scenarios[0].status == STALE
    assert run.scenarios[0].message == "stale baseline entry: 'a' now passes; remove it from b.yaml (reason was: known bug)"
    assert run.exit_code == 1


def test_step_entry_covers_only_that_step() -> None:
    base = Baseline("impl", (BaselineEntry("a", "step bug", "step-1"),), "b.yaml")
    run = apply_baseline(run_of(failing("a"), failing("b")), base)
    assert [s.status for s in run.scenarios] == [XFAIL, FAIL]
    assert [s.status for s in run.scenarios[0].steps] == [XFAIL, PASS]
    stale = apply_baseline(run_of(passing("a")), base).scenarios[0]
    assert stale.status == STALE
    assert stale.steps[0].messages == (
        "stale baseline entry: step 'step-1' of 'a' now passes; remove it from b.yaml (reason was: step bug)",)


def test_baseline_file_problems_are_located() -> None:
    with pytest.raises(ScenarioError) as info:
        parse_baseline_text("implementation: x\nentries:\n  - id: a\n  - {id: b, reason: r, stpe: s}\n", "b.yaml")
    assert info.value.problems == [
        "b.yaml:3: entries[1].reason: required field is missing",
        "b.yaml:4: entries[2].stpe: unknown key (did you mean 'step'?)",
    ]


def test_repository_reference_baselines_load() -> None:
    base = load_baseline(str(REPO / "baselines/toolproof-reference.yaml"))
    assert (base.implementation, base.entries) == ("toolproof-reference", ())
    base = load_baseline(str(REPO / "docs/examples/baseline.yaml"))
    assert [(e.id, e.step) for e in base.entries] == [("examples/upstream-line-numbers", "read")]


def test_update_keeps_reasons_adds_new_failures_and_drops_stale_entries() -> None:
    old = Baseline("impl", (BaselineEntry("a", "known"), BaselineEntry("b", "fixed now"),
                            BaselineEntry("not-run", "kept")), "b.yaml")
    run = run_of(failing("a"), passing("b"), failing("c"))
    new = update_baseline(run, old)
    assert [(e.id, e.reason) for e in new.entries] == [
        ("a", "known"),
        ("c", f"{TODO_REASON} (first failure: text: not equal)"),
        ("not-run", "kept"),
    ]
    assert new.dumps() == (
        "implementation: impl\n"
        "entries:\n"
        "- id: a\n  reason: known\n"
        "- id: c\n  reason: 'TODO: explain why this fails (first failure: text: not equal)'\n"
        "- id: not-run\n  reason: kept\n"
    )
    assert parse_baseline_text(new.dumps(), "x.yaml").entries == new.entries


STYLED = """# Known failures, with a comment that must survive.
implementation: impl
entries:
  - id: a/keep
    reason: "kept, in double quotes"   # and a trailing comment
  - {id: b/flow, step: s, reason: flow style kept}
  - id: c/drop
    reason: dropped when it passes
"""


def test_baseline_update_with_nothing_changed_returns_the_file_byte_for_byte() -> None:
    from harness.report.baseline import update_baseline_text

    old = parse_baseline_text(STYLED, "b.yaml")
    assert update_baseline_text(STYLED, "b.yaml", Baseline(old.implementation, old.entries)) == STYLED
    pi = (REPO / "baselines" / "pi-0.79.1.yaml").read_text(encoding="utf-8")
    base = parse_baseline_text(pi, "pi.yaml")
    assert update_baseline_text(pi, "pi.yaml", Baseline(base.implementation, base.entries)) == pi


def test_baseline_update_touches_only_the_entries_that_changed() -> None:
    from harness.report.baseline import update_baseline_text

    old = parse_baseline_text(STYLED, "b.yaml")
    kept = [e for e in old.entries if e.id != "c/drop"]
    new = Baseline("impl", (*kept, BaselineEntry("a/new", "TODO: explain: it fails")))
    assert update_baseline_text(STYLED, "b.yaml", new) == (
        "# Known failures, with a comment that must survive.\n"
        "implementation: impl\n"
        "entries:\n"
        "  - id: a/keep\n"
        '    reason: "kept, in double quotes"   # and a trailing comment\n'
        "  - id: a/new\n"
        "    reason: 'TODO: explain: it fails'\n"
        "  - {id: b/flow, step: s, reason: flow style kept}\n")


def test_baseline_update_fills_an_empty_list_and_empties_a_full_one() -> None:
    from harness.report.baseline import update_baseline_text

    empty = "# header\nimplementation: impl\nentries: []\n"
    one = update_baseline_text(empty, "b.yaml", Baseline("impl", (BaselineEntry("a/x", "why", "s1"),)))
    assert one == "# header\nimplementation: impl\nentries:\n  - id: a/x\n    step: s1\n    reason: why\n"
    assert update_baseline_text(one, "b.yaml", Baseline("impl", ())) == empty
