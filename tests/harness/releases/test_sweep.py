"""The sweep end to end on fake releases (tests/support/releases.py): which releases it probes,
where it runs which scenarios, how bisection finds the first release of each change over releases
that do not install or load, the cache, shards and their merge, and the report computed from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import harness.releases.sweep as sweep_module
from harness.corpus.loader import load_corpus
from harness.model.results import FAIL, PASS
from harness.releases.analysis import ADOPTED, NEEDED, UNTESTED, WRAPPER_BROKEN, analyse, survival_cell
from harness.releases.records import (
    DOES_NOT_LOAD,
    NOT_INSTALLABLE,
    OK,
    FuzzClass,
    FuzzPair,
    Outcome,
    ReleaseState,
    ScenarioInfo,
    SweepState,
    merge_states,
)
from harness.releases.sweep import bisection_probes, segment
from tests.support.releases import VERSIONS, make, write_corpus
from tests.support.repo import REPO
from tools_impl.server.patch_catalogue import patch_catalogue


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "corpus")


def test_bisection_finds_each_change_and_names_the_releases_it_steps_over(corpus: Path, tmp_path: Path) -> None:
    sweep, launcher = make(corpus, tmp_path / "cache")
    state = sweep.run()
    assert state.published == VERSIONS[:-1]  # the pre-release is no release
    assert state.usable() == ["0.84.0", "0.84.4", "0.85.1", "0.86.1", "0.87.1", "1.3.0", "1.4.0", "1.5.0"]
    report = analyse(state, patch_catalogue())
    changes = {c.id: c for c in report.changes}
    assert set(changes) == {"write@0.85.1", "bash@1.3.0"}
    write, bash = changes["write@0.85.1"], changes["bash@1.3.0"]
    assert (write.last_release_without, write.first_release) == ("0.84.4", "0.85.1")
    assert [(r.version, r.state) for r in write.between] == [("0.85.0", DOES_NOT_LOAD)]
    assert {s.scenario for s in write.scenarios} == {"hist/write-count", "hist/pin-off", "hist/pin-on"}
    assert (bash.last_release_without, bash.first_release) == ("0.87.1", "1.3.0")
    assert [(r.version, r.state) for r in bash.between] == [("0.99.1", NOT_INSTALLABLE), ("1.0.3", NOT_INSTALLABLE)]
    assert [s.scenario for s in bash.scenarios] == ["hist/bash-exit"]
    assert bash.scenarios[0].before.startswith("pass [error:tool]")
    assert bash.scenarios[0].after.startswith("fail [result:isError]")
    # the write tool entry of 0.85.0 explains the write change; the bash entries of the interval are about
    # codemode, so the bash change is unlisted
    assert write.listed and [e.version for e in write.changelog_entries] == ["0.85.0"]
    assert not bash.listed and bash.interval_versions == ["0.99.0", "1.0.0"]
    # the find entry of 0.85.0 explains nothing observed; the TUI entry of 0.84.0 is no tool entry
    assert [n.entry.summary[:30] for n in report.not_observed] == ["Fixed the find tool returning "]
    # bisection: the changing scenario ran at the anchors and a few releases between, not at all of them
    ran_at = [v for v in state.usable() if "hist/bash-exit" in state.outcomes.get(v, {})]
    assert len(ran_at) <= 5 < len(state.usable())
    assert "hist/bash-ok" not in state.outcomes["0.86.1"]  # unchanged between the anchors: never bisected
    # every release was probed once; the unusable ones were never started
    assert sorted(launcher.probed) == sorted(VERSIONS[:-1])
    assert not {"0.85.0", "0.99.1", "1.0.3"} & set(launcher.started)


def test_patch_survival_has_a_verdict_with_evidence_for_every_toggle_and_release(corpus: Path, tmp_path: Path) -> None:
    sweep, _ = make(corpus, tmp_path / "cache")
    report = analyse(sweep.run(), patch_catalogue())
    assert len(report.survival) == len(patch_catalogue()) == 14
    for s in report.survival:
        assert [c.version for c in s.cells] == report.state.published
        assert all(c.evidence for c in s.cells)
    guard = next(s for s in report.survival if s.toggle == "edit.fidelity-guard")
    verdicts = {c.version: (c.verdict, c.evidence) for c in guard.cells}
    assert verdicts["0.84.4"] == (NEEDED, "hist/pin-off")
    assert verdicts["0.85.0"][0] == UNTESTED and "does not load" in verdicts["0.85.0"][1]
    assert verdicts["0.85.1"] == (ADOPTED, "hist/pin-on")
    other = next(s for s in report.survival if s.toggle == "bash.graceful-kill")
    assert {c.verdict for c in other.cells} == {UNTESTED} and other.cells[0].evidence == "no scenario pins it"


def test_a_broken_wrapper_contract_marks_the_toggles_of_its_tool(corpus: Path, tmp_path: Path) -> None:
    text = (corpus / "bash-exit.yaml").read_text(encoding="utf-8").replace("surface: pi", "surface: pi\ntags: [wrapper-contract]")
    (corpus / "bash-exit.yaml").write_text(text, encoding="utf-8")
    sweep, _ = make(corpus, tmp_path / "cache")
    state = sweep.run()
    # a contract scenario runs at every release
    assert all("hist/bash-exit" in state.outcomes[v] for v in state.usable())
    report = analyse(state, patch_catalogue())
    scrub = next(s for s in report.survival if s.toggle == "wrap.scrub-provider-key")  # a bash wrapper toggle
    cells = {c.version: c for c in scrub.cells}
    assert cells["0.87.1"].verdict == UNTESTED
    assert (cells["1.3.0"].verdict, cells["1.3.0"].evidence) == (WRAPPER_BROKEN, "hist/bash-exit")


def test_a_second_sweep_runs_nothing_and_reports_the_same(corpus: Path, tmp_path: Path) -> None:
    first, _ = make(corpus, tmp_path / "cache")
    report1 = analyse(first.run(), patch_catalogue())
    second, launcher = make(corpus, tmp_path / "cache")
    state2 = second.run()
    assert state2.stats["scenario_runs"] == 0 and state2.stats["scenario_runs_cached"] > 0
    assert launcher.probed == [] and launcher.started == []  # release states come from the cache too
    report2 = analyse(state2, patch_catalogue())
    assert [c.to_json() for c in report2.changes] == [c.to_json() for c in report1.changes]


def test_a_changed_scenario_is_run_again(corpus: Path, tmp_path: Path) -> None:
    first, _ = make(corpus, tmp_path / "cache")
    first.run()
    path = corpus / "bash-ok.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("true", "true;"), encoding="utf-8")
    second, _ = make(corpus, tmp_path / "cache")
    state = second.run()
    assert 0 < state.stats["scenario_runs"] < state.stats["scenario_runs_cached"]


def test_shards_merged_give_the_report_of_one_sweep(corpus: Path, tmp_path: Path) -> None:
    whole, _ = make(corpus, tmp_path / "c0")
    expected = analyse(whole.run(), patch_catalogue())
    shards = []
    for i in (1, 2, 3):
        sweep, _ = make(corpus, tmp_path / f"c{i}", shard=(i, 3))
        shards.append(SweepState.from_json(json.loads(json.dumps(sweep.run().to_json()))))
    merged, warnings = merge_states(shards)
    assert warnings == []
    report = analyse(merged, patch_catalogue())
    assert [(c.id, c.last_release_without, [r.version for r in c.between]) for c in report.changes] == \
        [(c.id, c.last_release_without, [r.version for r in c.between]) for c in expected.changes]
    assert [s.to_json() for s in report.survival] == [s.to_json() for s in expected.survival]
    assert merged.shards == ["1/3", "2/3", "3/3"]


def test_a_shard_boundary_that_does_not_load_extends_to_the_next_release_that_does(corpus: Path,
                                                                                  tmp_path: Path) -> None:
    # 11 releases in 5 shards: boundaries at indexes 0, 2, 4, 6, 8, 10; index 2 is 0.85.0 (does not load)
    sweep, _ = make(corpus, tmp_path / "c", shard=(1, 5))
    state = sweep.run()
    assert state.usable() == ["0.84.0", "0.84.4", "0.85.1"]
    assert "hist/bash-ok" in state.outcomes["0.85.1"]  # the extended end is this shard's anchor


def test_fuzz_classes_join_the_change_of_their_pair(corpus: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, str]] = []

    def fake_fuzz(older_impl: str, newer_impl: str, older: str, newer: str, n: int, seed: int,
                  cases: tuple[int, ...] = ()) -> FuzzPair:
        calls.append((older_impl, newer_impl))
        classes: tuple[FuzzClass, ...] = ()
        if (older, newer) == ("0.84.4", "0.85.1"):
            classes = (FuzzClass("write | well-formed | content", "write", 3, cases=(4, 9, 11)),)
        if (older, newer) == ("1.3.0", "1.4.0"):  # flaky only: no change
            classes = (FuzzClass("bash | well-formed | content", "bash", 2, flaky=2, cases=(1, 2)),)
        if (older, newer) == ("1.4.0", "1.5.0"):  # shows up with 1.4.0 against itself too: noise
            classes = (FuzzClass("write | path:abs | files", "write", 1, cases=(7,)),)
        if older == newer:
            assert cases, "a release is fuzzed against itself only on the cases of its classes"
            if older == "1.4.0":
                classes = (FuzzClass("write | path:abs | files", "write", 1, cases=(7,)),)
        return FuzzPair(older, newer, n, seed, n, n - sum(c.count for c in classes), classes)

    monkeypatch.setattr(sweep_module, "run_fuzz_pair", fake_fuzz)
    sweep, _ = make(corpus, tmp_path / "cache", fuzz=True)
    state = sweep.run()
    pairs = [c for c in calls if c[0] != c[1]]
    assert len(pairs) == len(state.usable()) - 1
    assert ("fake@0.84.4", "fake@0.85.1") in calls  # neighbours that load, over the one that does not
    assert {c[0] for c in calls if c[0] == c[1]} == {"fake@0.84.4", "fake@1.3.0", "fake@1.4.0"}
    assert [c.noise for c in state.fuzz["1.4.0..1.5.0"].classes] == [True]
    report = analyse(state, patch_catalogue())
    write = next(c for c in report.changes if c.id == "write@0.85.1")
    assert [c.key for c in write.fuzz_classes] == ["write | well-formed | content"]
    assert {c.id for c in report.changes} == {"write@0.85.1", "bash@1.3.0"}


def test_releases_are_worked_on_side_by_side_with_jobs(corpus: Path, tmp_path: Path) -> None:
    sweep, _ = make(corpus, tmp_path / "cache", jobs=3)
    report = analyse(sweep.run(), patch_catalogue())
    assert {c.id for c in report.changes} == {"write@0.85.1", "bash@1.3.0"}


def test_bisection_probes_pick_the_middle_and_step_over_errors() -> None:
    usable = [f"1.{i}.0" for i in range(9)]
    seen: dict[str, dict[str, str | None]] = {"s": {"1.0.0": "a", "1.8.0": "b"}}
    assert bisection_probes(usable, seen) == {"1.4.0": {"s"}}
    seen["s"]["1.4.0"] = None  # could not run there: the nearest unprobed release instead
    assert bisection_probes(usable, seen) == {"1.3.0": {"s"}}
    seen["s"].update({"1.3.0": "a", "1.5.0": "b"})
    assert bisection_probes(usable, seen) == {}  # 1.3.0 → 1.5.0, only an erroring release between
    assert bisection_probes(usable, {"t": {"1.0.0": "a", "1.1.0": "b", "1.8.0": "b"}}) == {}


def test_segments_share_their_boundaries_and_cover_the_range() -> None:
    assert segment(10, None) == (0, 9)
    parts = [segment(10, (i, 3)) for i in (1, 2, 3)]
    assert parts == [(0, 3), (3, 6), (6, 9)]
    assert segment(0, (1, 2)) == (0, -1)
    assert [segment(2, (i, 4)) for i in (1, 2, 3, 4)] == [(0, 0), (0, 0), (0, 1), (1, 1)]


def test_a_scenario_that_disagrees_with_itself_is_unstable_not_a_change(corpus: Path, tmp_path: Path) -> None:
    (corpus / "coin.yaml").write_text("""id: hist/coin
