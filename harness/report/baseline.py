"""Per-implementation baselines (``baselines/<implementation>.yaml``): scenarios or single steps
known to fail, each with a reason. Applying a baseline turns listed failures into ``xfail`` and
listed entries that now pass into ``stale`` (which fails the gate, like an unlisted failure).
``update_baseline`` regenerates a baseline from a results file.
"""

from __future__ import annotations

import difflib
import json
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


def _entry_key(e: BaselineEntry) -> tuple[str, str]:
    return (e.id, e.step or "")


def _render_entry(e: BaselineEntry, indent: int, flow: bool) -> str:
    def scalar(value: str) -> str:
        return yaml.safe_dump(value, allow_unicode=True, width=10_000, default_style=None).removesuffix("\n...\n").strip()

    fields = [("id", e.id), *((("step", e.step),) if e.step else ()), ("reason", e.reason)]
    pad = " " * indent
    if flow:
        return pad + "- {" + ", ".join(f"{k}: {json_scalar(v)}" for k, v in fields) + "}\n"
    lines = [f"{pad}- {fields[0][0]}: {scalar(fields[0][1])}\n"]
    lines += [f"{pad}  {k}: {scalar(v)}\n" for k, v in fields[1:]]
    return "".join(lines)


def json_scalar(value: str) -> str:
    """A YAML flow scalar: JSON's double-quoted form is valid YAML."""

    return json.dumps(value, ensure_ascii=False)


def update_baseline_text(old_text: str, path: str, new: Baseline) -> str:
    """``old_text`` (a baseline file) changed only where ``new`` differs from it: entries that
    stay keep their exact lines (comments, quoting, style, order), dropped entries lose theirs,
    new entries are inserted in the file's style before the first kept entry that sorts after
    them, and the header (comments, ``implementation``) is untouched. Falls back to
    ``new.dumps()`` when the file has no block-style ``entries`` list to edit."""
    if not old_text.strip():
        return new.dumps()
    root = yaml.compose(old_text, Loader=yaml.SafeLoader)
    pair = next(((k, v) for k, v in getattr(root, "value", []) if getattr(k, "value", None) == "entries"), None)
    if not isinstance(root, yaml.MappingNode) or pair is None or not isinstance(pair[1], yaml.SequenceNode):
        return new.dumps()
    key, seq = pair
    lines = old_text.splitlines(keepends=True)
    old_entries = parse_baseline_text(old_text, path).entries
    if seq.flow_style or not seq.value:
        if seq.value:  # a non-empty flow list: rewrite it as a block list
            return new.dumps()
        if not new.entries:
            return old_text
        indent, flow = key.start_mark.column + 2, False
        head = old_text[:seq.start_mark.index].rstrip(" ")
        tail = old_text[seq.end_mark.index:]
        body = "".join(_render_entry(e, indent, flow) for e in new.entries)
        return head.rstrip("\n") + "\n" + body + tail.lstrip("\n")
    starts = [item.start_mark.line for item in seq.value]
    end_line = max(_block_end_line(seq.value[-1], lines), starts[-1])
    blocks = list(zip(starts, [*starts[1:], end_line + 1], strict=True))
    indent = seq.value[0].start_mark.column - 2
    flow = bool(getattr(seq.value[0], "flow_style", False))
    by_key = {_entry_key(entry): "".join(lines[a:b]) for entry, (a, b) in zip(old_entries, blocks, strict=True)} \
        if len(old_entries) == len(blocks) else None
    if by_key is None:
        return new.dumps()
    wanted = {_entry_key(e): e for e in new.entries}
    old_same = {_entry_key(e): e for e in old_entries}
    kept = [k for k in (_entry_key(e) for e in old_entries) if k in wanted and wanted[k] == old_same[k]]
    fresh = [e for e in new.entries if _entry_key(e) not in kept]
    out_blocks: list[str] = []
    pending = sorted(fresh, key=_entry_key)
    for k in kept:
        while pending and _entry_key(pending[0]) < k:
            out_blocks.append(_render_entry(pending.pop(0), indent, flow))
        out_blocks.append(by_key[k])
    out_blocks += [_render_entry(e, indent, flow) for e in pending]
    before = "".join(lines[:starts[0]])
    after = "".join(lines[end_line + 1:])
    if not out_blocks:
        key_line = lines[key.start_mark.line]
        before = "".join(lines[:key.start_mark.line]) + key_line.rstrip("\n").rstrip() + " []\n"
        before += "".join(lines[key.start_mark.line + 1:starts[0]])
    text = before + "".join(out_blocks) + after
    check = parse_baseline_text(text, path)
    if sorted(check.entries, key=_entry_key) != sorted(new.entries, key=_entry_key) \
            or check.implementation != new.implementation:
        return new.dumps()
    return text


def _block_end_line(node: yaml.Node, lines: list[str]) -> int:
    """The last line (0-based) that belongs to a block sequence item, trailing blank lines and
    comments excluded."""
    end = node.end_mark
    line = end.line if end.column > 0 else end.line - 1
    while line > node.start_mark.line and (not lines[line].strip() or lines[line].lstrip().startswith("#")):
        line -= 1
    return line
