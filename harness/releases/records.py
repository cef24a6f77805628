"""What a release sweep collects, as plain data with a JSON form: per release its state
(installable, loads), per (release, scenario) the outcome of one run, per pair of neighbouring
releases the differential fuzzer's disagreement classes, and the merged changelog. The state of a
sweep (``SweepState``) is everything the report is computed from: shards write it, ``--merge``
joins several, and the cache stores its parts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.model.results import ERROR, SKIP, ScenarioResult, StepResult
from harness.model.scenario import Scenario
from harness.releases.changelog import Entry
from harness.releases.versions import parse_version

STATE_FORMAT = 1
OK = "ok"
NOT_INSTALLABLE = "not installable"
DOES_NOT_LOAD = "does not load"
RELEASE_STATES = (OK, NOT_INSTALLABLE, DOES_NOT_LOAD)
OBSERVED_CHARS = 200
# scenarios that pin a contract the MiniMax wrapper relies on (result texts, raised versus returned
# errors, details fields): run at every release, they decide "wrapper broken" in patch survival
CONTRACT_TAG = "wrapper-contract"


@dataclass(frozen=True)
class ReleaseState:
    """One published release: ``ok`` (installs and answers ``hello``), ``not installable`` or
    ``does not load``, with the reason (the missing package, the loader's message)."""

    version: str
    state: str
    detail: str = ""
    surfaces: tuple[str, ...] = ()  # the surfaces its hello speaks (``ok`` releases)

    @property
    def usable(self) -> bool:
        return self.state == OK

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"version": self.version, "state": self.state, "detail": self.detail}
        if self.surfaces:
            out["surfaces"] = list(self.surfaces)
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> ReleaseState:
        return cls(str(obj["version"]), str(obj["state"]), str(obj.get("detail", "")),
                   tuple(str(s) for s in obj.get("surfaces", ())))


@dataclass(frozen=True)
class StepOutcome:
    """One step as a release ran it: its status and mismatches (what the scenario pins), the
    tool it called, and what came back in short (``kind``: ``result``, ``result:isError``,
    ``error:tool``, ``error:validation``…; ``observed``: the first characters of the text or error)."""

    id: str
    status: str
    tool: str = ""
    messages: tuple[str, ...] = ()
    kind: str = ""
    observed: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "status": self.status}
        for key, value in (("tool", self.tool), ("kind", self.kind), ("observed", self.observed)):
            if value:
                out[key] = value
        if self.messages:
            out["messages"] = list(self.messages)
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> StepOutcome:
        return cls(str(obj["id"]), str(obj["status"]), str(obj.get("tool", "")), tuple(obj.get("messages", ())),
                   str(obj.get("kind", "")), str(obj.get("observed", "")))


@dataclass(frozen=True)
class Outcome:
    """One scenario as one release ran it."""

    status: str
    steps: tuple[StepOutcome, ...] = ()
    reason: str = ""  # why it skipped
    message: str = ""  # the infrastructure error, for ``error``

    @property
    def error(self) -> bool:
        return self.status == ERROR

    def signature(self) -> str:
        """What the scenario pins, as one comparable string: its status, each step's status and
        mismatches (for a skip, the reason). Two releases with different signatures behave
        differently on this scenario."""
        if self.status == SKIP:
            return json.dumps([SKIP, self.reason])
        return json.dumps([self.status, [[s.id, s.status, list(s.messages)] for s in self.steps]], ensure_ascii=False)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status, "steps": [s.to_json() for s in self.steps]}
        if self.reason:
            out["reason"] = self.reason
        if self.message:
            out["message"] = self.message
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Outcome:
        return cls(str(obj["status"]), tuple(StepOutcome.from_json(s) for s in obj.get("steps", ())),
                   str(obj.get("reason", "")), str(obj.get("message", "")))

    def to_result(self, sid: str, path: str = "") -> ScenarioResult:
        """Back to a ``ScenarioResult`` (what ``baseline update`` reads)."""
        steps = tuple(StepResult(s.id, s.status, s.messages) for s in self.steps)
        return ScenarioResult(sid, self.status, path=path, steps=steps, message=self.message, reason=self.reason)


def _kind(observation: Mapping[str, Any] | None) -> tuple[str, str]:
    if not observation:
        return "", ""
    if observation.get("status") == "result":
        kind = "result:isError" if observation.get("is_error") else "result"
        text = observation.get("text")
    else:
        kind = f"error:{observation.get('error_kind') or 'tool'}"
        text = observation.get("error")
    return kind, (text if isinstance(text, str) else "")[:OBSERVED_CHARS]


def outcome_of(result: ScenarioResult, scenario: Scenario) -> Outcome:
    tools = {s.id: (s.tool or s.op or "") for s in scenario.steps}
    last_tool = next((s.tool for s in reversed(scenario.steps) if s.tool), "")
    steps = []
    for st in result.steps:
        kind, observed = _kind(st.observation)
        steps.append(StepOutcome(st.id, st.status, tools.get(st.id, last_tool), st.messages, kind, observed))
    message = result.message if result.status == ERROR else ""
    return Outcome(result.status, tuple(steps), result.reason if result.status == SKIP else "", message)


