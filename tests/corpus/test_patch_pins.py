"""Patch pins of the shipped corpus: every toggle a scenario can observe here has scenarios for
both states, and on the reference each pinned scenario fails once its toggle is flipped (so a pin
really depends on the toggle it names)."""

from __future__ import annotations

import dataclasses
from typing import Any

from harness.backends.local import LocalBackend
from harness.corpus.coverage import load_rules
from harness.corpus.loader import load_corpus
from harness.corpus.patch_pins import PRESENT, UNTESTED, pinned, pins_by_patch, verdicts
from harness.model.results import FAIL, PASS
from harness.model.scenario import Scenario
from harness.run.runner import Runner
from tests.support.repo import REPO
from tools_impl.core.profile import ALL_PATCHES

CORPORA = [REPO / "scenarios", REPO / "adapters" / "pi" / "scenarios"]
# Observable only on a Windows host (their scenarios skip here, so they cannot be flipped here).
WINDOWS_ONLY = frozenset({"bash.win-taskkill"})


def _exempt_patches() -> set[str]:
    rules, _ = load_rules(REPO / "docs" / "spec")
    return {r.id.removeprefix("patch.") for r in rules if r.id.startswith("patch.") and r.exempt}


def _scenarios() -> list[Scenario]:
    return pinned(load_corpus(CORPORA))


def test_every_observable_toggle_has_scenarios_for_both_states() -> None:
    pins = pins_by_patch(_scenarios())
    exempt = _exempt_patches()
    assert exempt == set()
    for patch in ALL_PATCHES:
        if patch in exempt:
            assert pins[patch] == {"on": [], "off": []}, patch
        else:
            assert pins[patch]["on"] and pins[patch]["off"], patch


def _flipped(s: Scenario, patch: str, state: str) -> Scenario:
    profile: dict[str, Any] = dict(s.profile or {})
    patches = dict(profile.get("patches") or {})
    patches[patch] = state == "off"  # the opposite of the pinned state
    if patch == "edit.fidelity-guard" and state == "off":
        patches["edit.fuzzy-span"] = True  # the guard needs fuzzy-span (spec patch.edit.fidelity-guard)
    profile["patches"] = patches
    return dataclasses.replace(s, id=f"{s.id}~flipped", profile=profile)


def _windows_only(s: Scenario) -> bool:
    return s.requires.os == "windows" or s.requires.shell in ("powershell", "pwsh")


def test_windows_only_patches_have_only_windows_scenarios() -> None:
    pins = pins_by_patch(_scenarios())
    by_id = {s.id: s for s in _scenarios()}
    for patch in WINDOWS_ONLY:
        ids = pins[patch]["on"] + pins[patch]["off"]
        assert ids and all(_windows_only(by_id[i]) for i in ids), patch


def test_pinned_scenarios_pass_on_the_reference_and_fail_with_their_toggle_flipped() -> None:
    scenarios = _scenarios()
    flipped: list[Scenario] = []
    for s in scenarios:
        for patch, state in s.patches:
            if not _windows_only(s):
                flipped.append(_flipped(s, patch, state))
    run = Runner(LocalBackend, jobs=2, backend_label="local").run(scenarios + flipped)
    status = {r.id: r.status for r in run.scenarios}
    assert {s.id: status[s.id] for s in scenarios if status[s.id] != "skip"} == {
        s.id: PASS for s in scenarios if status[s.id] != "skip"}
    assert {s.id: status[s.id] for s in flipped} == {s.id: FAIL for s in flipped}


def test_reference_verdicts_are_present_for_every_observable_patch() -> None:
    scenarios = _scenarios()
    run = Runner(LocalBackend, jobs=2, backend_label="local").run(scenarios)
    found = {v.patch: v.verdict for v in verdicts(scenarios, run)}
    assert found == {p: (UNTESTED if p in WINDOWS_ONLY else PRESENT) for p in ALL_PATCHES}
    taskkill = next(v for v in verdicts(scenarios, run) if v.patch == "bash.win-taskkill")
    assert taskkill.skipped_summary() == "all 2 pinned scenarios need os=windows"
