"""Baselines pin the failure: an entry names its step (and the mismatch it fails with); the same
failure is an expected failure, any other failure of a baselined scenario fails as "xfail
(different failure)", a listed step that passes is stale and names the check that changed,
skips leave entries not checked (and say so), and ``update_baseline`` regenerates step-level
entries that keep the reviewed reasons."""

from __future__ import annotations

import pytest

from harness.errors import ScenarioError
from harness.model.results import (
    BASELINE_DIFFERENT,
    BASELINE_UNREVIEWED,
    FAIL,
    PASS,
    SKIP,
    STALE,
    XFAIL,
    RunInfo,
    RunResult,
    ScenarioResult,
    StepResult,
)
from harness.report.baseline import (
    PLACEHOLDER_REASON,
    Baseline,
    BaselineEntry,
    MismatchPattern,
    apply_baseline,
    choose_shipped_baseline,
    load_baseline,
    parse_baseline_text,
    pin,
    shipped_baselines,
    summary_lines,
    update_baseline,
    update_baseline_from,
    update_baseline_text,
    validate_baseline_lines,
)
from tests.support.repo import REPO

TEXT_MISMATCH = ("text: not equal to the expected text\n--- expected\n+++ actual\n@@ -1 +1 @@\n-hello  ⟵ no newline "
                 "at end\n+HELLO  ⟵ no newline at end")
OTHER_MISMATCH = ("text: not equal to the expected text\n--- expected\n+++ actual\n@@ -1 +1 @@\n-hello  ⟵ no newline "
                  "at end\n+Hello!  ⟵ no newline at end")
IS_ERROR_MISMATCH = "is_error: expected false, got true; text: 'HELLO'"


def run_of(*results: ScenarioResult) -> RunResult:
    return RunResult(RunInfo(implementation="impl", version="1"), results)


def scenario(sid: str, *steps: StepResult) -> ScenarioResult:
    status = FAIL if any(s.status == FAIL for s in steps) else PASS
    if steps and all(s.status == SKIP for s in steps):
        status = SKIP
    return ScenarioResult(sid, status, steps=steps)


def failing(step: str, *messages: str) -> StepResult:
    return StepResult(step, FAIL, messages or (TEXT_MISMATCH,))


def passing(step: str) -> StepResult:
    return StepResult(step, PASS)


def entry(sid: str, step: str | None, reason: str = "known deviation", *patterns: str) -> BaselineEntry:
    return BaselineEntry(sid, reason, step, tuple(MismatchPattern(p) for p in patterns))


PINNED = Baseline("impl", (entry("a", "s1", "upper-cases its output", pin(TEXT_MISMATCH)),), "b.yaml")


# -- applying ------------------------------------------------------------------------------------

def test_the_listed_step_failing_with_the_listed_mismatch_is_an_expected_failure() -> None:
    run = apply_baseline(run_of(scenario("a", failing("s1"), passing("s2"))), PINNED)
    res = run.scenarios[0]
    assert (res.status, res.reason, [s.status for s in res.steps]) == (XFAIL, "upper-cases its output", [XFAIL, PASS])
    assert run.exit_code == 0


def test_a_planted_regression_in_another_step_of_a_baselined_scenario_fails_as_a_different_failure() -> None:
    run = apply_baseline(run_of(scenario("a", failing("s1"), failing("s2", IS_ERROR_MISMATCH))), PINNED)
    res = run.scenarios[0]
    assert res.status == FAIL and run.exit_code == 1
    assert [s.status for s in res.steps] == [XFAIL, FAIL]
    assert res.steps[1].baseline == BASELINE_DIFFERENT and res.different_failure
    assert res.steps[1].note == ("xfail (different failure): this scenario is baselined (b.yaml) for step(s) 's1', "
                                 "not for step 's2'")
    assert f"[s2] {IS_ERROR_MISMATCH}" in res.failure_text


