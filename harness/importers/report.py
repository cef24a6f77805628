"""The replay report (docs/importers.md, "The replay report"): per imported trace, what happened to
every recorded tool call — skipped at import (by reason), or imported and then, on the replay,
green, skipped (by reason: the step's ``when``, the environment), or a **real difference** (the
tool layer answered differently from the recording: the number that matters) — plus the resync
steps (listed with their cause) and where each start file came from. Markdown and JSON.

Classification of a failed step: a shell step whose replayed output shows the replay host's
environment at fault (a program or module missing, no network, no git repository) where the
recording's output did not, is an environment skip, named as such; every other failure is a real
difference, with its mismatches.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from harness.importers.importer import SessionImport, StepOrigin
from harness.model.results import ERROR, PASS, SKIP, RunResult, ScenarioResult, StepResult

REPORT_FORMAT = 1
ENVIRONMENT_RE = re.compile(
    r"command not found|No module named|ModuleNotFoundError|Cannot find module|not a git repository"
    r"|Could not resolve host|Temporary failure in name resolution|Network is unreachable|ENOTFOUND|EAI_AGAIN"
    r"|Please tell me who you are")


@dataclass(frozen=True)
class StepOutcome:
    """One generated step on the replay: ``category`` is ``green``, ``skipped`` (``reason``),
    ``environment`` (``reason``), ``difference`` (``messages``) or ``error``."""

    step: str
    kind: str
    line: int
    tool: str
    category: str
    reason: str = ""
    messages: tuple[str, ...] = ()
    path: str = ""
    cause: str = ""


@dataclass
class TraceReport:
    """The replay report of one trace."""

    trace: str
    format: str
    session: str
    scenarios: tuple[str, ...]
    recorded_calls: int
    imported_calls: int
    skipped_at_import: list[dict[str, Any]] = field(default_factory=list)
    steps: list[StepOutcome] = field(default_factory=list)
    start_state: list[dict[str, Any]] = field(default_factory=list)
    contained: list[dict[str, Any]] = field(default_factory=list)
    backend: str = ""

    def calls(self) -> list[StepOutcome]:
        return [s for s in self.steps if s.kind == "call"]

    def resyncs(self) -> list[StepOutcome]:
        return [s for s in self.steps if s.kind == "resync"]

    def count(self, category: str) -> int:
        return sum(1 for s in self.calls() if s.category == category)

    def to_json(self) -> dict[str, Any]:
        by_reason: dict[str, int] = {}
        for skip in self.skipped_at_import:
            by_reason[skip["reason"]] = by_reason.get(skip["reason"], 0) + 1
        replay_skips: dict[str, int] = {}
        for s in self.calls():
            if s.category in ("skipped", "environment"):
                replay_skips[s.reason] = replay_skips.get(s.reason, 0) + 1
        return {
            "trace": self.trace, "format": self.format, "session": self.session, "scenarios": list(self.scenarios),
            "backend": self.backend,
            "recorded_calls": self.recorded_calls, "imported_calls": self.imported_calls,
            "skipped_at_import": len(self.skipped_at_import), "skipped_at_import_by_reason": by_reason,
            "imported_steps": len(self.calls()), "green": self.count("green"),
            "skipped_at_replay": self.count("skipped") + self.count("environment"),
            "skipped_at_replay_by_reason": replay_skips,
            "real_differences": [_outcome_json(s) for s in self.calls() if s.category == "difference"],
            "errors": [_outcome_json(s) for s in self.steps if s.category == "error"],
            "resyncs": [_outcome_json(s) for s in self.resyncs()],
            "skipped_calls": self.skipped_at_import,
            "contained": self.contained,
            "start_state": self.start_state,
        }


def _outcome_json(s: StepOutcome) -> dict[str, Any]:
    out: dict[str, Any] = {"step": s.step, "trace_line": s.line, "tool": s.tool, "status": s.category}
    for key in ("reason", "path", "cause"):
        if getattr(s, key):
            out[key] = getattr(s, key)
    if s.messages:
        out["messages"] = list(s.messages)
    return out


def _classify(origin: StepOrigin, result: StepResult | None, scenario: ScenarioResult | None,
              recorded_text: str) -> StepOutcome:
    def outcome(category: str, reason: str = "", messages: tuple[str, ...] = ()) -> StepOutcome:
        return StepOutcome(origin.step_id, origin.kind, origin.line, origin.tool, category,
                           origin.reason if origin.kind == "resync" and not reason else reason, messages,
                           origin.path, origin.cause)

    if result is None:
        if scenario is not None and scenario.status == SKIP:
            return outcome("skipped", scenario.reason)
        return outcome("error", scenario.message if scenario is not None else "the scenario did not run")
    if result.status == PASS:
        return outcome("green")
    if result.status == SKIP:
        return outcome("skipped", result.reason)
    if result.status == ERROR:
        return outcome("error", "; ".join(result.messages))
    obs = result.observation or {}
    text = f"{obs.get('text', '')}{obs.get('error', '')}"
    m = ENVIRONMENT_RE.search(text)
    if origin.tool == "bash" and m and not ENVIRONMENT_RE.search(recorded_text):
        return outcome("environment", f"environment of the replay host: {m.group(0)}", result.messages)
    return outcome("difference", messages=result.messages)


def build_report(imp: SessionImport, run: RunResult) -> TraceReport:
    """The report of one imported trace from the run of its scenarios (steps of ``--split`` parts
    counted once: each call in the part that carries it, never as a setup step)."""
    by_id = {r.id: r for r in run.scenarios}
    recorded = {c.line: c.result.text if c.result else "" for c in imp.session.calls}
    report = TraceReport(trace=imp.session.path, format=imp.session.format, session=imp.session.session_id,
                         scenarios=tuple(g.id for g in imp.scenarios), recorded_calls=imp.recorded_calls,
                         imported_calls=imp.imported, backend=run.info.backend,
                         skipped_at_import=[{"trace_line": s.line, "tool": s.name, "reason": s.reason}
                                            for s in imp.skipped],
                         start_state=[{"path": p.path, "source": p.source, "trace_line": p.line,
                                       "disagreed": p.disagreed, "detail": p.detail, "described": p.describe()}
                                      for p in imp.provenance],
                         contained=[{"trace_line": line, "why": why} for line, why in imp.contained])
    for g in imp.scenarios:
        res = by_id.get(g.id)
        steps = {s.id: s for s in res.steps} if res is not None else {}
        for origin in g.origins:
            if origin.kind == "setup":
                continue
            report.steps.append(_classify(origin, steps.get(origin.step_id), res, recorded.get(origin.line, "")))
    return report


def reports_json(reports: list[TraceReport]) -> str:
    totals = _totals(reports)
    return json.dumps({"format": REPORT_FORMAT, "totals": totals, "traces": [r.to_json() for r in reports]},
                      indent=2, ensure_ascii=False) + "\n"


def _totals(reports: list[TraceReport]) -> dict[str, Any]:
    steps = sum(len(r.calls()) for r in reports)
    green = sum(r.count("green") for r in reports)
    ran = steps - sum(r.count("skipped") + r.count("environment") for r in reports)
    return {"recorded_calls": sum(r.recorded_calls for r in reports),
            "imported_calls": sum(r.imported_calls for r in reports),
            "skipped_at_import": sum(len(r.skipped_at_import) for r in reports),
            "imported_steps": steps, "green": green,
            "green_share": round(green / steps, 4) if steps else 1.0,
            "green_share_of_steps_that_ran": round(green / ran, 4) if ran else 1.0,
            "resyncs": sum(len(r.resyncs()) for r in reports),
            "skipped_at_replay": sum(r.count("skipped") + r.count("environment") for r in reports),
            "real_differences": sum(r.count("difference") for r in reports),
            "errors": sum(1 for r in reports for s in r.steps if s.category == "error")}


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def reports_markdown(reports: list[TraceReport]) -> str:
    t = _totals(reports)
    lines = ["## toolproof replay report", "",
             f"{t['recorded_calls']} recorded call(s): {t['imported_calls']} imported as {t['imported_steps']} step(s), "
             f"{t['skipped_at_import']} skipped at import; on the replay {t['green']} green "
             f"({100 * t['green_share']:.1f} % of the imported steps, {100 * t['green_share_of_steps_that_ran']:.1f} % "
             f"of those that ran), {t['skipped_at_replay']} skipped, **{t['real_differences']} real "
             f"difference(s)**, {t['errors']} error(s); {t['resyncs']} resync step(s).", "",
             "| trace | recorded | imported | green | resynced | skipped (import + replay) | real differences |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in reports:
        skipped = len(r.skipped_at_import) + r.count("skipped") + r.count("environment")
        lines.append(f"| {_md(r.trace)} | {r.recorded_calls} | {r.imported_calls} | {r.count('green')} | "
                     f"{len(r.resyncs())} | {skipped} | {r.count('difference')} |")
    for r in reports:
        lines += ["", f"### {_md(r.trace)} ({r.format}, session {_md(r.session)})", ""]
        diffs = [s for s in r.calls() if s.category == "difference"]
        if diffs:
            lines.append("Real differences (the tool layer answered differently from the recording):")
            lines += [f"- step `{s.step}` (trace line {s.line}, {s.tool}): {_md('; '.join(s.messages))}" for s in diffs]
        errors = [s for s in r.steps if s.category == "error"]
        if errors:
            lines.append("Errors (the replay could not run):")
            lines += [f"- step `{s.step}` (trace line {s.line}): {_md(s.reason)}" for s in errors]
        if r.resyncs():
            lines.append("Resyncs (the file as the recording saw it next):")
            lines += [f"- `{s.step}` before trace line {s.line} ({s.cause}): {_md(s.reason)}" for s in r.resyncs()]
        skips = [(s["trace_line"], f"at import: {s['reason']}") for s in r.skipped_at_import]
        skips += [(s.line, f"on the replay: {s.reason}") for s in r.calls() if s.category in ("skipped", "environment")]
        if skips:
            lines.append("Skipped, with the reason:")
            lines += [f"- trace line {line}: {_md(why)}" for line, why in sorted(skips)]
        moved = [p["described"] for p in r.start_state if p["source"] != "repository"
                 and (p["source"] == "trace" or p["disagreed"])]
        if moved:
            lines.append("Start state from the trace:")
            lines += [f"- {_md(d)}" for d in moved]
    return "\n".join(lines) + "\n"


