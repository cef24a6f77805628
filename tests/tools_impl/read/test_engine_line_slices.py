"""``select_text`` takes its lines without splitting the whole file: the line count and every
joined slice equal ``"\\n".join(js_slice(text.split("\\n"), start, end))``, including slices whose
ends fall past 64 KiB block boundaries."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tools_impl.read.engine import _NEWLINE_BLOCK, _TextLines, js_slice

BOUND = st.one_of(st.integers(-30, 60), st.floats(-30, 60), st.sampled_from([math.inf, -math.inf, math.nan]))
TEXT = st.lists(st.sampled_from(["a", "bb", "", "\r", "\u00e9", "\U0001f600", " x "]), max_size=40).map("\n".join)


@settings(max_examples=500, deadline=None)
@given(TEXT, BOUND, st.one_of(st.none(), BOUND))
def test_slices_equal_split_then_join(text: str, start: float, end: float | None) -> None:
    lines = _TextLines(text)
    assert lines.count == len(text.split("\n"))
    assert lines.slice_text(start, end) == "\n".join(js_slice(text.split("\n"), start, end))


@pytest.mark.parametrize("line_len", [1, 37, _NEWLINE_BLOCK - 1, _NEWLINE_BLOCK, _NEWLINE_BLOCK + 5])
def test_slices_across_block_boundaries(line_len: int) -> None:
    split = [chr(97 + i % 26) * (line_len if i % 3 else 1) for i in range(max(8, 3 * _NEWLINE_BLOCK // line_len))]
    text = "\n".join(split)
    lines = _TextLines(text)
    n = len(split)
    for start, end in [(0, 1), (1, 2), (n // 2, n // 2 + 3), (n - 1, n), (0, n), (n - 3, n), (7, n - 2)]:
        assert lines.joined(start, end) == "\n".join(split[start:end]), (start, end)