def test_a_different_mismatch_in_the_listed_step_fails_and_shows_the_expected_and_the_actual_mismatch() -> None:
    run = apply_baseline(run_of(scenario("a", failing("s1", OTHER_MISMATCH), passing("s2"))), PINNED)
    res = run.scenarios[0]
    assert res.status == FAIL and run.exit_code == 1
    step = res.steps[0]
    assert step.baseline == BASELINE_DIFFERENT and step.expected == (pin(TEXT_MISMATCH),)
    assert step.note.splitlines() == [
        "xfail (different failure): not the failure listed in b.yaml",
        "  expected mismatch, not seen:",
        *("    " + line for line in TEXT_MISMATCH.splitlines()),
        "  actual mismatch, not listed:",
        "    text: not equal to the expected text",
    ]
    text = res.failure_text
    assert "\n+Hello!  ⟵ no newline at end\n" in text  # the actual mismatch in full
    assert "[s1] baseline: upper-cases its output" in text


def test_an_extra_mismatch_in_the_listed_step_is_a_different_failure() -> None:
    run = apply_baseline(run_of(scenario("a", failing("s1", TEXT_MISMATCH, IS_ERROR_MISMATCH))), PINNED)
    step = run.scenarios[0].steps[0]
    assert (step.status, step.baseline) == (FAIL, BASELINE_DIFFERENT)
    assert "  actual mismatch, not listed:\n    is_error: expected false, got true; text: 'HELLO'" in step.note


def test_an_entry_without_mismatch_accepts_any_failure_of_its_step_only() -> None:
    base = Baseline("impl", (entry("a", "s1"),), "b.yaml")
    run = apply_baseline(run_of(scenario("a", failing("s1", OTHER_MISMATCH), failing("s2"))), base)
    assert [s.status for s in run.scenarios[0].steps] == [XFAIL, FAIL]


def test_regex_patterns_are_searched_in_the_rendered_mismatch() -> None:
    text = "implementation: impl\nentries:\n  - {id: a, step: s1, mismatch: {regex: '^\\+HEL+O'}, reason: r}\n"
    base = parse_baseline_text(text, "b.yaml")
    assert base.entries[0].mismatch == (MismatchPattern("^\\+HEL+O", regex=True),)
    assert apply_baseline(run_of(scenario("a", failing("s1"))), base).scenarios[0].status == FAIL  # no multiline
    base = parse_baseline_text(text.replace("'^\\+HEL+O'", "'(?m)^\\+HEL+O'"), "b.yaml")
    assert apply_baseline(run_of(scenario("a", failing("s1"))), base).scenarios[0].status == XFAIL


def test_a_listed_step_that_passes_is_stale_and_names_the_check_that_changed() -> None:
    run = apply_baseline(run_of(scenario("a", passing("s1"), passing("s2"))), PINNED)
    res = run.scenarios[0]
    assert res.status == STALE and run.exit_code == 1
    assert res.steps[0].note == (
        "stale baseline entry: step 's1' of 'a' now passes: check `text` no longer fails as listed (expected "
        "mismatch: text: not equal to the expected text); if that is a real fix, remove the entry from b.yaml "
        "(reason was: upper-cases its output)")


def test_a_listed_step_that_passes_while_another_step_now_fails_is_a_failure() -> None:
    run = apply_baseline(run_of(scenario("a", passing("s1"), failing("s2", IS_ERROR_MISMATCH))), PINNED)
    res = run.scenarios[0]
    assert res.status == FAIL and run.exit_code == 1
    assert [(s.status, s.baseline) for s in res.steps] == [(STALE, ""), (FAIL, BASELINE_DIFFERENT)]


def test_skipped_scenarios_and_steps_neither_satisfy_nor_stale_an_entry_and_say_so() -> None:
    skipped = ScenarioResult("a", SKIP, reason="requires surface minimax")
    run = apply_baseline(run_of(skipped), PINNED)
    assert run.scenarios[0].status == SKIP and run.exit_code == 0
    assert run.scenarios[0].notes == (
        "baseline entry step 's1' of 'a' (b.yaml) not checked: the scenario was skipped (requires surface minimax)",)
    run = apply_baseline(run_of(scenario("a", StepResult("s1", SKIP, reason="when: requires os=windows"),
                                         passing("s2"))), PINNED)
    res = run.scenarios[0]
    assert (res.status, res.steps[0].status) == (PASS, SKIP)
    assert res.notes == ("baseline entry step 's1' of 'a' (b.yaml) not checked: the step was skipped "
                         "(when: requires os=windows)",)
    lines = summary_lines(run, PINNED, "--baseline")
    assert "toolproof: baseline: 0 entries matched (xfail), 1 entry not checked" in lines
    assert "    1 not checked: the step was skipped (when: requires os=windows)" in lines


