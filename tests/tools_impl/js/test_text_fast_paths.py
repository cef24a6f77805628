"""``js_trim_end``/``js_trim_start`` (``str.rstrip``/``lstrip`` over the JS whitespace set) and
``js_utf8`` (encode first, replace surrogates only on failure) equal their regex definitions."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from tools_impl.js.text import JS_WHITESPACE, js_trim, js_trim_end, js_trim_start, js_utf8

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
