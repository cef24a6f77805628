"""Differential fuzzing: each generated call runs as a one-step scenario in two fresh, identical
workspaces, one per implementation, and the two sides are compared (``execute.differences``, the
one equivalence). A side that gives no answer is a disagreement (``no-answer``) and stays in the
denominator. Disagreements are re-run once (a case that then agrees is labelled flaky), grouped into
classes by tool, input class and the aspects that differ, and each class keeps one example shrunk
to the smallest case that still falls into the same class — a scenario (``Disagreement.scenario``).
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from harness.backends.base import Backend
from harness.fuzz.cases import TOOLS, generate
from harness.fuzz.execute import NO_ANSWER, Case, Observed, differences, disagreement_scenario, execute
from harness.fuzz.impls import Impl
from harness.model.scenario import Scenario
from harness.run.workspace_archive import build_archive

JsonObj = dict[str, Any]
SHRINK_BUDGET = 40  # candidate cases tried per class
MAX_EXAMPLES_PER_CLASS = 5


@dataclass
class Disagreement:
    case: Case
    a: Observed
    b: Observed
    aspects: list[str]
    flaky: bool = False
    surface: str = "pi"  # the oracle's surface: the scenario's form

    def scenario(self, oracle_label: str, seed: int | None = None) -> Scenario:
        """This disagreement as a scenario expecting what the oracle (``b``) showed."""
        return disagreement_scenario(self.case.scenario(self.surface, seed), self.b, self.a, oracle_label)


@dataclass
class DisagreementClass:
    key: str
    tool: str
    aspects: list[str]
    count: int = 0
    flaky: int = 0
    indexes: list[int] = field(default_factory=list)
    example: Disagreement | None = None
    shrunk: Disagreement | None = None


@dataclass
class FuzzReport:
    impl: str
    oracle: str
    seed: int
    n: int
    per_tool: dict[str, list[int]] = field(default_factory=dict)  # tool -> [agreed, total]
    classes: dict[str, DisagreementClass] = field(default_factory=dict)
    seconds: float = 0.0  # the whole run, shrinking included
    call_seconds: float = 0.0  # until the last call was compared

    @property
    def rate(self) -> float:
        """Calls per second until the last call was compared (each call runs on both sides,
        a disagreement twice)."""
        return self.total / self.call_seconds if self.call_seconds > 0 else 0.0

    @property
    def failing(self) -> int:
        """Disagreeing calls that a re-run did not resolve (not flaky)."""
        return sum(c.count - c.flaky for c in self.classes.values())

    @property
    def no_answer(self) -> int:
        return sum(c.count for c in self.classes.values() if NO_ANSWER in c.aspects)

    @property
    def agreed(self) -> int:
        return sum(a for a, _ in self.per_tool.values())

    @property
    def total(self) -> int:
        return sum(t for _, t in self.per_tool.values())

    @property
    def agreement(self) -> float:
        return 100.0 * self.agreed / self.total if self.total else 0.0


def _status_word(o: Observed) -> str:
    if not o.answered:
        return NO_ANSWER
    obs = o.observation
    if obs.get("status") == "error":
        return f"error[{obs.get('error_kind', '')}]"
    return "isError" if obs.get("is_error") else str(obs.get("status"))


def input_family(case: Case) -> str:
    """The coarse input class of a case: ``malformed-args``, the path variant, or ``well-formed``."""
    tags = case.tag.split("+")
    if "malformed" in tags:
        return "malformed-args"
    paths = [t for t in tags if t.startswith("path:")]
    return paths[0] if paths else "well-formed"


def class_key(d: Disagreement) -> str:
    """Tool, input family and the differing aspects; a status difference names both sides.
    The text class and file shape of the input are left out so that one behaviour change is
    one class."""
    aspects = sorted({a.split(":")[0] for a in d.aspects})
    status = (f"{_status_word(d.a)}≠{_status_word(d.b)}"
              if {"status", "error_kind", NO_ANSWER} & set(aspects) else "")
    return " | ".join(x for x in (d.case.tool, input_family(d.case), ",".join(aspects), status) if x)


class Pair:
    """The two implementations, each with its own backend, run side by side."""

    def __init__(self, a: Impl, b: Impl) -> None:
        self.a, self.b = a, b
        self.backend_a: Backend = a.factory()
        self.backend_b: Backend = b.factory()
        self.pool = ThreadPoolExecutor(max_workers=2)
        self.surface_a = a.effective_hello(self.backend_a.start()).surface
        self.surface_b = b.effective_hello(self.backend_b.start()).surface

    def scenarios(self, case: Case) -> tuple[Scenario, Scenario]:
        sa, sb = case.scenario(self.surface_a), case.scenario(self.surface_b)
        return (replace(sa, profile=self.a.profile) if self.a.profile else sa,
                replace(sb, profile=self.b.profile) if self.b.profile else sb)

    def run(self, case: Case) -> tuple[Observed, Observed]:
        sa, sb = self.scenarios(case)
        if case.git:  # one git repository for both sides (build_archive keeps it for this second)
            build_archive(sa.workspace)
        fa = self.pool.submit(execute, self.backend_a, sa)
        fb = self.pool.submit(execute, self.backend_b, sb)
        return fa.result(), fb.result()

    def close(self) -> None:
        self.pool.shutdown(wait=True)
        for backend in (self.backend_a, self.backend_b):
            backend.close()


def shrink_candidates(case: Case) -> list[Case]:
    """Smaller variants of ``case``, most aggressive first."""
    out: list[Case] = []
    args = case.args
    used = [args.get(k) for k in ("path", "file_path")] if isinstance(args, dict) else []
    for i, (p, _) in enumerate(case.files):
        if not any(isinstance(u, str) and p in u for u in used):
            out.append(replace(case, files=case.files[:i] + case.files[i + 1:]))
    if case.dirs:
        out.append(replace(case, dirs=()))
    for i, (p, data) in enumerate(case.files):
        lines = data.split(b"\n")
        if len(lines) > 2:
            half = len(lines) // 2
            for part in (lines[:half], lines[half:]):
                out.append(replace(case, files=_with(case.files, i, p, b"\n".join(part))))
            for j in range(min(len(lines), 8)):
                out.append(replace(case, files=_with(case.files, i, p, b"\n".join(lines[:j] + lines[j + 1:]))))
        elif len(data) > 8:
            out.append(replace(case, files=_with(case.files, i, p, data[: len(data) // 2])))
            out.append(replace(case, files=_with(case.files, i, p, data[len(data) // 2:])))
    if isinstance(args, dict):
        for k in list(args):
            if k not in ("path", "file_path", "command", "content", "edits", "old_string", "new_string"):
                out.append(replace(case, args={x: v for x, v in args.items() if x != k}))
        edits = args.get("edits")
        if isinstance(edits, list) and len(edits) > 1:
            for i in range(len(edits)):
                out.append(replace(case, args={**args, "edits": edits[:i] + edits[i + 1:]}))
        for k in ("content", "newText"):
            v = args.get(k)
            if isinstance(v, str) and len(v) > 4:
                out.append(replace(case, args={**args, k: v[: len(v) // 2]}))
    return out


def _with(files: tuple[tuple[str, bytes], ...], i: int, p: str, data: bytes) -> tuple[tuple[str, bytes], ...]:
    return (*files[:i], (p, data), *files[i + 1:])


def _size(case: Case) -> int:
    return sum(len(d) for _, d in case.files) + len(str(case.args)) + len(case.dirs)


def shrink(pair: Pair, d: Disagreement, key: str, budget: int = SHRINK_BUDGET) -> Disagreement:
    """Greedy: take the first smaller candidate that stays in the class ``key``; repeat."""
    best = d
    tried = 0
    improved = True
    while improved and tried < budget:
        improved = False
        for cand in shrink_candidates(best.case):
            if tried >= budget:
                break
            if _size(cand) >= _size(best.case):
                continue
            tried += 1
            oa, ob = pair.run(cand)
            diff = differences(oa, ob)
            if not diff:
                continue
            nd = Disagreement(cand, oa, ob, diff, surface=pair.surface_b)
            if class_key(nd) == key:
                best = nd
                improved = True
                break
    return best


def _evaluate(pair: Pair, case: Case) -> tuple[Observed, Observed, list[str], bool]:
    """Both sides, the differing aspects and, for a disagreement, whether a re-run agreed."""
    oa, ob = pair.run(case)
    diff = differences(oa, ob)
    flaky = False
    if diff:  # re-run once: a flaky disagreement is labelled, and still counted
        ra, rb = pair.run(case)
        flaky = not differences(ra, rb)
    return oa, ob, diff, flaky


def run_fuzz(a: Impl, b: Impl, n: int, seed: int, *, tools: tuple[str, ...] = TOOLS,
             progress: Callable[[int, FuzzReport], None] | None = None, shrink_examples: bool = True,
             only: list[int] | None = None, jobs: int = 1) -> FuzzReport:
    """Run cases ``0..n-1`` of ``seed`` (or the ``only`` indexes) on ``jobs`` pairs of backends.
    Results are folded in case order, so the report does not depend on ``jobs``."""
    report = FuzzReport(a.label, b.label, seed, n, per_tool={t: [0, 0] for t in tools})
    started = time.monotonic()
    indexes = list(only) if only is not None else list(range(n))
    pairs = [Pair(a, b) for _ in range(max(1, jobs))]
    t0 = time.monotonic()  # the rate counts from here: the implementations have started
    free: queue.Queue[Pair] = queue.Queue()
    for p in pairs:
        free.put(p)

    def work(i: int) -> tuple[Case, str, tuple[Observed, Observed, list[str], bool]]:
        case = generate(seed, i, tools)
        pair = free.get()
        try:
            return case, pair.surface_b, _evaluate(pair, case)
        finally:
            free.put(pair)

    try:
        with ThreadPoolExecutor(max_workers=len(pairs)) as pool:
            for done, (case, surface, (oa, ob, diff, flaky)) in enumerate(pool.map(work, indexes), 1):
                if diff:
                    d = Disagreement(case, oa, ob, diff, flaky=flaky, surface=surface)
                    key = class_key(d)
                    cls = report.classes.setdefault(key, DisagreementClass(key, case.tool, sorted(set(diff))))
                    cls.count += 1
                    cls.flaky += d.flaky
                    if len(cls.indexes) < MAX_EXAMPLES_PER_CLASS:
                        cls.indexes.append(case.index)
                    if cls.example is None or (cls.example.flaky and not d.flaky):
                        cls.example = d
                counts = report.per_tool[case.tool]
                counts[1] += 1
                counts[0] += 0 if diff else 1
                report.call_seconds = time.monotonic() - t0
                if progress is not None:
                    progress(done, report)
        if shrink_examples:
            for cls in report.classes.values():
                if cls.example is not None and not cls.example.flaky and NO_ANSWER not in cls.aspects:
                    cls.shrunk = shrink(pairs[0], cls.example, cls.key)
    finally:
        for p in pairs:
            p.close()
        report.seconds = time.monotonic() - started
    return report
