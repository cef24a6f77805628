"""``js_trim_end``/``js_trim_start`` (``str.rstrip``/``lstrip`` over the JS whitespace set),
``js_utf8`` (encode first, replace surrogates only on failure) and the UTF-16 lengths (``is_narrow``
from the string's storage width; ``utf16_len_of_encoded`` from the UTF-8 written) equal their
definitions."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from tools_impl.js.text import (
    JS_WHITESPACE,
    is_narrow,
    js_trim,
    js_trim_end,
    js_trim_start,
    js_utf8,
    utf16_len,
    utf16_len_of_encoded,
)

_WS = "[" + re.escape(JS_WHITESPACE) + "]"
PIECES = [*JS_WHITESPACE, "a", "b\n", "\x1c", "\x85", "\u180e", "\u200b", "\ud800", "\udfff", "\U0001f600"]
TEXT = st.lists(st.sampled_from(PIECES), max_size=25).map("".join)


@settings(max_examples=500, deadline=None)
@given(TEXT)
def test_trims_equal_the_javascript_whitespace_regexes(s: str) -> None:
    assert js_trim_end(s) == re.sub(_WS + "+$", "", s)
    assert js_trim_start(s) == re.sub("^" + _WS + "+", "", s)
    assert js_trim(s) == re.sub("^" + _WS + "+", "", re.sub(_WS + "+$", "", s))


def test_python_only_whitespace_is_kept() -> None:
    # \x1c-\x1f and \x85 are whitespace to Python's str.strip() but not to JavaScript
    assert js_trim("\x1c\x85a\x85\x1f") == "\x1c\x85a\x85\x1f"


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_js_utf8_equals_replacing_every_surrogate(s: str) -> None:
    assert js_utf8(s) == re.sub("[\ud800-\udfff]", "\ufffd", s).encode("utf-8")


WIDE_PIECES = ["a", "\u00e9", "\u4e2d", "\uffff", "\ud83d", "\ude00", "\U00010000", "\U0001f600", "\U0010ffff"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(WIDE_PIECES), max_size=40).map("".join), st.integers(0, 100))
@example("\U0001f600" + "a" * 70, 0)  # the astral character first, a long narrow tail
@example("\ud83d\ude00", 0)  # a pair written as two halves is two code units, not astral
def test_utf16_lengths_equal_the_utf16_encoding(s: str, pad: int) -> None:
    for text in (s, "a" * pad + s, "\u00e9" * pad + s):
        units = len(text.encode("utf-16-le", "surrogatepass")) // 2
        assert is_narrow(text) == (max(text, default="a") < "\U00010000")
        assert utf16_len(text) == units
        assert utf16_len_of_encoded(text, js_utf8(text)) == units
