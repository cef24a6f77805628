"""Per-implementation baselines (``baselines/<implementation>-<version>.yaml``): the known failures
of one implementation, each pinned to the step that fails and, optionally, to the mismatch it
fails with (``mismatch:``), each with a reason.

Applying a baseline to a run (``apply_baseline``):

- a listed step that fails with the listed mismatch is ``xfail``;
- a listed step that fails otherwise, and any failing step of a baselined scenario that is not
  listed, stays ``fail``, marked "xfail (different failure)" with the expected and the actual
  mismatch side by side;
- a listed step that passes is ``stale`` (fails the gate) and says which check changed: the
  expected mismatch that no longer appears;
- a listed step or scenario that was skipped (or hit an infrastructure error) is neither: the
  result carries a note saying the entry was not checked, and why.

A whole-scenario entry (``scope: scenario``) needs a reviewed reason; any failure of the scenario
then xfails, provided every ``mismatch:`` pattern it names still appears. An entry whose reason is
still the placeholder ``baseline update`` writes (``TODO: …``) is *unreviewed*: it xfails like
any other, but the run, its reports and ``toolproof validate`` say so.

``update_baseline`` regenerates a baseline from results; ``update_baseline_text`` applies that to
the file's text so that untouched entries keep their exact lines. ``choose_shipped_baseline``
finds the shipped baseline of an implementation and version (the one-command gate).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from harness.corpus.yaml_reader import Node, YamlReader, parse_yaml_document, read_document_text
from harness.errors import ScenarioError, UsageError
from harness.install.shipped import shipped_root
from harness.model.results import (
    BASELINE_DIFFERENT,
    BASELINE_NO_SUCH_STEP,
    BASELINE_NOT_CHECKED,
    BASELINE_UNREVIEWED,
    ERROR,
    FAIL,
    PASS,
    SKIP,
    STALE,
    XFAIL,
    RunResult,
    ScenarioResult,
    StepResult,
)

BASELINE_KEYS = ("implementation", "version", "entries")
ENTRY_KEYS = ("id", "step", "scope", "mismatch", "reason")
PATTERN_KEYS = ("contains", "regex")
SCOPE_STEP, SCOPE_SCENARIO = "step", "scenario"
SCOPES = (SCOPE_STEP, SCOPE_SCENARIO)
PLACEHOLDER_PREFIX = "TODO"
PLACEHOLDER_REASON = "TODO: review: say why this step fails (a spec rule, an upstream difference)"
TODO_REASON = PLACEHOLDER_REASON
DIFFERENT_FAILURE = "xfail (different failure)"
# How much of a rendered mismatch ``baseline update`` pins: its first lines (the message and the
# start of its diff), enough to tell one failure from another, short enough to review.
PIN_MAX_LINES = 8
PIN_MAX_CHARS = 480
# Parts of a mismatch that differ from run to run and are never pinned.
VOLATILE_PREFIXES = (re.compile(r"(duration: expected at (?:most|least) \S+ s, took )"),)
SHIPPED_BASELINES = "baselines"
CHECK_LABEL_RE = re.compile(r"([^:\n]+?):(?: |$)")  # a rendered mismatch starts "LABEL: …"
# A snapshot mismatch names the snapshot file by its absolute path; pins and matching use the part
# from the store's ``snapshots/`` directory on, so a baseline holds on every machine.
SNAPSHOT_PATH_RE = re.compile(r"(snapshot )[^\n]*?[/\\]snapshots[/\\]([^\n]*?\.txt)")


def is_placeholder(reason: str) -> bool:
    """A reason nobody has written yet (``TODO: …``, as ``baseline update`` leaves new entries)."""
    return reason.lstrip().upper().startswith(PLACEHOLDER_PREFIX)


@dataclass(frozen=True)
class MismatchPattern:
    """What a listed step's mismatch must look like: a substring of the rendered mismatch, or a
    regular expression searched in it."""

    text: str
    regex: bool = False

    def matches(self, rendered: str) -> bool:
        return re.search(self.text, rendered) is not None if self.regex else self.text in rendered

    @property
    def check(self) -> str:
        """The check a substring pattern names (``text``, ``is_error``, ``files.a.txt``), or ""."""
        m = None if self.regex else CHECK_LABEL_RE.match(self.text)
        return m.group(1) if m else ""

    def show(self) -> str:
        return f"regex {self.text!r}" if self.regex else self.text


@dataclass(frozen=True)
class BaselineEntry:
    id: str
    reason: str
    step: str | None = None
    mismatch: tuple[MismatchPattern, ...] = ()
    scope: str = SCOPE_STEP
    legacy: bool = False  # a whole-scenario entry without ``scope`` (only ``baseline update`` reads those)
    line: int = field(default=0, compare=False)

    def __post_init__(self) -> None:
        if self.step is None and self.scope != SCOPE_SCENARIO:
            object.__setattr__(self, "scope", SCOPE_SCENARIO)

    @property
    def whole(self) -> bool:
        return self.scope == SCOPE_SCENARIO

    @property
    def unreviewed(self) -> bool:
        return is_placeholder(self.reason)

    def describe(self) -> str:
        return f"{self.id!r} (scope: scenario)" if self.whole else f"step {self.step!r} of {self.id!r}"


@dataclass(frozen=True)
class Baseline:
    implementation: str
    entries: tuple[BaselineEntry, ...] = ()
    path: str = ""
    version: str = ""

    def for_scenario(self, scenario_id: str) -> list[BaselineEntry]:
        return [e for e in self.entries if e.id == scenario_id]

    def where(self, entry: BaselineEntry) -> str:
        """``file:line`` of an entry (as far as known)."""
        if self.path and entry.line:
            return f"{self.path}:{entry.line}"
        return self.path or "the baseline"

    @property
    def identity(self) -> str:
        return " ".join(p for p in (self.implementation, self.version) if p)

    def unreviewed(self) -> list[BaselineEntry]:
        return [e for e in self.entries if e.unreviewed]

    def dumps(self) -> str:
        head = f"implementation: {_scalar(self.implementation)}\n"
        if self.version:
            head += f"version: {_scalar(self.version)}\n"
        if not self.entries:
            return head + "entries: []\n"
        return head + "entries:\n" + "".join(_render_entry(e, 0, False) for e in self.entries)


# -- reading -------------------------------------------------------------------------------------

def _pattern(r: YamlReader, node: Node, field_name: str) -> MismatchPattern | None:
    if isinstance(node, yaml.MappingNode):
        pairs = r.mapping(node, field_name, PATTERN_KEYS)
        if pairs is None:
            return None
        if len(pairs) != 1:
            r.problem(node, field_name, "expected exactly one of contains, regex")
            return None
        key, (_, value) = next(iter(pairs.items()))
        text = r.string(value, f"{field_name}.{key}", allow_empty=False)
        if text is None:
            return None
        if key == "regex":
            try:
                re.compile(text)
            except re.error as exc:
                r.problem(value, f"{field_name}.regex", f"not a valid regular expression: {exc}")
                return None
        return MismatchPattern(text, key == "regex")
    if isinstance(node, yaml.ScalarNode):
        text = r.string(node, field_name, allow_empty=False)
        return MismatchPattern(text) if text else None
    r.expected(node, field_name, "a substring of the mismatch, {regex: PATTERN}, or a list of them")
    return None


def _patterns(r: YamlReader, node: Node, field_name: str) -> tuple[MismatchPattern, ...]:
    if isinstance(node, yaml.SequenceNode):
        if not node.value:
            r.problem(node, field_name, "expected at least one pattern (or leave mismatch out)")
        found = (_pattern(r, item, f"{field_name}[{i}]") for i, item in enumerate(node.value, 1))
        return tuple(p for p in found if p is not None)
    one = _pattern(r, node, field_name)
    return (one,) if one is not None else ()


def _entry(r: YamlReader, item: Node, field_name: str, legacy: bool) -> BaselineEntry | None:
    e = r.mapping(item, field_name, ENTRY_KEYS)
    if e is None:
        return None
    for key in ("id", "reason"):
        if key not in e:
            r.problem(item, f"{field_name}.{key}", "required field is missing")
    sid = r.string(e["id"][1], f"{field_name}.id", allow_empty=False) if "id" in e else None
    reason = r.string(e["reason"][1], f"{field_name}.reason", allow_empty=False) if "reason" in e else None
    step = r.string(e["step"][1], f"{field_name}.step", allow_empty=False) if "step" in e else None
    scope = r.string(e["scope"][1], f"{field_name}.scope", SCOPES) if "scope" in e else None
    patterns = _patterns(r, e["mismatch"][1], f"{field_name}.mismatch") if "mismatch" in e else ()
    ok = bool(sid and reason) and ("step" not in e or step) and ("scope" not in e or scope)
    is_legacy = False
    if scope is None and "scope" not in e:
        if "step" in e:
            scope = SCOPE_STEP
        elif legacy:
            scope, is_legacy = SCOPE_SCENARIO, True
        else:
            r.problem(item, f"{field_name}.step", "required: name the step that fails (an entry for the whole "
                      "scenario needs scope: scenario and a reason; `toolproof baseline update` rewrites such "
                      "entries per step, keeping their reasons)")
            ok = False
    if scope == SCOPE_STEP and "step" not in e:
        r.problem(e["scope"][1], f"{field_name}.step", "required with scope: step (or use scope: scenario)")
        ok = False
    if scope == SCOPE_SCENARIO and "step" in e:
        r.problem(e["step"][1], f"{field_name}.step", "scope: scenario covers every step; remove step or scope")
        ok = False
    if scope == SCOPE_SCENARIO and not is_legacy and reason and is_placeholder(reason):
        r.problem(e["reason"][1], f"{field_name}.reason",
                  "a whole-scenario entry needs a reviewed reason, not a placeholder")
        ok = False
    if not ok or sid is None or reason is None:
        return None
    return BaselineEntry(sid, reason, step if scope == SCOPE_STEP else None, patterns,
                         scope or SCOPE_STEP, is_legacy, item.start_mark.line + 1)


def _baseline(r: YamlReader, root: Node, legacy: bool) -> Baseline:
    pairs = r.mapping(root, "", BASELINE_KEYS) or {}
    impl = ""
    if "implementation" not in pairs:
        r.problem(root, "implementation", "required field is missing")
    else:
        impl = r.string(pairs["implementation"][1], "implementation", allow_empty=False) or ""
    version = ""
    if "version" in pairs:
        version = r.string(pairs["version"][1], "version (quote it: version: \"1.6\")", allow_empty=False) or ""
    entries: list[BaselineEntry] = []
    seen: dict[tuple[str, str | None], int] = {}
    whole_at: dict[str, int] = {}
    step_at: dict[str, int] = {}
    items = r.sequence(pairs["entries"][1], "entries") if "entries" in pairs else []
    for i, item in enumerate(items or [], 1):
        fname = f"entries[{i}]"
        entry = _entry(r, item, fname, legacy)
        if entry is None:
            continue
        key = (entry.id, entry.step)
        if key in seen:
            r.problem(item, fname, f"duplicate entry (first at line {seen[key]})")
            continue
        seen[key] = entry.line
        other = step_at.get(entry.id) if entry.whole else whole_at.get(entry.id)
        if other is not None:
            r.problem(item, fname, f"{entry.id!r} has both a scope: scenario entry and step entries (line {other}); "
                      "keep one kind")
            continue
        (whole_at if entry.whole else step_at).setdefault(entry.id, entry.line)
        entries.append(entry)
    return Baseline(impl, tuple(entries), r.path, version)


def parse_baseline_text(text: str, path: str, *, legacy: bool = False, whole_entries: bool = False) -> Baseline:
    """Parse a baseline file; raises ``ScenarioError`` listing every problem with file:line.
    ``legacy`` also accepts whole-scenario entries without ``scope`` (read by ``baseline update``,
    which rewrites them); ``whole_entries`` is for lists without steps (property baselines), whose
    entries are all whole."""
    baseline, problems = parse_yaml_document(text, path, lambda r, root: _baseline(r, root, legacy or whole_entries))
    if problems:
        raise ScenarioError(problems)
    if whole_entries:
        baseline = replace(baseline, entries=tuple(replace(e, legacy=False) for e in baseline.entries))
    return baseline


def load_baseline(path: str, *, legacy: bool = False) -> Baseline:
    return parse_baseline_text(read_document_text(path), path, legacy=legacy)


# -- applying ------------------------------------------------------------------------------------

def portable(rendered: str) -> str:
    """A rendered mismatch as patterns see it: the same on every machine (a snapshot file is named
    from its store's ``snapshots/`` directory on)."""
    return SNAPSHOT_PATH_RE.sub(lambda m: m.group(1) + "snapshots/" + m.group(2).replace("\\", "/"), rendered)


def unmatched(patterns: Sequence[MismatchPattern], messages: Sequence[str]) -> tuple[list[MismatchPattern], list[str]]:
    """The patterns no message matches, and the messages no pattern matches (none without patterns)."""
    if not patterns:
        return [], []
    seen = [portable(m) for m in messages]
    missing = [p for p in patterns if not any(p.matches(m) for m in seen)]
    extra = [m for m, s in zip(messages, seen, strict=True) if not any(p.matches(s) for p in patterns)]
    return missing, extra


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.splitlines() or [""])


