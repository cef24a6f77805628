"""docs/pi-history.md lists every changelog tool entry of pi 0.73.1 → 1.6.0 with the scenarios or
fuzz classes that pin it, or why it cannot be observed. It must stay true to the corpus: every
scenario it names exists, every history scenario is named there, each history scenario names the
versions of its rows, every row without evidence says why, and — where an installed pi 1.6.0 is at
hand to read its changelog — every tool entry the changelog classifier finds has its row."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from harness.corpus.loader import load_corpus
from harness.releases.changelog import parse_changelog, tool_entries
from harness.releases.history import NOT_A_SCENARIO, UNOBSERVABLE, entry_key, load_history
from tests.support.repo import REPO

DOC = REPO / "docs" / "pi-history.md"
HISTORY = REPO / "adapters" / "pi" / "scenarios" / "history"
CORPORA = [REPO / "scenarios", REPO / "adapters" / "pi" / "scenarios"]
SCENARIO_REF = re.compile(r"`(pi/[a-z0-9._/-]+)`")
CHANGELOG_REL = Path("node_modules") / "@earendil-works" / "pi-coding-agent" / "CHANGELOG.md"


def test_every_row_names_evidence_or_says_why_and_keys_are_unique() -> None:
    rows = load_history(DOC)
    assert len(rows) >= 40
    keys = [r.key for r in rows]
    assert len(keys) == len(set(keys))
    for r in rows:
        assert r.pinned or r.note.startswith((UNOBSERVABLE, NOT_A_SCENARIO)), f"{DOC.name}:{r.line}: {r.key}"
    assert sum(1 for r in rows if r.scenarios) >= 15


def test_every_scenario_the_page_names_exists() -> None:
    ids = {s.id for s in load_corpus(CORPORA)}
    named = set(SCENARIO_REF.findall(DOC.read_text(encoding="utf-8")))
    assert named, "the page names no scenario"
    assert sorted(named - ids) == []
    for r in load_history(DOC):
        assert set(r.scenarios) <= ids, f"{DOC.name}:{r.line}: {sorted(set(r.scenarios) - ids)}"


def test_every_history_scenario_is_on_the_page_and_names_its_versions() -> None:
    text = DOC.read_text(encoding="utf-8")
    rows = load_history(DOC)
    scenarios = load_corpus([HISTORY])
    assert len(scenarios) >= 15
    for s in scenarios:
        assert s.id.startswith("pi/history/") and s.surface == "pi", s.id
        assert f"`{s.id}`" in text, f"{s.id} is not on docs/pi-history.md"
        head = Path(s.path).read_text(encoding="utf-8").split("\nid:", 1)[0]
        assert "docs/pi-history.md" in head, f"{s.path}: its first comment must point at docs/pi-history.md"
        for r in rows:
            if s.id in r.scenarios:
                assert r.version in head, f"{s.path}: its comment does not name {r.version} ({r.key})"


def _installed_changelog() -> Path:
    explicit = os.environ.get("TOOLPROOF_PI_DIR")
    cache = Path(os.environ.get("TOOLPROOF_PI_CACHE") or Path.home() / ".cache" / "toolproof" / "pi")
    for directory in ([Path(explicit)] if explicit else []) + [cache / "1.6.0"]:
        path = directory / CHANGELOG_REL
        if path.is_file() and "## [1.6.0]" in path.read_text(encoding="utf-8"):
            return path
    pytest.skip("no installed pi 1.6.0 to read the changelog from (ci/pi-setup.sh 1.6.0)")


def test_every_tool_entry_of_the_changelog_has_its_row() -> None:
    changelog = parse_changelog(_installed_changelog().read_text(encoding="utf-8"))
    keys = {r.key for r in load_history(DOC)}
    missing = [entry_key(e) for e in tool_entries(changelog, "0.73.1", "1.6.0") if entry_key(e) not in keys]
    assert missing == []
