"""From a sweep's state to the report: every behaviour change (tool, the last release without it,
the first with it, the scenarios and fuzz classes that show it, the changelog entries of the
releases in between, whether one plausibly explains it), the changelog's tool entries no change
explains ("not observed"), the reviewed history checked against the sweep, and patch survival.
Pure functions of the state: a merged state gives the same report as one sweep.

**Changes.** For each scenario, the releases where it ran (and did not hit an infrastructure
error) in version order: wherever two consecutive ones disagree on its outcome, the scenario
changed between them, on the tool of the first step that differs. A release where a scenario gave
two outcomes (the sweep runs each changed scenario twice at both ends of its change) is *unstable*
for that scenario and stepped over, as a release that does not run is. Bisection makes them
neighbours among the releases that load, so ``last_release_without`` and ``first_release`` are
exact up to the releases between them that could not be run, which the change names. The
fuzzer's steady disagreement classes between two neighbours add changes (or evidence) per tool.
Changes of one tool over the same interval are one change.

**Listed.** A change is listed when an entry of a changelog version in its interval
(``last_release_without`` < v <= ``first_release``, published or not) is a tool entry about its
tool, or about argument validation when a side of the change was a validation error
(``harness.releases.changelog``); otherwise it is flagged *unlisted*.

**Patch survival.** For every toggle of the reference's patch catalogue and every release, from
the scenarios that pin the toggle (``patches: {toggle: on|off}``) and those that pin a contract the
wrapper relies on (tag ``wrapper-contract``, the result texts, raised-versus-returned errors and
details fields of the tool the toggle patches), at that release:

- *adopted*: every ``on`` pin that ran passes — upstream now behaves as the patch makes it;
- *diverged*: ``on`` pins split, or an ``off`` pin fails with no broken contract — upstream changed
  the same behaviour a third way;
- *needed*: no ``on`` pin passes and the ``off`` pins pass — upstream still behaves as without it;
- *wrapper broken*: a contract scenario of the toggle's tool fails, and the toggle is a wrapper
  toggle or its ``off`` pins fail too;
- *untested*: nothing pins it on this surface, or the release does not install or load.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.model.results import FAIL, PASS, SKIP
from harness.releases.changelog import (
    VALIDATION,
    Entry,
    entries_between,
    explaining,
    is_tool_entry,
    tools_of,
)
from harness.releases.history import HistoryRow, entry_key
from harness.releases.records import CONTRACT_TAG, FuzzClass, Outcome, ReleaseState, StepOutcome, SweepState
from harness.releases.versions import parse_version
from tools_impl.server.patch_catalogue import PatchEntry

ADOPTED, DIVERGED, NEEDED, WRAPPER_BROKEN, UNTESTED = "adopted", "diverged", "needed", "wrapper broken", "untested"
VERDICTS = (NEEDED, ADOPTED, DIVERGED, WRAPPER_BROKEN, UNTESTED)
SUMMARY_CHARS = 90
MALFORMED = "malformed-args"  # the fuzzer's input family of arguments validation should refuse


def _v(version: str) -> tuple[int, int, int]:
    return parse_version(version)


@dataclass(frozen=True)
class ScenarioChange:
    scenario: str
    step: str
    tool: str
    last_without: str
    first: str
    before: str
    after: str
    validation: bool

    def to_json(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "step": self.step, "before": self.before, "after": self.after}


@dataclass
class Change:
    tool: str
    last_release_without: str
    first_release: str
    between: list[ReleaseState] = field(default_factory=list)
    scenarios: list[ScenarioChange] = field(default_factory=list)
    fuzz_classes: list[FuzzClass] = field(default_factory=list)
    changelog_entries: list[Entry] = field(default_factory=list)
    interval_versions: list[str] = field(default_factory=list)
    bisected: bool = True

    @property
    def id(self) -> str:
        return f"{self.tool}@{self.first_release}"

    @property
    def categories(self) -> tuple[str, ...]:
        validation = any(s.validation for s in self.scenarios) or \
            any(VALIDATION in c.key or MALFORMED in c.key for c in self.fuzz_classes)
        return (self.tool, VALIDATION) if validation else (self.tool,)

    @property
    def listed(self) -> bool:
        return bool(self.changelog_entries)

    def between_text(self) -> str:
        return ", ".join(f"{r.version} {r.state}" for r in self.between)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "tool": self.tool, "first_release": self.first_release,
            "last_release_without": self.last_release_without, "bisected": self.bisected,
            "releases_between": [r.to_json() for r in self.between],
            "scenarios": sorted({s.scenario for s in self.scenarios}),
            "scenario_steps": [s.to_json() for s in self.scenarios],
            "fuzz_classes": [c.to_json() for c in self.fuzz_classes],
            "changelog_versions": self.interval_versions,
            "changelog_entries": [{"version": e.version, "text": e.summary, "issues": list(e.issues),
                                   "key": entry_key(e)} for e in self.changelog_entries],
            "listed": self.listed,
        }


@dataclass(frozen=True)
class NotObserved:
    entry: Entry
    reason: str
    unobservable: bool

    def to_json(self) -> dict[str, Any]:
        return {"version": self.entry.version, "key": entry_key(self.entry), "tools": list(tools_of(self.entry)),
                "text": self.entry.summary, "reason": self.reason, "not_observable": self.unobservable}


@dataclass(frozen=True)
class HistoryCheck:
    """One reviewed history row that names scenarios or fuzz classes, against the sweep."""

    row: HistoryRow
    reproduced: bool
    change: str  # the change id that reproduces it
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"key": self.row.key, "tool": self.row.tool, "scenarios": list(self.row.scenarios),
                "fuzz_classes": list(self.row.fuzz_classes), "reproduced": self.reproduced, "change": self.change,
                "detail": self.detail}


@dataclass(frozen=True)
class SurvivalCell:
    version: str
    verdict: str
    evidence: str
    note: str = ""

    def to_json(self) -> dict[str, str]:
        out = {"release": self.version, "verdict": self.verdict, "evidence": self.evidence}
        if self.note:
            out["note"] = self.note
        return out


@dataclass(frozen=True)
class Survival:
    toggle: str
    spec: str
    layer: str
    tool: str
    description: str
    cells: tuple[SurvivalCell, ...]

    def runs(self) -> list[tuple[str, str, SurvivalCell]]:
        """Consecutive releases with the same verdict and evidence: (first, last, cell)."""
        out: list[tuple[str, str, SurvivalCell]] = []
        for c in self.cells:
            if out and out[-1][2].verdict == c.verdict and out[-1][2].evidence == c.evidence:
                out[-1] = (out[-1][0], c.version, out[-1][2])
            else:
                out.append((c.version, c.version, c))
        return out

    def to_json(self) -> dict[str, Any]:
        return {"toggle": self.toggle, "spec": self.spec, "layer": self.layer, "tool": self.tool,
                "description": self.description, "releases": [c.to_json() for c in self.cells]}


@dataclass
class Report:
    state: SweepState
    changes: list[Change]
    not_observed: list[NotObserved]
    history: list[HistoryCheck]
    survival: list[Survival]

    @property
    def releases(self) -> list[ReleaseState]:
        return [self.state.releases.get(v, ReleaseState(v, "not probed")) for v in self.state.published]

    def to_json(self) -> dict[str, Any]:
        st = self.state
        return {
            "impl_template": st.impl_template, "packages": list(st.packages), "from": st.range_from, "to": st.range_to,
            "releases": [r.to_json() for r in self.releases],
            "changes": [c.to_json() for c in self.changes],
            "not_observed": [n.to_json() for n in self.not_observed],
            "history": [h.to_json() for h in self.history],
            "patch_survival": [s.to_json() for s in self.survival],
            "unstable": {sid: vs for sid, vs in sorted(st.unstable.items())},
            "stats": st.stats, "shards": st.shards,
            "state": st.to_json(),
        }


def _summary(step: StepOutcome | None, outcome: Outcome) -> str:
    if outcome.status == SKIP:
        return f"skip ({outcome.reason[:SUMMARY_CHARS]})"
    if step is None:
        return outcome.status
    what = step.status
    if step.kind:
        observed = step.observed.replace("\n", "⏎")
        if len(observed) > SUMMARY_CHARS:
            observed = observed[:SUMMARY_CHARS - 1] + "…"
        what += f" [{step.kind}] {observed!r}" if observed else f" [{step.kind}]"
    elif step.messages:
        what += f": {step.messages[0].splitlines()[0][:SUMMARY_CHARS]}"
    return what


def _first_difference(a: Outcome, b: Outcome) -> tuple[StepOutcome | None, StepOutcome | None]:
    before = {s.id: s for s in a.steps}
    after = {s.id: s for s in b.steps}
    order = [s.id for s in b.steps] + [s.id for s in a.steps if s.id not in after]
    for sid in order:
        x, y = before.get(sid), after.get(sid)
        if x is None or y is None or (x.status, x.messages) != (y.status, y.messages):
            return x, y
    return (a.steps[0] if a.steps else None), (b.steps[0] if b.steps else None)


def scenario_changes(state: SweepState) -> list[ScenarioChange]:
    usable = state.usable()
    out = []
    for sid, info in sorted(state.scenarios.items()):
        wobbly = set(state.unstable.get(sid, ()))  # releases where it disagreed with itself: stepped over
        probed = [(v, state.outcomes[v][sid]) for v in usable
                  if sid in state.outcomes.get(v, {}) and not state.outcomes[v][sid].error and v not in wobbly]
        for (a, oa), (b, ob) in itertools.pairwise(probed):
            if oa.signature() == ob.signature():
                continue
            x, y = _first_difference(oa, ob)
            step = y or x
            tool = (step.tool if step and step.tool else "") or (info.tools[0] if info.tools else "?")
            kinds = {s.kind for s in (x, y) if s is not None}
            out.append(ScenarioChange(sid, step.id if step else "", tool, a, b, _summary(x, oa), _summary(y, ob),
                                      "error:validation" in kinds))
    return out


def find_changes(state: SweepState) -> list[Change]:
    usable = state.usable()
    index = {v: i for i, v in enumerate(usable)}
    groups: dict[tuple[str, str, str], Change] = {}

    def group(tool: str, a: str, b: str) -> Change:
        key = (tool, a, b)
        if key not in groups:
            between = [state.releases.get(v, ReleaseState(v, "not probed")) for v in state.published
                       if _v(a) < _v(v) < _v(b)]
            groups[key] = Change(tool, a, b, between=between, bisected=index[b] - index[a] == 1)
        return groups[key]

    for sc in scenario_changes(state):
        group(sc.tool, sc.last_without, sc.first).scenarios.append(sc)
    for pair in state.fuzz.values():
        if pair.older not in index or pair.newer not in index:
            continue
        for cls in pair.classes:
            if cls.steady:
                group(cls.tool or "?", pair.older, pair.newer).fuzz_classes.append(cls)
    changes = sorted(groups.values(), key=lambda c: (_v(c.first_release), c.tool))
    for c in changes:
        entries = entries_between(state.changelog, c.last_release_without, c.first_release)
        c.interval_versions = sorted({e.version for e in entries} | {v for v in state.changelog
                                     if _v(c.last_release_without) < _v(v) <= _v(c.first_release)}, key=_v)
        c.changelog_entries = explaining(entries, c.categories)
    return changes


def explained(changes: Sequence[Change], entry: Entry) -> bool:
    cats = set(tools_of(entry))
    return any(cats & set(c.categories) and _v(c.last_release_without) < _v(entry.version) <= _v(c.first_release)
               for c in changes)


def find_not_observed(state: SweepState, changes: Sequence[Change],
                      history: Mapping[str, HistoryRow]) -> list[NotObserved]:
    usable = state.usable()
    if len(usable) < 2:
        return []
    out = []
    for e in entries_between(state.changelog, usable[0], usable[-1]):
        if not is_tool_entry(e) or explained(changes, e):
            continue
        row = history.get(entry_key(e))
        if row is not None and row.note:
            out.append(NotObserved(e, row.note, row.unobservable))
        else:
            out.append(NotObserved(e, "no scenario or fuzz class of the sweep changed in its interval", False))
    return out


def check_history(state: SweepState, changes: Sequence[Change], rows: Sequence[HistoryRow]) -> list[HistoryCheck]:
    """Each history row that names scenarios or fuzz classes: reproduced when one of them changed
    between two releases around the entry's version (the entry ships in the first published
    release at or after it)."""
    usable = state.usable()
    out = []
    for row in rows:
        if not row.pinned:
            continue
        if not usable or not (_v(usable[0]) < _v(row.version) <= _v(usable[-1])):
            out.append(HistoryCheck(row, False, "", "outside the releases that load in this range"))
            continue
        hit = None
        for c in changes:
            if not (_v(c.last_release_without) < _v(row.version) <= _v(c.first_release)):
                continue
            if {s.scenario for s in c.scenarios} & set(row.scenarios):
                hit = (c, "scenario")
                break
            if any(cls.key.startswith(f) or f in cls.key for cls in c.fuzz_classes for f in row.fuzz_classes):
                hit = (c, "fuzz class")
                break
        if hit:
            out.append(HistoryCheck(row, True, hit[0].id, f"{hit[1]} changed between {hit[0].last_release_without} "
                                                           f"and {hit[0].first_release}"))
        else:
            out.append(HistoryCheck(row, False, "", "none of its scenarios or fuzz classes changed around "
                                                    f"{row.version}"))
    return out


def toggle_tool(entry: PatchEntry) -> str:
    return entry.seams[0].split(".", 1)[0] if entry.seams else entry.package


def survival_cell(state: SweepState, entry: PatchEntry, version: str) -> SurvivalCell:
    release = state.releases.get(version)
    if release is None or not release.usable:
        why = f"{release.state}: {release.detail}" if release else "not probed by this sweep"
        return SurvivalCell(version, UNTESTED, f"{version} {why}")
    runs = state.outcomes.get(version, {})
    tool = toggle_tool(entry)
    on_pass: list[str] = []
    on_fail: list[str] = []
    off_pass: list[str] = []
    off_fail: list[str] = []
    skipped: list[tuple[str, str]] = []
    for sid, info in sorted(state.scenarios.items()):
        pin = dict(info.patches).get(entry.name)
        if pin is None or sid not in runs:
            continue
        if release.surfaces and info.surface not in release.surfaces:
            # a pin written on another surface reaches the release mapped, where the wording that
            # tells the patch's presence is another dialect's: it judges behaviour, not the patch
            continue
        o = runs[sid]
        if o.status in (SKIP, "error"):
            skipped.append((sid, o.reason or o.message))
        elif o.status == PASS:
            (on_pass if pin == "on" else off_pass).append(sid)
        elif o.status == FAIL:
            (on_fail if pin == "on" else off_fail).append(sid)
    contracts = [sid for sid, info in sorted(state.scenarios.items())
                 if CONTRACT_TAG in info.tags and info.tools and info.tools[0] == tool
                 and (not release.surfaces or info.surface in release.surfaces)
                 and sid in runs and runs[sid].status == FAIL]
    wrapper = entry.surface == "wrapper"
    if wrapper and contracts:
        state_of_pins = ADOPTED if on_pass and not on_fail else NEEDED if off_pass and not off_fail else ""
        note = f"pins say {state_of_pins}" if state_of_pins else "its pins do not run on this surface"
        return SurvivalCell(version, WRAPPER_BROKEN, contracts[0], note)
    if on_pass and not on_fail:
        return SurvivalCell(version, ADOPTED, on_pass[0])
    if on_pass and on_fail:
        return SurvivalCell(version, DIVERGED, on_fail[0], f"{on_pass[0]} passes")
    if off_fail:
        if contracts:
            return SurvivalCell(version, WRAPPER_BROKEN, contracts[0], f"{off_fail[0]} fails too")
        return SurvivalCell(version, DIVERGED, off_fail[0])
    if off_pass or on_fail:
        return SurvivalCell(version, NEEDED, (off_pass or on_fail)[0])
    if skipped:
        reasons = sorted({r.split(";", 1)[0] for _, r in skipped})
        return SurvivalCell(version, UNTESTED, f"{len(skipped)} pinned scenario(s) skipped: {'; '.join(reasons)}")
    return SurvivalCell(version, UNTESTED, "no scenario pins it")


def patch_survival(state: SweepState, catalogue: Sequence[PatchEntry]) -> list[Survival]:
    return [Survival(e.name, e.spec_id, e.surface, toggle_tool(e), e.description,
                     tuple(survival_cell(state, e, v) for v in state.published)) for e in catalogue]


def analyse(state: SweepState, catalogue: Sequence[PatchEntry], history: Sequence[HistoryRow] = ()) -> Report:
    changes = find_changes(state)
    by_key = {row.key: row for row in history}
    return Report(state, changes, find_not_observed(state, changes, by_key), check_history(state, changes, history),
                  patch_survival(state, catalogue))