def _first_line(text: str) -> str:
    return text.split("\n", 1)[0]


def _check_names(patterns: Iterable[MismatchPattern]) -> str:
    names = list(dict.fromkeys(p.check for p in patterns if p.check))
    return ", ".join(f"`{n}`" for n in names)


def _stale_note(entry: BaselineEntry, baseline: Baseline) -> str:
    what = entry.describe()
    if entry.mismatch:
        checks = _check_names(entry.mismatch)
        change = (f"check {checks} no longer fails as listed" if checks else "the listed mismatch no longer appears")
        shown = "; ".join(_first_line(p.show()) for p in entry.mismatch)
        change += f" (expected mismatch: {shown})"
    else:
        change = "the entry names no mismatch, so which check changed is not known"
    return (f"stale baseline entry: {what} now passes: {change}; if that is a real fix, remove the entry "
            f"from {baseline.where(entry)} (reason was: {entry.reason})")


def _different_note(entry: BaselineEntry, baseline: Baseline, missing: Sequence[MismatchPattern],
                    extra: Sequence[str]) -> str:
    lines = [f"{DIFFERENT_FAILURE}: not the failure listed in {baseline.where(entry)}"]
    for p in missing:
        lines.append("  expected mismatch, not seen:")
        lines.append(_indent(p.show()))
    for m in extra:
        lines.append("  actual mismatch, not listed:")
        lines.append(_indent(_first_line(m)))
    return "\n".join(lines)


