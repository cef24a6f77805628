"""The benchmark's content classes and its answer check: the texts hold what each class names,
an edit target is unique even once normalised, and two answers that differ (after the harness's
equivalence) fail their row whatever its ratio. No timing is asserted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks import fixtures
from benchmarks.suite import Row, answer_difference, answer_of
from tools_impl.edit import fuzzy

ASTRAL = "\U00010000"


@pytest.mark.parametrize("cls", fixtures.CONTENT_CLASSES)
def test_each_class_holds_what_it_is_named_for_and_has_the_size_asked(cls: str) -> None:
    text = fixtures.class_text(cls, 20_000)
    size = len(text.encode("utf-8"))
    assert 20_000 <= size < 20_000 + 300 and text.endswith("\n")
    assert text == fixtures.class_text(cls, 20_000)  # deterministic
    astral = any(ch >= ASTRAL for ch in text)
    cjk = any("\u4e00" <= ch <= "\u9fff" for ch in text)
    typographic = any(ch in "\u2018\u2019\u201c\u201d\u2014\u2026" for ch in text)
    latin1 = any("\u00a0" <= ch <= "\u00ff" for ch in text)
    expected = {"ascii": (False, False, False, False), "latin": (False, False, True, True),
                "cjk": (False, True, False, False), "emoji": (True, False, False, False),
                "mixed": (True, True, True, True)}[cls]
    assert (astral, cjk, typographic, latin1) == expected
    if cls == "ascii":
        assert text.isascii()


@pytest.mark.parametrize("cls", fixtures.CONTENT_CLASSES)
@pytest.mark.parametrize("where", fixtures.POSITIONS)
def test_the_edit_target_is_unique_also_once_normalised(cls: str, where: str) -> None:
    old = fixtures.CLASS_EDIT_OLD[cls]
    text = fixtures.with_line_at(fixtures.class_text(cls, 5_000), old, where)
    assert text.count(old) == 1 and fixtures.CLASS_EDIT_NEW[cls] != old
    assert fuzzy.norm(text).count(fuzzy.norm(old)) == 1
    lines = text.split("\n")
    at = {"start": 0, "middle": len(lines) // 2, "end": len(lines) - 2}[where]
    assert abs(lines.index(old) - at) <= 1


def _response(text: str, details: dict[str, Any] | None = None, duration: float = 0.1) -> dict[str, Any]:
    return {"id": 7, "ok": True, "duration_s": duration,
            "result": {"content": [{"type": "text", "text": text}], "details": details, "is_error": False}}


def test_answers_equal_up_to_the_workspace_path(tmp_path: Path) -> None:
    a_root, b_root = tmp_path / "a", tmp_path / "b"
    a = answer_of(_response(f"wrote {a_root}/x.txt", {"diff": "+1 x"}), a_root)
    b = answer_of(_response(f"wrote {b_root}/x.txt", {"diff": "+1 x"}, duration=9.0), b_root)
    assert a == b and answer_difference(a, b) == ""


def test_a_different_detail_or_text_is_named(tmp_path: Path) -> None:
    a = answer_of(_response("ok", {"diff": "+1 x", "firstChangedLine": 1}), tmp_path)
    b = answer_of(_response("ok", {"diff": "+1 y", "firstChangedLine": 1}), tmp_path)
    assert answer_difference(a, b) == "details.diff"
    c = answer_of(_response("not ok", {"diff": "+1 y", "firstChangedLine": 1}), tmp_path)
    assert answer_difference(b, c) == "text"
    error = answer_of({"id": 7, "ok": False, "error": {"message": "boom", "kind": "tool"}}, tmp_path)
    assert "status" in answer_difference(a, error)


def test_a_row_whose_answers_differ_misses_its_target_whatever_the_ratio() -> None:
    row = Row("content.edit.cjk.1MB.end", "content", "edit", "1 ms", "9 ms", ratio=0.11, target=0.5)
    assert row.met is True
    row.data["answers_differ"] = "details.diff"
    assert row.met is False