surface: pi
steps:
  - tool: bash
    args: {command: coin}
    expect: {text: heads}
""", encoding="utf-8")
    sweep, _ = make(corpus, tmp_path / "cache")
    state = sweep.run()
    # its first runs change between 0.87.1 and 1.3.0; run again there, it says the other side, so
    # those releases are stepped over and the next ones around the change are tried, until none is left
    unstable = state.unstable["hist/coin"]
    assert {"0.87.1", "1.3.0"} <= set(unstable)
    report = analyse(state, patch_catalogue())
    assert {c.id for c in report.changes} == {"write@0.85.1", "bash@1.3.0"}
    assert all(s.scenario != "hist/coin" for c in report.changes for s in c.scenarios)
    assert sorted(report.to_json()["state"]["unstable"]["hist/coin"]) == sorted(unstable)


def test_a_release_where_a_scenario_wobbles_is_stepped_over_and_the_change_still_found(
        corpus: Path, tmp_path: Path) -> None:
    sweep, _ = make(corpus, tmp_path / "cache")
    sweep.state.unstable["hist/bash-exit"] = ["0.87.1"]  # as if its second run there had disagreed
    state = sweep.run()
    report = analyse(state, patch_catalogue())
    bash = next(c for c in report.changes if c.tool == "bash")
    # the change is reported around the wobbly release, from the nearest release that is steady
    assert (bash.last_release_without, bash.first_release) == ("0.86.1", "1.3.0")
    assert not bash.bisected


def test_a_pin_written_on_another_surface_is_no_evidence_of_a_patch() -> None:
    """A minimax-surface pin reaches a pi release mapped, where the wording that tells the patch's
    presence is another dialect's: it passes or fails on behaviour alone, so it neither runs at
    every release nor says needed, adopted or diverged."""
    entry = next(e for e in patch_catalogue() if e.name == "edit.fidelity-guard")
    state = SweepState("pi@{version}", (), "1.0.0", "1.0.0", published=["1.0.0"],
                       releases={"1.0.0": ReleaseState("1.0.0", OK, surfaces=("pi",))},
                       scenarios={"m/on": ScenarioInfo("m/on", tools=("edit",), patches=(("edit.fidelity-guard", "on"),)),
                                  "p/on": ScenarioInfo("p/on", tools=("edit",), patches=(("edit.fidelity-guard", "on"),),
                                                       surface="pi")},
                       outcomes={"1.0.0": {"m/on": Outcome(PASS), "p/on": Outcome(FAIL)}})
    cell = survival_cell(state, entry, "1.0.0")
    assert (cell.verdict, cell.evidence) == (NEEDED, "p/on")  # the mapped pass does not make it "diverged"
    scenarios = load_corpus([REPO / "scenarios", REPO / "adapters" / "pi" / "scenarios"])
    every = sweep_module.every_release_set(scenarios, ("pi",))
    assert every and all(s.surface == "pi" for s in every)
    assert len(sweep_module.every_release_set(scenarios)) > len(every)
    by_id = {s.id: s for s in scenarios}
    assert sweep_module.foreign_pin(by_id["bash/term-ignored-then-killed"], ("pi",)) == (
        "pins patch bash.graceful-kill on, written on the minimax surface; the release speaks pi")
    assert sweep_module.foreign_pin(by_id["pi/patches/graceful-kill-on"], ("pi",)) == ""
