"""The sweep: every published release in a range installed and probed, the corpus run where it
tells something, the differential fuzzer between neighbours, all of it cached.

What runs where:

- **anchors** (the first and last release of the range, or of a shard's segment, that load): the
  whole applicable corpus;
- **every release**: the scenarios that pin a patch toggle (``patches:``) or a contract the
  wrapper relies on (tag ``wrapper-contract``), for the patch-survival table;
- **bisection**: for each scenario whose outcome differs between two probed releases that are not
  neighbours, the release halfway between, until each change sits between two neighbouring
  releases that load (``bisection_probes``): about log2(n) runs of that one scenario per change,
  never a full sweep per release. A change that reverts between two probes is not seen by the
  corpus (the fuzzer, which runs between every pair of neighbours, may see it);
- **confirmation**: each scenario that changed runs once more at both ends of its change; where
  it disagrees with itself it is *unstable* at that release, which is then stepped over for that
  scenario (and bisection goes on around it);
- **fuzz**: ``toolproof fuzz --impl NEWER --oracle OLDER`` between neighbouring releases that load,
  through its command line (its JSON report is all this module reads); the cases of each
  disagreement class run again with the older release against itself, and a class that shows up
  there too is noise (paths, timing), not a change.

Releases that do not install or do not load are recorded with the reason, and every step above
steps over them. With ``--shard I/N`` the range is cut into N segments that share their boundary
release (a shard whose boundary does not load extends to the next one that does), so the shards'
anchors meet and ``merge_states`` joins them into the state one sweep would have found.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import itertools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import harness.fuzz
from harness import __version__
from harness.errors import HarnessError
from harness.model.features import DeclarationOverride
from harness.model.results import ERROR, SKIP
from harness.model.scenario import Scenario
from harness.releases.analysis import scenario_changes
from harness.releases.cache import SweepCache, digest
from harness.releases.changelog import merge_changelogs, parse_changelog
from harness.releases.launch import Launcher
from harness.releases.records import (
    CONTRACT_TAG,
    FuzzClass,
    FuzzPair,
    Outcome,
    ReleaseState,
    SweepState,
    outcome_of,
    scenario_infos,
)
from harness.releases.versions import ImplTemplate, Registry, parse_version, published, select_range
from harness.run.runner import Runner
from harness.run.snapshots import SnapshotStore

# what each release is judged as: its own declaration, but every patch pin runs (docs/cli.md)
EVERY_PIN = DeclarationOverride(source="toolproof releases", every_pin=True)

DEFAULT_FUZZ_N = 60
DEFAULT_FUZZ_SEED = 1
FUZZ_TIMEOUT_PER_CALL_S = 3.0
FUZZ_TIMEOUT_BASE_S = 180.0
Log = Callable[[str], None]


def scenario_key(s: Scenario, launch_key: str) -> str:
    """A scenario's cache key: its parsed content (not where the file is), the driver and tools
    that run it, and this toolproof's version."""
    return digest(s.id, repr(dataclasses.replace(s, path="", line=0)), launch_key, __version__)


def corpus_hash(scenarios: Sequence[Scenario]) -> str:
    return digest(*(repr(dataclasses.replace(s, path="", line=0)) for s in sorted(scenarios, key=lambda s: s.id)))


def every_release_set(scenarios: Iterable[Scenario], surfaces: Iterable[str] = ()) -> list[Scenario]:
    """The scenarios run at every release: patch pins and wrapper contracts, written on a surface
    the releases speak when that is known (a pin mapped from another surface judges behaviour, not
    the patch: harness/releases/analysis.py)."""
    spoken = set(surfaces)
    return [s for s in scenarios if (s.patches or CONTRACT_TAG in s.tags) and (not spoken or s.surface in spoken)]


def foreign_pin(scenario: Scenario, surfaces: Sequence[str]) -> str:
    """Why a scenario does not run on a release, or "": one pinning a patch on, written on a surface
    the release does not speak, is skipped as `toolproof run` skips it there (the release declares
    the patch absent; mapped, the pin would judge behaviour alone, and a timing-sensitive MiniMax
    pin would pass for a behaviour change)."""
    on = [name for name, state in scenario.patches if state == "on"]
    if on and surfaces and scenario.surface not in surfaces:
        return (f"pins patch {on[0]} on, written on the {scenario.surface} surface; the release speaks "
                f"{', '.join(surfaces)}")
    return ""


