"""``toolproof mutants`` on a small sample: a slice of the shipped corpus against three built-in
mutants — two that the slice kills (and by which scenario), one it cannot reach — through the CLI,
its report, its JSON and its ``--min-kill`` gate."""

from __future__ import annotations

import io
import json
from pathlib import Path

from harness.cli import main
from harness.corpus.loader import load_corpus
from harness.model.results import EXIT_EMPTY, EXIT_FAIL, EXIT_OK
from harness.mutants.campaign import order_for
from harness.mutants.catalogue import by_name
from tests.support.repo import REPO

SLICE = [str(REPO / "scenarios" / p) for p in (
    "edit/replace-all-literal.yaml", "truncation/bash-head-tail-one-line.yaml", "glob/paging.yaml")]
SAMPLE = ["edit.replace-all-first-only", "truncation.head-share-half", "glob.no-dotfiles"]


def test_sample_campaign_kills_what_the_slice_covers_and_names_the_survivor(tmp_path: Path) -> None:
    report = tmp_path / "mutants.json"
    out = io.StringIO()
    args = ["mutants", *SLICE, "--jobs", "2", "--json", str(report), "--min-kill", "90"]
    for name in SAMPLE:
        args += ["--only", name]
    code = main(args, out)
    text = out.getvalue()
    assert code == EXIT_FAIL, text  # 2 of 3 is below --min-kill 90
    data = json.loads(report.read_text(encoding="utf-8"))
    outcomes = {o["name"]: o for o in data["outcomes"]}
    assert outcomes["edit.replace-all-first-only"]["killed"]
    assert outcomes["edit.replace-all-first-only"]["killer"] == "edit/replace-all-literal"
    assert outcomes["truncation.head-share-half"]["killer"] == "truncation/bash-head-tail-one-line"
    assert not outcomes["glob.no-dotfiles"]["killed"]
    assert outcomes["glob.no-dotfiles"]["scenarios_run"] == 3
    assert (data["mutants"], data["killed"], data["passing"]) == (3, 2, 3)
    assert "glob.no-dotfiles" in text.split("survivors (1):", 1)[1]
    assert "2 of 3 killed (66.7%)" in text
    assert "below --min-kill 90%" in text


def test_only_that_matches_nothing_is_an_empty_selection() -> None:
    assert main(["mutants", *SLICE, "--only", "no.such-*"], io.StringIO()) == EXIT_EMPTY


def test_list_names_every_selected_mutant() -> None:
    out = io.StringIO()
    assert main(["mutants", "--list", "--only", "edit"], out) == EXIT_OK
    listed = [line.split()[0] for line in out.getvalue().splitlines()]
    assert listed and all(by_name()[n].tool == "edit" for n in listed)


def test_scenarios_of_the_mutants_tool_run_first() -> None:
    scenarios = load_corpus(SLICE)
    ordered = order_for(by_name()["glob.no-dotfiles"], scenarios, {})
    assert ordered[0].id == "glob/paging"
    ordered = order_for(by_name()["truncation.head-share-half"], scenarios, {})
    assert ordered[0].id == "truncation/bash-head-tail-one-line"
