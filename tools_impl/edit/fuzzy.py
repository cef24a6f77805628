"""Fuzzy text normalisation for the edit engine (spec edit.7, spec edit.10): per-line normalisation,
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
import sys
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tools_impl.js import unicode
from tools_impl.js.text import JS_WHITESPACE, js_trim_end

# The four look-alike classes as one character map, applied in one pass (spec edit.7).
LOOKALIKES: dict[str, str] = {
    **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
    **dict.fromkeys("\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "),
}
_LOOKALIKE_RE = re.compile("[" + "".join(LOOKALIKES) + "]")

_ASTRAL_RE = re.compile("[\U00010000-\U0010ffff]")


# -- JavaScript string representation ---------------------------------------------------------


def _split_astral(m: re.Match[str]) -> str:
    cp = ord(m.group(0)) - 0x10000
    return chr(0xD800 + (cp >> 10)) + chr(0xDC00 + (cp & 0x3FF))


# PEP 393 (CPython): a str holding any code point above U+FFFF stores 4 bytes per character, so
# a long string whose size is under 3 bytes per character holds no astral character (and no
# surrogate pair). Checked in O(1) instead of scanning megabytes with a regex.
_SIZE_CHECK = sys.implementation.name == "cpython"
_SIZE_CHECK_MIN_LEN = 64
_SIZE_CHECK_SLACK = 100


def _narrow(s: str) -> bool:
    """True when ``s`` certainly holds no code point above U+FFFF (False: it may)."""
    if s.isascii():
        return True
    return _SIZE_CHECK and len(s) >= _SIZE_CHECK_MIN_LEN and sys.getsizeof(s) < 3 * len(s) + _SIZE_CHECK_SLACK


def has_surrogate(s: str) -> bool:
    """Whether ``s`` holds a surrogate code point (UTF-8 encoding, a C-level pass, refuses one)."""
    if s.isascii():
        return False
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def js_string(s: str) -> str:
    """``s`` with every astral character written as its UTF-16 surrogate pair."""
    if _narrow(s):
        return s
    return _ASTRAL_RE.sub(_split_astral, s)


def py_string(s: str) -> str:
    """Inverse of ``js_string``: valid surrogate pairs become one character; lone ones stay."""
    if not has_surrogate(s):
        return s
    return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def nfkc(s: str) -> str:
    """JavaScript ``s.normalize('NFKC')`` on a JavaScript string (lone surrogates pass through),
    with the character data of the active Unicode version (``tools_impl.js.unicode``)."""
    if s.isascii():
        return s
    return js_string(unicode.normalize("NFKC", py_string(s)))


def js_split(s: str, sep: str) -> list[str]:
    """JavaScript ``s.split(sep)``, including the empty-separator case (one piece per code unit)."""
    if sep == "":
        return list(s)
    return s.split(sep)


# -- normalisation ----------------------------------------------------------------------------


def _replace_lookalikes(s: str) -> str:
    # Each replacement maps one character to one character, so columns do not move (spec edit.7).
    if s.isascii():
        return s
    return _LOOKALIKE_RE.sub(lambda m: LOOKALIKES[m.group(0)], s)


def normalize_line_for_fuzzy_match(line: str) -> str:
    """``normalizeLineForFuzzyMatch``: NFKC, JavaScript ``trimEnd``, quotes, dashes, spaces."""
    if line.isascii():  # NFKC and the look-alikes leave ASCII alone
        return line.rstrip(JS_WHITESPACE)
    return _replace_lookalikes(js_trim_end(nfkc(line)))


def norm_lines(text: str) -> list[str]:
    """The normalised lines of ``text`` (one per ``'\\n'``-separated segment)."""
    lines = text.split("\n")
    if text.isascii():
        return [line.rstrip(JS_WHITESPACE) for line in lines]
    return [line.rstrip(JS_WHITESPACE) if line.isascii() else normalize_line_for_fuzzy_match(line)
            for line in lines]


# ``norm`` of a long text goes by blocks of whole lines about this long: an ASCII block with no
# line ending in whitespace is its own normal form and is kept without splitting it.
NORM_BLOCK = 1 << 16
_ASCII_TRAILING_BLANKS = "\t\x0b\x0c\r "


def _kept_by_norm(block: str) -> bool:
    """True when every line of ``block`` is already normalised: ASCII (NFKC and the look-alikes
    leave it alone) and no line ends in whitespace (``trimEnd`` has nothing to take). A blank
    that is not in the block at all (one ``memchr``) needs no search for it before a newline."""
    if not block.isascii() or block.endswith(tuple(_ASCII_TRAILING_BLANKS)):
        return False
    return not any(blank in block and blank + "\n" in block for blank in _ASCII_TRAILING_BLANKS)


def norm(text: str) -> str:
    """Reference ``norm``: every ``'\\n'``-separated line normalised on its own, rejoined.

    A long text is taken in blocks of whole lines; only the blocks holding a line that changes
    are split, so the cost of a large, mostly clean file is a few C-level scans."""
    if len(text) <= NORM_BLOCK:
        return "\n".join(norm_lines(text))
    out: list[str] = []
    pos, size = 0, len(text)
    while pos <= size:
        end = text.find("\n", pos + NORM_BLOCK)
        if end < 0:
            end = size
        block = text[pos:end]
        out.append(block if _kept_by_norm(block) else "\n".join(norm_lines(block)))
        pos = end + 1
    return "\n".join(out)


def norm_whole(text: str) -> str:
    """Upstream ``normalizeForFuzzyMatch`` (spec edit.10): NFKC on the full string, then per line
    ``trimEnd``, then the look-alike replacements.

    Computed line by line as ``norm``: NFKC never maps across or onto a ``'\\n'`` (a starter that
    composes with nothing), so normalising each line alone gives the same string; the look-alike
    map and ``trimEnd`` are per character and per line anyway. The property tests compare this
    with the whole-string definition.
    """
    return norm(text)


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