def _unlisted_note(step_id: str, entries: Sequence[BaselineEntry], baseline: Baseline) -> str:
    listed = ", ".join(repr(e.step) for e in entries if e.step)
    return (f"{DIFFERENT_FAILURE}: this scenario is baselined ({baseline.where(entries[0])}) for step(s) {listed}, "
            f"not for step {step_id!r}")


def _not_checked(entry: BaselineEntry, baseline: Baseline, why: str) -> str:
    return f"baseline entry {entry.describe()} ({baseline.where(entry)}) not checked: {why}"


def _status_of(steps: Sequence[StepResult], fallback: str) -> str:
    statuses = {s.status for s in steps}
    return next((s for s in (FAIL, STALE, XFAIL) if s in statuses), fallback)


def _xfail(st: StepResult, entry: BaselineEntry) -> StepResult:
    return replace(st, status=XFAIL, reason=entry.reason, expected=tuple(p.show() for p in entry.mismatch),
                   baseline=BASELINE_UNREVIEWED if entry.unreviewed else "")


def _apply_whole(res: ScenarioResult, entry: BaselineEntry, baseline: Baseline) -> ScenarioResult:
    shown = tuple(p.show() for p in entry.mismatch)
    if res.status == PASS:
        return replace(res, status=STALE, message=_stale_note(entry, baseline), reason=entry.reason)
    failing = [s for s in res.steps if s.status == FAIL]
    missing, _ = unmatched(entry.mismatch, [m for s in failing for m in s.messages])
    if missing:
        note = _different_note(entry, baseline, missing, [])
        steps = tuple(replace(s, baseline=BASELINE_DIFFERENT, note=note, reason=entry.reason, expected=shown)
                      if s.status == FAIL else s for s in res.steps)
        return replace(res, steps=steps)
    steps = tuple(_xfail(s, entry) if s.status == FAIL else s for s in res.steps)
    return replace(res, status=XFAIL, steps=steps, reason=entry.reason)


