"""The fast paths of the edit engine's normalisation and counting equal their literal definitions.

``fuzzy.norm_whole`` is computed line by line (NFKC never crosses a ``\\n``), the look-alikes are
one character map, ``js_string`` skips narrow strings by their storage size, ``py_string`` detects
surrogates by encoding, and ``count_occurrences`` counts with ``str.count``. Each is compared here
with the plain definition from the spec (edit.7, edit.10) on generated text rich in the characters
that matter: compatibility forms, combining marks, Hangul jamo, look-alikes, JS whitespace,
astral characters and lone surrogates.
"""

from __future__ import annotations

import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from tools_impl.edit import fuzzy
from tools_impl.edit.engine import count_occurrences
from tools_impl.js.text import JS_WHITESPACE

PIECES = [
    "a", "b", "x", " ", "\t", "\n", "\n", "\u00a0", "\u3000", "\u2028", "\ufeff", "\u2018", "\u201d",
    "\u2013", "\u2212", "\u0301", "\u0338", "e\u0301", "\u00e9", "\ufb01", "\u2460", "\uff21", "\u00b4",
    "\u1100", "\u1161", "\u11a8", "\u212b", "\U0001d400", "\U0001f600", "\ud83d", "\ude00", "\u0000",
    "\u2002", "\u200a", "\u202f", "\u205f", "\u1680", "\u0020\u0308",
]
TEXT = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)

_SINGLE = re.compile("[\u2018\u2019\u201a\u201b]")
_DOUBLE = re.compile("[\u201c\u201d\u201e\u201f]")
_DASHES = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]")
_SPACES = re.compile("[\u00a0\u2002-\u200a\u202f\u205f\u3000]")
_TRIM_END = re.compile("[" + re.escape(JS_WHITESPACE) + "]+$")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def literal_py_string(s: str) -> str:
    if not _SURROGATE.search(s):
        return s
    return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def literal_js_string(s: str) -> str:
    return _ASTRAL.sub(lambda m: _pair(m.group(0)), s)


def _pair(ch: str) -> str:
    cp = ord(ch) - 0x10000
    return chr(0xD800 + (cp >> 10)) + chr(0xDC00 + (cp & 0x3FF))


def literal_norm_whole(text: str) -> str:
    """Upstream normalizeForFuzzyMatch as written: NFKC of the whole string, trimEnd per line,
    then the four look-alike replacements in order."""
    whole = literal_js_string(unicodedata.normalize("NFKC", literal_py_string(text)))
    s = "\n".join(_TRIM_END.sub("", line) for line in whole.split("\n"))
    s = _SINGLE.sub("'", s)
    s = _DOUBLE.sub('"', s)
    s = _DASHES.sub("-", s)
    return _SPACES.sub(" ", s)


def literal_count(haystack: str, needle: str) -> tuple[int, list[int]]:
    pieces = list(haystack) if needle == "" else haystack.split(needle)
    count = len(pieces) - 1
    lines, offset = [], 0
    for k in range(min(count, 3)):
        offset += len(pieces[k]) + (len(needle) if k else 0)
        lines.append(haystack.count("\n", 0, offset) + 1)
    return count, lines


@settings(max_examples=600, deadline=None)
@given(TEXT)
def test_norm_whole_equals_the_whole_string_definition(text: str) -> None:
    js = fuzzy.js_string(text)
    assert fuzzy.norm_whole(js) == literal_norm_whole(js)


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_norm_is_idempotent(text: str) -> None:
    once = fuzzy.norm_whole(fuzzy.js_string(text))
    assert fuzzy.norm_whole(once) == once


@settings(max_examples=400, deadline=None)
@given(TEXT, st.integers(0, 200))
def test_js_and_py_string_equal_their_definitions(text: str, pad: int) -> None:
    long = text + "a" * pad  # long enough for the storage-size shortcut to apply
    for s in (text, long, "\u00e9" * pad + text, "\u201c" * pad + text):
        assert fuzzy.js_string(s) == literal_js_string(s)
        assert fuzzy.py_string(s) == literal_py_string(s)
        assert fuzzy.has_surrogate(s) == bool(_SURROGATE.search(s))


def test_the_size_shortcut_never_skips_an_astral_character() -> None:
    for s in ("\U0001f600" + "a" * 500, "a" * 500 + "\U0001f600", "\u00e9" * 300 + "\U00010000"):
        assert fuzzy.js_string(s) == literal_js_string(s) != s


@settings(max_examples=400, deadline=None)
@given(TEXT, st.sampled_from(["", "a", "\n", "aa", "a\na", " ", "\u2018"]))
def test_count_occurrences_equals_javascript_split(haystack: str, needle: str) -> None:
    """On a JavaScript string as it is; on a code-point string (no surrogate) as on its
    JavaScript form, which an empty needle counts in UTF-16 code units. (Text holding a lone
    surrogate is only ever taken in its JavaScript form.)"""
    js = literal_js_string(haystack)
    if fuzzy.has_surrogate(haystack):
        haystack = js
    assert count_occurrences(haystack, needle) == literal_count(js, needle)
