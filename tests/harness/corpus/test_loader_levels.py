"""The loader validates what separates behaviour, wording and features (docs/scenario-format.md,
"Behaviour, wording and features"): ``features``, ``wording`` blocks and the form-free checks
``failed``, ``output``, ``content`` and ``next_offset``, each mistake as ``file:line: field: …``."""

from __future__ import annotations

import json
import textwrap

import jsonschema
import pytest
import yaml

from harness.corpus.loader import find_scenario_files, parse_scenario_text
from harness.errors import ScenarioError
from harness.model.features import FEATURE_NAMES
from tests.support.repo import REPO


def problems_of(text: str) -> list[str]:
    with pytest.raises(ScenarioError) as info:
        parse_scenario_text(textwrap.dedent(text), "s.yaml")
    return info.value.problems


def step(expect: str, extra: str = "") -> str:
    return f"id: a\nsteps:\n  - tool: read\n    args: {{path: a.txt}}\n    expect: {expect}\n{extra}"


CASES = {
    "feature-unknown": ("id: a\nfeatures: [fuzzy-edti]\nsteps: [{tool: read, expect: {failed: false}}]\n",
                        "s.yaml:2: features[1]: expected one of " + ", ".join(FEATURE_NAMES)
                        + "; got 'fuzzy-edti' (did you mean 'fuzzy-edit'?)"),
    "features-not-a-list": ("id: a\nfeatures: fuzzy-edit\nsteps: [{tool: read, expect: {failed: false}}]\n",
                            "s.yaml:2: features: expected a list, got a string ('fuzzy-edit')"),
    "failed-not-bool": (step("{failed: yes please}"),
                        "s.yaml:5: steps[1].expect.failed: expected a boolean (true or false), got a string ('yes please')"),
    "failed-with-status": (step("{failed: true, status: error}"),
                           "s.yaml:5: steps[1].expect.status: not together with failed (failed: true means raised or "
                           "is_error: true; say the exact form in a wording block)"),
    "failed-with-is-error": (step("{failed: true, is_error: true}"),
                             "s.yaml:5: steps[1].expect.is_error: not together with failed (failed: true means raised or "
                             "is_error: true; say the exact form in a wording block)"),
    "failed-with-text": (step("{failed: true, text: x}"),
                         "s.yaml:5: steps[1].expect.text: needs a status (result or error); output: checks the text of "
                         "either form"),
    "failed-with-error": (step("{failed: true, error: x}"),
                          "s.yaml:5: steps[1].expect.error: needs a status (result or error); output: checks the text of "
                          "either form"),
    "output-empty-matcher": (step("{failed: false, output: {}}"),
                             "s.yaml:5: steps[1].expect.output: output: {} matches every string; name a matcher"),
    "next-offset-zero": (step("{failed: false, next_offset: 0}"),
                         "s.yaml:5: steps[1].expect.next_offset: expected an integer >= 1, got 0"),
    "next-offset-string": (step("{failed: false, next_offset: two}"),
                           "s.yaml:5: steps[1].expect.next_offset: expected an integer, got a string ('two')"),
    "content-regex": (step("{failed: false, content: {regex: '('}}"),
                      "s.yaml:5: steps[1].expect.content.regex: expected a valid regular expression "
                      "(missing ), unterminated subpattern at position 0)"),
    "wording-unknown-dialect": (step("{failed: false}", "    wording: {minimx: {text: x}}\n"),
                                "s.yaml:6: steps[1].wording.minimx: unknown dialect 'minimx'; expected one of minimax, pi "
                                "(several joined with +: minimax+pi)"),
    "wording-unknown-dialect-in-pair": (step("{failed: false}", "    wording: {minimax+pie: {text: x}}\n"),
                                        "s.yaml:6: steps[1].wording.minimax+pie: unknown dialect 'pie'; expected one of "
                                        "minimax, pi (several joined with +: minimax+pi)"),
    "wording-dialect-twice": (step("{failed: false}", "    wording: {pi+pi: {text: x}}\n"),
                              "s.yaml:6: steps[1].wording.pi+pi: names a dialect twice"),
    "wording-behaviour-key": (step("{failed: false}", "    wording: {pi: {files: {a.txt: {text: x}}}}\n"),
                              "s.yaml:6: steps[1].wording.pi.files: unknown key; expected one of: status, is_error, text, "
                              "error, error_kind, details, details_absent, content_types, process_events"),
    "wording-empty": (step("{failed: false}", "    wording: {pi: {}}\n"),
                      "s.yaml:6: steps[1].wording.pi: expected at least one check (an empty expect matches every "
                      "observation)"),
    "wording-text-and-error": (step("{failed: false}", "    wording: {pi: {text: x, error: y}}\n"),
                               "s.yaml:6: steps[1].wording.pi.text: only allowed with status: result"),
    "wording-not-a-mapping": (step("{failed: false}", "    wording: [pi]\n"),
                              "s.yaml:6: steps[1].wording: expected a mapping, got a list"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_mistake_is_reported_with_its_line_and_field(name: str) -> None:
    text, message = CASES[name]
    assert problems_of(text) == [message]


def test_a_valid_split_loads_behaviour_wording_and_features() -> None:
    s = parse_scenario_text(textwrap.dedent("""\
        id: a
        features: [fuzzy-edit, line-number-retry]
        steps:
          - tool: read
            args: {path: a.txt}
            expect: {failed: false, content: "x\\n", next_offset: null}
            wording:
              minimax: {text: "     1→x\\n"}
              minimax+pi: {details_absent: [truncation]}
              pi: {status: result, is_error: false}
          - tool: bash
            args: {command: exit 3}
            expect: {failed: true, output: {regex: '\\b3\\b'}}
            wording:
              pi: {error: "(no output)\\n\\nCommand exited with code 3"}
        """), "s.yaml")
    assert s.features == ("fuzzy-edit", "line-number-retry")
    read, bash = s.steps
    assert (read.expect.status, read.expect.failed, read.expect.checks_next_offset, read.expect.next_offset) == \
        (None, False, True, None)
    assert read.expect.content is not None and read.expect.content.equals == "x\n"
    assert [(names, exp.status) for names, exp in read.wording] == [
        (("minimax",), "result"), (("minimax", "pi"), "result"), (("pi",), "result")]
    assert [label for label, _ in read.wording_for(("pi",))] == ["minimax+pi", "pi"]
    assert [label for label, _ in read.wording_for(("minimax",))] == ["minimax", "minimax+pi"]
    assert read.wording_for(()) == []
    assert bash.expect.output is not None and bash.expect.output.regex == "\\b3\\b"
    assert bash.wording[0][1].status == "error"  # error: implies the raised form


def test_without_failed_an_expect_still_means_a_returned_result() -> None:
    s = parse_scenario_text(step("{text: x}"), "s.yaml")
    assert s.steps[0].expect.status == "result"
    assert s.steps[0].expect.failed is None


def test_a_wording_block_naming_no_outcome_takes_either_form() -> None:
    s = parse_scenario_text(step("{failed: true}", "    wording: {pi: {process_events: []}}\n"), "s.yaml")
    assert s.steps[0].wording[0][1].status is None


def test_calls_imply_the_features_they_use() -> None:
    s = parse_scenario_text(textwrap.dedent("""\
        id: a
        features: [fuzzy-edit]
        steps:
          - tool: edit
            args: {file_path: a, old_string: x, new_string: y, replace_all: true}
            expect: {failed: false}
          - tool: bash
            args: {command: sleep 1, run_in_background: true}
            expect: {failed: false}
          - tool: grep
            args: {pattern: x}
            expect: {failed: false}
          - op: classify
            args: {command: ls}
            expect: {failed: false}
        """), "s.yaml")
    # replace_all is part of the minimax surface's edit, not a feature (docs/scenario-format.md)
    assert s.required_features() == ("fuzzy-edit", "background-tasks", "grep-tool", "classify")


def test_the_json_schema_knows_the_new_fields_and_accepts_the_shipped_corpus() -> None:
    schema = json.loads((REPO / "harness/schemas/scenario.schema.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    files = find_scenario_files([REPO / "scenarios", REPO / "adapters" / "pi" / "scenarios"])
    assert len(files) > 400
    for f in files:
        errors = list(validator.iter_errors(yaml.safe_load(open(f, encoding="utf-8"))))
        assert not errors, (f, errors[0].message)
    good = {"id": "a", "features": ["fuzzy-edit"], "steps": [
        {"tool": "read", "expect": {"failed": False, "content": "x", "next_offset": None},
         "wording": {"minimax+pi": {"text": "x"}}}]}
    assert not list(validator.iter_errors(good))
    for bad in ({**good, "features": ["fuzzy-edti"]},
                {**good, "steps": [{"tool": "read", "expect": {"failed": False}, "wording": {"minimx": {"text": "x"}}}]},
                {**good, "steps": [{"tool": "read", "expect": {"failed": False}, "wording": {"pi": {"files": {}}}}]},
                {**good, "steps": [{"tool": "read", "expect": {"next_offset": 0}}]}):
        assert list(validator.iter_errors(bad)), bad
