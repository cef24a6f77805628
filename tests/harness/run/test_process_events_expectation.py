"""``expect.process_events`` (spec bash.16): loading, the observation it reads, and comparison."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from harness.corpus.loader import parse_scenario_text
from harness.errors import ScenarioError
from harness.model.observation import Observation
from harness.run.compare import check_observation

SCENARIO = """\
id: t/events
steps:
  - tool: bash
    args: {command: echo hi}
    expect:
      process_events:
        - {event: spawned, role: shell}
        - {event: command_dispatched}
"""


@dataclass
class _Resp:
    ok: bool
    result: Any = None
    error: Any = None
    error_message: str = ""
    error_kind: str = ""


def _expect() -> Any:
    return parse_scenario_text(SCENARIO, "<t>").steps[0].expect


def test_facts_are_read_from_a_result_and_from_an_error() -> None:
    facts = [{"event": "spawned", "role": "shell", "pid": 7}, {"event": "command_dispatched", "role": "shell"}]
    res = Observation.from_response(_Resp(True, {"content": [], "details": None, "is_error": False,
                                                 "process_events": facts}), 0.0)
    err = Observation.from_response(_Resp(False, error={"message": "x", "kind": "tool", "process_events": facts},
                                          error_message="x", error_kind="tool"), 0.0)
    assert res.process_events == tuple(facts) and err.process_events == tuple(facts)
    assert res.to_json()["process_events"] == facts
    assert check_observation(_expect(), res) == []


def test_a_missing_or_different_fact_is_a_mismatch() -> None:
    none = Observation.from_response(_Resp(True, {"content": [], "details": None, "is_error": False}), 0.0)
    assert [m.render() for m in check_observation(_expect(), none)] == [
        "process_events: expected 2 fact(s), got 0 (none)"]
    other = Observation.from_response(_Resp(True, {"content": [], "details": None, "is_error": False,
                                                   "process_events": [{"event": "spawned", "role": "guardian_launcher"},
                                                                      {"event": "timeout", "role": "shell"}]}), 0.0)
    assert [m.render() for m in check_observation(_expect(), other)] == [
        "process_events[1].role: expected 'shell', got 'guardian_launcher'",
        "process_events[2].event: expected 'command_dispatched', got 'timeout'"]


def test_an_empty_list_asserts_that_no_fact_was_reported() -> None:
    exp = parse_scenario_text(SCENARIO.replace(
        "      process_events:\n        - {event: spawned, role: shell}\n        - {event: command_dispatched}\n",
        "      process_events: []\n"), "<t>").steps[0].expect
    assert exp.process_events == ()
    some = Observation.from_response(_Resp(True, {"content": [], "details": None, "is_error": False,
                                                  "process_events": [{"event": "spawned", "role": "shell"}]}), 0.0)
    assert [m.render() for m in check_observation(exp, some)] == ["process_events: expected 0 fact(s), got 1 (spawned)"]


def test_a_malformed_expectation_names_the_field() -> None:
    with pytest.raises(ScenarioError) as err:
        parse_scenario_text(SCENARIO.replace("- {event: command_dispatched}", "- spawned"), "<t>")
    assert "steps[1].expect.process_events: expected a list of non-empty mappings" in str(err.value)
