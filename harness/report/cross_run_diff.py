"""``toolproof diff``: run the same corpus on two sides and list every step whose status
(pass/fail), normalised observation or workspace tree after the step (every path's kind, mode,
size, SHA-256 and link target; ``.git`` contents by kind only) differs, every step or scenario
one side has and the other lacks, and — apart, as not compared — what one side skipped; as
text, JSON (``format`` 2) and Markdown.

What is random by nature is replaced on both sides first (``harness.run.equivalence``)."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from typing import Any

from harness.model.results import ERROR, SKIP, RunResult, StepResult
from harness.run.compare import readable_diff
from harness.run.equivalence import comparable, differing_keys, differing_paths

DIFF_FORMAT = 2
MARKDOWN_MAX_DIFFS = 50


def md_inline(text: str) -> str:
    """Text safe inside Markdown inline code or an HTML summary line."""
    return html.escape(" ".join(text.split()).replace("`", "'"), quote=False)


@dataclass(frozen=True)
class Difference:
    scenario: str
    step: str  # "" when the difference is about the whole scenario (skipped on one side)
    fields: tuple[str, ...]
    diff: str = ""
    note: str = ""

    def render(self) -> str:
        if not self.step:
            return f"{self.scenario}: {self.note}"
        return f"{self.scenario} {self.step}: {', '.join(self.fields)} differ\n{self.diff}"

    def to_json(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "step": self.step, "fields": list(self.fields), "diff": self.diff,
                **({"note": self.note} if self.note else {})}


def _tree_diff(a: dict[str, Any], b: dict[str, Any], labels: tuple[str, str]) -> str:
    """One line per path whose entry differs (or exists on one side only)."""
    lines = []
    for path in sorted(set(a) | set(b)):
        ea, eb = a.get(path), b.get(path)
        if ea == eb:
            continue
        show = [f"{label}: {json.dumps(e, sort_keys=True) if e is not None else 'absent'}"
                for label, e in zip(labels, (ea, eb), strict=True)]
        lines.append(f"  {path}: " + "; ".join(show))
    return "\n".join(lines)


def _step_difference(scenario: str, lst: StepResult, rst: StepResult, labels: tuple[str, str]) -> Difference | None:
    fields: list[str] = []
    parts: list[str] = []
    if lst.status != rst.status:
        fields.append("status")
        parts.append(f"status: {labels[0]} {lst.status}, {labels[1]} {rst.status}")
    keys = differing_keys(lst.observation, rst.observation)
    if keys:
        a, b = comparable(lst.observation), comparable(rst.observation)
        fields += keys
        ja = json.dumps(a, ensure_ascii=False, indent=1, sort_keys=True)
        jb = json.dumps(b, ensure_ascii=False, indent=1, sort_keys=True)
        parts.append(readable_diff(ja + "\n", jb + "\n", labels))
    if differing_paths(lst.tree, rst.tree):
        assert lst.tree is not None and rst.tree is not None
        fields.append("files")
        parts.append("workspace files after the step:\n" + _tree_diff(lst.tree, rst.tree, labels))
    if not fields:
        return None
    return Difference(scenario, lst.id, tuple(fields), "\n".join(parts))


def differences(left: RunResult, right: RunResult, labels: tuple[str, str] = ("a", "b")) -> list[Difference]:
    """Every step whose status, comparable observation or workspace tree (when both runs listed
    trees) differs, and every step one side has and the other lacks, in the left run's order.
    Scenarios or steps skipped on one side are not differences: ``one_sided_skips`` lists them."""

    out: list[Difference] = []
    rmap = {s.id: s for s in right.scenarios}
    for ls in left.scenarios:
        rs = rmap.get(ls.id)
        if rs is None:
            out.append(Difference(ls.id, "", ("scenario",), note=f"ran on {labels[0]} only"))
            continue
        if SKIP in (ls.status, rs.status) or ERROR in (ls.status, rs.status):
            continue  # skipped: one_sided_skips; errors: listed as errors, never compared
        rsteps = {st.id: st for st in rs.steps}
        lids = {st.id for st in ls.steps}
        for lst in ls.steps:
            rst = rsteps.get(lst.id)
            if rst is None:
                out.append(Difference(ls.id, lst.id, ("step",), f"step {lst.id} ran on {labels[0]} only"))
                continue
            if SKIP in (lst.status, rst.status):
                continue
            d = _step_difference(ls.id, lst, rst, labels)
            if d is not None:
                out.append(d)
        for rst in rs.steps:
            if rst.id not in lids:
                out.append(Difference(ls.id, rst.id, ("step",), f"step {rst.id} ran on {labels[1]} only"))
    lids_all = {s.id for s in left.scenarios}
    out += [Difference(rs.id, "", ("scenario",), note=f"ran on {labels[1]} only")
            for rs in right.scenarios if rs.id not in lids_all]
    return out


def one_sided_skips(left: RunResult, right: RunResult) -> list[tuple[str, str]]:
    """(scenario id, or ``id step``, why) for scenarios or steps one side skipped and the other
    ran: not compared (a backend without, say, container isolation skips what needs it), listed
    apart from differences."""
    rmap = {s.id: s for s in right.scenarios}
    out = []
    for ls in left.scenarios:
        rs = rmap.get(ls.id)
        if rs is None:
            continue
        if (ls.status == SKIP) != (rs.status == SKIP):
            skipped = ls if ls.status == SKIP else rs
            out.append((ls.id, f"{ls.status} vs {rs.status}: {skipped.reason}"))
            continue
        if SKIP in (ls.status, rs.status) or ERROR in (ls.status, rs.status):
            continue
        rsteps = {st.id: st for st in rs.steps}
        for lst in ls.steps:
            rst = rsteps.get(lst.id)
            if rst is not None and (lst.status == SKIP) != (rst.status == SKIP):
                skipped_step = lst if lst.status == SKIP else rst
                out.append((f"{ls.id} {lst.id}", f"{lst.status} vs {rst.status}: {skipped_step.reason}"))
    return out


def observation_differences(left: RunResult, right: RunResult, labels: tuple[str, str] = ("a", "b")) -> list[str]:
    """``differences`` rendered, one text entry per differing step."""
    return [d.render() for d in differences(left, right, labels)]


def _errors(left: RunResult, right: RunResult, labels: tuple[str, str]) -> list[dict[str, str]]:
    return [{"side": label, "scenario": r.id, "message": r.message or r.failure_text}
            for label, run in zip(labels, (left, right), strict=True) for r in run.scenarios if r.status == ERROR]


def diff_to_json(diffs: list[Difference], left: RunResult, right: RunResult, labels: tuple[str, str]) -> str:
    obj = {"format": DIFF_FORMAT, "a": labels[0], "b": labels[1], "scenarios": len(left.scenarios),
           "differences": [d.to_json() for d in diffs], "errors": _errors(left, right, labels),
           "not_compared": [{"scenario": sid, "why": why} for sid, why in one_sided_skips(left, right)]}
    return json.dumps(obj, ensure_ascii=False, indent=1) + "\n"


def diff_to_markdown(diffs: list[Difference], left: RunResult, right: RunResult, labels: tuple[str, str]) -> str:
    errors = _errors(left, right, labels)
    verdict = "ERROR (infrastructure)" if errors else (f"{len(diffs)} differing step(s)" if diffs else "no differences")
    lines = [f"## toolproof diff: {verdict}", "",
             f"`{md_inline(labels[0])}` vs `{md_inline(labels[1])}` on {len(left.scenarios)} scenarios.", ""]
    for e in errors:
        lines.append(f"- 💥 `{md_inline(e['scenario'])}` on `{md_inline(e['side'])}`: {md_inline(e['message'].splitlines()[0] if e['message'] else '')}")
    if errors:
        lines.append("")
    for d in diffs[:MARKDOWN_MAX_DIFFS]:
        where = f"<code>{md_inline(d.scenario)}</code>" + (f" step <code>{md_inline(d.step)}</code>" if d.step else "")
        what = ", ".join(d.fields) + " differ" if d.step else d.note
        body = ["", "```diff", *d.diff.splitlines(), "```", ""] if d.diff else [""]
        lines += [f"<details><summary>{where}: {md_inline(what)}</summary>", *body, "</details>", ""]
    if len(diffs) > MARKDOWN_MAX_DIFFS:
        lines.append(f"… and {len(diffs) - MARKDOWN_MAX_DIFFS} more (see the JSON report).")
    skipped = one_sided_skips(left, right)
    if skipped:
        lines += ["", f"<details><summary>{len(skipped)} scenario(s) not compared (skipped on one side)</summary>", ""]
        lines += [f"- `{md_inline(sid)}`: {md_inline(why)}" for sid, why in skipped]
        lines += ["", "</details>"]
    return "\n".join(lines).rstrip() + "\n"
