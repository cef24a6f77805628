"""A step's ``when: {programs: [...]}``: a program missing where the implementation runs skips the
step with the reason (harness.run.programs), never a failure of the tool layer."""

from __future__ import annotations

import textwrap

import pytest

from harness.backends.local import LocalBackend
from harness.corpus.loader import parse_scenario_text
from harness.errors import ScenarioError
from harness.model.results import PASS, SKIP
from harness.run.runner import run_scenario

SCENARIO = """\
id: t/programs
steps:
  - id: missing
    tool: bash
    args: {command: "no-such-program-xyz --version"}
    when: {programs: [no-such-program-xyz, sh]}
  - id: present
    tool: bash
    args: {command: "echo here"}
    when: {programs: [sh]}
    expect: {text: {contains: here}}
"""


def test_a_missing_program_skips_its_step_with_the_reason_and_a_present_one_runs() -> None:
    scenario = parse_scenario_text(SCENARIO, "s.yaml")
    assert scenario.steps[0].when == {"programs": ("no-such-program-xyz", "sh")}
    backend = LocalBackend()
    try:
        result = run_scenario(backend, scenario)
    finally:
        backend.close()
    assert [(s.id, s.status, s.reason) for s in result.steps] == [
        ("missing", SKIP, "when: requires program no-such-program-xyz; not found on the replay host"),
        ("present", PASS, ""),
    ]


@pytest.mark.parametrize("bad", ["/usr/bin/npm", "../npm", "a b"])
def test_programs_are_names_not_paths(bad: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario_text(textwrap.dedent(f"""\
            id: t/bad
            steps:
              - tool: bash
                args: {{command: x}}
                when: {{programs: ["{bad}"]}}
            """), "s.yaml")
    assert info.value.problems == [f"s.yaml:5: steps[1].when.programs: expected program names (no paths), got {bad!r}"]
