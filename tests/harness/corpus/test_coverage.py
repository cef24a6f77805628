"""The coverage map: rules parsed from spec files, citations from scenarios, the CLI's exit codes."""

from __future__ import annotations

import io
from pathlib import Path

from harness.cli import main
from harness.corpus.coverage import build_coverage, load_rules, render_markdown, render_text
from harness.corpus.loader import parse_scenario_text

SPEC = """# t

## t.1 — First

Holds for: reference.

Body.

## t.2 — Second

Holds for: upstream.
Exempt: notation only.

## t.3 — Third

Holds for: reference.
"""


def _spec(tmp_path: Path) -> Path:
    d = tmp_path / "spec"
    d.mkdir()
    (d / "t.md").write_text(SPEC, encoding="utf-8")
    (d / "README.md").write_text("## t.9 — not a rule file\n", encoding="utf-8")
    return d


def _scenario(sid: str, spec: str, patches: str = "") -> str:
    return (f"id: {sid}\nspec: [{spec}]\n{patches}"
            "steps:\n  - {tool: read, args: {path: a}, expect: {is_error: false}}\n")


def test_rules_carry_holds_for_and_exempt_and_skip_index_files(tmp_path: Path) -> None:
    rules, problems = load_rules(_spec(tmp_path))
    assert [(r.id, r.title, r.line, r.holds_for, r.exempt) for r in rules] == [
        ("t.1", "First", 3, "reference.", ""),
        ("t.2", "Second", 9, "upstream.", "notation only."),
        ("t.3", "Third", 14, "reference.", ""),
    ]
    assert problems == []


def test_uncovered_rules_and_unknown_citations_make_the_map_incomplete(tmp_path: Path) -> None:
    rules, _ = load_rules(_spec(tmp_path))
    scenarios = [parse_scenario_text(_scenario("a", "t.1, t.7"), "a.yaml")]
    cov = build_coverage(rules, scenarios)
    assert [r.id for r in cov.uncovered] == ["t.3"]
    assert cov.unknown == (("a", "a.yaml", "t.7"),)
    assert not cov.complete
    assert cov.counts() == (1, 1, 3)
    text = render_text(cov)
    assert "t.3  MISSING  no scenario pins this rule" in text
    assert "a.yaml: spec: 't.7' names no rule of the spec (scenario a)" in text
    assert text.endswith("toolproof: 1/3 rules covered, 1 exempt, 1 missing, 1 unknown citation(s)\n")


def test_a_patch_pin_cites_the_toggle_rule(tmp_path: Path) -> None:
    d = _spec(tmp_path)
    (d / "patches.md").write_text("## patch.edit.fuzzy-span — x\n\nHolds for: reference.\n", encoding="utf-8")
    rules, _ = load_rules(d)
    s = parse_scenario_text(_scenario("b", "t.1, t.3", "patches: {edit.fuzzy-span: off}\n"), "b.yaml")
    cov = build_coverage(rules, [s])
    assert cov.scenarios_by_rule["patch.edit.fuzzy-span"] == ("b",)
    assert cov.complete


def test_duplicate_rule_ids_and_missing_holds_for_are_problems(tmp_path: Path) -> None:
    d = _spec(tmp_path)
    (d / "u.md").write_text("## t.1 — again\n\nHolds for: x.\n\n## u.1 — bare\n\ntext\n", encoding="utf-8")
    _, problems = load_rules(d)
    assert problems == [f"{d / 'u.md'}:1: duplicate rule id 't.1' (also t.md:3)",
                        f"{d / 'u.md'}:5: rule u.1 has no 'Holds for:' line"]


def test_cli_exit_codes_and_markdown_check(tmp_path: Path) -> None:
    d = _spec(tmp_path)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.yaml").write_text(_scenario("a", "t.1"), encoding="utf-8")
    out = io.StringIO()
    assert main(["coverage", str(corpus), "--spec", str(d)], out) == 1
    (corpus / "b.yaml").write_text(_scenario("b", "t.3"), encoding="utf-8")
    md = tmp_path / "COVERAGE.md"
    out = io.StringIO()
    assert main(["coverage", str(corpus), "--spec", str(d), "--markdown", str(md), "--check"], out) == 1
    assert f"{md} is not current" in out.getvalue()
    assert main(["coverage", str(corpus), "--spec", str(d), "--markdown", str(md)], io.StringIO()) == 0
    assert "| [`t.2`](t.md#L9) | Second | exempt: notation only. |" in md.read_text(encoding="utf-8")
    assert main(["coverage", str(corpus), "--spec", str(d), "--markdown", str(md), "--check"], io.StringIO()) == 0


def test_cli_refuses_a_step_without_expect_and_a_missing_spec_dir(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.yaml").write_text("id: a\nspec: [t.1]\nsteps:\n  - {tool: read}\n", encoding="utf-8")
    assert main(["coverage", str(corpus), "--spec", str(_spec(tmp_path))], io.StringIO()) == 2
    assert "steps[1].expect: required field is missing" in capsys.readouterr().err
    assert main(["coverage", str(corpus), "--spec", str(tmp_path / "nope")], io.StringIO()) == 2


def test_markdown_escapes_pipes_in_titles(tmp_path: Path) -> None:
    d = tmp_path / "s"
    d.mkdir()
    (d / "x.md").write_text("## x.1 — a | b\n\nHolds for: r.\n", encoding="utf-8")
    rules, _ = load_rules(d)
    assert "| a \\| b | **missing** |" in render_markdown(build_coverage(rules, []))
