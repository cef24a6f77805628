"""docs/pi-upstream-tests.md maps each upstream pi v0.79.1 tool test to the scenarios that pin it.
The map must stay true to the corpus: every scenario and step it names exists, every scenario that
says it stands for an upstream test is in the map, and every test without a scenario says why."""

from __future__ import annotations

import re

from harness.corpus.loader import load_corpus
from harness.model.scenario import Scenario
from tests.support.repo import REPO

MAP = REPO / "docs" / "pi-upstream-tests.md"
CORPORA = [REPO / "scenarios", REPO / "adapters" / "pi" / "scenarios"]
PI_SCENARIOS = REPO / "adapters" / "pi" / "scenarios"
ROW = re.compile(r"^\| (?P<test>.+?) \| (?P<refs>.+?) \| (?P<note>.*?) \|$")
REF = re.compile(r"`([^`]+)`")
# The first comment line of a scenario written for one upstream test.
CLAIM = re.compile(r'^# One upstream pi tool test \(.*packages/coding-agent/test/(?P<file>[^:]+): "(?P<test>[^"]+)"\)')


def _rows() -> list[tuple[str, list[str], str]]:
    rows = []
    for line in MAP.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if not m or m["test"] in ("Upstream test", "---"):
            continue
        refs = [] if m["refs"] == "—" else REF.findall(m["refs"])
        rows.append((m["test"], refs, m["note"]))
    return rows


def _by_id() -> dict[str, Scenario]:
    return {s.id: s for s in load_corpus(CORPORA)}


def test_the_map_lists_107_tests_and_says_why_for_each_without_a_scenario() -> None:
    rows = _rows()
    assert len(rows) == 107
    without = [test for test, refs, _ in rows if not refs]
    assert len(without) == 34
    for test, refs, note in rows:
        if not refs:
            assert note.startswith("not a scenario"), test


def test_every_scenario_and_step_the_map_names_exists() -> None:
    scenarios = _by_id()
    for test, refs, _ in _rows():
        for ref in refs:
            sid, _, step = ref.partition(":")
            assert sid in scenarios, f"{test}: no scenario {sid}"
            if step:
                assert step in [s.id for s in scenarios[sid].steps], f"{test}: {sid} has no step {step}"


def test_every_scenario_written_for_an_upstream_test_is_in_the_map() -> None:
    named = {ref.partition(":")[0] for _, refs, _ in _rows() for ref in refs}
    tests = {test for test, _, _ in _rows()}
    claims = 0
    for path in sorted(PI_SCENARIOS.rglob("*.yaml")):
        first = path.read_text(encoding="utf-8").splitlines()[0]
        m = CLAIM.match(first)
        if not m:
            continue
        claims += 1
        sid = next(line.split(":", 1)[1].strip() for line in path.read_text(encoding="utf-8").splitlines()
                   if line.startswith("id:"))
        assert sid in named, f"{path.name}: {sid} is not in the map"
        it = m["test"].rpartition(": ")[2]
        assert any(t.endswith(f": {it}") for t in tests), f"{path.name}: upstream test {it!r} is not in the map"
    assert claims >= 40