def test_an_entry_naming_a_step_the_scenario_lacks_is_stale() -> None:
    run = apply_baseline(run_of(scenario("a", passing("renamed"))), PINNED)
    assert run.scenarios[0].status == STALE
    assert "names a step the scenario does not have (its steps: 'renamed')" in run.scenarios[0].failure_text


def test_a_scope_scenario_entry_covers_every_step_while_its_mismatch_appears() -> None:
    whole = Baseline("impl", (BaselineEntry("a", "not implemented", None, (MismatchPattern("is_error:"),),
                                            "scenario"),), "b.yaml")
    res = apply_baseline(run_of(scenario("a", failing("s1"), failing("s2", IS_ERROR_MISMATCH))), whole).scenarios[0]
    assert (res.status, [s.status for s in res.steps]) == (XFAIL, [XFAIL, XFAIL])
    res = apply_baseline(run_of(scenario("a", failing("s1"))), whole).scenarios[0]
    assert res.status == FAIL and res.different_failure
    res = apply_baseline(run_of(scenario("a", passing("s1"))), whole).scenarios[0]
    assert res.status == STALE
    assert res.message.startswith("stale baseline entry: 'a' (scope: scenario) now passes: check `is_error` ")


def test_unreviewed_entries_xfail_marked_as_such_and_are_reported() -> None:
    base = Baseline("impl", (entry("a", "s1", PLACEHOLDER_REASON),), "b.yaml")
    run = apply_baseline(run_of(scenario("a", failing("s1"))), base)
    res = run.scenarios[0]
    assert res.status == XFAIL and res.unreviewed and res.steps[0].baseline == BASELINE_UNREVIEWED
    assert run.exit_code == 0
    assert any(line.startswith("toolproof: warning: 1 expected failure(s) from UNREVIEWED baseline entries")
               for line in summary_lines(run, base, "--baseline"))


def test_a_baseline_for_another_implementation_is_reported_by_the_run() -> None:
    run = apply_baseline(run_of(scenario("a", failing("s1"))), PINNED)
    other = Baseline("someone-else", PINNED.entries, "b.yaml", "2")
    assert summary_lines(run, other, "--baseline")[-1] == (
        "toolproof: warning: baseline b.yaml is for someone-else 2; this run is of impl 1")


# -- reading -------------------------------------------------------------------------------------

def test_a_whole_scenario_entry_without_scope_is_rejected_with_file_line_and_field() -> None:
    with pytest.raises(ScenarioError) as info:
        parse_baseline_text("implementation: x\nentries:\n  - id: a\n    reason: r\n", "b.yaml")
    assert info.value.problems == [
        "b.yaml:3: entries[1].step: required: name the step that fails (an entry for the whole scenario needs "
        "scope: scenario and a reason; `toolproof baseline update` rewrites such entries per step, keeping their "
        "reasons)"]
    ok = parse_baseline_text("implementation: x\nentries:\n  - {id: a, scope: scenario, reason: r}\n", "b.yaml")
    assert (ok.entries[0].whole, ok.entries[0].step, ok.entries[0].line) == (True, None, 3)