def _apply_steps(res: ScenarioResult, entries: list[BaselineEntry], baseline: Baseline) -> ScenarioResult:
    by_step = {e.step: e for e in entries}
    steps: list[StepResult] = []
    notes = list(res.notes)
    for st in res.steps:
        entry = by_step.pop(st.id, None)
        if entry is None:
            if st.status == FAIL:
                st = replace(st, baseline=BASELINE_DIFFERENT, note=_unlisted_note(st.id, entries, baseline))
        elif st.status == FAIL:
            missing, extra = unmatched(entry.mismatch, st.messages)
            if missing or extra:
                st = replace(st, baseline=BASELINE_DIFFERENT, note=_different_note(entry, baseline, missing, extra),
                             reason=entry.reason, expected=tuple(p.show() for p in entry.mismatch))
            else:
                st = _xfail(st, entry)
        elif st.status == PASS:
            st = replace(st, status=STALE, note=_stale_note(entry, baseline), reason=entry.reason,
                         expected=tuple(p.show() for p in entry.mismatch))
        elif st.status == SKIP:
            why = f"the step was skipped ({st.reason})" if st.reason else "the step was skipped"
            notes.append(_not_checked(entry, baseline, why))
            st = replace(st, baseline=BASELINE_NOT_CHECKED, note=notes[-1])
        steps.append(st)
    have = ", ".join(repr(s.id) for s in res.steps) or "none"
    for entry in by_step.values():  # entries naming a step this scenario does not have
        steps.append(StepResult(str(entry.step), STALE, reason=entry.reason, baseline=BASELINE_NO_SUCH_STEP,
                                note=f"stale baseline entry: {entry.describe()} names a step the scenario does not "
                                     f"have (its steps: {have}); fix or remove it in {baseline.where(entry)}"))
    status = _status_of(steps, res.status)
    reason = "; ".join(dict.fromkeys(s.reason for s in steps if s.status in (XFAIL, STALE) and s.reason))
    return replace(res, status=status, steps=tuple(steps), reason=reason or res.reason, notes=tuple(notes))


def apply_to_result(res: ScenarioResult, baseline: Baseline | None) -> ScenarioResult:
    """The baseline applied to one scenario result (see the module docstring)."""
    if baseline is None:
        return res
    entries = baseline.for_scenario(res.id)
    if not entries:
        return res
    if res.status in (SKIP, ERROR):
        why = (f"the scenario was skipped ({res.reason})" if res.status == SKIP
               else "the scenario hit an infrastructure error")
        return replace(res, notes=(*res.notes, *(_not_checked(e, baseline, why) for e in entries)))
    whole = next((e for e in entries if e.whole), None)
    if whole is not None:
        return _apply_whole(res, whole, baseline)
    return _apply_steps(res, entries, baseline)


def apply_baseline(run: RunResult, baseline: Baseline) -> RunResult:
    """Listed failures → xfail, other failures of baselined scenarios marked as different
    failures, listed passes → stale; skipped or errored scenarios get a not-checked note."""
    return run.with_scenarios(tuple(apply_to_result(r, baseline) for r in run.scenarios))


@dataclass(frozen=True)
class BaselineReport:
    """What a baseline did to a run, for the summary."""

    xfail: int = 0
    unreviewed: tuple[str, ...] = ()
    stale: int = 0
    different: int = 0
    not_checked: tuple[str, ...] = ()
    not_in_run: int = 0