@dataclass(frozen=True)
class ScenarioInfo:
    """What the report needs to know of a scenario: its tools (in step order), tags, patch pins,
    and the surface its calls are written on."""

    id: str
    path: str = ""
    title: str = ""
    tools: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    patches: tuple[tuple[str, str], ...] = ()
    surface: str = "minimax"

    @classmethod
    def of(cls, s: Scenario) -> ScenarioInfo:
        tools = tuple(dict.fromkeys(st.tool for st in s.steps if st.tool))
        return cls(s.id, s.path, s.title, tools, s.tags, s.patches, s.surface)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "path": self.path, "title": self.title, "tools": list(self.tools),
                "tags": list(self.tags), "patches": {name: state for name, state in self.patches},
                "surface": self.surface}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> ScenarioInfo:
        patches = obj.get("patches", {})
        return cls(str(obj["id"]), str(obj.get("path", "")), str(obj.get("title", "")), tuple(obj.get("tools", ())),
                   tuple(obj.get("tags", ())), tuple((str(k), str(v)) for k, v in patches.items()),
                   str(obj.get("surface", "minimax")))


@dataclass(frozen=True)
class FuzzClass:
    """One disagreement class of the fuzzer between two neighbouring releases. ``noise``: the class
    also appears when the older release is fuzzed against itself on the same cases, so it is about
    the run (paths, timing), not about a change between the releases."""

    key: str
    tool: str
    count: int
    flaky: int = 0
    example: str = ""  # the call, in short
    cases: tuple[int, ...] = ()
    noise: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"class": self.key, "tool": self.tool, "count": self.count, "flaky": self.flaky,
                               "example": self.example, "cases": list(self.cases)}
        if self.noise:
            out["noise"] = True
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> FuzzClass:
        return cls(str(obj["class"]), str(obj.get("tool", "")), int(obj.get("count", 0)), int(obj.get("flaky", 0)),
                   str(obj.get("example", "")), tuple(int(c) for c in obj.get("cases", ())), bool(obj.get("noise")))

    @property
    def steady(self) -> bool:
        """A change between the releases: not every case agreed when re-run, and it is not noise."""
        return self.count > self.flaky and not self.noise


@dataclass(frozen=True)
class FuzzPair:
    """The fuzzer between ``older`` (the oracle) and ``newer``: calls compared, classes found, or
    why it could not run."""

    older: str
    newer: str
    n: int
    seed: int
    total: int = 0
    agreed: int = 0
    classes: tuple[FuzzClass, ...] = ()
    error: str = ""

    @property
    def key(self) -> str:
        return f"{self.older}..{self.newer}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"older": self.older, "newer": self.newer, "n": self.n, "seed": self.seed,
                               "total": self.total, "agreed": self.agreed,
                               "classes": [c.to_json() for c in self.classes]}
        if self.error:
            out["error"] = self.error
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> FuzzPair:
        return cls(str(obj["older"]), str(obj["newer"]), int(obj.get("n", 0)), int(obj.get("seed", 0)),
                   int(obj.get("total", 0)), int(obj.get("agreed", 0)),
                   tuple(FuzzClass.from_json(c) for c in obj.get("classes", ())), str(obj.get("error", "")))


def entry_to_json(e: Entry) -> dict[str, str]:
    return {"version": e.version, "section": e.section, "text": e.text}


def entry_from_json(obj: Mapping[str, Any]) -> Entry:
    return Entry(str(obj["version"]), str(obj.get("section", "")), str(obj["text"]))


