"""``PatchVerdict.skipped_summary``: why every pinned scenario of a toggle skipped, in one line."""

from __future__ import annotations

from harness.corpus.patch_pins import UNTESTED, PatchVerdict

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
