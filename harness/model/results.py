"""Results of a run: per-step and per-scenario outcomes, run info, counts, the exit code, and the
JSON form (which ``merge`` and ``baseline update`` read back).

Statuses: ``pass``, ``fail`` (behaviour mismatch), ``error`` (infrastructure: never a pass),
``skip`` (with a reason), ``xfail`` (a failure listed in the baseline), ``stale`` (a baseline entry
that now passes: fails the gate). A step's ``baseline`` marker says more about how the baseline
judged it: ``different-failure`` (a ``fail`` inside a baselined scenario that is not the listed
failure), ``unreviewed`` (an ``xfail`` whose entry still has a placeholder reason), ``not-checked``
(a ``skip`` whose entry could not be checked); its ``note`` says it in words.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

PASS, FAIL, ERROR, SKIP, XFAIL, STALE = "pass", "fail", "error", "skip", "xfail", "stale"
STATUSES = (PASS, FAIL, ERROR, SKIP, XFAIL, STALE)
GATE_FAILING = (FAIL, STALE)
EXIT_OK, EXIT_FAIL, EXIT_ERROR = 0, 1, 2
EXIT_EMPTY = 5  # no scenario selected (as pytest's "no tests collected")
RESULTS_FORMAT = 1
# StepResult.baseline markers (set by harness.report.baseline)
BASELINE_DIFFERENT, BASELINE_UNREVIEWED, BASELINE_NOT_CHECKED = "different-failure", "unreviewed", "not-checked"
BASELINE_NO_SUCH_STEP = "no-such-step"  # a stale pseudo-step: the entry names a step the scenario lacks


@dataclass(frozen=True)
class StepResult:
    id: str
    status: str
    messages: tuple[str, ...] = ()
    duration_s: float = 0.0
    observation: dict[str, Any] | None = None
    reason: str = ""
    baseline: str = ""  # a BASELINE_* marker, or ""
    note: str = ""  # what the baseline made of this step, in words (different failure, stale, not checked)
    expected: tuple[str, ...] = ()  # the mismatches the baseline entry expects, as written there
    tree: dict[str, Any] | None = None  # the workspace tree after the step (runs for ``toolproof diff``)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "status": self.status, "duration_s": round(self.duration_s, 4)}
        if self.messages:
            out["messages"] = list(self.messages)
        if self.reason:
            out["reason"] = self.reason
        if self.baseline:
            out["baseline"] = self.baseline
        if self.note:
            out["baseline_note"] = self.note
        if self.expected:
            out["expected_mismatch"] = list(self.expected)
        if self.observation is not None:
            out["observation"] = self.observation
        if self.tree is not None:
            out["tree"] = self.tree
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> StepResult:
        return cls(str(obj["id"]), str(obj["status"]), tuple(obj.get("messages", ())),
                   float(obj.get("duration_s", 0.0)), obj.get("observation"), str(obj.get("reason", "")),
                   str(obj.get("baseline", "")), str(obj.get("baseline_note", "")),
                   tuple(obj.get("expected_mismatch", ())), obj.get("tree"))


@dataclass(frozen=True)
class ScenarioResult:
    id: str
    status: str
    path: str = ""
    title: str = ""
    tags: tuple[str, ...] = ()
    steps: tuple[StepResult, ...] = ()
    message: str = ""
    reason: str = ""
    duration_s: float = 0.0
    notes: tuple[str, ...] = ()  # baseline entries of this scenario that could not be checked, and why
    spec: tuple[str, ...] = ()  # the docs/spec/ rules the scenario pins: a failure names them

    @property
    def different_failure(self) -> bool:
        """A failure inside a baselined scenario that is not the listed one ("xfail (different failure)")."""
        return any(st.baseline == BASELINE_DIFFERENT for st in self.steps)

    @property
    def unreviewed(self) -> bool:
        """An expected failure whose baseline entry still has a placeholder reason."""
        return any(st.baseline == BASELINE_UNREVIEWED for st in self.steps)

    @property
    def failure_text(self) -> str:
        """All messages of failing/erroring steps, for reports: the baseline's note on a step
        first (a different failure, a stale entry), then its mismatches, then the entry's reason."""
        parts: list[str] = []
        if self.spec and self.status in (FAIL, ERROR, STALE, XFAIL):
            parts.append(f"spec: {', '.join(self.spec)} (docs/spec/)")
        if self.message:
            parts.append(self.message)
        for st in self.steps:
            if st.status in (FAIL, ERROR, STALE, XFAIL):
                if st.note:
                    parts.extend(f"[{st.id}] {line}" for line in st.note.splitlines())
                for m in st.messages:
                    parts.append(f"[{st.id}] {m}")
                if st.reason and (st.status in (STALE, XFAIL) or st.baseline == BASELINE_DIFFERENT):
                    parts.append(f"[{st.id}] baseline: {st.reason}")
        return "\n".join(parts)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "status": self.status, "path": self.path, "title": self.title,
                               "tags": list(self.tags), "duration_s": round(self.duration_s, 4),
                               "steps": [s.to_json() for s in self.steps]}
        if self.spec:
            out["spec"] = list(self.spec)
        if self.message:
            out["message"] = self.message
        if self.reason:
            out["reason"] = self.reason
        if self.notes:
            out["baseline_notes"] = list(self.notes)
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> ScenarioResult:
        return cls(str(obj["id"]), str(obj["status"]), str(obj.get("path", "")), str(obj.get("title", "")),
                   tuple(obj.get("tags", ())), tuple(StepResult.from_json(s) for s in obj.get("steps", ())),
                   str(obj.get("message", "")), str(obj.get("reason", "")), float(obj.get("duration_s", 0.0)),
                   tuple(obj.get("baseline_notes", ())), tuple(obj.get("spec", ())))