def baseline_report(run: RunResult, baseline: Baseline) -> BaselineReport:
    ids = {r.id for r in run.scenarios}
    steps = [(r, s) for r in run.scenarios for s in r.steps]
    stale = sum(1 for r in run.scenarios if r.status == STALE and not any(s.status == STALE for s in r.steps))
    return BaselineReport(
        xfail=sum(1 for r, s in steps if s.status == XFAIL) + sum(1 for r in run.scenarios
                                                                  if r.status == XFAIL and not r.steps),
        unreviewed=tuple(f"{r.id} {s.id}" for r, s in steps if s.baseline == BASELINE_UNREVIEWED),
        stale=stale + sum(1 for _, s in steps if s.status == STALE),
        different=sum(1 for _, s in steps if s.baseline == BASELINE_DIFFERENT),
        not_checked=tuple(n for r in run.scenarios for n in r.notes),
        not_in_run=sum(1 for e in baseline.entries if e.id not in ids))


def _reason_group(note: str) -> str:
    """``baseline entry … not checked: the scenario was skipped (…)`` → what follows "not checked: "."""
    return note.split(" not checked: ", 1)[-1]


def summary_lines(run: RunResult, baseline: Baseline | None, choice: str) -> list[str]:
    """What the run's summary says about its baseline: which one and why, what it did, what it
    could not check, unreviewed entries, and an implementation it was not written for."""
    if baseline is None:
        return [f"toolproof: no baseline: {choice}"] if choice else []
    rep = baseline_report(run, baseline)
    shown = run.info.baseline or baseline.path
    lines = [f"toolproof: baseline {shown} ({choice})" if choice else f"toolproof: baseline {shown}"]
    parts = [f"{rep.xfail} entr{'y' if rep.xfail == 1 else 'ies'} matched (xfail)"]
    if rep.different:
        parts.append(f"{rep.different} different failure(s)")
    if rep.stale:
        parts.append(f"{rep.stale} stale")
    if rep.not_checked:
        parts.append(f"{len(rep.not_checked)} entr{'y' if len(rep.not_checked) == 1 else 'ies'} not checked")
    if rep.not_in_run:
        parts.append(f"{rep.not_in_run} for scenarios outside this selection")
    lines.append("toolproof: baseline: " + ", ".join(parts))
    if rep.not_checked:
        groups: dict[str, int] = {}
        for note in rep.not_checked:
            groups[_reason_group(note)] = groups.get(_reason_group(note), 0) + 1
        for why, n in sorted(groups.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"    {n} not checked: {why}")
    if rep.unreviewed:
        shown = ", ".join(rep.unreviewed[:5]) + (f" and {len(rep.unreviewed) - 5} more" if len(rep.unreviewed) > 5 else "")
        lines.append(f"toolproof: warning: {len(rep.unreviewed)} expected failure(s) from UNREVIEWED baseline entries "
                     f"(reason still a TODO placeholder): {shown}")
    who = " ".join(p for p in (run.info.implementation, run.info.version) if p)
    if run.info.implementation and not identity_matches(baseline, run.info.implementation, run.info.version):
        lines.append(f"toolproof: warning: baseline {baseline.path} is for {baseline.identity}; this run is of {who}")
    return lines


def validate_baseline_lines(baseline: Baseline) -> list[str]:
    """``toolproof validate --baseline``: a line per unreviewed entry (``file:line: field: …``),
    then the count."""
    lines = [f"{baseline.path}:{e.line}: entries[{i}].reason: unreviewed: still a TODO placeholder; write why "
             f"{e.describe()} fails (it xfails meanwhile, and every run reports it)"
             for i, e in enumerate(baseline.entries, 1) if e.unreviewed]
    n = len(baseline.entries)
    tail = f"; {len(lines)} UNREVIEWED" if lines else ", all reviewed"
    return [*lines, f"toolproof: baseline {baseline.path} ({baseline.identity}) is valid: {n} entr{'y' if n == 1 else 'ies'}{tail}"]


def identity_matches(baseline: Baseline, implementation: str, version: str) -> bool:
    """The baseline is for this implementation (and version, when it names one)."""
    return baseline.implementation == implementation and (not baseline.version or baseline.version == version)


# -- choosing a shipped baseline -----------------------------------------------------------------

def baseline_header(path: str) -> Baseline:
    """A baseline file's ``implementation`` and ``version`` only (its entries are not read)."""
    def build(r: YamlReader, root: Node) -> Baseline:
        pairs = r.mapping(root, "", None) or {}
        values = {k: r.string(pairs[k][1], k, allow_empty=False) or "" for k in ("implementation", "version")
                  if k in pairs}
        return Baseline(values.get("implementation", ""), (), path, values.get("version", ""))

    header, problems = parse_yaml_document(read_document_text(path), path, build)
    if problems:
        raise ScenarioError(problems)
    return header


