"""Record mode keeps deliberately loose matchers that still hold and replaces the rest."""

from __future__ import annotations

from harness.corpus.loader import parse_scenario_text
from harness.corpus.record import recorded_expect

SCENARIO = """id: r/loose
steps:
  - id: a
    tool: bash
    args: {command: x}
    expect:
      text: {contains: "needle", startswith: "head"}
  - id: b
    tool: bash
    args: {command: x}
    expect:
      status: error
      error: {startswith: "ENOENT: "}
  - id: c
    tool: bash
    args: {command: x}
    expect:
      text: "old exact"
"""


def steps() -> dict[str, object]:
    return {s.id: s for s in parse_scenario_text(SCENARIO, "r.yaml").steps}


def test_a_loose_text_matcher_that_still_holds_is_kept() -> None:
    step = steps()["a"]
    obs = {"status": "result", "text": "head … needle … tail", "is_error": False}
    assert recorded_expect(step.raw_expect, obs, step.expect) == {"text": {"contains": "needle", "startswith": "head"}}


def test_a_loose_matcher_that_no_longer_holds_becomes_the_exact_text() -> None:
    step = steps()["a"]
    obs = {"status": "result", "text": "head without it", "is_error": False}
    assert recorded_expect(step.raw_expect, obs, step.expect) == {"text": "head without it"}


def test_exact_replaces_loose_matchers_even_when_they_hold() -> None:
    step = steps()["a"]
    obs = {"status": "result", "text": "head … needle", "is_error": False}
    assert recorded_expect(step.raw_expect, obs, step.expect, exact=True) == {"text": "head … needle"}


def test_a_loose_error_matcher_that_holds_is_kept_and_exact_text_is_refreshed() -> None:
    s = steps()
    err = {"status": "error", "error": "ENOENT: no such file", "error_kind": "tool"}
    assert recorded_expect(s["b"].raw_expect, err, s["b"].expect) == {
        "status": "error", "error": {"startswith": "ENOENT: "}, "error_kind": "tool"}
    res = {"status": "result", "text": "new exact", "is_error": False}
    assert recorded_expect(s["c"].raw_expect, res, s["c"].expect) == {"text": "new exact"}
