"""The coverage map: which scenarios pin which rule of the behaviour spec (docs/spec/).

A rule is a level-2 heading ``## <rule-id> — <title>`` in a spec file, optionally followed by an
``Exempt: <reason>`` line (a rule no scenario can pin). Scenarios cite rules with
``spec: [read.6, …]``. The map is complete when every rule that is not exempt has a scenario and
every cited id names a rule; ``toolproof coverage`` prints it and writes docs/spec/COVERAGE.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.model.scenario import Scenario

SPEC_INDEX_FILES = frozenset({"README.md", "COVERAGE.md"})
RULE_HEADING = re.compile(r"^## (?P<id>[a-z][a-z0-9-]*(?:\.[a-z0-9][a-z0-9-]*)*) — (?P<title>.+?)\s*$")
EXEMPT_LINE = re.compile(r"^Exempt: (?P<reason>.+?)\s*$")
HOLDS_LINE = re.compile(r"^Holds for: (?P<holds>.+?)\s*$")
# Lines between a heading and its first paragraph that may carry Holds for / Exempt.
HEADER_WINDOW = 4


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    file: str
    line: int
    holds_for: str = ""
    exempt: str = ""  # the reason, when no scenario can pin the rule


@dataclass(frozen=True)
class Coverage:
    rules: tuple[Rule, ...]
    scenarios_by_rule: dict[str, tuple[str, ...]]
    unknown: tuple[tuple[str, str, str], ...] = ()  # (scenario id, its file, cited id)
    problems: tuple[str, ...] = field(default=())  # spec file problems (duplicate ids)

    @property
    def uncovered(self) -> tuple[Rule, ...]:
        return tuple(r for r in self.rules if not r.exempt and not self.scenarios_by_rule.get(r.id))

    @property
    def complete(self) -> bool:
        return not self.uncovered and not self.unknown and not self.problems

    def counts(self) -> tuple[int, int, int]:
        """(covered, exempt, total)."""
        covered = sum(1 for r in self.rules if self.scenarios_by_rule.get(r.id))
        exempt = sum(1 for r in self.rules if r.exempt and not self.scenarios_by_rule.get(r.id))
        return covered, exempt, len(self.rules)


def default_spec_dir() -> Path:
    return Path.cwd() / "docs" / "spec"


def load_rules(spec_dir: Path) -> tuple[list[Rule], list[str]]:
    """Every rule of the spec files in ``spec_dir`` (file order: sorted names), and problems."""
    rules: list[Rule] = []
    problems: list[str] = []
    seen: dict[str, Rule] = {}
    for path in sorted(spec_dir.glob("*.md")):
        if path.name in SPEC_INDEX_FILES:
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            m = RULE_HEADING.match(line)
            if not m:
                continue
            holds = exempt = ""
            for follow in lines[i + 1:i + 1 + HEADER_WINDOW]:
                if (h := HOLDS_LINE.match(follow)) is not None:
                    holds = h.group("holds")
                elif (e := EXEMPT_LINE.match(follow)) is not None:
                    exempt = e.group("reason")
            rule = Rule(m.group("id"), m.group("title"), path.name, i + 1, holds, exempt)
            if rule.id in seen:
                first = seen[rule.id]
                problems.append(f"{path}:{i + 1}: duplicate rule id {rule.id!r} (also {first.file}:{first.line})")
                continue
            if not holds:
                problems.append(f"{path}:{i + 1}: rule {rule.id} has no 'Holds for:' line")
            seen[rule.id] = rule
            rules.append(rule)
    return rules, problems


def build_coverage(rules: Sequence[Rule], scenarios: Iterable[Scenario], problems: Sequence[str] = ()) -> Coverage:
    known = {r.id for r in rules}
    by_rule: dict[str, list[str]] = {r.id: [] for r in rules}
    unknown: list[tuple[str, str, str]] = []
    for s in sorted(scenarios, key=lambda s: s.id):
        # a patch pin (patches: {edit.fuzzy-span: on}) cites that toggle's rule too
        cited = list(s.spec) + [f"patch.{name}" for name, _ in s.patches if f"patch.{name}" not in s.spec]
        for rid in cited:
            if rid in known:
                by_rule[rid].append(s.id)
            else:
                unknown.append((s.id, s.path, rid))
    return Coverage(tuple(rules), {k: tuple(v) for k, v in by_rule.items()}, tuple(unknown), tuple(problems))


def render_text(cov: Coverage, verbose: bool = False) -> str:
    """One line per rule: id, scenario count (or EXEMPT / MISSING), then problems and a summary."""
    out: list[str] = []
    width = max((len(r.id) for r in cov.rules), default=8)
    for r in cov.rules:
        ids = cov.scenarios_by_rule.get(r.id, ())
        if ids:
            state = f"{len(ids):3} scenario(s)"
            if verbose:
                state += ": " + ", ".join(ids)
        elif r.exempt:
            state = "EXEMPT  " + r.exempt
        else:
            state = "MISSING  no scenario pins this rule"
        out.append(f"{r.id:<{width}}  {state}")
    for sid, path, rid in cov.unknown:
        out.append(f"{path}: spec: {rid!r} names no rule of the spec (scenario {sid})")
    out.extend(cov.problems)
    covered, exempt, total = cov.counts()
    out.append(f"toolproof: {covered}/{total} rules covered, {exempt} exempt, "
               f"{len(cov.uncovered)} missing, {len(cov.unknown)} unknown citation(s)")
    return "\n".join(out) + "\n"


def render_markdown(cov: Coverage) -> str:
    """docs/spec/COVERAGE.md: generated, so a test can check it is current."""
    covered, exempt, total = cov.counts()
    out = [
        "# Spec coverage",
        "",
        "Generated by `toolproof coverage --markdown docs/spec/COVERAGE.md` from the `spec:` lists of",
        "`scenarios/` and `adapters/pi/scenarios/`; do not edit by hand (a test checks it is current).",
        "",
        f"{covered} of {total} rules have scenarios; {exempt} are exempt; {len(cov.uncovered)} are missing.",
        "",
        "| Rule | Title | Scenarios |",
        "| --- | --- | --- |",
    ]
    for r in cov.rules:
        ids = cov.scenarios_by_rule.get(r.id, ())
        if ids:
            cell = ", ".join(f"`{i}`" for i in ids)
        elif r.exempt:
            cell = f"exempt: {r.exempt}"
        else:
            cell = "**missing**"
        title = r.title.replace("|", "\\|")
        out.append(f"| [`{r.id}`]({r.file}#L{r.line}) | {title} | {cell.replace('|', chr(92) + '|')} |")
    return "\n".join(out) + "\n"