def shipped_baselines() -> list[Baseline]:
    """The header of every scenario baseline shipped with toolproof (``baselines/*.yaml``)."""
    root = shipped_root() / SHIPPED_BASELINES
    return [baseline_header(str(p)) for p in sorted(root.glob("*.yaml"))]


def choose_shipped_baseline(implementation: str, version: str,
                            candidates: Sequence[Baseline] | None = None) -> tuple[Baseline | None, str]:
    """The shipped baseline for ``implementation`` ``version`` (as its ``hello`` says) and why:
    one naming that exact version wins over one naming no version; none is ``(None, why)``."""
    found = list(candidates) if candidates is not None else shipped_baselines()
    who = " ".join(p for p in (implementation, version) if p) or "an implementation without a name"
    exact = [b for b in found if b.implementation == implementation and b.version and b.version == version]
    generic = [b for b in found if b.implementation == implementation and not b.version]
    for group, how in ((exact, "implementation and version"), (generic, "implementation (the baseline names no version)")):
        if len(group) == 1:
            chosen = load_baseline(group[0].path) if not group[0].entries and group[0].path else group[0]
            return chosen, f"the shipped baseline for {who}, as the implementation's hello says; matched on {how}"
        if len(group) > 1:
            names = ", ".join(b.path for b in group)
            return None, f"several shipped baselines are for {who} ({names}); name one with --baseline"
    known = ", ".join(sorted(b.identity for b in found)) or "none"
    return None, f"no shipped baseline is for {who} (shipped: {known}); pass --baseline F to apply one"


# -- updating ------------------------------------------------------------------------------------

def pin(rendered: str) -> str:
    """The part of a rendered mismatch ``baseline update`` writes as ``mismatch:``: its first
    lines (at most ``PIN_MAX_LINES`` lines and ``PIN_MAX_CHARS`` characters), cut before what
    differs from run to run (durations)."""
    rendered = portable(rendered)
    for volatile in VOLATILE_PREFIXES:
        m = volatile.match(rendered)
        if m:
            return m.group(1)
    text = "\n".join(rendered.split("\n")[:PIN_MAX_LINES])
    return text[:PIN_MAX_CHARS]


def _common_prefix(texts: Sequence[str]) -> str:
    first = min(texts, key=len)
    n = next((i for i in range(len(first)) if any(t[i] != first[i] for t in texts)), len(first))
    return first[:n]


def _common_pins(message_lists: Sequence[Sequence[str]], where: str, warnings: list[str]) -> tuple[str, ...]:
    """One pin per mismatch, common to every run the step failed in (what differs is cut off)."""
    first = message_lists[0]
    if any(len(ms) != len(first) for ms in message_lists):
        warnings.append(f"{where}: the number of mismatches differs between the results; pinned the first run's")
        return tuple(pin(m) for m in first)
    pins: list[str] = []
    for i in range(len(first)):
        common = _common_prefix([pin(ms[i]) for ms in message_lists])
        if len(common) < len(pin(first[i])):
            warnings.append(f"{where}: mismatch {i + 1} differs between the results; pinned the common start "
                            f"{_first_line(common)!r}")
        if common.strip():
            pins.append(common)
    return tuple(pins)


def _entries_for(sid: str, results: Sequence[ScenarioResult], olds: Sequence[BaselineEntry],
                 warnings: list[str]) -> list[BaselineEntry]:
    whole = next((e for e in olds if e.whole), None)
    step_olds = {e.step: e for e in olds if e.step}
    failing_runs = [r for r in results if r.status in (FAIL, XFAIL)]
    if whole is not None and not whole.legacy:
        # an explicit, reviewed whole-scenario entry is the maintainer's decision: it stays while
        # the scenario fails, and goes when it passes everywhere
        if not failing_runs:
            return []
        if any(unmatched(whole.mismatch, [m for s in r.steps for m in s.messages])[0] for r in failing_runs):
            warnings.append(f"{sid}: kept its scope: scenario entry, but its mismatch no longer appears; review it")
        return [whole]
    order: list[str] = []
    for r in results:
        order += [s.id for s in r.steps if s.id not in order]
    out: list[BaselineEntry] = []
    for step_id in order:
        ran = [s for r in results for s in r.steps if s.id == step_id and s.status in (PASS, FAIL, XFAIL, STALE)
               and s.baseline != BASELINE_NO_SUCH_STEP]
        old = step_olds.pop(step_id, None)
        if not ran:  # skipped (or errored) wherever it was seen: the entry is kept as it is
            if old is not None:
                out.append(old)
            continue
        fails = [s for s in ran if s.status in (FAIL, XFAIL)]
        if not fails:
            continue
        where = f"{sid} step {step_id}"
        if len(fails) < len(ran):
            warnings.append(f"{where}: fails in {len(fails)} of {len(ran)} results (flaky?); listed")
        patterns = tuple(MismatchPattern(p) for p in _common_pins([s.messages for s in fails], where, warnings))
        if old is not None and old.mismatch:
            if all(not any(unmatched(old.mismatch, s.messages)) for s in fails):
                out.append(old)
                continue
            reason = f"{PLACEHOLDER_PREFIX}: review: the failure changed (the reason was: {old.reason})"
            warnings.append(f"{where}: fails differently from its entry; the entry's reason needs a review")
        elif old is not None:
            reason = old.reason
        elif whole is not None:
            reason = whole.reason
        else:
            reason = PLACEHOLDER_REASON
        out.append(BaselineEntry(sid, reason, step_id, patterns))
    for e in step_olds.values():
        warnings.append(f"{sid}: dropped the entry for step {e.step!r}: the scenario has no such step")
    return out


