"""JavaScript-compatible text helpers: counts, numbers and sizes as Node prints them (spec common.4, spec limits.1)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tools_impl.js.text import (
    cut_text_prefix,
    cut_text_suffix,
    format_size,
    js_number,
    js_to_fixed,
    js_trim,
    js_trim_end,
    utf8_safe_prefix,
    utf8_safe_suffix,
    utf16_len,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(1, "1"), (0.5, "0.5"), (300, "300"), (300.0, "300"), (0.25, "0.25"), (1e-7, "1e-7"),
     (0.000001, "0.000001"), (1e21, "1e+21"), (123.456, "123.456"), (-2.5, "-2.5"), (0.0, "0")],
)
def test_js_number_matches_number_to_string(value: float, expected: str) -> None:
    assert js_number(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0.25, "0.3"), (1.45, "1.4"), (1.05, "1.1"), (50.0, "50.0"), (2.675, "2.7")],
)
def test_to_fixed_rounds_the_exact_binary_value_ties_up(value: float, expected: str) -> None:
    assert js_to_fixed(value, 1) == expected


@pytest.mark.parametrize(
    ("size", "expected"),
    [(0, "0B"), (1023, "1023B"), (1024, "1.0KB"), (51200, "50.0KB"), (61440, "60.0KB"),
     (1048575, "1024.0KB"), (1048576, "1.0MB"), (8 * 1024 * 1024, "8.0MB")],
)
def test_format_size_uses_b_kb_mb_with_one_decimal(size: int, expected: str) -> None:
    assert format_size(size) == expected


@pytest.mark.parametrize("n,text", [
    (0, "0B"), (1023, "1023B"), (1024, "1.0KB"), (51200, "50.0KB"), (1280, "1.3KB"),
    (1048575, "1024.0KB"), (1048576, "1.0MB"), (60000, "58.6KB"), (1572864, "1.5MB"),
])
def test_format_size_uses_javascript_to_fixed(n: int, text: str) -> None:
    assert format_size(n) == text


@pytest.mark.parametrize("x,text", [(1, "1"), (0.5, "0.5"), (300.0, "300"), (2.5, "2.5"), (-0.0, "0"), (1e21, "1e+21")])
def test_numbers_in_messages_use_javascript_to_string(x: float, text: str) -> None:
    assert js_number(x) == text


def test_utf16_len_counts_astral_characters_as_two_units() -> None:
    assert utf16_len("a😀é") == 4


def test_js_trim_uses_the_javascript_whitespace_set() -> None:
    assert js_trim_end("x\u00a0\ufeff\u3000 \t") == "x"
    # U+0085 and U+001C are whitespace to Python's str.strip but not to JavaScript's trim.
    assert js_trim_end("x\u0085") == "x\u0085"
    assert js_trim("\u001cx\u001c") == "\u001cx\u001c"
    assert js_trim("\u2028 x \u2029") == "x"


def test_utf8_safe_prefix_moves_back_and_suffix_moves_forward() -> None:
    data = "aé😀".encode()  # 1 + 2 + 4 bytes
    assert utf8_safe_prefix(data, 2) == b"a"
    assert utf8_safe_prefix(data, 3) == "aé".encode()
    assert utf8_safe_suffix(data, 5) == "😀".encode()
    assert utf8_safe_suffix(data, 6) == "é😀".encode()


@given(st.text(), st.integers(min_value=0, max_value=64))
def test_utf8_safe_cuts_never_split_a_sequence_and_respect_the_budget(text: str, budget: int) -> None:
    prefix = cut_text_prefix(text, budget)
    suffix = cut_text_suffix(text, budget)
    assert len(prefix.encode()) <= budget and text.startswith(prefix)
    assert len(suffix.encode()) <= budget and text.endswith(suffix)
