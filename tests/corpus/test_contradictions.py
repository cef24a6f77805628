"""No contradictions in the shipped corpus (issue 19 item 4): no two scenarios that can both run on
the same implementation make the same calls on the same workspace and demand different results
(harness/corpus/contradictions.py), for each kind of implementation the corpus meets: the reference
and its upstream emulation (which apply profiles), a published pi release (which declares every
patch absent), a layer declaring nothing, and a MiniMax-like layer that cannot apply profiles."""

from __future__ import annotations

import dataclasses
import textwrap

from harness.corpus.contradictions import MODELS, contradictions
from harness.corpus.loader import load_corpus, parse_scenario_text
from tests.support.repo import REPO

CORPORA = [REPO / "scenarios", REPO / "adapters" / "pi" / "scenarios"]


def test_the_shipped_corpus_demands_one_result_of_each_call_on_every_kind_of_implementation() -> None:
    corpus = load_corpus(CORPORA)
    found = contradictions(corpus)
    assert found == [], "\n".join(c.render() for c in found)
    assert {m.name for m in MODELS} == {"reference", "upstream", "pi", "plain-layer", "minimax-layer"}


def test_without_the_patch_pin_rule_the_twins_contradict_each_other() -> None:
    """The check is not vacuous: with their pins dropped, the patch-on and patch-off twins of the
    corpus would both run on pi and on layers that cannot apply profiles."""
    corpus = [dataclasses.replace(s, patches=()) for s in load_corpus(CORPORA)]
    pairs = {(c.model, c.a, c.b) for c in contradictions(corpus)}
    assert ("pi", "edit/fuzzy-span-reference", "edit/fuzzy-whole-file-upstream") in pairs
    assert ("minimax-layer", "edit/fidelity-guard", "edit/fidelity-guard-off") in pairs
    assert ("plain-layer", "bash/patches/split-decoders-off", "bash/patches/split-decoders-on") in pairs
    assert ("minimax-layer", "bash/patches/missing-cwd-off", "bash/patches/missing-cwd-on") in pairs
    assert not any(model in ("reference", "upstream") for model, _, _ in pairs)  # they apply the profiles


def scenario(sid: str, expect: str, files: str = "", wording: str = "") -> str:
    return textwrap.dedent(f"""\
        id: {sid}
        workspace: {{files: [{{path: a.txt, text: "x\\n"}}]}}
        steps:
          - tool: edit
            args: {{file_path: a.txt, old_string: x, new_string: y}}
            expect: {expect}
        """) + (f"    wording: {wording}\n" if wording else "") + files


def test_a_planted_pair_is_named_with_the_step_and_what_disagrees() -> None:
    a = parse_scenario_text(scenario("t/a", "{failed: false}", 'files: {a.txt: {text: "y\\n"}}\n'), "a.yaml")
    b = parse_scenario_text(scenario("t/b", "{failed: false}", 'files: {a.txt: {text: "z\\n"}}\n'), "b.yaml")
    c = parse_scenario_text(scenario("t/c", "{failed: true}"), "c.yaml")
    found = contradictions([a, b, c])
    rendered = {x.render() for x in found if x.model == "plain-layer"}
    assert rendered == {
        "on plain-layer: t/a and t/b make the same calls; at files: files.a.txt: content differs",
        "on plain-layer: t/a and t/c make the same calls; at step-1: failed: true against false; failed: false against true",
        "on plain-layer: t/b and t/c make the same calls; at step-1: failed: true against false; failed: false against true",
    }


def test_wording_of_different_dialects_never_contradicts_but_of_one_dialect_does() -> None:
    a = parse_scenario_text(scenario("t/a", "{failed: true}", wording="{minimax: {error: long}}"), "a.yaml")
    b = parse_scenario_text(scenario("t/b", "{failed: true}", wording="{pi: {error: short}}"), "b.yaml")
    assert contradictions([a, b]) == []
    c = parse_scenario_text(scenario("t/c", "{failed: true}", wording="{pi: {error: other}}"), "c.yaml")
    assert {(x.model, x.a, x.b) for x in contradictions([b, c])} == {("pi", "t/b", "t/c"), ("upstream", "t/b", "t/c")}
