"""Fuzzy text normalisation for the edit engine (spec §4.7, §4.10): per-line normalisation,
``norm``, the upstream whole-text normalisation, mapping a hit in normalised text back to a span
of the original (patch ``edit.fuzzy-span``) and the fidelity guard (patch ``edit.fidelity-guard``).

Strings here are *JavaScript strings*: every index and length is in UTF-16 code units, so an
astral character is held as its surrogate pair. ``js_string`` converts a Python string into that
form and ``py_string`` converts back (recombining valid pairs; a lone surrogate stays lone, as in
JavaScript). For text without astral characters both forms are the same string. Keeping the
reference's UTF-16 indices matters because span mapping binary-searches over UTF-16 prefix
positions and can stop between the halves of a pair, exactly as the JavaScript engine does.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tools_impl.js.text import js_trim_end

SINGLE_QUOTES_RE = re.compile("[\u2018\u2019\u201a\u201b]")
DOUBLE_QUOTES_RE = re.compile("[\u201c\u201d\u201e\u201f]")
DASHES_RE = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]")
SPECIAL_SPACES_RE = re.compile("[\u00a0\u2002-\u200a\u202f\u205f\u3000]")

_ASTRAL_RE = re.compile("[\U00010000-\U0010ffff]")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


# -- JavaScript string representation ---------------------------------------------------------


def _split_astral(m: re.Match[str]) -> str:
    cp = ord(m.group(0)) - 0x10000
    return chr(0xD800 + (cp >> 10)) + chr(0xDC00 + (cp & 0x3FF))


def js_string(s: str) -> str:
    """``s`` with every astral character written as its UTF-16 surrogate pair."""
    if s.isascii():
        return s
    return _ASTRAL_RE.sub(_split_astral, s)


def py_string(s: str) -> str:
    """Inverse of ``js_string``: valid surrogate pairs become one character; lone ones stay."""
    if s.isascii() or not _SURROGATE_RE.search(s):
        return s
    return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def nfkc(s: str) -> str:
    """JavaScript ``s.normalize('NFKC')`` on a JavaScript string (lone surrogates pass through)."""
    if s.isascii():
        return s
    return js_string(unicodedata.normalize("NFKC", py_string(s)))


def js_split(s: str, sep: str) -> list[str]:
    """JavaScript ``s.split(sep)``, including the empty-separator case (one piece per code unit)."""
    if sep == "":
        return list(s)
    return s.split(sep)


# -- normalisation ----------------------------------------------------------------------------


def _replace_lookalikes(s: str) -> str:
    # Each step maps one character to one character, so columns do not move (spec §4.7).
    s = SINGLE_QUOTES_RE.sub("'", s)
    s = DOUBLE_QUOTES_RE.sub('"', s)
    s = DASHES_RE.sub("-", s)
    return SPECIAL_SPACES_RE.sub(" ", s)


def normalize_line_for_fuzzy_match(line: str) -> str:
    """``normalizeLineForFuzzyMatch``: NFKC, JavaScript ``trimEnd``, quotes, dashes, spaces."""
    return _replace_lookalikes(js_trim_end(nfkc(line)))


def norm_lines(text: str) -> list[str]:
    """The normalised lines of ``text`` (one per ``'\\n'``-separated segment)."""
    return [normalize_line_for_fuzzy_match(line) for line in text.split("\n")]


def norm(text: str) -> str:
    """Reference ``norm``: every ``'\\n'``-separated line normalised on its own, rejoined."""
    return "\n".join(norm_lines(text))


def norm_whole(text: str) -> str:
    """Upstream ``normalizeForFuzzyMatch`` (§4.10): NFKC on the full string, then per line
    ``trimEnd``, then the look-alike replacements."""
    lines = nfkc(text).split("\n")
    return _replace_lookalikes("\n".join(js_trim_end(line) for line in lines))


# -- span mapping -----------------------------------------------------------------------------


@dataclass(frozen=True)
class LineIndex:
    """Original and normalised lines of one content string, with their start offsets."""

    original: tuple[str, ...]
    normalised: tuple[str, ...]
    original_starts: tuple[int, ...]
    normalised_starts: tuple[int, ...]

    @property
    def normalised_text(self) -> str:
        return "\n".join(self.normalised)


def _starts(lines: Sequence[str]) -> tuple[int, ...]:
    out: list[int] = []
    pos = 0
    for line in lines:
        out.append(pos)
        pos += len(line) + 1
    return tuple(out)


def build_line_index(content: str) -> LineIndex:
    original = tuple(content.split("\n"))
    normalised = tuple(normalize_line_for_fuzzy_match(line) for line in original)
    return LineIndex(original, normalised, _starts(original), _starts(normalised))


def _prefix_len(line: str) -> Callable[[int], int]:
    return lambda k: len(nfkc(line[:k]))


def _largest_k_at_most(f: Callable[[int], int], hi: int, c: int) -> int:
    lo = 0
    # invariant: f(lo) <= c (f(0) == 0); answer in [lo, hi]
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if f(mid) <= c:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _smallest_k_at_least(f: Callable[[int], int], hi: int, c: int) -> int:
    lo = 0
    while lo < hi:
        mid = (lo + hi) // 2
        if f(mid) >= c:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _locate(index: LineIndex, pos: int) -> tuple[int, int]:
    line = bisect_right(index.normalised_starts, pos) - 1
    return line, pos - index.normalised_starts[line]


def map_start(index: LineIndex, pos: int) -> int:
    """Original offset of a hit that begins at ``pos`` in the normalised text.

    At a line break the start is that line's newline, so its trailing whitespace stays outside
    the span; otherwise the largest ``k`` with ``len(NFKC(L[:k])) <= c`` (rounds down).
    """
    line, col = _locate(index, pos)
    original = index.original[line]
    if col == len(index.normalised[line]):
        return index.original_starts[line] + len(original)
    return index.original_starts[line] + _largest_k_at_most(_prefix_len(original), len(original), col)


def map_end(index: LineIndex, pos: int) -> int:
    """Original offset of a hit that ends at ``pos``: the smallest ``k`` with
    ``len(NFKC(L[:k])) >= c`` (rounds up)."""
    line, col = _locate(index, pos)
    original = index.original[line]
    return index.original_starts[line] + _smallest_k_at_least(_prefix_len(original), len(original), col)


def map_span(index: LineIndex, hit: int, length: int) -> tuple[int, int]:
    """The original ``[start, end)`` of the normalised hit ``[hit, hit + length)``."""
    return map_start(index, hit), map_end(index, hit + length)


def fidelity_ok(content: str, start: int, end: int, normalised_old: str) -> bool:
    """Fidelity guard: the re-normalised span must equal the normalised ``oldText`` exactly."""
    return norm(content[start:end]) == normalised_old
