"""Reports of a run: JUnit XML (one testcase per scenario, step failures in the message), JSON
(``RunResult.to_json``), Markdown (fits a GitHub step summary), ``merge`` of shard results, and
``load_results``: the one reader of JSON results files, checking their shape so a wrong file is a
one-line ``UsageError`` (used by ``merge``, ``baseline update`` and ``matrix``)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.errors import UsageError
from harness.model.results import (
    ERROR,
    FAIL,
    PASS,
    RESULTS_FORMAT,
    SKIP,
    STALE,
    STATUSES,
    XFAIL,
    RunInfo,
    RunResult,
)

JUNIT_SUITE_NAME = "toolproof"
MARKDOWN_MAX_FAILURES = 50
MARKDOWN_MAX_MESSAGE_LINES = 40
STATUS_ICONS = {PASS: "✅", FAIL: "❌", ERROR: "💥", SKIP: "⏭️", XFAIL: "🟡", STALE: "🧟"}


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else ""


def to_junit(run: RunResult) -> str:
    c = run.counts()
    suite = ET.Element("testsuite", {
        "name": JUNIT_SUITE_NAME,
        "tests": str(len(run.scenarios)),
        "failures": str(c[FAIL] + c[STALE]),
        "errors": str(c[ERROR]),
        "skipped": str(c[SKIP] + c[XFAIL]),
        "time": f"{run.info.duration_s:.3f}",
        "timestamp": run.info.started,
    })
    props = ET.SubElement(suite, "properties")
    for key in ("backend", "implementation", "version", "shard"):
        value = getattr(run.info, key)
        if value:
            ET.SubElement(props, "property", {"name": key, "value": str(value)})
    for res in run.scenarios:
        classname = res.id.rsplit("/", 1)[0].replace("/", ".") if "/" in res.id else "scenarios"
        case = ET.SubElement(suite, "testcase", {"classname": classname, "name": res.id, "file": res.path,
                                                 "time": f"{res.duration_s:.3f}"})
        text = res.failure_text
        if res.status == FAIL:
            el = ET.SubElement(case, "failure", {"message": _first_line(text), "type": "behaviour"})
            el.text = text
        elif res.status == STALE:
            el = ET.SubElement(case, "failure", {"message": _first_line(text), "type": "stale-baseline"})
            el.text = text
        elif res.status == ERROR:
            el = ET.SubElement(case, "error", {"message": _first_line(text), "type": "infrastructure"})
            el.text = text
        elif res.status == SKIP:
            ET.SubElement(case, "skipped", {"message": res.reason})
        elif res.status == XFAIL:
            el = ET.SubElement(case, "skipped", {"message": f"expected failure (baseline): {res.reason}",
                                                 "type": "xfail"})
            el.text = text
    ET.indent(suite)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"


def summary_line(run: RunResult) -> str:
    c = run.counts()
    parts = [f"{c[k]} {k}" for k in (PASS, FAIL, ERROR, SKIP, XFAIL, STALE) if c[k]]
    return ", ".join(parts) or "no scenarios"


def to_markdown(run: RunResult) -> str:
    c = run.counts()
    verdict = {0: "passed", 1: "FAILED (behaviour)", 2: "ERROR (infrastructure)"}[run.exit_code]
    lines = [f"## toolproof: {verdict}", ""]
    info = run.info
    who = info.implementation + (f" {info.version}" if info.version else "")
    lines.append(f"Backend `{info.backend or '?'}`, implementation `{who or '?'}`"
                 + (f", shard {info.shard}" if info.shard else "") + f", {info.duration_s:.1f} s.")
    lines += ["", "| status | scenarios |", "| --- | ---: |"]
    for k in (PASS, FAIL, ERROR, SKIP, XFAIL, STALE):
        lines.append(f"| {STATUS_ICONS[k]} {k} | {c[k]} |")
    bad = [r for r in run.scenarios if r.status in (FAIL, ERROR, STALE)]
    if bad:
        lines += ["", "### Failures", ""]
        for res in bad[:MARKDOWN_MAX_FAILURES]:
            body = res.failure_text.splitlines()
            if len(body) > MARKDOWN_MAX_MESSAGE_LINES:
                body = [*body[:MARKDOWN_MAX_MESSAGE_LINES], f"… ({len(body) - MARKDOWN_MAX_MESSAGE_LINES} more lines)"]
            lines += [f"<details><summary>{STATUS_ICONS[res.status]} <code>{res.id}</code> — {res.status}</summary>",
                      "", "```diff", *body, "```", "", "</details>", ""]
        if len(bad) > MARKDOWN_MAX_FAILURES:
            lines.append(f"… and {len(bad) - MARKDOWN_MAX_FAILURES} more.")
    skipped = [r for r in run.scenarios if r.status == SKIP]
    if skipped:
        lines += ["", f"<details><summary>{len(skipped)} skipped</summary>", ""]
        lines += [f"- `{r.id}`: {r.reason}" for r in skipped]
        lines += ["", "</details>"]
    return "\n".join(lines).rstrip() + "\n"


def write_reports(run: RunResult, *, junit: str | None = None, json_path: str | None = None,
                  markdown: str | None = None) -> None:
    for path, text in ((junit, to_junit), (json_path, None), (markdown, to_markdown)):
        if path:
            write_output(path, run.dumps() + "\n" if text is None else text(run))


def write_output(path: str, text: str, what: str = "report") -> None:
    """Write a file the user asked for (creating its directory); failure is a one-line
    ``UsageError`` ("cannot write <what> <path>: …"), never a traceback."""
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {what} {path}: {exc}") from None



def _not_results(path: str, why: str) -> UsageError:
    return UsageError(f"{path}: not a toolproof JSON results file ({why})")


def _check_scenario(path: str, index: int, obj: Any) -> None:
    where = f"scenarios[{index}]"
    if not isinstance(obj, dict):
        raise _not_results(path, f"{where} is not an object")
    if not isinstance(obj.get("id"), str) or not obj["id"]:
        raise _not_results(path, f"{where} has no string 'id'")
    where = f"scenario {obj['id']!r}"
    if obj.get("status") not in STATUSES:
        raise _not_results(path, f"{where}: status {obj.get('status')!r} is not one of {', '.join(STATUSES)}")
    tags = obj.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise _not_results(path, f"{where}: 'tags' is not a list of strings")
    steps = obj.get("steps", [])
    if not isinstance(steps, list):
        raise _not_results(path, f"{where}: 'steps' is not a list")
    for j, st in enumerate(steps):
        if not isinstance(st, dict) or "id" not in st or st.get("status") not in STATUSES:
            raise _not_results(path, f"{where}: steps[{j}] has no 'id' or a status that is not one of "
                                     f"{', '.join(STATUSES)}")
        msgs = st.get("messages", [])
        if not isinstance(msgs, list) or not all(isinstance(m, str) for m in msgs):
            raise _not_results(path, f"{where}: steps[{j}].messages is not a list of strings")


def parse_results(obj: Any, path: str) -> RunResult:
    """A results JSON object (``RunResult.to_json``) → RunResult; any shape problem is a
    one-line ``UsageError`` naming ``path`` (and the scenario)."""
    if not isinstance(obj, dict) or not isinstance(obj.get("scenarios"), list):
        raise _not_results(path, "no 'scenarios' list")
    fmt = obj.get("format", RESULTS_FORMAT)
    if fmt != RESULTS_FORMAT:
        raise UsageError(f"{path}: results format {fmt!r} is not supported (expected {RESULTS_FORMAT})")
    if not isinstance(obj.get("run", {}), dict):
        raise _not_results(path, "'run' is not an object")
    seen: set[str] = set()
    for i, s in enumerate(obj["scenarios"]):
        _check_scenario(path, i, s)
        if s["id"] in seen:
            raise _not_results(path, f"scenario {s['id']!r} appears twice")
        seen.add(s["id"])
    try:
        return RunResult.from_json(obj)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise _not_results(path, f"{type(exc).__name__}: {exc}") from None


def load_results(path: str) -> RunResult:
    """Read and check a JSON results file; any problem is a one-line ``UsageError``."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read results {path}: {exc}") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _not_results(f"{path}:{exc.lineno}", exc.msg) from None
    return parse_results(obj, path)


def merge(runs: Sequence[RunResult]) -> RunResult:
    """Merge shard results: scenarios sorted by id; a scenario in several inputs is an error."""
    if not runs:
        raise UsageError("merge: no results given")
    seen: dict[str, int] = {}
    scenarios = []
    for i, run in enumerate(runs):
        for s in run.scenarios:
            if s.id in seen:
                raise UsageError(f"merge: scenario {s.id!r} appears in inputs {seen[s.id] + 1} and {i + 1}")
            seen[s.id] = i
            scenarios.append(s)
    first = runs[0].info
    info = RunInfo(backend=first.backend, implementation=first.implementation, version=first.version,
                   started=min(r.info.started for r in runs), duration_s=max(r.info.duration_s for r in runs),
                   jobs=sum(r.info.jobs for r in runs), shard="", baseline=first.baseline,
                   toolproof_version=first.toolproof_version,
                   extra={"merged_shards": [r.info.shard for r in runs]})
    return RunResult(info, tuple(sorted(scenarios, key=lambda s: s.id)))
