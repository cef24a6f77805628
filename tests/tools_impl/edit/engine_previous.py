"""The edit engine's matching as it was before the code-point fast path: every string turned into
its JavaScript (UTF-16 code unit) form first, ``norm`` taken line by line with NFKC, ``trimEnd``
and a regex for the look-alikes per line, the patched matcher building its whole line index up
front. Kept only as an oracle: ``tools_impl.edit.engine.apply_edits`` must give the same outcome
or the same error text (tests/tools_impl/edit/test_engine_fast_path.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

from tools_impl.core.errors import ToolError
from tools_impl.core.profile import PATCH_EDIT_FIDELITY_GUARD, PATCH_EDIT_FUZZY_SPAN, Profile
from tools_impl.edit import fuzzy
from tools_impl.edit.engine import (
    Edit,
    EditOutcome,
    Span,
    _empty_old_text,
    _no_change,
    _overlap,
    duplicate,
    normalize_to_lf,
    not_found,
)
from tools_impl.edit.patches import RELOAD_HINT, _disproportionate, is_disproportionate, match_lines_text
from tools_impl.js import unicode
from tools_impl.js.text import JS_WHITESPACE, js_trim_end

_ASTRAL_RE = re.compile("[\U00010000-\U0010ffff]")
_LOOKALIKE_RE = re.compile("[" + "".join(fuzzy.LOOKALIKES) + "]")
MATCH_LINES_SHOWN = 3


def js_string(s: str) -> str:
    def split(m: re.Match[str]) -> str:
        cp = ord(m.group(0)) - 0x10000
        return chr(0xD800 + (cp >> 10)) + chr(0xDC00 + (cp & 0x3FF))

    return _ASTRAL_RE.sub(split, s)


def py_string(s: str) -> str:
    return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def nfkc(s: str) -> str:
    if s.isascii():
        return s
    return js_string(unicode.normalize("NFKC", py_string(s)))


def normalize_line(line: str) -> str:
    if line.isascii():
        return line.rstrip(JS_WHITESPACE)
    return _LOOKALIKE_RE.sub(lambda m: fuzzy.LOOKALIKES[m.group(0)], js_trim_end(nfkc(line)))


def norm(text: str) -> str:
    return "\n".join(normalize_line(line) for line in text.split("\n"))


def count_occurrences(haystack: str, needle: str) -> tuple[int, list[int]]:
    pieces = list(haystack) if needle == "" else haystack.split(needle)
    count = len(pieces) - 1
    lines, offset = [], 0
    for k in range(min(count, MATCH_LINES_SHOWN)):
        offset += len(pieces[k]) + (len(needle) if k else 0)
        lines.append(haystack.count("\n", 0, offset) + 1)
    return count, lines


def splice(base: str, spans: list[Span], path: str) -> str:
    ordered = sorted(spans, key=lambda s: s.start)
    for prev, cur in pairwise(ordered):
        if prev.start + prev.length > cur.start:
            raise _overlap(path, prev.index, cur.index)
    out = base
    for span in reversed(ordered):
        out = out[: span.start] + span.new_text + out[span.start + span.length :]
    return out


def _find_upstream(text: str, normalised: str, old: str, normalised_old: str) -> tuple[int, int, bool]:
    idx = text.find(old)
    if idx >= 0:
        return idx, len(old), False
    hit = normalised.find(normalised_old)
    if hit < 0:
        return -1, 0, False
    return hit, len(normalised_old), True


def match_like_pi(content: str, olds: list[str], news: list[str], path: str) -> tuple[str, str]:
    n = len(olds)
    normalised_olds = [norm(old) for old in olds]
    normalised = norm(content)
    initial = [_find_upstream(content, normalised, old, nold) for old, nold in zip(olds, normalised_olds, strict=True)]
    fuzzy_base = any(used for _, _, used in initial)
    base, base_normalised = (normalised, normalised) if fuzzy_base else (content, normalised)
    spans: list[Span] = []
    for i, old in enumerate(olds):
        idx, length, _ = _find_upstream(base, base_normalised, old, normalised_olds[i])
        if idx < 0:
            raise not_found(path, i, n)
        count, _lines = count_occurrences(base_normalised, normalised_olds[i])
        if count > 1:
            raise duplicate(path, i, n, count)
        spans.append(Span(idx, length, i, news[i]))
    return base, splice(base, spans, path)


def match_span(content: str, olds: list[str], news: list[str], path: str, guard: bool) -> tuple[str, str]:
    n = len(olds)
    original = tuple(content.split("\n"))
    normalised_lines = tuple(normalize_line(line) for line in original)
    index = fuzzy.LineIndex(original, normalised_lines, fuzzy._starts(original), fuzzy._starts(normalised_lines))
    norm_content = "\n".join(normalised_lines)
    spans: list[Span] = []
    for i, old in enumerate(olds):
        normalised_old = norm(old)
        used_fuzzy = False
        idx = content.find(old)
        if idx >= 0:
            start, end = idx, idx + len(old)
        else:
            hit = norm_content.find(normalised_old) if normalised_old else -1
            if hit < 0:
                raise not_found(path, i, n, f" {RELOAD_HINT}")
            start, end = fuzzy.map_span(index, hit, len(normalised_old))
            if guard and norm(content[start:end]) != normalised_old:
                raise not_found(path, i, n, f" {RELOAD_HINT}")
            used_fuzzy = True
        count, lines = count_occurrences(norm_content, normalised_old)
        if count > 1:
            raise duplicate(path, i, n, count, match_lines_text(lines, count))
        if used_fuzzy and is_disproportionate(content[start:end], old):
            raise _disproportionate(path, i, n)
        spans.append(Span(start, end - start, i, news[i]))
    return content, splice(content, spans, path)


def apply_edits(content: str, edits: Sequence[Edit], path: str, profile: Profile) -> EditOutcome:
    """The previous ``apply_edits`` for the upstream matcher and ``edit.fuzzy-span`` (with or
    without ``edit.fidelity-guard``); the receipts are not part of it."""
    n = len(edits)
    c = js_string(content)
    olds = [normalize_to_lf(js_string(e.old_text)) for e in edits]
    news = [normalize_to_lf(js_string(e.new_text)) for e in edits]
    for i, old in enumerate(olds):
        if old == "":
            raise _empty_old_text(path, i, n)
    with unicode.using(profile.unicode_version):
        if profile.patch(PATCH_EDIT_FUZZY_SPAN):
            guard = profile.patch(PATCH_EDIT_FIDELITY_GUARD)
            base, new = match_span(c, olds, news, path, guard)
        else:
            base, new = match_like_pi(c, olds, news, path)
    if new == base:
        raise _no_change(path, n)
    return EditOutcome(py_string(base), py_string(new))


def outcome_or_error(content: str, edits: Sequence[Edit], path: str, profile: Profile) -> EditOutcome | str:
    try:
        return apply_edits(content, edits, path, profile)
    except ToolError as exc:
        return f"error: {exc}"
