"""Fuzzy normalisation, span mapping and the fidelity guard (spec edit.7, spec edit.10)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tools_impl.edit import fuzzy
from tools_impl.edit.fuzzy import (
    build_line_index,
    fidelity_ok,
    js_split,
    js_string,
    map_span,
    norm,
    norm_whole,
    normalize_line_for_fuzzy_match,
    py_string,
)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("\u2018a\u2019 \u201ab\u201b", "'a' 'b'"),
        ("\u201ca\u201d \u201eb\u201f", '"a" "b"'),
        ("a\u2010b\u2011c\u2012d\u2013e\u2014f\u2015g\u2212h", "a-b-c-d-e-f-g-h"),
        ("a\u00a0b\u2002c\u200ad\u202fe\u205ff\u3000g", "a b c d e f g"),
        ("名称\uff1a\uff08\u503c\uff09\uff0c", "名称:(值),"),
        ("\ufb01le\u2026 \u2122 x\u00b2", "file... TM x2"),
        ("caf\u0065\u0301", "caf\u00e9"),
        ("total: 3\u338f", "total: 3kg"),
        ("trailing   \t", "trailing"),
        ("ideographic\u3000\u3000", "ideographic"),
        ("bom at end\ufeff", "bom at end"),
        ("nbsp at end\u00a0", "nbsp at end"),
    ],
)
def test_line_normalisation_applies_nfkc_trim_and_lookalike_replacements(line: str, expected: str) -> None:
    assert normalize_line_for_fuzzy_match(line) == expected


@pytest.mark.parametrize(
    "line",
    ["a\u200bb", "prime\u2032", "\u00abq\u00bb \u2039r\u203a", "x\ufeffy", "  leading kept"],
)
def test_line_normalisation_leaves_these_characters_alone(line: str) -> None:
    assert normalize_line_for_fuzzy_match(line) == line


@pytest.mark.parametrize("tail", ["\u0085", "\u001c", "\u001f"])
def test_trim_end_uses_the_javascript_whitespace_set_not_python_isspace(tail: str) -> None:
    assert normalize_line_for_fuzzy_match("x" + tail) == "x" + tail


def test_norm_normalises_each_line_and_keeps_line_count() -> None:
    text = "a\u2019  \n\n\u3000b\u2014\t\nlast"
    assert norm(text) == "a'\n\n b-\nlast"
    assert norm(text).count("\n") == text.count("\n")


def test_whole_text_normalisation_matches_per_line_on_ordinary_text() -> None:
    text = "名称：值\n备注：“旧”   \n"
    assert norm_whole(text) == '名称:值\n备注:"旧"\n'
    assert norm_whole(text) == norm(text)


def test_js_string_splits_astral_characters_into_surrogate_pairs() -> None:
    s = "a\U0001f600b"
    assert js_string(s) == "a\ud83d\ude00b"
    assert len(js_string(s)) == 4
    assert py_string(js_string(s)) == s
    assert py_string("x\ud835") == "x\ud835"


def test_js_split_with_empty_separator_yields_code_units() -> None:
    assert js_split("abc", "") == ["a", "b", "c"]
    assert js_split("", "") == []
    assert js_split("aaa", "aa") == ["", "a"]


def test_span_of_kg_example_widens_to_the_whole_compatibility_character() -> None:
    content = "total: 3\u338f"
    index = build_line_index(content)
    o = norm("3k")
    hit = index.normalised_text.find(o)
    assert hit == 7
    assert map_span(index, hit, len(o)) == (7, 9)
    assert content[7:9] == "3\u338f"
    assert not fidelity_ok(content, 7, 9, o)


def test_span_start_at_a_line_break_keeps_trailing_whitespace_outside() -> None:
    content = "ab  \ncd"
    index = build_line_index(content)
    o = "\ncd"
    hit = index.normalised_text.find(o)
    start, end = map_span(index, hit, len(o))
    assert (start, end) == (4, 7)
    assert content[start:end] == "\ncd"


def test_span_end_at_a_line_end_excludes_trailing_whitespace() -> None:
    content = "x = \u201cy\u201d   \nnext"
    index = build_line_index(content)
    o = norm('x = "y"')
    start, end = map_span(index, index.normalised_text.find(o), len(o))
    assert content[start:end] == "x = \u201cy\u201d"


def test_span_start_rounds_down_inside_an_expansion() -> None:
    content = "a\u338fb"  # normalised "akgb"
    index = build_line_index(content)
    start, end = map_span(index, 2, 2)  # the "gb" part
    assert (start, end) == (1, 3)
    assert not fidelity_ok(content, start, end, "gb")


def test_span_columns_are_utf16_units_and_may_split_a_surrogate_pair() -> None:
    # U+1D400 (2 UTF-16 units) normalises to "A" (1 unit); the end rounds up to the first unit
    # whose prefix is long enough, which is the high surrogate, as in JavaScript.
    content = js_string("x\U0001d400y")
    index = build_line_index(content)
    assert index.normalised_text == "xAy"
    assert map_span(index, 0, 2) == (0, 2)
    assert content[0:2] == "x\ud835"
    assert not fidelity_ok(content, 0, 2, "xA")
    assert map_span(index, 0, 3) == (0, 4)
    assert fidelity_ok(content, 0, 4, "xAy")


def test_nfkc_passes_lone_surrogates_through() -> None:
    assert fuzzy.nfkc("x\ud835") == "x\ud835"
    assert fuzzy.nfkc(js_string("\U0001d400")) == "A"


LINE_PIECES = ["x", "  ", "\t", "\r", "\x0b", "\x0c", "\u00a0", "\u201c", "\ufb01", "\u3000", "é", "\U0001f600", ""]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(st.sampled_from(LINE_PIECES), max_size=6).map("".join), max_size=40),
       st.sampled_from([1, 2, 5, 16]))
def test_norm_by_blocks_equals_norm_line_by_line(lines: list[str], block: int) -> None:
    text = "\n".join(lines)
    expected = "\n".join(fuzzy.norm_lines(text))  # the JavaScript form (astral characters split)
    saved = fuzzy.NORM_BLOCK
    fuzzy.NORM_BLOCK = block
    try:
        assert js_string(norm(text)) == expected  # norm keeps the form it is given
        assert norm(js_string(text)) == expected
    finally:
        fuzzy.NORM_BLOCK = saved
