"""The shipped corpus against the behaviour spec (docs/spec/): every step asserts something, every
citation names a rule, COVERAGE.md is current, and scenarios declare the shell they need."""

from __future__ import annotations

import io

from harness.cli import main
from harness.corpus.coverage import build_coverage, load_rules, render_markdown
from harness.corpus.loader import load_corpus
from harness.model.scenario import Scenario
from tests.support.repo import REPO

SPEC = REPO / "docs" / "spec"
CORPORA = [REPO / "scenarios", REPO / "adapters" / "pi" / "scenarios"]
# Another owner's directory (attacks on the host); the sandbox checks cite no rules.
UNTAGGED = ("hostile/",)
# Scenarios whose unconditioned bash steps run only commands every shell understands (`echo x`).
PORTABLE = frozenset({"windows/echo-per-platform"})


def _corpus() -> list[Scenario]:
    return load_corpus(CORPORA, strict=True)


def test_every_shipped_step_asserts_something() -> None:
    for s in _corpus():  # strict loading raises on a step without expect
        for step in s.steps:
            assert step.raw_expect or step.reason, f"{s.id} {step.id}"


def test_every_scenario_cites_rules_and_every_citation_names_one() -> None:
    rules, problems = load_rules(SPEC)
    assert problems == []
    scenarios = _corpus()
    assert [s.id for s in scenarios if not s.spec and not s.patches and not s.id.startswith(UNTAGGED)] == []
    assert build_coverage(rules, scenarios).unknown == ()


def test_coverage_markdown_is_current() -> None:
    rules, problems = load_rules(SPEC)
    expected = render_markdown(build_coverage(rules, _corpus(), problems))
    assert (SPEC / "COVERAGE.md").read_text(encoding="utf-8") == expected, (
        "regenerate with: toolproof coverage --markdown docs/spec/COVERAGE.md")


def test_scenarios_running_posix_commands_require_bash() -> None:
    missing = [s.id for s in _corpus()
               if any(step.tool == "bash" and not step.when for step in s.steps)
               and s.requires.shell is None and s.id not in PORTABLE]
    assert missing == []


def test_coverage_cli_prints_one_line_per_rule() -> None:
    out = io.StringIO()
    main(["coverage", *map(str, CORPORA), "--spec", str(SPEC)], out)
    rules, _ = load_rules(SPEC)
    lines = out.getvalue().splitlines()
    assert [line.split()[0] for line in lines[:len(rules)]] == [r.id for r in rules]


def test_every_rule_that_is_not_exempt_has_a_scenario() -> None:
    rules, problems = load_rules(SPEC)
    cov = build_coverage(rules, _corpus(), problems)
    assert [r.id for r in cov.uncovered] == []
    assert cov.complete