def update_baseline_from(runs: Sequence[RunResult], old: Baseline | None, implementation: str = "",
                         version: str | None = None) -> tuple[Baseline, list[str]]:
    """A baseline listing exactly the failing steps of ``runs`` (one or several results files of
    the same implementation: a scenario's steps are judged over every result it ran in), and
    warnings for what needs a look. Each entry pins its step's mismatches (``pin``; what differs
    between results is cut off). Reasons of entries that still match are kept; an entry without
    ``mismatch`` gains one and keeps its reason; a whole-scenario entry without ``scope`` is split
    into one entry per failing step with its reason; an explicit ``scope: scenario`` entry stays
    while the scenario fails; new failures get the placeholder reason (unreviewed); a failure
    that changed gets a placeholder naming the old reason. Entries of scenarios that no result
    ran (not selected, skipped, errored) are kept as they are."""
    warnings: list[str] = []
    olds = list(old.entries) if old else []
    ran: dict[str, list[ScenarioResult]] = {}
    for run in runs:
        for res in run.scenarios:
            if res.status not in (ERROR, SKIP):
                ran.setdefault(res.id, []).append(res)
    out: list[BaselineEntry] = []
    for e in olds:
        if e.id in ran:
            continue
        if e.legacy and e.unreviewed:
            warnings.append(f"{e.id}: dropped its whole-scenario entry with a placeholder reason (the scenario did not "
                            "run here, and an entry for a whole scenario needs a reviewed reason)")
        else:
            out.append(replace(e, legacy=False))
    for sid, results in ran.items():
        out.extend(_entries_for(sid, results, [e for e in olds if e.id == sid], warnings))
    out.sort(key=_entry_key)
    first = runs[0].info if runs else None
    impl = implementation or (old.implementation if old else "") or (first.implementation if first else "")
    if version is None:
        version = old.version if old else (first.version if first else "")
    return Baseline(impl, tuple(out), old.path if old else "", version), warnings


def update_baseline(run: RunResult, old: Baseline | None, implementation: str = "") -> Baseline:
    """``update_baseline_from`` for one results file, without the warnings."""
    return update_baseline_from([run], old, implementation)[0]


def baseline_diff(old_text: str, new_text: str, path: str) -> str:
    return "".join(difflib.unified_diff(old_text.splitlines(keepends=True), new_text.splitlines(keepends=True),
                                        f"{path} (current)", f"{path} (regenerated)"))


# -- writing -------------------------------------------------------------------------------------

def _entry_key(e: BaselineEntry) -> tuple[str, str]:
    return (e.id, e.step or "")


def json_scalar(value: str) -> str:
    """A YAML flow scalar: JSON's double-quoted form is valid YAML (ASCII escapes when the text
    holds characters YAML does not allow raw)."""
    text = json.dumps(value, ensure_ascii=False)
    try:
        if yaml.safe_load(text) == value:
            return text
    except yaml.YAMLError:
        pass
    return json.dumps(value, ensure_ascii=True)


def _scalar(value: str) -> str:
    """A one-line YAML scalar, plain or quoted as PyYAML would write it."""
    if "\n" not in value:
        try:
            text = yaml.safe_dump(value, allow_unicode=True, width=10_000).removesuffix("\n...\n").strip()
            if "\n" not in text and yaml.safe_load(text) == value:
                return text
        except yaml.YAMLError:
            pass
    return json_scalar(value)


def _literal(value: str, indent: int) -> str | None:
    """``|-`` followed by the lines of ``value`` indented by ``indent``, when that reads back as
    ``value``; else None."""
    if "\n" not in value or value.startswith((" ", "\t")) or value.endswith("\n"):
        return None
    pad = " " * indent
    text = "|-\n" + "\n".join(pad + line if line else "" for line in value.split("\n"))
    try:
        if yaml.safe_load("k: " + text + "\n") == {"k": value}:
            return text
    except yaml.YAMLError:
        pass
    return None


def _pattern_value(p: MismatchPattern, indent: int, flow: bool) -> str:
    if p.regex:
        return "{regex: " + json_scalar(p.text) + "}"
    if not flow:
        lit = _literal(p.text, indent)
        if lit is not None:
            return lit
    return json_scalar(p.text) if flow or "\n" in p.text else _scalar(p.text)