@dataclass
class SweepState:
    """Everything one sweep (or one shard of it) found. ``releases`` lists every published
    release in range (in version order) with its state where this sweep learnt it;
    ``outcomes[version][scenario id]`` the runs; ``fuzz`` the neighbour pairs;
    ``changelog_sources`` which tarball each changelog version's text was read from."""

    impl_template: str
    packages: tuple[str, ...]
    range_from: str
    range_to: str
    published: list[str] = field(default_factory=list)  # every release in range, from the registry
    releases: dict[str, ReleaseState] = field(default_factory=dict)
    scenarios: dict[str, ScenarioInfo] = field(default_factory=dict)
    outcomes: dict[str, dict[str, Outcome]] = field(default_factory=dict)
    fuzz: dict[str, FuzzPair] = field(default_factory=dict)
    changelog: dict[str, list[Entry]] = field(default_factory=dict)
    changelog_sources: dict[str, str] = field(default_factory=dict)
    corpus_hash: str = ""
    shards: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    # scenario id → releases where running it again gave another outcome (the scenario is not judged)
    unstable: dict[str, list[str]] = field(default_factory=dict)

    def usable(self) -> list[str]:
        """The releases that install and load, in version order."""
        return [v for v in self.published if v in self.releases and self.releases[v].usable]

    def record(self, version: str, sid: str, outcome: Outcome) -> None:
        self.outcomes.setdefault(version, {})[sid] = outcome

    def to_json(self) -> dict[str, Any]:
        return {
            "format": STATE_FORMAT, "impl_template": self.impl_template, "packages": list(self.packages),
            "from": self.range_from, "to": self.range_to, "published": self.published,
            "releases": [self.releases[v].to_json() for v in sorted(self.releases, key=parse_version)],
            "scenarios": [s.to_json() for s in sorted(self.scenarios.values(), key=lambda s: s.id)],
            "outcomes": {v: {sid: o.to_json() for sid, o in sorted(runs.items())}
                         for v, runs in sorted(self.outcomes.items(), key=lambda kv: parse_version(kv[0]))},
            "fuzz": [p.to_json() for p in sorted(self.fuzz.values(), key=lambda p: parse_version(p.older))],
            "changelog": {v: {"source": self.changelog_sources.get(v, ""),
                              "entries": [entry_to_json(e) for e in es]}
                          for v, es in sorted(self.changelog.items(), key=lambda kv: parse_version(kv[0]))},
            "corpus_hash": self.corpus_hash, "shards": self.shards, "stats": self.stats,
            "unstable": {sid: sorted(vs, key=parse_version) for sid, vs in sorted(self.unstable.items())},
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> SweepState:
        if obj.get("format") != STATE_FORMAT:
            raise ValueError(f"not a toolproof releases state of format {STATE_FORMAT}")
        st = cls(str(obj["impl_template"]), tuple(obj.get("packages", ())), str(obj.get("from", "")),
                 str(obj.get("to", "")), list(obj.get("published", [])))
        st.releases = {r["version"]: ReleaseState.from_json(r) for r in obj.get("releases", ())}
        st.scenarios = {s["id"]: ScenarioInfo.from_json(s) for s in obj.get("scenarios", ())}
        st.outcomes = {v: {sid: Outcome.from_json(o) for sid, o in runs.items()}
                       for v, runs in obj.get("outcomes", {}).items()}
        st.fuzz = {p.key: p for p in (FuzzPair.from_json(x) for x in obj.get("fuzz", ()))}
        for v, item in obj.get("changelog", {}).items():
            st.changelog[v] = [entry_from_json(e) for e in item.get("entries", ())]
            if item.get("source"):
                st.changelog_sources[v] = str(item["source"])
        st.corpus_hash = str(obj.get("corpus_hash", ""))
        st.shards = [str(s) for s in obj.get("shards", ())]
        st.stats = dict(obj.get("stats", {}))
        st.unstable = {str(k): [str(v) for v in vs] for k, vs in obj.get("unstable", {}).items()}
        return st


def merge_states(states: Sequence[SweepState]) -> tuple[SweepState, list[str]]:
    """Shards (or sweeps) of one range joined into one state, and warnings: a release or a run two
    shards saw differently keeps the first one seen."""
    if not states:
        raise ValueError("nothing to merge")
    first = states[0]
    warnings: list[str] = []
    out = SweepState(first.impl_template, first.packages, first.range_from, first.range_to,
                     sorted(set().union(*(s.published for s in states)), key=parse_version))
    for st in states:
        if st.impl_template != first.impl_template:
            warnings.append(f"merging sweeps of different templates: {first.impl_template} and {st.impl_template}")
        if st.corpus_hash != first.corpus_hash:
            warnings.append("merging sweeps of different corpora (their scenario files differ); "
                            "runs are kept per scenario as each shard saw them")
        for v, rs in st.releases.items():
            have = out.releases.get(v)
            if have is None:
                out.releases[v] = rs
            elif have.state != rs.state:
                warnings.append(f"{v}: one shard found it {have.state}, another {rs.state}; kept {have.state}")
        out.scenarios.update(st.scenarios)
        for v, runs in st.outcomes.items():
            mine = out.outcomes.setdefault(v, {})
            for sid, o in runs.items():
                if sid in mine and mine[sid].signature() != o.signature() and not (mine[sid].error or o.error):
                    warnings.append(f"{v} {sid}: two shards saw different outcomes; kept the first")
                if sid not in mine or mine[sid].error:
                    mine[sid] = o
        for key, pair in st.fuzz.items():
            if key not in out.fuzz or out.fuzz[key].error:
                out.fuzz[key] = pair
        for v, entries in st.changelog.items():
            source = st.changelog_sources.get(v, "")
            mine_source = out.changelog_sources.get(v, "")
            if v not in out.changelog or (source and (not mine_source or parse_version(source) > parse_version(mine_source))):
                out.changelog[v] = entries
                if source:
                    out.changelog_sources[v] = source
        out.shards.extend(st.shards)
        for sid, versions in st.unstable.items():
            out.unstable[sid] = sorted(set(out.unstable.get(sid, [])) | set(versions), key=parse_version)
        for k, value in st.stats.items():
            if isinstance(value, (int, float)) and isinstance(out.stats.get(k, 0), (int, float)):
                out.stats[k] = out.stats.get(k, 0) + value
    out.corpus_hash = first.corpus_hash
    return out, warnings


def scenario_infos(scenarios: Iterable[Scenario]) -> dict[str, ScenarioInfo]:
    return {s.id: ScenarioInfo.of(s) for s in scenarios}
