"""Report formats and shard merging."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from harness.errors import UsageError
from harness.model.results import (
    ERROR,
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
from harness.report.results_files import merge
from harness.report.writers import to_junit, to_markdown
from harness.run.compare import check_details, readable_diff


def sample() -> RunResult:
    return RunResult(RunInfo(backend="local", implementation="impl", version="1", duration_s=1.5), (
        ScenarioResult("a/pass", PASS, path="a.yaml", steps=(StepResult("step-1", PASS),)),
        ScenarioResult("a/fail", FAIL, path="b.yaml", steps=(StepResult("s", FAIL, ("text: differs\n-x\n+y",)),)),
        ScenarioResult("a/err", ERROR, message="infrastructure: server died"),
        ScenarioResult("a/skip", SKIP, reason="requires os=windows; the backend has os=linux"),
        ScenarioResult("a/xfail", XFAIL, reason="known"),
        ScenarioResult("a/stale", STALE, message="stale baseline entry: 'a/stale' now passes; remove it"),
    ))


def test_junit_has_one_testcase_per_scenario_with_step_failures_in_the_message() -> None:
    suite = ET.fromstring(to_junit(sample())).find("testsuite")
    assert suite is not None
    assert [c.get("name") for c in suite.iter("testcase")] == ["a/pass", "a/fail", "a/err", "a/skip", "a/xfail", "a/stale"]
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("6", "2", "1", "2")
    fail = suite.find("testcase[@name='a/fail']/failure")
    assert fail is not None and (fail.get("message"), fail.text) == ("[s] text: differs", "[s] text: differs\n-x\n+y")
    err = suite.find("testcase[@name='a/err']/error")
    assert err is not None and err.get("type") == "infrastructure"
    skip = suite.find("testcase[@name='a/skip']/skipped")
    assert skip is not None and skip.get("message") == "requires os=windows; the backend has os=linux"
    stale = suite.find("testcase[@name='a/stale']/failure")
    assert stale is not None and stale.get("type") == "stale-baseline"


def test_markdown_summary_counts_and_lists_failures() -> None:
    md = to_markdown(sample())
    assert md.startswith("## toolproof: ERROR (infrastructure)\n\nBackend `local`, implementation `impl 1`, 1.5 s.\n")
    assert "| ❌ fail | 1 |" in md and "| 🧟 stale | 1 |" in md
    assert "<code>a/err</code>" in md and "<code>a/pass</code>" not in md
    assert "- `a/skip`: requires os=windows; the backend has os=linux" in md


def test_json_round_trips() -> None:
    run = sample()
    assert RunResult.from_json(run.to_json()).scenarios == run.scenarios
    assert run.exit_code == 2


def test_merge_rejects_overlapping_shards() -> None:
    with pytest.raises(UsageError, match=r"^merge: scenario 'a/pass' appears in inputs 1 and 2$"):
        merge([sample(), sample()])


def test_readable_diff_makes_whitespace_visible() -> None:
    assert readable_diff("a\tb\n", "a\tb \r\n") == (
        "--- expected\n+++ actual\n@@ -1 +1 @@\n-a→b\n+a→b·␍")


def test_details_match_is_a_subset_with_exact_lists_and_strict_booleans() -> None:
    actual = {"a": {"b": 1, "c": 2}, "l": [1, 2], "flag": 1}
    assert check_details({"a": {"b": 1}, "l": [1, 2]}, actual) == []
    assert [m.message for m in check_details({"l": [1], "flag": True}, actual)] == [
        "details.l: expected [1], got [1, 2]", "details.flag: expected True, got 1"]


# The attributes the common JUnit consumers accept (Jenkins xUnit's junit-10.xsd, the strictest;
# GitLab and GitHub reporters read a subset): anything else, e.g. `file` on <testcase>, fails it.
JUNIT_SUITE_ATTRIBUTES = {"name", "tests", "failures", "errors", "time", "disabled", "skipped", "timestamp",
                          "hostname", "id", "package"}
JUNIT_CASE_ATTRIBUTES = {"name", "assertions", "time", "classname", "status"}
JUNIT_CASE_CHILDREN = {"skipped", "error", "failure", "system-out", "system-err"}


def test_junit_uses_only_schema_attributes_and_names_the_suite_by_implementation_and_backend() -> None:
    from dataclasses import replace

    run = sample()
    run = replace(run, info=replace(run.info, shard="1/2", started="2026-12-01T11:19:35+00:00"))
    root = ET.fromstring(to_junit(run))
    assert root.tag == "testsuites"
    (suite,) = list(root)
    assert suite.get("name") == root.get("name") == "toolproof impl 1 [local] shard 1/2"
    assert suite.get("timestamp") == "2026-12-01T11:19:35"
    assert set(suite.attrib) <= JUNIT_SUITE_ATTRIBUTES
    for case in suite.iter("testcase"):
        assert set(case.attrib) <= JUNIT_CASE_ATTRIBUTES, case.attrib
        assert {child.tag for child in case} <= JUNIT_CASE_CHILDREN


def test_junit_suite_names_differ_per_backend_and_implementation() -> None:
    from harness.model.results import RunInfo
    from harness.report.writers import junit_suite_name

    assert junit_suite_name(RunInfo(backend="docker", implementation="mine", version="2")) == "toolproof mine 2 [docker]"
    assert junit_suite_name(RunInfo(backend="local", implementation="mine")) == "toolproof mine [local]"
    assert junit_suite_name(RunInfo()) == "toolproof"


def test_junit_parses_when_messages_hold_nuls_control_characters_and_undecodable_bytes() -> None:
    """Issue 21 item 3: a NUL or an ESC in a message (read/content/control-chars-many) made the
    JUnit file unparsable, for ElementTree and GitLab alike; merged shards too."""
    nasty = "expected '\x00\x01\x07\x1b[31m' got '\udcff\ufffe\uffff' and a tab\there"
    runs = [RunResult(RunInfo(backend="local", implementation="i\x00mpl", shard="1/2"), (
                ScenarioResult("a/fail", FAIL, steps=(StepResult("s", FAIL, (nasty,)),)),
                ScenarioResult("a/skip", SKIP, reason="skip \x0b reason"))),
            RunResult(RunInfo(backend="local", implementation="i\x00mpl", shard="2/2"), (
                ScenarioResult("a/xfail", XFAIL, reason="known \x1b", steps=(StepResult("s", XFAIL, (nasty,), reason="r"),)),
                ScenarioResult("a/err", ERROR, message=nasty)))]
    for run in (*runs, merge(runs)):
        root = ET.fromstring(to_junit(run).encode("utf-8"))
        for failure in root.iter("failure"):
            assert failure.text is not None and "\\x00\\x01\\x07\\x1b[31m" in failure.text
            assert "\\udcff\\ufffe\\uffff" in failure.text and "\there" in failure.text
    skipped = ET.fromstring(to_junit(runs[0])).find(".//testcase[@name='a/skip']/skipped")
    assert skipped is not None and skipped.get("message") == "skip \\x0b reason"


@pytest.mark.parametrize("kind", ["startswith", "endswith"])
def test_a_failed_startswith_or_endswith_shows_a_diff_past_the_shortened_texts(kind: str) -> None:
    """Issue 21 item 12: both texts were cut to the same 200-character prefix: no visible difference."""
    from harness.model.scenario import TextMatch
    from harness.run.compare import check_text

    common = "x" * 250 + "\n"
    expected = common + "line two\n" if kind == "startswith" else "line two\n" + common
    actual = common + "line 2\nmore" if kind == "startswith" else "head\nline 2\n" + common
    (mismatch,) = check_text("text", TextMatch(**{kind: expected}), actual)
    assert "-line two" in mismatch.diff and "+line 2" in mismatch.diff
    assert mismatch.diff.startswith(f"--- expected {'start' if kind == 'startswith' else 'end'}\n")