def segment(count: int, shard: tuple[int, int] | None) -> tuple[int, int]:
    """Indexes (first, last, inclusive) of shard I of N over ``count`` releases; neighbouring
    segments share their boundary release."""
    if count == 0:
        return (0, -1)
    if shard is None:
        return (0, count - 1)
    i, n = shard
    bounds = [round(k * (count - 1) / n) for k in range(n + 1)]
    return (bounds[i - 1], bounds[i])


def bisection_probes(usable: Sequence[str], seen: Mapping[str, Mapping[str, str | None]]) -> dict[str, set[str]]:
    """The next round of bisection: {release: scenario ids to run there}. ``seen[sid][version]`` is
    the scenario's signature at a probed release (None: it could not run there). Between two
    probed releases that are not neighbours in ``usable`` and disagree, the unprobed release
    nearest the middle is probed next."""
    index = {v: i for i, v in enumerate(usable)}
    out: dict[str, set[str]] = {}
    for sid, by_version in seen.items():
        probed = sorted((index[v], sig) for v, sig in by_version.items() if v in index and sig is not None)
        for (i, a), (j, b) in itertools.pairwise(probed):
            if a == b or j - i <= 1:
                continue
            mid = (i + j) // 2
            for k in sorted(range(i + 1, j), key=lambda k: (abs(k - mid), k)):
                if usable[k] not in by_version:
                    out.setdefault(usable[k], set()).add(sid)
                    break
    return out


@dataclass
class SweepOptions:
    range_from: str | None = None
    range_to: str | None = None
    packages: tuple[str, ...] = ()
    jobs: int = 2
    shard: tuple[int, int] | None = None
    fuzz_n: int = DEFAULT_FUZZ_N
    fuzz_seed: int = DEFAULT_FUZZ_SEED
    fuzz: bool = True