def test_baseline_file_problems_are_located() -> None:
    with pytest.raises(ScenarioError) as info:
        parse_baseline_text(
            "implementation: x\nversion: 1.6\nentries:\n"
            "  - id: a\n    step: s\n"
            "  - {id: b, reason: r, stpe: s}\n"
            "  - {id: c, step: s, scope: scenario, reason: r}\n"
            "  - {id: d, scope: scenario, reason: 'TODO: later'}\n"
            "  - {id: e, step: s, mismatch: {regex: '('}, reason: r}\n"
            "  - {id: f, step: s, mismatch: [], reason: r}\n"
            "  - {id: g, step: s, reason: r}\n  - {id: g, scope: scenario, reason: r}\n", "b.yaml")
    assert info.value.problems == [
        "b.yaml:2: version (quote it: version: \"1.6\"): expected a string, got a number (1.6)",
        "b.yaml:4: entries[1].reason: required field is missing",
        "b.yaml:6: entries[2].stpe: unknown key (did you mean 'step'?)",
        "b.yaml:6: entries[2].step: required: name the step that fails (an entry for the whole scenario needs "
        "scope: scenario and a reason; `toolproof baseline update` rewrites such entries per step, keeping their "
        "reasons)",
        "b.yaml:7: entries[3].step: scope: scenario covers every step; remove step or scope",
        "b.yaml:8: entries[4].reason: a whole-scenario entry needs a reviewed reason, not a placeholder",
        "b.yaml:9: entries[5].mismatch.regex: not a valid regular expression: missing ), unterminated subpattern "
        "at position 0",
        "b.yaml:10: entries[6].mismatch: expected at least one pattern (or leave mismatch out)",
        "b.yaml:12: entries[8]: 'g' has both a scope: scenario entry and step entries (line 11); keep one kind",
    ]


def test_shipped_baselines_are_step_level_and_load() -> None:
    """Every shipped scenario baseline loads as is; none has a whole-scenario entry without
    ``scope: scenario`` (the loader rejects those) and none is unreviewed."""
    found = shipped_baselines()
    assert {b.identity for b in found} >= {"pi-coding-agent 0.73.1", "pi-coding-agent 0.79.1",
                                           "pi-coding-agent 1.6.0", "toolproof-reference"}
    for header in found:
        base = load_baseline(header.path)
        assert not base.unreviewed(), header.path
        assert all(e.whole is False or e.reason for e in base.entries)
        assert "/snapshots/" not in "".join(p.text for e in base.entries for p in e.mismatch).replace(
            "snapshot snapshots/", ""), "pins name snapshots portably"
    base = load_baseline(str(REPO / "docs/examples/baseline.yaml"))
    assert [(e.id, e.step) for e in base.entries] == [("examples/upstream-line-numbers", "read")]


def test_the_shipped_baseline_is_chosen_by_the_implementation_and_version_of_the_hello() -> None:
    chosen, why = choose_shipped_baseline("pi-coding-agent", "0.79.1")
    assert chosen is not None and chosen.path.endswith("pi-0.79.1.yaml")
    assert chosen.entries == ()  # the corpus's pi wording is 0.79.1's: no known deviation
    assert "as the implementation's hello says" in why
    chosen, _ = choose_shipped_baseline("pi-coding-agent", "1.6.0")
    assert chosen is not None and chosen.path.endswith("pi-1.6.0.yaml") and chosen.entries
    chosen, _ = choose_shipped_baseline("toolproof-reference", "9.9.9")  # names no version: any
    assert chosen is not None and chosen.path.endswith("toolproof-reference.yaml")
    none, why = choose_shipped_baseline("pi-coding-agent", "0.80.0")
    assert none is None and why.startswith("no shipped baseline is for pi-coding-agent 0.80.0 (shipped: ")


def test_validate_lists_unreviewed_entries_with_their_line() -> None:
    base = parse_baseline_text("implementation: x\nentries:\n  - {id: a, step: s, reason: ok}\n"
                               f"  - {{id: b, step: s, reason: '{PLACEHOLDER_REASON}'}}\n", "b.yaml")
    assert validate_baseline_lines(base) == [
        "b.yaml:4: entries[2].reason: unreviewed: still a TODO placeholder; write why step 's' of 'b' fails (it "
        "xfails meanwhile, and every run reports it)",
        "toolproof: baseline b.yaml (x) is valid: 2 entries; 1 UNREVIEWED"]


# -- updating ------------------------------------------------------------------------------------

