"""Behaviour, wording and features at run time (docs/scenario-format.md), against the fake server
(tests/fixtures/fake_server.py) declaring what each test needs: features an implementation does
not declare skip with the reason; patch pins follow the one rule; wording blocks apply at
``--level full`` to the declared dialects only; ``failed`` and ``output`` accept either form; a
minimax-surface call reaches a pi-surface implementation with its arguments mapped, and one that
cannot be mapped skips the rest of its scenario."""

from __future__ import annotations

import json
import shlex
import sys
import textwrap
from typing import Any

from harness.backends.cmd import CmdBackend
from harness.corpus.loader import parse_scenario_text
from harness.model.features import DeclarationOverride
from harness.model.results import FAIL, PASS, SKIP, ScenarioResult
from harness.model.scenario import Scenario
from harness.report.results_files import merge
from harness.report.writers import to_junit, to_markdown
from harness.run.runner import LEVEL_BEHAVIOUR, LEVEL_FULL, Runner, describe_level, run_scenario
from tests.support.repo import FIXTURES

FAKE = FIXTURES / "fake_server.py"


def scenario(text: str) -> Scenario:
    return parse_scenario_text(textwrap.dedent(text), "s.yaml")


def backend(hello: dict[str, Any] | None = None) -> CmdBackend:
    env = ["env", f"FAKE_HELLO={json.dumps(hello or {})}"]
    return CmdBackend(shlex.join([*env, sys.executable, str(FAKE)]), hello_deadline_s=5)


def run(s: Scenario, hello: dict[str, Any] | None = None, **kw: Any) -> ScenarioResult:
    b = backend(hello)
    try:
        return run_scenario(b, s, **kw)
    finally:
        b.close()


FUZZY = """\
id: t/fuzzy
features: [fuzzy-edit]
steps:
  - tool: bash
    args: {command: hi}
    expect: {output: hi}
"""


def test_a_feature_the_implementation_does_not_declare_skips_with_the_reason() -> None:
    res = run(scenario(FUZZY))
    assert res.status == SKIP
    assert res.reason.startswith("requires feature fuzzy-edit (edit finds old text after fuzzy normalisation")
    assert res.reason.endswith("; the implementation declares features: none (its hello)")
    assert run(scenario(FUZZY), {"features": ["fuzzy-edit"]}).status == PASS


def test_the_project_config_declares_for_an_implementation_whose_hello_does_not() -> None:
    declared = DeclarationOverride(None, ("fuzzy-edit",), "[tool.toolproof] in pyproject.toml")
    assert run(scenario(FUZZY), declared=declared).status == PASS
    res = run(scenario(FUZZY), {"features": ["fuzzy-edit"]},
              declared=DeclarationOverride(None, (), "[tool.toolproof] in pyproject.toml"))
    assert res.status == SKIP and res.reason.endswith("declares features: none ([tool.toolproof] in pyproject.toml)")


def test_a_call_implies_its_feature_and_a_missing_one_is_never_an_xfail_or_a_failure() -> None:
    res = run(scenario("""\
        id: t/bg
        steps:
          - tool: bash
            args: {command: sleep 1, run_in_background: true}
            expect: {failed: false}
    """))
    assert res.status == SKIP and res.reason.startswith("requires feature background-tasks")


PINNED = """\
id: t/pin-{state}
patches: {{edit.fuzzy-span: {state}}}
steps:
  - tool: bash
    args: {{command: hi}}
    expect: {{output: hi}}
"""


def test_a_patch_pinned_off_runs_only_with_the_profile_applied_or_the_patch_declared_absent() -> None:
    off = scenario(PINNED.format(state="off"))
    res = run(off)
    assert res.status == SKIP
    assert res.reason == ("pins patch edit.fuzzy-span off (the behaviour without it); the implementation neither "
                          "applies the scenario's profile (profile_overlay) nor declares edit.fuzzy-span absent")
    assert run(off, {"capabilities": {"profile_overlay": True}}).status == PASS
    assert run(off, {"absent_patches": ["edit.fuzzy-span"]}).status == PASS
    assert run(off, {"absent_patches": "all"}).status == PASS


def test_a_patch_pinned_on_skips_where_the_patch_is_declared_absent() -> None:
    on = scenario(PINNED.format(state="on"))
    assert run(on).status == PASS  # nothing declared: the patched behaviour is what is asked
    res = run(on, {"absent_patches": "all"})
    assert res.status == SKIP and res.reason == "pins patch edit.fuzzy-span on; the implementation declares it absent (its hello)"
    # an implementation that applies profiles runs it when the profile sets the patch, and judges a
    # pin the profile leaves alone by its declaration (``--upstream`` declares every patch absent)
    overlay = {"absent_patches": "all", "capabilities": {"profile_overlay": True}}
    assert run(on, overlay).status == SKIP
    with_profile = scenario(PINNED.format(state="on") + "profile: {patches: {edit.fuzzy-span: true}}\n")
    assert run(with_profile, overlay).status == PASS


