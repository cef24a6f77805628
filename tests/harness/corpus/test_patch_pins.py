"""``PatchVerdict.skipped_summary``: why every pinned scenario of a toggle skipped, in one line;
toggle names, rules and descriptions from the reference's registry; ``toolproof patches --list``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.corpus.patch_pins import UNTESTED, PatchVerdict, pins_by_patch, verdicts
from harness.model.results import RunInfo, RunResult
from tools_impl.server.patch_catalogue import patch_catalogue

WIN = "requires os=windows; the backend has os=linux"
KNOB = "requires profile_overlay=true; the backend has profile_overlay=none"
SURFACE = "requires surface minimax; the implementation speaks pi"


def _skipped(*reasons: str) -> PatchVerdict:
    ids = tuple(f"s/{i}" for i in range(len(reasons)))
    return PatchVerdict("bash.win-taskkill", UNTESTED, skipped=ids, skip_reasons=reasons)


def test_one_shared_requirement_is_named() -> None:
    assert _skipped(WIN, WIN).skipped_summary() == "all 2 pinned scenarios need os=windows"
    assert _skipped(SURFACE).skipped_summary() == "the 1 pinned scenario needs surface minimax"


def test_several_requirements_are_counted_most_frequent_first() -> None:
    assert _skipped(WIN, KNOB, KNOB, WIN, KNOB).skipped_summary() == (
        "all 5 pinned scenarios skipped: 3 need profile_overlay=true, 2 need os=windows")
    assert _skipped(WIN, SURFACE, KNOB).skipped_summary() == (
        "all 3 pinned scenarios skipped: 1 needs os=windows, 1 needs profile_overlay=true, 1 needs surface minimax")


def test_other_skip_reasons_give_the_count() -> None:
    assert _skipped(WIN, "not run").skipped_summary() == "all 2 pinned scenarios skipped"
    assert _skipped("every step was skipped: when: requires os=windows").skipped_summary() == (
        "the 1 pinned scenario skipped")


# -- names and descriptions from the reference's patch registry --------------------------------


def test_pins_and_verdicts_name_every_registered_toggle_with_its_rule_and_description() -> None:
    entries = patch_catalogue()
    assert list(pins_by_patch([])) == [e.name for e in entries]
    found = verdicts([], RunResult(RunInfo(), ()))
    assert [(v.patch, v.spec, v.description, v.verdict) for v in found] == [
        (e.name, e.spec_id, e.description, UNTESTED) for e in entries]
    assert found[0].to_json()["description"] == "Scope fuzzy normalisation to the matched span"


def test_patches_list_prints_the_registry_and_runs_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "patches.json"
    assert main(["patches", "--list", "--json", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("patch toggles of the reference")
    assert len(lines) == 15
    assert any(line.split()[:2] == ["bash.parent-death-guard", "engine"] and "seams: bash.spawn, bash.decode" in line
               for line in lines)
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["patches"][-1] == {"name": "wrap.scrub-provider-key", "spec": "patch.wrap.scrub-provider-key",
                                  "description": "scrub removes the provider key", "surface": "wrapper",
                                  "seams": ["bash.env-scrub"], "requires": [], "package": "bash"}


def test_patches_without_impl_or_with_list_and_impl_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["patches"]) == 2
    assert "patches needs --impl IMPL (or --list)" in capsys.readouterr().err
    assert main(["patches", "--list", "--impl", "reference"]) == 2
    assert "runs nothing" in capsys.readouterr().err