class Sweep:
    """One sweep over a range (or one shard of it)."""

    def __init__(self, template: ImplTemplate, registry: Registry, launcher: Launcher, scenarios: Sequence[Scenario],
                 cache: SweepCache, options: SweepOptions, log: Log | None = None) -> None:
        self.template = template
        self.registry = registry
        self.launcher = launcher
        self.scenarios = {s.id: s for s in scenarios}
        self.cache = cache
        self.options = options
        self.log = log or (lambda _msg: None)
        self.launch_key = launcher.launch_key
        self.keys = {s.id: scenario_key(s, self.launch_key) for s in scenarios}
        self._lock = threading.Lock()
        self.snapshots = SnapshotStore(SnapshotStore.default_root())
        packages = options.packages or template.default_packages()
        self.state = SweepState(template.text, tuple(packages), options.range_from or "", options.range_to or "")
        self.state.scenarios = scenario_infos(scenarios)
        self.state.corpus_hash = corpus_hash(scenarios)
        self._confirmed: set[tuple[str, str]] = set()
        self.counts = {"scenario_runs": 0, "scenario_runs_cached": 0, "fuzz_pairs": 0, "fuzz_pairs_cached": 0,
                       "installs_probed": 0}

    # -- the whole sweep ----------------------------------------------------------------------
    def run(self) -> SweepState:
        t0 = time.monotonic()
        st = self.state
        if not st.packages:
            raise HarnessError("no npm package to list releases from: pass --package NAME with --impl-template")
        everything = published(self.registry, st.packages)
        st.published = select_range(everything, self.options.range_from, self.options.range_to)
        if not st.published:
            raise HarnessError(f"no published release of {', '.join(st.packages)} in the range "
                               f"{self.options.range_from or 'first'}..{self.options.range_to or 'last'}")
        st.range_from, st.range_to = st.published[0], st.published[-1]
        shard = self.options.shard
        st.shards = [f"{shard[0]}/{shard[1]}" if shard else "1/1"]
        first, last = segment(len(st.published), shard)
        window = st.published[first:last + 1]
        self.log(f"releases: {len(st.published)} published in {st.range_from}..{st.range_to}"
                 + (f"; shard {shard[0]}/{shard[1]}: {window[0]}..{window[-1]}" if shard and window else ""))
        self.probe_releases(window)
        # a boundary that does not load: extend to the next release that does (the next shard starts there)
        extra = last + 1
        while window and not st.releases[window[-1]].usable and extra < len(st.published):
            window.append(st.published[extra])
            self.probe_releases([st.published[extra]])
            extra += 1
        usable = [v for v in window if st.releases[v].usable]
        self.read_changelogs(window)
        t1 = time.monotonic()
        if usable:
            anchors = sorted({usable[0], usable[-1]}, key=parse_version)
            spoken = {surface for v in usable for surface in st.releases[v].surfaces}
            pinned = {s.id for s in every_release_set(self.scenarios.values(), spoken)}
            self.log(f"corpus: {len(self.scenarios)} scenarios at {', '.join(anchors)}; "
                     f"{len(pinned)} pinned ones at every release")
            first_round: dict[str, set[str]] = {v: set(self.scenarios) for v in anchors}
            for v in usable:
                first_round.setdefault(v, set()).update(pinned)
            self.run_batch(first_round)
            rounds = 0
            while True:  # bisect, confirm; a release found unstable is stepped over, so bisect again
                probes = bisection_probes(usable, self.seen(usable))
                if probes:
                    rounds += 1
                    runs = sum(len(s) for s in probes.values())
                    self.log(f"bisect round {rounds}: {runs} scenario run(s) at {len(probes)} release(s)")
                    self.run_batch(probes)
                elif not self.confirm_changes():
                    break
            self.counts["bisection_rounds"] = rounds
        t2 = time.monotonic()
        if self.options.fuzz and len(usable) > 1:
            self.fuzz_pairs(list(itertools.pairwise(usable)))
        t3 = time.monotonic()
        st.stats = {**self.counts, "releases_in_window": len(window), "releases_usable": len(usable),
                    "seconds_install_and_probe": round(t1 - t0, 1), "seconds_corpus": round(t2 - t1, 1),
                    "seconds_fuzz": round(t3 - t2, 1), "seconds_total": round(t3 - t0, 1),
                    "scenarios": len(self.scenarios)}
        return st

    # -- releases -----------------------------------------------------------------------------
    def probe_releases(self, versions: Sequence[str]) -> None:
        def one(version: str) -> ReleaseState:
            cached = self.cache.release_state(version)
            if cached is not None and cached.usable and not cached.surfaces:
                cached = None  # probed by an older toolproof, which did not record the surfaces
            if cached is not None:
                if cached.usable or cached.state != "not installable":
                    self.launcher.install(version)  # cheap when installed; makes the tarball readable
                return cached
            state = self.launcher.probe(version)
            self.cache.store_release_state(state)
            with self._lock:
                self.counts["installs_probed"] += 1
            return state

        for version, state in zip(versions, self._map(one, versions), strict=True):
            self.state.releases[version] = state
            if not state.usable:
                self.log(f"  {version}: {state.state}: {state.detail}")

    def read_changelogs(self, versions: Sequence[str]) -> None:
        sources = {}
        for v in versions:
            text = self.launcher.changelog_text(v, self.state.packages)
            if text is not None:
                sources[v] = parse_changelog(text)
        merged = merge_changelogs(sources)
        for version, entries in merged.items():
            source = max((s for s in sources if version in sources[s]), key=parse_version)
            self.state.changelog[version] = entries
            self.state.changelog_sources[version] = source

    # -- the corpus ---------------------------------------------------------------------------
    def seen(self, usable: Sequence[str]) -> dict[str, dict[str, str | None]]:
        out: dict[str, dict[str, str | None]] = {}
        for v in usable:
            for sid, o in self.state.outcomes.get(v, {}).items():
                wobbly = v in self.state.unstable.get(sid, ())
                out.setdefault(sid, {})[v] = None if o.error or wobbly else o.signature()
        return out

    def run_batch(self, work: Mapping[str, Iterable[str]]) -> None:
        """Run ``work`` ({release: scenario ids}), from the cache where it can."""
        tasks = [(v, sorted(set(sids) - set(self.state.outcomes.get(v, {})))) for v, sids in work.items()]
        tasks = [(v, sids) for v, sids in sorted(tasks, key=lambda t: -len(t[1])) if sids]
        for v, found in self._map(lambda t: (t[0], self.run_at(t[0], t[1])), tasks):
            for sid, o in found.items():
                self.state.record(v, sid, o)

    def run_at(self, version: str, sids: Sequence[str]) -> dict[str, Outcome]:
        keys = {sid: self.keys[sid] for sid in sids}
        found = self.cache.outcomes(version, keys)
        missing = [self.scenarios[sid] for sid in sids if sid not in found]
        with self._lock:
            self.counts["scenario_runs_cached"] += len(found)
            self.counts["scenario_runs"] += len(missing)
        if missing:
            fresh = self._run_scenarios(version, missing)
            retry = [self.scenarios[sid] for sid, o in fresh.items() if o.error]
            if retry:  # an infrastructure error gets one more chance on a fresh backend
                fresh.update(self._run_scenarios(version, retry))
            self.cache.store_outcomes(version, {keys[sid]: o for sid, o in fresh.items()})
            found.update(fresh)
        return found

    def _run_scenarios(self, version: str, scenarios: Sequence[Scenario]) -> dict[str, Outcome]:
        try:
            factory = self.launcher.factory(version)
        except HarnessError as exc:
            return {s.id: Outcome(ERROR, message=str(exc)) for s in scenarios}
        release = self.state.releases.get(version)
        foreign = {s.id: foreign_pin(s, release.surfaces) for s in scenarios} if release else {}
        skipped = {sid: Outcome(SKIP, reason=why) for sid, why in foreign.items() if why}
        # every pin written on the release's surface runs on every release: a pin on that passes is
        # a patch upstream adopted
        run = Runner(factory, jobs=1, backend_label=self.template.impl(version),
                     snapshot_factory=self.snapshots.hook_for,
                     declared=EVERY_PIN).run([s for s in scenarios if s.id not in skipped])
        by_id = {s.id: s for s in scenarios}
        return {**skipped, **{r.id: outcome_of(r, by_id[r.id]) for r in run.scenarios}}

    def confirm_changes(self) -> bool:
        """Run each scenario that changed once more at both ends of its change (once per release):
        where the second run disagrees with the first, the scenario is unstable at that release
        (``SweepState.unstable``) and stepped over there like a release that does not run, so a
        flaky outcome does not pass for a behaviour change. True when it found a new one."""
        work: dict[str, set[str]] = {}
        for sc in scenario_changes(self.state):
            for version in (sc.last_without, sc.first):
                if (version, sc.scenario) not in self._confirmed:
                    work.setdefault(version, set()).add(sc.scenario)
        if not work:
            return False
        self.log(f"confirm: {sum(len(s) for s in work.values())} scenario run(s) again at both ends of each change")
        tasks = sorted(((v, sorted(sids)) for v, sids in work.items()), key=lambda t: parse_version(t[0]))
        found_unstable = False
        for version, found in self._map(lambda t: (t[0], self.confirm_at(t[0], t[1])), tasks):
            for sid, again in found.items():
                self._confirmed.add((version, sid))
                if again.error or again.signature() != self.state.outcomes[version][sid].signature():
                    self.state.unstable.setdefault(sid, []).append(version)
                    found_unstable = True
                    self.log(f"  {sid} is unstable at {version}: a second run gave another outcome")
        return found_unstable

    def confirm_at(self, version: str, sids: Sequence[str]) -> dict[str, Outcome]:
        keys = {sid: self.keys[sid] + ":again" for sid in sids}
        found = self.cache.outcomes(version, keys)
        missing = [self.scenarios[sid] for sid in sids if sid not in found]
        with self._lock:
            self.counts["confirm_runs"] = self.counts.get("confirm_runs", 0) + len(missing)
        if missing:
            fresh = self._run_scenarios(version, missing)
            self.cache.store_outcomes(version, {keys[sid]: o for sid, o in fresh.items()})
            found.update(fresh)
        return found

    # -- the fuzzer ---------------------------------------------------------------------------
    def fuzz_key(self) -> str:
        code = sorted(Path(harness.fuzz.__file__).parent.glob("*.py"))
        return digest(str(self.options.fuzz_n), str(self.options.fuzz_seed), self.launch_key, __version__,
                      *(p.read_bytes() for p in code))[:16]

    def fuzz_pairs(self, pairs: Sequence[tuple[str, str]]) -> None:
        key = self.fuzz_key()

        def one(pair: tuple[str, str]) -> FuzzPair:
            older, newer = pair
            cached = self.cache.fuzz_pair(older, newer, key)
            if cached is not None:
                with self._lock:
                    self.counts["fuzz_pairs_cached"] += 1
                return cached
            found = run_fuzz_pair(self.launcher.fuzz_impl(older), self.launcher.fuzz_impl(newer), older, newer,
                                  self.options.fuzz_n, self.options.fuzz_seed)
            found = self.mark_noise(found)
            self.cache.store_fuzz_pair(found, key)
            with self._lock:
                self.counts["fuzz_pairs"] += 1
            return found

        self.log(f"fuzz: {len(pairs)} pair(s) of neighbours, {self.options.fuzz_n} calls each")
        for pair in self._map(one, pairs):
            self.state.fuzz[pair.key] = pair
            if pair.error:
                self.log(f"  fuzz {pair.key}: could not run: {pair.error}")

    def mark_noise(self, pair: FuzzPair) -> FuzzPair:
        """Fuzz the older release against itself on the cases of the pair's classes: a class that
        shows up there too is noise (a path or timing artefact of the run), not a change."""
        cases = sorted({c for cls in pair.classes for c in cls.cases})
        if pair.error or not cases:
            return pair
        older = self.launcher.fuzz_impl(pair.older)
        itself = run_fuzz_pair(older, older, pair.older, pair.older, self.options.fuzz_n, self.options.fuzz_seed,
                               cases=cases)
        if itself.error:
            return pair
        noisy = {c.key for c in itself.classes}
        return dataclasses.replace(pair, classes=tuple(dataclasses.replace(c, noise=c.key in noisy)
                                                       for c in pair.classes))

    # -- parallelism --------------------------------------------------------------------------
    def _map(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
        if self.options.jobs <= 1 or len(items) <= 1:
            return [fn(item) for item in items]
        with concurrent.futures.ThreadPoolExecutor(self.options.jobs, thread_name_prefix="releases") as pool:
            return list(pool.map(fn, items))


def _example(cls: Mapping[str, object]) -> str:
    ex = cls.get("example")
    if not isinstance(ex, dict):
        return ""
    case = ex.get("case")
    if not isinstance(case, dict):
        return ""
    text = f"{case.get('tool', '')} {json.dumps(case.get('args', {}), ensure_ascii=False)}"
    return text if len(text) <= 160 else text[:157] + "…"


def parse_fuzz_report(doc: Mapping[str, Any], older: str, newer: str, n: int, seed: int) -> FuzzPair:
    """``toolproof fuzz --json`` output → a ``FuzzPair`` (only the report's public fields)."""
    classes = []
    for cls in doc.get("classes") or []:
        if isinstance(cls, dict):
            classes.append(FuzzClass(str(cls.get("class", "")), str(cls.get("tool", "")), int(cls.get("count", 0)),
                                     int(cls.get("flaky", 0)), _example(cls),
                                     tuple(int(c) for c in cls.get("cases", ()) if isinstance(c, int))))
    return FuzzPair(older, newer, n, seed, int(doc.get("total", 0)), int(doc.get("agreed", 0)), tuple(classes))


def run_fuzz_pair(older_impl: str, newer_impl: str, older: str, newer: str, n: int, seed: int,
                  cases: Sequence[int] = ()) -> FuzzPair:
    """``toolproof fuzz --impl NEWER --oracle OLDER --n N --seed S --json F`` in a subprocess (only
    ``--case`` C… of the seed when ``cases`` are given)."""
    with tempfile.TemporaryDirectory(prefix="toolproof-releases-fuzz-") as tmp:
        out = os.path.join(tmp, "fuzz.json")
        argv = [sys.executable, "-m", "harness.cli", "fuzz", "--impl", newer_impl, "--oracle", older_impl,
                "--n", str(n), "--seed", str(seed), "--json", out, "--quiet"]
        for case in cases:
            argv += ["--case", str(case)]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, check=False,
                                  timeout=FUZZ_TIMEOUT_BASE_S + FUZZ_TIMEOUT_PER_CALL_S * n)
        except subprocess.TimeoutExpired:
            return FuzzPair(older, newer, n, seed, error="timed out")
        if not os.path.exists(out):
            tail = (proc.stderr.strip().splitlines() or proc.stdout.strip().splitlines() or ["no output"])[-1]
            return FuzzPair(older, newer, n, seed, error=f"exit {proc.returncode}: {tail}")
        with open(out, encoding="utf-8") as fh:
            doc = json.load(fh)
    return parse_fuzz_report(doc, older, newer, n, seed)
