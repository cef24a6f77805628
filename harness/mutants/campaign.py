"""A mutation campaign: how many of the built-in mutants a corpus kills (``toolproof mutants``).

1. **Clean run.** The corpus runs once on the unmutated reference (``--impl reference`` or
   ``upstream``, local backend). Only the scenarios that pass there can kill: a scenario that
   fails, errors or skips on the clean reference says nothing about a mutant.
2. **One run per mutant.** The reference server starts with the mutant put in
   (``python -m harness.mutants.server NAME``, through the normal process backend and runner),
   and the passing scenarios run on it — those that call the mutant's tool first, fastest first —
   until one fails or errors: the mutant is **killed** by that scenario. A kill is confirmed by
   running the killing scenario once more on the mutant; a scenario that passes the second time
   is reported as flaky and the search goes on. A mutant that no scenario kills **survives**.

Nothing here changes how a scenario runs or is judged: a mutant is killed exactly when
``toolproof run`` on the mutated reference would report that scenario failed.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.backends.base import Backend
from harness.backends.process import ProcessBackend
from harness.errors import HarnessError, UsageError
from harness.model.results import ERROR, FAIL, PASS, ScenarioResult
from harness.model.scenario import Scenario
from harness.mutants.apply import MutantError, mutated_sources
from harness.mutants.catalogue import TOOLS, Mutant
from harness.run.runner import infrastructure_result, run_scenario
from harness.run.snapshots import SnapshotStore

SERVER_MODULE = "harness.mutants.server"
REFERENCE_SERVER = "tools_impl.server"
IMPLS = ("reference", "upstream")
# Which tools' scenarios can see a regression of each catalogue tool, tried first.
TOOLS_SEEN_BY = {
    "truncation": ("read", "bash", "grep"),
    "paths": ("read", "write", "edit", "grep", "glob"),
}

Progress = Callable[[str], None]


@dataclass(frozen=True)
class MutantOutcome:
    """What the corpus did to one mutant: killed by ``killer`` (with the first lines of its
    failure), or survived after ``scenarios_run`` scenarios."""

    mutant: Mutant
    killed: bool
    killer: str = ""
    failure: str = ""
    scenarios_run: int = 0
    duration_s: float = 0.0
    flaky: tuple[tuple[str, str], ...] = ()  # (scenario, its first failure) that passed when run again

    def to_json(self) -> dict[str, Any]:
        return {"name": self.mutant.name, "tool": self.mutant.tool, "surface": self.mutant.surface,
                "description": self.mutant.description, "killed": self.killed, "killer": self.killer,
                "failure": self.failure, "scenarios_run": self.scenarios_run,
                "duration_s": round(self.duration_s, 2),
                "flaky": [{"scenario": sid, "failure": why} for sid, why in self.flaky]}


@dataclass(frozen=True)
class CampaignResult:
    impl: str
    scenarios: int  # selected
    passing: int  # passed on the clean reference: the ones that can kill
    outcomes: tuple[MutantOutcome, ...]
    duration_s: float
    clean_failures: tuple[str, ...] = field(default=())

    @property
    def killed(self) -> int:
        return sum(1 for o in self.outcomes if o.killed)

    @property
    def kill_rate(self) -> float:
        return self.killed / len(self.outcomes) if self.outcomes else 0.0

    @property
    def survivors(self) -> tuple[MutantOutcome, ...]:
        return tuple(o for o in self.outcomes if not o.killed)

    def per_tool(self) -> list[tuple[str, int, int]]:
        """(tool, killed, mutants) in catalogue tool order, tools without mutants left out."""
        rows = []
        for tool in TOOLS:
            mine = [o for o in self.outcomes if o.mutant.tool == tool]
            if mine:
                rows.append((tool, sum(1 for o in mine if o.killed), len(mine)))
        return rows

    def to_json(self) -> dict[str, Any]:
        return {"impl": self.impl, "scenarios": self.scenarios, "passing": self.passing,
                "mutants": len(self.outcomes), "killed": self.killed, "kill_rate": round(self.kill_rate, 4),
                "duration_s": round(self.duration_s, 1),
                "per_tool": [{"tool": t, "killed": k, "mutants": n} for t, k, n in self.per_tool()],
                "clean_failures": list(self.clean_failures),
                "outcomes": [o.to_json() for o in self.outcomes]}


def server_argv(impl: str, mutant: str | None = None) -> list[str]:
    """The local command line of the reference (``mutant`` None) or of a mutant of it."""
    if impl not in IMPLS:
        raise UsageError(f"--impl {impl!r}: toolproof mutants mutates the reference; expected reference or upstream")
    extra = ["--upstream"] if impl == "upstream" else []
    if mutant is None:
        return [sys.executable, "-m", REFERENCE_SERVER, *extra]
    return [sys.executable, "-m", SERVER_MODULE, mutant, *extra]


def _factory(impl: str, mutant: str | None) -> Callable[[], Backend]:
    argv = server_argv(impl, mutant)
    label = f"mutant:{mutant}" if mutant else "local"
    return lambda: ProcessBackend(argv, inband=True, label=label)


def tools_of(scenario: Scenario) -> set[str]:
    return {step.tool for step in scenario.steps if step.tool}


def order_for(mutant: Mutant, scenarios: Sequence[Scenario], durations: dict[str, float]) -> list[Scenario]:
    """The scenarios most likely to kill ``mutant`` first: those calling its tool(s), then the
    rest, each group fastest first."""
    seen_by = set(TOOLS_SEEN_BY.get(mutant.tool, (mutant.tool,)))

    def key(s: Scenario) -> tuple[int, float, str]:
        return (0 if tools_of(s) & seen_by else 1, durations.get(s.id, 0.0), s.id)

    return sorted(scenarios, key=key)


def first_failure(res: ScenarioResult) -> str:
    """The first lines of what made ``res`` fail, for the report."""
    text = res.failure_text or res.message or res.status
    lines = [line for line in text.splitlines() if line.strip()]
    return "\n".join(lines[:4])


class _Workers:
    """``jobs`` threads, one backend each, running scenarios until one kills the mutant."""

    def __init__(self, factory: Callable[[], Backend], jobs: int) -> None:
        self.factory = factory
        self.jobs = max(1, jobs)
        self.snapshots = SnapshotStore(SnapshotStore.default_root())
        self._previous: dict[int, str] = {}  # id(backend) -> the scenario it ran last

    def run_one(self, backend: Backend, scenario: Scenario) -> ScenarioResult:
        try:
            res = run_scenario(backend, scenario, snapshot=self.snapshots.hook_for(scenario), keep_observations=False)
        except HarnessError as exc:
            res = infrastructure_result(scenario, exc)
        before = self._previous.get(id(backend))
        self._previous[id(backend)] = scenario.id
        if res.status == ERROR:
            if before and res.message:
                # which scenario the backend ran before an infrastructure error, for the report
                res = dataclasses.replace(res, message=f"{res.message} (the backend ran {before} before)")
            try:
                backend.restart()
            except HarnessError:
                pass
        return res

    def map(self, scenarios: Sequence[Scenario], stop: Callable[[Backend, Scenario, ScenarioResult], bool]) -> int:
        """Run ``scenarios`` in order on the workers until ``stop`` returns True for a result;
        the number of scenarios run."""
        lock = threading.Lock()
        state = {"next": 0, "done": 0, "stopped": False}

        def work() -> None:
            backend = self.factory()
            try:
                while True:
                    with lock:
                        if state["stopped"] or state["next"] >= len(scenarios):
                            return
                        scenario = scenarios[state["next"]]
                        state["next"] += 1
                    res = self.run_one(backend, scenario)
                    halt = stop(backend, scenario, res)
                    with lock:
                        state["done"] += 1
                        if halt:
                            state["stopped"] = True
            finally:
                try:
                    backend.close()
                except Exception:  # closing must never mask the campaign's results
                    pass

        threads = [threading.Thread(target=work, name=f"toolproof-mutants-{i}", daemon=True)
                   for i in range(min(self.jobs, max(1, len(scenarios))))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return int(state["done"])


def clean_run(scenarios: Sequence[Scenario], impl: str, jobs: int) -> dict[str, ScenarioResult]:
    """Every scenario on the unmutated reference."""
    results: dict[str, ScenarioResult] = {}
    lock = threading.Lock()

    def keep(_backend: Backend, scenario: Scenario, res: ScenarioResult) -> bool:
        with lock:
            results[scenario.id] = res
        return False

    _Workers(_factory(impl, None), jobs).map(list(scenarios), keep)
    return results


def hunt(mutant: Mutant, scenarios: Sequence[Scenario], impl: str, jobs: int,
         durations: dict[str, float]) -> MutantOutcome:
    """Run ``scenarios`` on ``mutant`` until one kills it (confirmed by a second failure)."""
    t0 = time.monotonic()
    ordered = order_for(mutant, scenarios, durations)
    lock = threading.Lock()
    kill: dict[str, str] = {}
    flaky: list[tuple[str, str]] = []
    workers = _Workers(_factory(impl, mutant.name), jobs)

    def stop(backend: Backend, scenario: Scenario, res: ScenarioResult) -> bool:
        if res.status not in (FAIL, ERROR):
            return False
        again = workers.run_one(backend, scenario)
        with lock:
            if again.status not in (FAIL, ERROR):
                flaky.append((scenario.id, first_failure(res)))
                return False
            if not kill:
                kill.update(killer=scenario.id, failure=first_failure(res))
        return True

    ran = workers.map(ordered, stop)
    return MutantOutcome(mutant, bool(kill), kill.get("killer", ""), kill.get("failure", ""), ran,
                         time.monotonic() - t0, tuple(sorted(flaky)))


def check_mutants(mutants: Sequence[Mutant]) -> None:
    """Every mutant applies to the current source (``UsageError`` naming the first that does not)."""
    for m in mutants:
        try:
            mutated_sources(m)
        except MutantError as exc:
            raise UsageError(f"mutant does not apply to this reference: {exc}") from None


def run_campaign(mutants: Sequence[Mutant], scenarios: Sequence[Scenario], *, impl: str = "reference",
                 jobs: int = 1, progress: Progress | None = None) -> CampaignResult:
    """The clean run, then every mutant; ``progress`` receives one line per finished step."""
    say = progress or (lambda _line: None)
    check_mutants(mutants)
    server_argv(impl)  # the impl is one the campaign can mutate
    t0 = time.monotonic()
    clean = clean_run(scenarios, impl, jobs)
    passing = [s for s in scenarios if clean[s.id].status == PASS]
    failing = tuple(sorted(s.id for s in scenarios if clean[s.id].status in (FAIL, ERROR)))
    durations = {sid: r.duration_s for sid, r in clean.items()}
    say(f"clean {impl}: {len(passing)} of {len(scenarios)} scenarios pass and can kill"
        + (f"; {len(failing)} fail on the clean reference and are left out" if failing else ""))
    outcomes = []
    for i, mutant in enumerate(mutants, 1):
        outcome = hunt(mutant, passing, impl, jobs, durations)
        outcomes.append(outcome)
        verdict = f"killed by {outcome.killer}" if outcome.killed else f"SURVIVED {outcome.scenarios_run} scenarios"
        say(f"[{i}/{len(mutants)}] {mutant.name}: {verdict} ({outcome.duration_s:.1f} s)")
    return CampaignResult(impl, len(scenarios), len(passing), tuple(outcomes), time.monotonic() - t0, failing)


__all__ = ["CampaignResult", "MutantOutcome", "check_mutants", "order_for", "run_campaign", "server_argv"]
