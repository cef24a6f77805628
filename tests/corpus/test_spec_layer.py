"""The behaviour level judges behaviour, not one vendor's wording.

tests/fixtures/spec_layer/layer.py is a tool layer written from docs/spec/ alone (read, write,
edit, bash on the minimax surface) in its own words, declaring no dialect. Run on the shipped gate
(``scenarios/`` and ``adapters/pi/scenarios/``) at ``--level behaviour``, it must pass everything
that runs, except the known corpus defects listed below: steps that demand a vendor's wording, a
receipt in ``details``, or a vendor-only behaviour that no feature declares. When a defect is
fixed in the corpus, its entry here goes stale and this test says so: delete the entry.

The layer declares no feature: ``replace_all`` is part of the minimax surface's edit (edit.4), so
its scenarios run. Two planted bugs in ``replace_all`` (``SPEC_LAYER_BUG``) must fail the gate on
the scenarios citing edit.4, with a failure that names the rule.
"""

from __future__ import annotations

import shlex
import sys

import pytest

from harness.backends.registry import backend_factory
from harness.corpus.loader import load_corpus
from harness.model.features import DeclarationOverride
from harness.model.results import RunResult
from harness.run.runner import LEVEL_BEHAVIOUR, Runner
from harness.run.snapshots import SnapshotStore
from tests.support.repo import REPO

LAYER = REPO / "tests" / "fixtures" / "spec_layer" / "layer.py"
GATE = [REPO / "scenarios", REPO / "adapters" / "pi" / "scenarios"]
DECLARED = DeclarationOverride(dialects=(), features=(), source="tests/corpus/test_spec_layer.py")

# (scenario id, step id) → why the step is a corpus defect, not a behaviour difference of the layer.
# Empty: the defects this layer found (wording in behaviour checks, fuzzy matching without its
# feature, a file found by pi's name for it, a path saved from a receipt) are fixed in the corpus.
KNOWN_CORPUS_DEFECTS: dict[tuple[str, str], str] = {}


def _run(paths: list, bug: str = "", monkeypatch: pytest.MonkeyPatch | None = None) -> RunResult:
    if monkeypatch is not None:
        monkeypatch.setenv("SPEC_LAYER_BUG", bug)
    factory, label = backend_factory("cmd:" + shlex.join([sys.executable, str(LAYER)]))
    snapshots = SnapshotStore(REPO / "snapshots")
    return Runner(factory, jobs=2, backend_label=label, snapshot_factory=snapshots.hook_for,
                  level=LEVEL_BEHAVIOUR, declared=DECLARED).run(load_corpus(paths))


def _failing_steps(run: RunResult) -> dict[tuple[str, str], str]:
    return {(s.id, st.id): "\n".join(st.messages) for s in run.scenarios if s.status == "fail"
            for st in s.steps if st.status == "fail"}


@pytest.fixture(scope="module")
def clean_run() -> RunResult:
    return _run(GATE)


def test_the_spec_layer_passes_the_behaviour_level_but_for_the_known_corpus_defects(clean_run: RunResult) -> None:
    errors = [f"{s.id}: {s.message}" for s in clean_run.scenarios if s.status == "error"]
    assert errors == []
    failing = _failing_steps(clean_run)
    unexpected = {k: v for k, v in failing.items() if k not in KNOWN_CORPUS_DEFECTS}
    assert unexpected == {}, "the spec layer fails steps that are not known corpus defects"
    stale = sorted(k for k in KNOWN_CORPUS_DEFECTS if k not in failing)
    assert stale == [], "known corpus defects that no longer fail: delete them from KNOWN_CORPUS_DEFECTS"
    counts = clean_run.counts()
    assert counts["pass"] >= 200, counts
    # every skip says why (a feature, a tool or a capability the layer lacks)
    assert all(s.reason or s.message for s in clean_run.scenarios if s.status == "skip")


def test_replace_all_runs_on_a_layer_that_declares_no_feature(clean_run: RunResult) -> None:
    status = {s.id: s.status for s in clean_run.scenarios}
    assert status["edit/replace-all-literal"] == "pass"
    assert status["edit/behaviour/replace-all-templates-lf"] == "pass"


# bug → scenarios that must fail with it (each cites edit.4); more may fail, all citing edit.4
PLANTED = {
    "replace-first": {"edit/replace-all/non-overlapping", "edit/replace-all/multiline", "edit/replace-all/crlf",
                      "edit/replace-all-literal", "edit/behaviour/replace-all-templates-lf"},
    "regex-template": {"edit/behaviour/replace-all-templates-lf", "edit/behaviour/replace-all-templates-crlf",
                       "edit/behaviour/replace-all-templates-cr"},
}


@pytest.mark.parametrize("bug", sorted(PLANTED))
def test_a_planted_replace_all_bug_fails_the_gate_on_the_edit4_scenarios(
        bug: str, clean_run: RunResult, monkeypatch: pytest.MonkeyPatch) -> None:
    edit_dir = REPO / "scenarios" / "edit"
    run = _run([edit_dir], bug, monkeypatch)
    assert run.exit_code == 1
    passed_clean = {s.id for s in clean_run.scenarios if s.status == "pass"}
    newly = {s.id for s in run.scenarios if s.status == "fail" and s.id in passed_clean}
    assert PLANTED[bug] <= newly, PLANTED[bug] - newly
    spec = {s.id: s.spec for s in load_corpus([edit_dir])}
    assert all("edit.4" in spec[i] for i in newly), {i: spec[i] for i in newly}
    # the failure names the rule and shows the bytes on disk that differ from the literal replacement
    messages = _failing_steps(run)
    failure = {s.id: s.failure_text for s in run.scenarios}
    for sid in PLANTED[bug]:
        text = "\n".join(m for (i, _), m in messages.items() if i == sid)
        assert "content differs" in text, (sid, text)
        assert failure[sid].startswith("spec: ") and "edit.4" in failure[sid].splitlines()[0], failure[sid]
