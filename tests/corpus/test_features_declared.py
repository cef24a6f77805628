"""A scenario that needs an optional feature says so (issue 19 item 1): an edit expected to succeed
whose old text does not occur in the file (after the line-ending and BOM normalisation every layer
does, spec edit.5) can only succeed by fuzzy matching or the line-number retry, so the scenario
must list `fuzzy-edit` or `line-number-retry`. Otherwise a layer written from docs/spec/ without
fuzzy matching fails it at the behaviour level although it does nothing wrong."""

from __future__ import annotations

import textwrap
from typing import Any

from harness.corpus.loader import load_corpus, parse_scenario_text
from harness.model.scenario import Scenario
from tests.support.repo import REPO

CORPORA = [REPO / "scenarios", REPO / "adapters" / "pi" / "scenarios"]
MATCHING_FEATURES = {"fuzzy-edit", "line-number-retry"}


def _text(data: bytes) -> str:
    text = data.decode("utf-8", "replace").removeprefix("\ufeff")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _old_texts(args: dict[str, Any]) -> list[str]:
    if "old_string" in args:
        return [args["old_string"]] if isinstance(args["old_string"], str) else []
    edits = args.get("edits")
    return [e["oldText"] for e in edits if isinstance(e, dict) and isinstance(e.get("oldText"), str)] \
        if isinstance(edits, list) else []


def undeclared_matching(scenario: Scenario) -> list[str]:
    """Steps of ``scenario`` that need fuzzy matching (or the retry) it does not declare. Files are
    followed from the workspace through writes; a command or an edit makes a file unknown."""
    if MATCHING_FEATURES & set(scenario.features):
        return []
    files = {e.path: _text(e.data) for e in scenario.workspace.entries if e.kind == "file"}
    found: list[str] = []
    for step in scenario.steps:
        args = step.args if isinstance(step.args, dict) else {}
        if step.tool == "write" and isinstance(args.get("path"), str):
            files[args["path"]] = _text(str(args.get("content", "")).encode("utf-8", "surrogatepass"))
        elif step.tool == "bash":
            files.clear()
        elif step.tool == "edit":
            path = args.get("file_path", args.get("path"))
            e = step.expect
            succeeds = e.failed is False or (e.failed is None and e.status == "result" and e.is_error is not True)
            if succeeds and path in files and any(
                    o and _text(o.encode("utf-8", "surrogatepass")) not in files[path] for o in _old_texts(args)):
                found.append(f"{scenario.id} {step.id} ({scenario.path}:{step.line})")
            files.pop(path, None)
    return found


def test_every_edit_that_needs_fuzzy_matching_declares_the_feature() -> None:
    missing = [m for s in load_corpus(CORPORA) for m in undeclared_matching(s)]
    assert missing == [], "edits that succeed only by fuzzy matching, without `features: [fuzzy-edit]`:\n" + \
        "\n".join(missing)


def test_the_check_finds_an_undeclared_fuzzy_edit() -> None:
    text = textwrap.dedent("""\
        id: t/fuzzy
        workspace:
          files:
            - {path: f.txt, text: "say “hi”\\n"}
        steps:
          - tool: edit
            args: {file_path: f.txt, old_string: 'say "hi"', new_string: 'say "bye"'}
            expect: {failed: false}
        """)
    scenario = parse_scenario_text(text, "t.yaml")
    assert [m.split()[0] for m in undeclared_matching(scenario)] == ["t/fuzzy"]
    declared = parse_scenario_text(text.replace("workspace:", "features: [fuzzy-edit]\nworkspace:"), "t.yaml")
    assert undeclared_matching(declared) == []
