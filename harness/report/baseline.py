"""Per-implementation baselines (``baselines/<implementation>.yaml``): scenarios or single steps
known to fail, each with a reason. Applying a baseline turns listed failures into ``xfail`` and
listed entries that now pass into ``stale`` (which fails the gate, like an unlisted failure).
``update_baseline`` regenerates a baseline from a results file.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace

import yaml

from harness.corpus.yaml_reader import Node, YamlReader, parse_yaml_document, read_document_text
from harness.errors import ScenarioError
from harness.model.results import ERROR, FAIL, PASS, SKIP, STALE, XFAIL, RunResult, ScenarioResult, StepResult

BASELINE_KEYS = ("implementation", "entries")
ENTRY_KEYS = ("id", "step", "reason")
TODO_REASON = "TODO: explain why this fails"


@dataclass(frozen=True)
class BaselineEntry:
    id: str
    reason: str
    step: str | None = None


@dataclass(frozen=True)
class Baseline:
    implementation: str
    entries: tuple[BaselineEntry, ...] = ()
    path: str = ""

    def for_scenario(self, scenario_id: str) -> list[BaselineEntry]:
        return [e for e in self.entries if e.id == scenario_id]

    def dumps(self) -> str:
        data = {"implementation": self.implementation,
                "entries": [{"id": e.id, **({"step": e.step} if e.step else {}), "reason": e.reason}
                            for e in self.entries]}
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def _baseline(r: YamlReader, root: Node) -> Baseline:
    pairs = r.mapping(root, "", BASELINE_KEYS) or {}
    impl = ""
    if "implementation" not in pairs:
        r.problem(root, "implementation", "required field is missing")
    else:
        impl = r.string(pairs["implementation"][1], "implementation", allow_empty=False) or ""
    entries: list[BaselineEntry] = []
    seen: set[tuple[str, str | None]] = set()
    items = r.sequence(pairs["entries"][1], "entries") if "entries" in pairs else []
    for i, item in enumerate(items or [], 1):
        field = f"entries[{i}]"
        e = r.mapping(item, field, ENTRY_KEYS)
        if e is None:
            continue
        for key in ("id", "reason"):
            if key not in e:
                r.problem(item, f"{field}.{key}", "required field is missing")
        sid = r.string(e["id"][1], f"{field}.id", allow_empty=False) if "id" in e else None
        reason = r.string(e["reason"][1], f"{field}.reason", allow_empty=False) if "reason" in e else None
        step = r.string(e["step"][1], f"{field}.step", allow_empty=False) if "step" in e else None
        if sid and reason:
            if (sid, step) in seen:
                r.problem(item, field, "duplicate entry")
            seen.add((sid, step))
            entries.append(BaselineEntry(sid, reason, step))
    return Baseline(impl, tuple(entries), r.path)


def parse_baseline_text(text: str, path: str) -> Baseline:
    """Parse a baseline file; raises ``ScenarioError`` listing every problem with file:line."""
    baseline, problems = parse_yaml_document(text, path, _baseline)
    if problems:
        raise ScenarioError(problems)
    return baseline


def load_baseline(path: str) -> Baseline:
    return parse_baseline_text(read_document_text(path), path)


def _stale_message(entry: BaselineEntry, path: str) -> str:
    what = f"step {entry.step!r} of {entry.id!r}" if entry.step else f"{entry.id!r}"
    where = f" from {path}" if path else ""
    return f"stale baseline entry: {what} now passes; remove it{where} (reason was: {entry.reason})"


def _apply_one(res: ScenarioResult, entries: list[BaselineEntry], path: str) -> ScenarioResult:
    if not entries or res.status in (ERROR, SKIP):
        return res
    whole = [e for e in entries if e.step is None]
    if whole:
        entry = whole[0]
        if res.status == FAIL:
            return replace(res, status=XFAIL, reason=entry.reason)
        if res.status == PASS:
            return replace(res, status=STALE, message=_stale_message(entry, path), reason=entry.reason)
        return res
    by_step = {e.step: e for e in entries}
    steps: list[StepResult] = []
    for st in res.steps:
        step_entry = by_step.get(st.id)
        if step_entry is not None and st.status == FAIL:
            st = replace(st, status=XFAIL, reason=step_entry.reason)
        elif step_entry is not None and st.status == PASS:
            st = replace(st, status=STALE, messages=(_stale_message(step_entry, path),), reason=step_entry.reason)
        steps.append(st)
    statuses = {s.status for s in steps}
    status = next((s for s in (FAIL, STALE, XFAIL) if s in statuses), PASS)
    reason = "; ".join(dict.fromkeys(s.reason for s in steps if s.status in (XFAIL, STALE) and s.reason))
    return replace(res, status=status, steps=tuple(steps), reason=reason or res.reason)


def apply_to_result(res: ScenarioResult, baseline: Baseline | None) -> ScenarioResult:
    """``apply_baseline`` for one scenario result (used for live progress output)."""
    if baseline is None:
        return res
    return _apply_one(res, baseline.for_scenario(res.id), baseline.path)


def apply_baseline(run: RunResult, baseline: Baseline) -> RunResult:
    """Listed failures → xfail; listed passes → stale. Errors and skips are left alone."""
    return run.with_scenarios(tuple(_apply_one(r, baseline.for_scenario(r.id), baseline.path)
                                    for r in run.scenarios))


def update_baseline(run: RunResult, old: Baseline | None, implementation: str = "") -> Baseline:
    """A baseline listing exactly the failures in ``run``: old reasons are kept where an entry
    still applies, new failures get a TODO reason, stale entries are dropped, and entries for
    scenarios that were not run (or errored or were skipped) are kept as they are."""
    old_entries = list(old.entries) if old else []
    results = {r.id: r for r in run.scenarios}
    out: list[BaselineEntry] = []
    for e in old_entries:
        res = results.get(e.id)
        if res is None or res.status in (ERROR, SKIP):
            out.append(e)
    for res in run.scenarios:
        if res.status in (ERROR, SKIP):
            continue
        olds = [e for e in old_entries if e.id == res.id]
        failing_steps = [s for s in res.steps if s.status in (FAIL, XFAIL)]
        whole = [e for e in olds if e.step is None]
        if res.status in (FAIL, XFAIL) or failing_steps:
            if whole and res.status in (FAIL, XFAIL):
                out.append(whole[0])
                continue
            step_entries = {e.step: e for e in olds if e.step}
            if failing_steps and all(s.id in step_entries for s in failing_steps):
                out.extend(step_entries[s.id] for s in failing_steps)
            else:
                first = next((m for s in failing_steps for m in s.messages), res.message)
                reason = TODO_REASON + (f" (first failure: {first.splitlines()[0][:120]})" if first else "")
                out.append(BaselineEntry(res.id, reason))
    out.sort(key=lambda e: (e.id, e.step or ""))
    impl = implementation or (old.implementation if old else "") or run.info.implementation
    return Baseline(impl, tuple(out), old.path if old else "")


def baseline_diff(old_text: str, new_text: str, path: str) -> str:
    return "".join(difflib.unified_diff(old_text.splitlines(keepends=True), new_text.splitlines(keepends=True),
                                        f"{path} (current)", f"{path} (regenerated)"))