WORDED = """\
id: t/worded
steps:
  - tool: bash
    args: {command: "is_error boom"}
    expect: {failed: true, output: boom}
    wording:
      minimax: {status: result, is_error: true, text: boom}
      pi: {status: error, error: boom}
      minimax+pi: {is_error: true}
"""


def test_wording_applies_to_the_declared_dialect_at_level_full_only() -> None:
    s = scenario(WORDED)
    assert run(s, {"dialects": ["minimax"]}).status == PASS
    pi = run(s, {"dialects": ["pi"]})
    assert pi.status == FAIL
    assert pi.steps[0].messages == (
        "wording.pi: status: expected error, got returned result: 'boom'",)
    assert run(s, {"dialects": ["pi"]}, level=LEVEL_BEHAVIOUR).status == PASS
    assert run(s).status == PASS  # no dialect declared: behaviour alone


def test_failed_and_output_hold_for_a_raised_error_and_a_returned_is_error_alike() -> None:
    for command in ("raise boom", "is_error boom"):
        res = run(scenario(f"""\
            id: t/either
            steps:
              - tool: bash
                args: {{command: "{command}"}}
                expect: {{failed: true, output: boom}}
        """))
        assert res.status == PASS, (command, res.steps)
    res = run(scenario("""\
        id: t/ok
        steps:
          - tool: bash
            args: {command: "fine"}
            expect: {failed: true}
    """))
    assert res.steps[0].messages == (
        "failed: expected the call to fail (raise an error or return is_error: true), got returned result "
        "(is_error false): 'fine'",)


def test_content_and_next_offset_read_through_line_numbers_and_notices() -> None:
    res = run(scenario("""\
        id: t/view
        workspace:
          files: [{path: a.txt, text: "     1→one\\n     2→two\\n\\n[3 more lines in file. Use offset=3 to continue.]"}]
        steps:
          - tool: read
            args: {path: a.txt}
            expect: {failed: false, content: "one\\ntwo", next_offset: 3}
          - tool: read
            args: {path: a.txt}
            expect: {failed: false, content: "one\\n", next_offset: null}
    """))
    assert res.steps[0].status == PASS
    assert res.steps[1].messages[0].startswith("content: not equal to the expected text")
    assert res.steps[1].messages[1] == ("next_offset: expected no continuation notice, got offset=3; notices: "
                                        "['[3 more lines in file. Use offset=3 to continue.]']")


EDIT = """\
id: t/edit
workspace:
  files: [{path: a.txt, text: "x\\n"}]
steps:
  - tool: edit
    args: {file_path: a.txt, old_string: x, new_string: y, replace_all: false}
    expect:
      output: '{"edits": [{"newText": "y", "oldText": "x"}], "path": "a.txt"}'
  - tool: edit
    args: {file_path: a.txt, old_string: x, new_string: y, replace_all: true}
    expect: {failed: false}
  - tool: bash
    args: {command: after}
    expect: {output: after}
files:
  a.txt: {text: "y\\n"}
"""
PI_ONLY = {"surface": "pi", "surfaces": ["pi"], "tools": ["read", "write", "edit", "bash"],
           "features": ["replace-all"]}


def test_a_minimax_call_reaches_a_pi_surface_implementation_mapped_and_an_unmappable_one_cuts_the_scenario() -> None:
    res = run(scenario(EDIT), PI_ONLY)
    assert [(st.id, st.status) for st in res.steps] == [
        ("step-1", PASS), ("step-2", SKIP), ("step-3", SKIP), ("files", SKIP)]
    assert res.steps[1].reason == "on the pi surface: edit argument replace_all has no counterpart on the pi surface"
    assert res.steps[2].reason == "not run: step step-2 could not be sent on the pi surface"
    assert res.status == PASS  # what ran passed; the skipped steps say why


def test_a_scenario_whose_surface_nothing_maps_to_skips() -> None:
    res = run(scenario(FUZZY.replace("features: [fuzzy-edit]\n", "")), {"surface": "other", "surfaces": ["other"]})
    assert res.status == SKIP and res.reason == "requires surface minimax; the implementation speaks other"


def test_the_run_says_which_level_it_judged() -> None:
    s = scenario(WORDED)
    for hello, level, said in (({"dialects": ["minimax"]}, LEVEL_FULL, "full (dialect minimax)"),
                               ({"dialects": ["minimax"]}, LEVEL_BEHAVIOUR, "behaviour"),
                               ({}, LEVEL_FULL, "behaviour (the implementation declares no dialect)")):
        result = Runner(lambda h=hello: backend(h), level=level).run([s])  # type: ignore[misc]
        assert result.info.level == said
        assert result.info.to_json()["level"] == said
    assert describe_level(LEVEL_FULL, None) == ""  # nothing reached the implementation


def test_the_reports_say_which_level_ran() -> None:
    run = Runner(lambda: backend({"dialects": ["pi"]}), level=LEVEL_FULL).run([scenario(WORDED)])
    assert "Level: full (dialect pi)." in to_markdown(run)
    assert '<property name="level" value="full (dialect pi)" />' in to_junit(run)
    assert merge([run, run.with_scenarios(())]).info.level == "full (dialect pi)"
