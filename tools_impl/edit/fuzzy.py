"""Fuzzy text normalisation for the edit engine (spec edit.7, spec edit.10): per-line normalisation,
``norm``, the upstream whole-text normalisation, mapping a hit in normalised text back to a span
of the original (patch ``edit.fuzzy-span``) and the fidelity guard (patch ``edit.fidelity-guard``).

Strings here are *JavaScript strings*: every index and length is in UTF-16 code units, so an
astral character is held as its surrogate pair. ``js_string`` converts a Python string into that
form and ``py_string`` converts back (recombining valid pairs; a lone surrogate stays lone, as in
JavaScript). For text without astral characters both forms are the same string. Keeping the
reference's UTF-16 indices matters because span mapping binary-searches over UTF-16 prefix
positions and can stop between the halves of a pair, exactly as the JavaScript engine does.

Text without any surrogate code point may also stay a plain code-point string: a search, a count
of a text or a splice at a position found answers the same in both forms (UTF-16 is
self-synchronising), and ``norm`` keeps the form it is given. The edit engine takes that fast
path (``engine.apply_edits``); where a position or length must be computed in code units,
``require_code_units`` sends it back to the JavaScript forms.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tools_impl.js import unicode
from tools_impl.js.text import JS_WHITESPACE, is_narrow, js_trim_end

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


def _narrow(s: str) -> bool:
    """True when ``s`` holds no code point above U+FFFF (so its JavaScript form is itself)."""
    return is_narrow(s)


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


class CodeUnitsRequired(Exception):
    """Raised by a matcher that was given code-point strings (``apply_edits``' fast path) where
    it must count positions or lengths in UTF-16 code units; the engine then runs it again on
    the JavaScript forms."""


def require_code_units(*texts: str) -> None:
    """Positions or lengths of ``texts`` are about to be computed rather than found: go on only
    where every code point is one UTF-16 code unit (always so for JavaScript strings)."""
    if not all(_narrow(t) for t in texts):
        raise CodeUnitsRequired


def js_split(s: str, sep: str) -> list[str]:
    """JavaScript ``s.split(sep)``, including the empty-separator case (one piece per code unit)."""
    if sep == "":
        return list(s)
    return s.split(sep)


# -- normalisation ----------------------------------------------------------------------------


def _replace_lookalikes(s: str) -> str:
    # Each replacement maps one character to one character, so columns do not move (spec edit.7).
    # The first look-alike from pos on is replaced everywhere (one C-level ``str.replace``): none
    # is left before it, and its replacement is ASCII, so the search goes on from there.
    if s.isascii():
        return s
    pos = 0
    while (found := _LOOKALIKE_RE.search(s, pos)) is not None:
        ch = found.group()
        s = s.replace(ch, LOOKALIKES[ch])
        pos = found.start()
    return s


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


def _norm_block(block: str) -> str:
    """``norm`` of a run of whole lines.

    Text without surrogate code points is the same in both string forms (``js_string`` only
    splits astral characters, which none of the steps below touches or produces), so NFKC and
    the look-alikes run over the whole block at once and only ``trimEnd`` goes line by line.
    NFKC never maps across or onto a ``'\\n'`` (a starter that composes with nothing), so the
    block's normal form is its lines' normal forms joined. A JavaScript string holding a
    surrogate pair (or a lone half) goes line by line through ``nfkc``."""
    if block.isascii():
        if _kept_by_norm(block):
            return block
        return "\n".join([line.rstrip(JS_WHITESPACE) for line in block.split("\n")])
    if has_surrogate(block):
        return "\n".join(norm_lines(block))
    normalised = unicode.normalize("NFKC", block)
    trimmed = "\n".join([line.rstrip(JS_WHITESPACE) for line in normalised.split("\n")])
    return _replace_lookalikes(trimmed)


def norm(text: str) -> str:
    """Reference ``norm``: every ``'\\n'``-separated line normalised on its own, rejoined. The
    answer keeps the form of ``text``: a JavaScript string stays one, and a code-point string
    without surrogates keeps its astral characters whole (``js_string`` of one is the other's).

    A long text is taken in blocks of whole lines; an ASCII block is split only when a line
    changes, and a block of other text is normalised whole (``_norm_block``), so the cost of a
    large file is a few C-level passes, whatever it holds."""
    if len(text) <= NORM_BLOCK:
        return _norm_block(text)
    out: list[str] = []
    pos, size = 0, len(text)
    while pos <= size:
        end = text.find("\n", pos + NORM_BLOCK)
        if end < 0:
            end = size
        out.append(_norm_block(text[pos:end]))
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
