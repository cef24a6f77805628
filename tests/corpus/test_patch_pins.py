"""Patch pins of the shipped corpus: every toggle has scenarios for both states that run on this
(POSIX) host, and on the reference each pinned scenario fails once its toggle is flipped (so a pin
really depends on the toggle it names). Scenarios that need Windows or PowerShell skip here and
are not flipped; a toggle whose behaviour lives on Windows (bash.win-taskkill) is observed through
a stand-in selected by a profile knob."""

from __future__ import annotations

import dataclasses
from typing import Any

from harness.backends.local import LocalBackend
from harness.corpus.coverage import load_rules
from harness.corpus.loader import load_corpus
from harness.corpus.patch_pins import PRESENT, pinned, pins_by_patch, verdicts
from harness.model.results import FAIL, PASS
from harness.model.scenario import Scenario
from harness.run.runner import Runner
from tests.support.repo import REPO
from tools_impl.core.profile import ALL_PATCHES

CORPORA = [REPO / "scenarios", REPO / "adapters" / "pi" / "scenarios"]
# The real Windows checks of bash.win-taskkill, kept beside its POSIX stand-in scenarios.
WINDOWS_TASKKILL = ("windows/taskkill-without-system32-on", "windows/taskkill-without-system32-off")


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


def test_every_toggle_has_both_states_pinned_by_scenarios_that_run_here() -> None:
    """So the flip test below covers every toggle."""
    scenarios = _scenarios()
    pins = pins_by_patch(s for s in scenarios if not _windows_only(s))
    assert {p for p in ALL_PATCHES if not (pins[p]["on"] and pins[p]["off"])} == set()
    windows = pins_by_patch(s for s in scenarios if _windows_only(s))["bash.win-taskkill"]
    assert (windows["on"], windows["off"]) == ([WINDOWS_TASKKILL[0]], [WINDOWS_TASKKILL[1]])


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
    assert {patch for s in scenarios if not _windows_only(s) for patch, _ in s.patches} == set(ALL_PATCHES)


def test_reference_verdicts_are_present_for_every_observable_patch() -> None:
    scenarios = _scenarios()
    run = Runner(LocalBackend, jobs=2, backend_label="local").run(scenarios)
    found = {v.patch: v.verdict for v in verdicts(scenarios, run)}
    assert found == {p: PRESENT for p in ALL_PATCHES}
    taskkill = next(v for v in verdicts(scenarios, run) if v.patch == "bash.win-taskkill")
    assert (taskkill.on_passed, taskkill.off_passed) == (
        ("bash/taskkill/fallback-on", "bash/taskkill/system-root-on"), ("bash/taskkill/path-lookup-off",))
    assert taskkill.skipped == WINDOWS_TASKKILL
    assert all(r.startswith("requires os=windows;") for r in taskkill.skip_reasons)
