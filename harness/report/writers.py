"""Reports of a run: JUnit XML (one testcase per scenario, step failures in the message), JSON
(``RunResult.to_json``), Markdown (fits a GitHub step summary), the one-line summary, and
``write_output`` (every report and generated file is written through it). Reading JSON results
back lives in ``results_files``."""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from harness.errors import UsageError
from harness.model.results import (
    ERROR,
    FAIL,
    PASS,
    SKIP,
    STALE,
    XFAIL,
    RunInfo,
    RunResult,
)

JUNIT_SUITE_NAME = "toolproof"
GITHUB_STEP_SUMMARY = "GITHUB_STEP_SUMMARY"
MARKDOWN_MAX_FAILURES = 50
MARKDOWN_MAX_MESSAGE_LINES = 40
STATUS_ICONS = {PASS: "✅", FAIL: "❌", ERROR: "💥", SKIP: "⏭️", XFAIL: "🟡", STALE: "🧟"}


# Characters XML 1.0 cannot carry, even as character references: C0 controls other than tab, LF
# and CR, lone surrogates (``surrogateescape`` bytes of undecodable output) and U+FFFE/U+FFFF.
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 cannot hold written as a visible escape (``\\x00``,
    ``\\x1b``, ``\\udcff``), so that a JUnit report of a message holding NULs, control
    characters or undecodable bytes still parses."""
    return _XML_INVALID.sub(_xml_char, text)


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else ""


def junit_suite_name(info: RunInfo) -> str:
    """``toolproof <implementation> <version> [<backend>] shard I/N``: distinct per job, so that
    Linux, Windows and pi runs do not collide on one CI dashboard."""
    who = " ".join(p for p in (info.implementation, info.version) if p)
    name = " ".join(p for p in (JUNIT_SUITE_NAME, who, f"[{info.backend}]" if info.backend else "") if p)
    return name + (f" shard {info.shard}" if info.shard else "")


def junit_timestamp(started: str) -> str:
    """ISO 8601 local time without a zone (``2026-01-31T12:00:00``), the one form every JUnit
    schema accepts; "" stays "" (the attribute is then left out)."""
    return started[:19] if len(started) >= 19 and started[10] == "T" else ""


def to_junit(run: RunResult) -> str:
    """A ``<testsuites>`` document with one ``<testsuite>``: only the attributes and elements of
    the common JUnit schema (Jenkins xUnit's junit-10.xsd; GitLab and GitHub readers)."""
    c = run.counts()
    counts = {"tests": str(len(run.scenarios)), "failures": str(c[FAIL] + c[STALE]), "errors": str(c[ERROR]),
              "skipped": str(c[SKIP] + c[XFAIL]), "time": f"{run.info.duration_s:.3f}"}
    root = ET.Element("testsuites", {"name": junit_suite_name(run.info), **counts})
    attrs = {"name": junit_suite_name(run.info), **counts}
    stamp = junit_timestamp(run.info.started)
    if stamp:
        attrs["timestamp"] = stamp
    suite = ET.SubElement(root, "testsuite", attrs)
    props = ET.SubElement(suite, "properties")
    for key in ("backend", "implementation", "version", "shard", "level"):
        value = getattr(run.info, key)
        if value:
            ET.SubElement(props, "property", {"name": key, "value": str(value)})
    for res in run.scenarios:
        classname = res.id.rsplit("/", 1)[0].replace("/", ".") if "/" in res.id else "scenarios"
        case = ET.SubElement(suite, "testcase", {"classname": classname, "name": res.id,
                                                 "time": f"{res.duration_s:.3f}"})
        text = res.failure_text
        if res.status == FAIL:
            kind = "baseline-different-failure" if res.different_failure else "behaviour"
            el = ET.SubElement(case, "failure", {"message": _first_line(text), "type": kind})
            el.text = text
        elif res.status == STALE:
            el = ET.SubElement(case, "failure", {"message": _first_line(text), "type": "stale-baseline"})
            el.text = text
        elif res.status == ERROR:
            el = ET.SubElement(case, "error", {"message": _first_line(text), "type": "infrastructure"})
            el.text = text
        elif res.status == SKIP:
            el = ET.SubElement(case, "skipped", {"message": res.reason})
            if res.notes:  # baseline entries this skip left unchecked
                el.text = "\n".join(res.notes)
        elif res.status == XFAIL:
            what = "expected failure (baseline, UNREVIEWED)" if res.unreviewed else "expected failure (baseline)"
            el = ET.SubElement(case, "skipped", {"message": f"{what}: {res.reason}",
                                                 "type": "xfail-unreviewed" if res.unreviewed else "xfail"})
            el.text = text
    for el in root.iter():
        el.text = xml_safe(el.text) if el.text else el.text
        for key, value in el.attrib.items():
            el.set(key, xml_safe(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


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
    if info.level:
        lines.append(f"Level: {info.level}.")
    if info.baseline or info.baseline_choice:
        lines.append(f"Baseline `{info.baseline}` ({info.baseline_choice})." if info.baseline
                     else f"No baseline: {info.baseline_choice}.")
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
            what = f"{res.status} (xfail: different failure)" if res.different_failure else res.status
            lines += [f"<details><summary>{STATUS_ICONS[res.status]} <code>{res.id}</code> — {what}</summary>",
                      "", "```diff", *body, "```", "", "</details>", ""]
        if len(bad) > MARKDOWN_MAX_FAILURES:
            lines.append(f"… and {len(bad) - MARKDOWN_MAX_FAILURES} more.")
    unreviewed = [r for r in run.scenarios if r.unreviewed]
    if unreviewed:
        lines += ["", f"<details><summary>⚠️ {len(unreviewed)} expected failure(s) from UNREVIEWED baseline entries "
                      "(reason still a TODO placeholder)</summary>", ""]
        lines += [f"- `{r.id}`" for r in unreviewed]
        lines += ["", "</details>"]
    unchecked = [n for r in run.scenarios for n in r.notes]
    if unchecked:
        lines += ["", f"<details><summary>{len(unchecked)} baseline entries not checked</summary>", ""]
        lines += [f"- {n}" for n in unchecked]
        lines += ["", "</details>"]
    skipped = [r for r in run.scenarios if r.status == SKIP]
    if skipped:
        lines += ["", f"<details><summary>{len(skipped)} skipped</summary>", ""]
        lines += [f"- `{r.id}`: {r.reason}" for r in skipped]
        lines += ["", "</details>"]
    return "\n".join(lines).rstrip() + "\n"


def is_step_summary(path: str) -> bool:
    """``path`` is GitHub's ``$GITHUB_STEP_SUMMARY`` file (shared by every step of a job)."""
    summary = os.environ.get(GITHUB_STEP_SUMMARY, "")
    return bool(summary) and os.path.abspath(summary) == os.path.abspath(path)


def write_reports(run: RunResult, *, junit: str | None = None, json_path: str | None = None,
                  markdown: str | None = None, markdown_append: bool = False) -> None:
    """Write the requested reports. The Markdown summary is appended (after a blank line when
    the file has content) with ``markdown_append`` or when it is ``$GITHUB_STEP_SUMMARY``."""
    if junit:
        write_output(junit, to_junit(run))
    if json_path:
        write_output(json_path, run.dumps() + "\n")
    if markdown:
        write_output(markdown, to_markdown(run), append=markdown_append or is_step_summary(markdown))


def write_output(path: str, text: str, what: str = "report", *, append: bool = False) -> None:
    """Write a file the user asked for (creating its directory), or append to it; failure is a
    one-line ``UsageError`` ("cannot write <what> <path>: …"), never a traceback."""
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        if append:
            try:
                had = Path(path).stat().st_size > 0
            except OSError:
                had = False
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(("\n" if had else "") + text)
        else:
            Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {what} {path}: {exc}") from None
