"""``toolproof docs``: the documentation a wheel user has no checkout for (issue 21 item 10).
The wheel itself carrying it is checked in tests/project/test_user_install.py."""

from __future__ import annotations

import ast
import io
import re

import pytest

from harness.cli import main
from harness.cli.docs_commands import topics
from harness.install.shipped import SHIPPED_DIRS, SHIPPED_FILES
from tests.support.repo import REPO


def docs(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(["docs", *argv], out), out.getvalue()


def test_without_a_topic_the_topics_are_listed_with_their_paths() -> None:
    code, out = docs()
    assert code == 0
    listed = dict(line.split() for line in out.splitlines()[1:])
    assert list(listed)[:3] == ["readme", "cli", "scenario-format"]
    assert {"docker", "matrix", "importers", "spec/README", "spec/edit", "architecture"} <= set(listed)
    assert listed["cli"] == str(REPO / "docs" / "cli.md")


def test_a_topic_prints_its_page_and_path_prints_where_it_is() -> None:
    code, out = docs("scenario-format")
    assert code == 0 and out == (REPO / "docs" / "scenario-format.md").read_text(encoding="utf-8")
    assert docs("docs/spec/edit.md", "--path") == (0, f"{REPO / 'docs' / 'spec' / 'edit.md'}\n")
    assert docs("README", "--path") == (0, f"{REPO / 'README.md'}\n")


def test_an_unknown_topic_is_a_usage_error_with_the_closest_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert docs("scenario-fromat")[0] == 2
    assert capsys.readouterr().err == ("toolproof: error: docs: no topic 'scenario-fromat' (did you mean "
                                       "'scenario-format'?); `toolproof docs` lists them\n")


def test_the_docs_ship_with_the_package() -> None:
    assert "docs" in SHIPPED_DIRS and "README.md" in SHIPPED_FILES
    setup = ast.parse((REPO / "setup.py").read_text(encoding="utf-8"))
    values = {node.targets[0].id: ast.literal_eval(node.value) for node in setup.body
              if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
              and node.targets[0].id in ("SHIPPED_DIRS", "SHIPPED_FILES")}
    assert values == {"SHIPPED_DIRS": SHIPPED_DIRS, "SHIPPED_FILES": SHIPPED_FILES}


def test_every_docs_topic_cited_to_users_exists() -> None:
    """What the scaffolded files, the examples and the CLI tell a user to read resolves."""
    cited: set[str] = set()
    for path in [*(REPO / "harness" / "scaffold" / "templates").iterdir(), *(REPO / "examples").glob("*/adapter.*"),
                 *(REPO / "harness" / "cli").glob("*.py"), REPO / "README.md"]:
        cited |= set(re.findall(r"toolproof docs ([a-z][a-z0-9/_-]*)", path.read_text(encoding="utf-8")))
    assert {"cli", "scenario-format", "docker"} <= cited
    assert sorted(cited - set(topics())) == []