def test_pins_are_the_first_lines_of_the_mismatch_portable_and_without_durations() -> None:
    long = "text: not equal to the expected text\n" + "\n".join(f"+line {i}" for i in range(20))
    assert pin(long).splitlines() == long.splitlines()[:8]
    assert pin("duration: expected at most 5 s, took 5.123 s") == "duration: expected at most 5 s, took "
    assert pin("text: differs from snapshot /home/u/x/snapshots/a/b.text.txt\n--- expected") == (
        "text: differs from snapshot snapshots/a/b.text.txt\n--- expected")
    base = Baseline("impl", (entry("a", "s1", "r", pin("text: differs from snapshot /elsewhere/snapshots/a/b.text.txt")),))
    run = run_of(scenario("a", failing("s1", "text: differs from snapshot /home/u/snapshots/a/b.text.txt")))
    assert apply_baseline(run, base).scenarios[0].status == XFAIL


def test_update_writes_step_entries_pinned_to_the_mismatch_keeping_reasons_that_still_match() -> None:
    old = Baseline("impl", (entry("a", "s1", "known", pin(TEXT_MISMATCH)), entry("b", "s1", "fixed now"),
                            entry("not-run", "s1", "kept")), "b.yaml")
    run = run_of(scenario("a", failing("s1"), passing("s2")), scenario("b", passing("s1")),
                 scenario("c", passing("s1"), failing("s2", IS_ERROR_MISMATCH)))
    new = update_baseline(run, old)
    assert new.entries == (
        old.entries[0],
        entry("c", "s2", PLACEHOLDER_REASON, IS_ERROR_MISMATCH),
        old.entries[2],
    )
    assert parse_baseline_text(new.dumps(), "x.yaml").entries == new.entries
    assert new.dumps().startswith("implementation: impl\nentries:\n- id: a\n  step: s1\n  mismatch: |-\n"
                                  "    text: not equal to the expected text\n    --- expected\n")


def test_update_splits_a_whole_scenario_entry_per_failing_step_keeping_its_reason() -> None:
    legacy = parse_baseline_text("implementation: impl\nentries:\n  - id: a\n    reason: reviewed fact\n",
                                 "b.yaml", legacy=True)
    run = run_of(scenario("a", failing("s1"), passing("s2"), failing("s3", IS_ERROR_MISMATCH)))
    new = update_baseline(run, legacy)
    assert new.entries == (entry("a", "s1", "reviewed fact", pin(TEXT_MISMATCH)),
                           entry("a", "s3", "reviewed fact", IS_ERROR_MISMATCH))
    assert apply_baseline(run, new).exit_code == 0


def test_update_adds_the_mismatch_to_an_entry_without_one_and_flags_a_changed_failure() -> None:
    old = Baseline("impl", (entry("a", "s1", "no pin yet"), entry("b", "s1", "was upper-case", pin(TEXT_MISMATCH))))
    run = run_of(scenario("a", failing("s1")), scenario("b", failing("s1", OTHER_MISMATCH)))
    new, warnings = update_baseline_from([run], old)
    assert new.entries == (
        entry("a", "s1", "no pin yet", pin(TEXT_MISMATCH)),
        entry("b", "s1", "TODO: review: the failure changed (the reason was: was upper-case)", pin(OTHER_MISMATCH)))
    assert warnings == ["b step s1: fails differently from its entry; the entry's reason needs a review"]
    assert new.unreviewed() == [new.entries[1]]


def test_update_from_several_results_pins_what_they_share_and_keeps_what_one_of_them_skipped() -> None:
    one = run_of(scenario("a", failing("s1", "is_error: expected false, got true; text: 'partial 1'")),
                 ScenarioResult("m", SKIP, reason="requires surface minimax"))
    two = run_of(scenario("a", failing("s1", "is_error: expected false, got true; text: 'partial 2'")),
                 scenario("m", failing("s1")))
    new, warnings = update_baseline_from([one, two], None)
    assert [(e.id, e.step, [p.text for p in e.mismatch]) for e in new.entries] == [
        ("a", "s1", ["is_error: expected false, got true; text: 'partial "]),
        ("m", "s1", [pin(TEXT_MISMATCH)])]
    assert warnings == ["a step s1: mismatch 1 differs between the results; pinned the common start "
                        "\"is_error: expected false, got true; text: 'partial \""]
    assert (new.implementation, new.version) == ("impl", "1")
    assert apply_baseline(one, new).exit_code == 0 and apply_baseline(two, new).exit_code == 0