def _render_entry(e: BaselineEntry, indent: int, flow: bool) -> str:
    pad = " " * indent
    if flow:
        fields = [("id", json_scalar(e.id))]
        fields += [("step", json_scalar(e.step))] if e.step else [("scope", SCOPE_SCENARIO)]
        if e.mismatch:
            values = [_pattern_value(p, 0, True) for p in e.mismatch]
            fields.append(("mismatch", values[0] if len(values) == 1 else "[" + ", ".join(values) + "]"))
        fields.append(("reason", json_scalar(e.reason)))
        return pad + "- {" + ", ".join(f"{k}: {v}" for k, v in fields) + "}\n"
    lines = [f"{pad}- id: {_scalar(e.id)}\n"]
    lines.append(f"{pad}  step: {_scalar(e.step)}\n" if e.step else f"{pad}  scope: {SCOPE_SCENARIO}\n")
    if len(e.mismatch) == 1:
        lines.append(f"{pad}  mismatch: {_pattern_value(e.mismatch[0], indent + 4, False)}\n")
    elif e.mismatch:
        lines.append(f"{pad}  mismatch:\n")
        lines += [f"{pad}    - {_pattern_value(p, indent + 6, False)}\n" for p in e.mismatch]
    lines.append(f"{pad}  reason: {_scalar(e.reason)}\n")
    return "".join(lines)


def _edit_header(text: str, new: Baseline) -> str:
    """``text`` with its top-level ``implementation`` and ``version`` set to ``new``'s (only those
    lines change; ``version`` is added after ``implementation`` when missing, removed when
    ``new`` has none)."""
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    if not isinstance(root, yaml.MappingNode):
        return text
    lines = text.splitlines(keepends=True)
    nodes = {getattr(k, "value", None): (k, v) for k, v in root.value}
    edits: list[tuple[int, int, str]] = []  # (first line, end line, replacement)
    for key, value in (("implementation", new.implementation), ("version", new.version)):
        pair = nodes.get(key)
        if pair is not None and isinstance(pair[1], yaml.ScalarNode) and pair[1].value == value:
            continue
        if pair is not None:
            k, v = pair
            end = max(v.end_mark.line if v.end_mark.column > 0 else v.end_mark.line - 1, k.start_mark.line)
            edits.append((k.start_mark.line, end + 1, f"{key}: {_scalar(value)}\n" if value else ""))
        elif value and key == "version" and "implementation" in nodes:
            at = nodes["implementation"][1].end_mark.line + 1
            edits.append((at, at, f"version: {_scalar(value)}\n"))
    for first, end, repl in sorted(edits, reverse=True):
        lines[first:end] = [repl] if repl else []
    return "".join(lines)


def update_baseline_text(old_text: str, path: str, new: Baseline) -> str:
    """``old_text`` (a baseline file) changed only where ``new`` differs from it: entries that
    stay keep their exact lines (comments, quoting, style, order), dropped entries lose theirs,
    new entries are inserted in the file's style before the first kept entry that sorts after
    them, and the header keeps its comments (``implementation`` and ``version`` lines change
    when ``new``'s differ). Falls back to ``new.dumps()`` when the file has no block-style
    ``entries`` list to edit. The result always reads back as ``new``."""
    if not old_text.strip():
        return new.dumps()
    text = _edit_header(old_text, new)
    edited = _edit_entries(text, path, new)
    try:
        check = parse_baseline_text(edited, path)
    except ScenarioError:
        return new.dumps()
    if sorted(check.entries, key=_entry_key) != sorted(new.entries, key=_entry_key) \
            or (check.implementation, check.version) != (new.implementation, new.version):
        return new.dumps()
    return edited


def _edit_entries(old_text: str, path: str, new: Baseline) -> str:
    root = yaml.compose(old_text, Loader=yaml.SafeLoader)
    pair = next(((k, v) for k, v in getattr(root, "value", []) if getattr(k, "value", None) == "entries"), None)
    if not isinstance(root, yaml.MappingNode) or pair is None or not isinstance(pair[1], yaml.SequenceNode):
        return new.dumps()
    key, seq = pair
    lines = old_text.splitlines(keepends=True)
    old_entries = parse_baseline_text(old_text, path, legacy=True).entries
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
    if len(old_entries) != len(blocks):
        return new.dumps()
    by_key = {_entry_key(entry): "".join(lines[a:b]) for entry, (a, b) in zip(old_entries, blocks, strict=True)}
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
    return before + "".join(out_blocks) + after


def _block_end_line(node: yaml.Node, lines: list[str]) -> int:
    """The last line (0-based) that belongs to a block sequence item, trailing blank lines and
    comments excluded."""
    end = node.end_mark
    line = end.line if end.column > 0 else end.line - 1
    while line > node.start_mark.line and (not lines[line].strip() or lines[line].lstrip().startswith("#")):
        line -= 1
    return line


def shipped_baseline_path(path: str) -> str:
    """``path`` as ``toolproof:baselines/NAME`` when it is a shipped baseline, else unchanged."""
    try:
        root = (shipped_root() / SHIPPED_BASELINES).resolve()
    except UsageError:  # not installed: nothing is shipped
        return path
    p = Path(path).resolve()
    return f"toolproof:{SHIPPED_BASELINES}/{p.name}" if p.parent == root else path
