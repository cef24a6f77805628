"""Loader checks for the corpus fields ``spec`` and ``patches`` and for steps that assert nothing."""

from __future__ import annotations

import pytest

from harness.corpus.loader import parse_scenario_text
from harness.errors import ScenarioError


def _problems(text: str, strict: bool = False) -> list[str]:
    with pytest.raises(ScenarioError) as exc:
        parse_scenario_text(text, "s.yaml", strict=strict)
    return list(exc.value.problems)


def test_spec_ids_and_patch_pins_load_in_order_with_bare_on_off() -> None:
    s = parse_scenario_text(
        "id: a\nspec: [read.6, bash.env.2, patch.edit.fuzzy-span]\n"
        "patches: {edit.fuzzy-span: on, bash.graceful-kill: \"off\"}\n"
        "steps:\n  - {tool: read, args: {path: a}, expect: {is_error: false}}\n", "s.yaml")
    assert s.spec == ("read.6", "bash.env.2", "patch.edit.fuzzy-span")
    assert s.patches == (("edit.fuzzy-span", "on"), ("bash.graceful-kill", "off"))


def test_bad_spec_ids_and_patch_pins_name_line_and_field() -> None:
    text = ("id: a\nspec: [Read 6, read.6, read.6]\npatches: {edit.fuzzy: on, edit.fuzzy-span: maybe}\n"
            "steps:\n  - {tool: read, expect: {is_error: false}}\n")
    assert _problems(text) == [
        "s.yaml:2: spec[1]: expected a rule id such as read.6 or bash.env.2, got 'Read 6'",
        "s.yaml:2: spec[3]: duplicate rule id 'read.6'",
        "s.yaml:3: patches.edit.fuzzy: unknown key (did you mean 'edit.fuzzy-span'?)",
        "s.yaml:3: patches.edit.fuzzy-span: expected on or off, got a string ('maybe')",
    ]


@pytest.mark.parametrize("expect, message", [
    ("{}", "steps[1].expect: expected at least one check (an empty expect matches every observation)"),
    ("{details: {}}", "steps[1].expect.details: details: {} matches every observation; name what to check"),
    ("{text: {}}", "steps[1].expect.text: text: {} matches every string; name a matcher"),
    ("{files: {}}", "steps[1].expect.files: files: {} matches every observation; name what to check"),
])
def test_expectations_that_every_observation_satisfies_are_refused(expect: str, message: str) -> None:
    problems = _problems(f"id: a\nsteps:\n  - tool: read\n    expect: {expect}\n")
    assert [p.split(": ", 1)[1] for p in problems] == [message]


def test_strict_loading_refuses_a_step_without_expect() -> None:
    text = "id: a\nsteps:\n  - tool: read\n    args: {path: a}\n"
    assert parse_scenario_text(text, "s.yaml").steps[0].reason == ""
    assert _problems(text, strict=True) == [
        "s.yaml:3: steps[1].expect: required field is missing (every step asserts something; "
        "write expect: none with a reason: if it really checks nothing)"]


def test_expect_none_needs_a_reason_and_a_reason_needs_expect_none() -> None:
    ok = parse_scenario_text("id: a\nsteps:\n  - {tool: read, expect: none, reason: setup only}\n", "s.yaml",
                             strict=True)
    assert ok.steps[0].reason == "setup only"
    assert _problems("id: a\nsteps:\n  - {tool: read, expect: none}\n", strict=True) == [
        "s.yaml:3: steps[1].expect: expect: none needs a reason: saying why the step checks nothing"]
    assert _problems("id: a\nsteps:\n  - {tool: read, expect: {is_error: false}, reason: x}\n") == [
        "s.yaml:3: steps[1].reason: only allowed with expect: none"]