def test_update_reads_back_the_results_of_a_baselined_run() -> None:
    applied = apply_baseline(run_of(scenario("a", failing("s1"), failing("s2", IS_ERROR_MISMATCH))), PINNED)
    new = update_baseline(applied, PINNED)
    assert new.entries == (PINNED.entries[0], entry("a", "s2", PLACEHOLDER_REASON, IS_ERROR_MISMATCH))


STYLED = """# Known failures, with a comment that must survive.
implementation: impl
entries:
  - id: a/keep
    step: s
    reason: "kept, in double quotes"   # and a trailing comment
  - {id: b/flow, step: s, reason: flow style kept}
  - id: c/drop
    step: s
    reason: dropped when it passes
"""


def test_baseline_update_with_nothing_changed_returns_the_file_byte_for_byte() -> None:
    old = parse_baseline_text(STYLED, "b.yaml")
    assert update_baseline_text(STYLED, "b.yaml", Baseline(old.implementation, old.entries)) == STYLED
    pi = (REPO / "baselines" / "pi-0.79.1.yaml").read_text(encoding="utf-8")
    base = parse_baseline_text(pi, "pi.yaml")
    assert update_baseline_text(pi, "pi.yaml", Baseline(base.implementation, base.entries, "", base.version)) == pi


def test_baseline_update_touches_only_the_entries_that_changed() -> None:
    old = parse_baseline_text(STYLED, "b.yaml")
    kept = [e for e in old.entries if e.id != "c/drop"]
    new = Baseline("impl", (*kept, entry("a/new", "s", "TODO: explain: it fails", "text: x\n+y")))
    assert update_baseline_text(STYLED, "b.yaml", new) == (
        "# Known failures, with a comment that must survive.\n"
        "implementation: impl\n"
        "entries:\n"
        "  - id: a/keep\n"
        "    step: s\n"
        '    reason: "kept, in double quotes"   # and a trailing comment\n'
        "  - id: a/new\n"
        "    step: s\n"
        "    mismatch: |-\n"
        "      text: x\n"
        "      +y\n"
        "    reason: 'TODO: explain: it fails'\n"
        "  - {id: b/flow, step: s, reason: flow style kept}\n")


def test_baseline_update_rewrites_the_header_lines_only_when_the_identity_changes() -> None:
    old = parse_baseline_text(STYLED, "b.yaml")
    text = update_baseline_text(STYLED, "b.yaml", Baseline("mine", old.entries, "", "2.0"))
    assert text == STYLED.replace("implementation: impl\n", "implementation: mine\nversion: '2.0'\n")
    assert update_baseline_text(text, "b.yaml", Baseline("mine", old.entries)) == STYLED.replace("impl\n", "mine\n")


def test_baseline_update_fills_an_empty_list_and_empties_a_full_one() -> None:
    empty = "# header\nimplementation: impl\nentries: []\n"
    one = update_baseline_text(empty, "b.yaml", Baseline("impl", (BaselineEntry("a/x", "why", "s1"),)))
    assert one == "# header\nimplementation: impl\nentries:\n  - id: a/x\n    step: s1\n    reason: why\n"
    assert update_baseline_text(one, "b.yaml", Baseline("impl", ())) == empty


def test_pins_that_yaml_cannot_hold_raw_are_written_quoted_and_read_back() -> None:
    tricky = ["text: a\n  \n\tb", "text: \x00\x7f\u0085 end", "text: trailing \n", "text: ' and \" and # and : "]
    for text in tricky:
        base = Baseline("impl", (entry("a", "s", "r", text),))
        assert parse_baseline_text(base.dumps(), "b.yaml").entries == base.entries, repr(text)