@dataclass(frozen=True)
class RunInfo:
    backend: str = ""
    implementation: str = ""
    version: str = ""
    started: str = ""
    duration_s: float = 0.0
    jobs: int = 1
    shard: str = ""
    baseline: str = ""
    toolproof_version: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    run_id: str = ""  # labels the run's containers (docker backend); printed when the run starts
    baseline_choice: str = ""  # why ``baseline`` (or none) was applied, in words
    level: str = ""  # what was judged: ``full (dialect minimax)``, ``behaviour`` … (harness.run.runner)

    def to_json(self) -> dict[str, Any]:
        return {"backend": self.backend, "implementation": self.implementation, "version": self.version,
                "started": self.started, "duration_s": round(self.duration_s, 3), "jobs": self.jobs,
                "shard": self.shard, "baseline": self.baseline, "toolproof_version": self.toolproof_version,
                **({"baseline_choice": self.baseline_choice} if self.baseline_choice else {}),
                **({"level": self.level} if self.level else {}),
                **({"run_id": self.run_id} if self.run_id else {}),
                **({"extra": self.extra} if self.extra else {})}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> RunInfo:
        return cls(str(obj.get("backend", "")), str(obj.get("implementation", "")), str(obj.get("version", "")),
                   str(obj.get("started", "")), float(obj.get("duration_s", 0.0)), int(obj.get("jobs", 1)),
                   str(obj.get("shard", "")), str(obj.get("baseline", "")), str(obj.get("toolproof_version", "")),
                   dict(obj.get("extra", {})), str(obj.get("run_id", "")), str(obj.get("baseline_choice", "")),
                   str(obj.get("level", "")))


@dataclass(frozen=True)
class RunResult:
    info: RunInfo
    scenarios: tuple[ScenarioResult, ...]

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(STATUSES, 0)
        for s in self.scenarios:
            out[s.status] = out.get(s.status, 0) + 1
        return out

    @property
    def exit_code(self) -> int:
        """0: gate passes; 1: behaviour failures or stale baseline entries; 2: infrastructure errors."""
        c = self.counts()
        if c[ERROR]:
            return EXIT_ERROR
        if any(c[status] for status in GATE_FAILING):
            return EXIT_FAIL
        return EXIT_OK

    def with_scenarios(self, scenarios: tuple[ScenarioResult, ...]) -> RunResult:
        return replace(self, scenarios=scenarios)

    def to_json(self) -> dict[str, Any]:
        return {"format": RESULTS_FORMAT, "run": self.info.to_json(), "counts": self.counts(),
                "exit_code": self.exit_code, "scenarios": [s.to_json() for s in self.scenarios]}

    def dumps(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False, indent=1)

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> RunResult:
        return cls(RunInfo.from_json(obj.get("run", {})),
                   tuple(ScenarioResult.from_json(s) for s in obj.get("scenarios", ())))
