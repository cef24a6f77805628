"""MiniMax's patches to pi's edit engine and the edit wrapper, one ``Patch`` object per toggle
(spec patches), each registered at the seams it changes (``edit/engine.py`` ``edit.match`` and
``edit.receipts``, ``edit/tool.py`` ``edit.replace-all``; ``core/patches.py`` explains seams).

``edit.fuzzy-span`` brings its own seam, ``edit.fuzzy-span-check``, where ``edit.fidelity-guard``
registers: the guard only exists inside the span-scoped matcher.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tools_impl.core.errors import ToolError
from tools_impl.core.patches import PATCHES, SURFACE_ENGINE, Patch, Seam, replace
from tools_impl.core.profile import (
    PATCH_EDIT_DIFF_BOUNDS,
    PATCH_EDIT_FIDELITY_GUARD,
    PATCH_EDIT_FUZZY_SPAN,
    PATCH_WRAP_REPLACE_ALL_LITERAL,
    Profile,
)
from tools_impl.core.result import JsonDict
from tools_impl.edit import fuzzy
from tools_impl.edit.engine import (
    ENGINE_SEAMS,
    MATCH,
    MATCH_LINES_SHOWN,
    RECEIPTS,
    Span,
    count_occurrences,
    duplicate,
    not_found,
    splice,
)
from tools_impl.edit.tool import REPLACE_ALL
from tools_impl.js.text import js_trim
from tools_impl.shared.line_diff import DiffBounds, compute_receipts

RELOAD_HINT = (
    "If oldText was written from memory or an earlier read, the file may have changed since - "
    "use the read tool to reload it before retrying."
)
# Disproportion guard (spec edit.6 3e): a fuzzy span is refused when it covers at least
# max(oldLines + EXTRA_LINES, oldLines * LINE_FACTOR) lines, or (multi-line oldText) more than
# max(len(old.trim()) + EXTRA_CHARS, len(old.trim()) * CHAR_FACTOR) trimmed chars.
DISPROPORTION_EXTRA_LINES = 3
DISPROPORTION_LINE_FACTOR = 2
DISPROPORTION_EXTRA_CHARS = 500
DISPROPORTION_CHAR_FACTOR = 4


# -- edit.fuzzy-span (seam edit.match) ---------------------------------------------------------


def match_lines_text(lines: Sequence[int], total: int) -> str:
    """`` Matches start at lines 1, 5, 9, ....`` — empty when there are no lines."""
    if not lines:
        return ""
    more = ", ..." if total > MATCH_LINES_SHOWN else ""
    return f" Matches start at lines {', '.join(str(x) for x in lines)}{more}."


def is_disproportionate(matched: str, old: str) -> bool:
    """The disproportion guard of spec edit.6 3e (chars are UTF-16 units of JavaScript strings)."""
    matched_lines = matched.count("\n") + 1
    old_lines = old.count("\n") + 1
    if matched_lines >= max(old_lines + DISPROPORTION_EXTRA_LINES, old_lines * DISPROPORTION_LINE_FACTOR):
        return True
    if old_lines > 1:
        old_len = len(js_trim(old))
        limit = max(old_len + DISPROPORTION_EXTRA_CHARS, old_len * DISPROPORTION_CHAR_FACTOR)
        return len(js_trim(matched)) > limit
    return False


def _disproportionate(path: str, i: int, n: int) -> ToolError:
    target = "the text" if n == 1 else f"edits[{i}]"
    return ToolError(
        f"Refusing to replace {target} in {path}: the fuzzy match spans far more text than oldText. "
        "Provide a more exact oldText (copy it from the file, including whitespace)."
    )


SpanCheck = Callable[[str, int, int, str], bool]  # (content, start, end, normalised oldText) -> accept


def accept_span(content: str, start: int, end: int, normalised_old: str) -> bool:
    return True


SPAN_CHECK: Seam[SpanCheck] = Seam(
    "edit.fuzzy-span-check", SURFACE_ENGINE, accept_span,
    "whether the widened original span of a fuzzy hit may be replaced (inside patch edit.fuzzy-span)")


def match_span(content: str, olds: list[str], news: list[str], path: str, profile: Profile) -> tuple[str, str]:
    """spec edit.6: an exact hit, else the fuzzy hit mapped back to its span of the original (the
    rest of the file keeps its bytes); not-found and duplicate texts carry ``RELOAD_HINT`` and the
    duplicates' start lines; an ``oldText`` that normalises to ``""`` never matches; a fuzzy span
    far larger than ``oldText`` is refused. Returns (content, result)."""
    n = len(olds)
    check = SPAN_CHECK.of(profile)
    norm_content = fuzzy.norm(content)  # = build_line_index(content).normalised_text
    index: fuzzy.LineIndex | None = None  # built for the first fuzzy hit
    spans: list[Span] = []
    for i, old in enumerate(olds):
        normalised_old = fuzzy.norm(old)
        used_fuzzy = False
        idx = content.find(old)
        if idx >= 0:
            start, end = idx, idx + len(old)
        else:
            hit = norm_content.find(normalised_old) if normalised_old else -1
            if hit < 0:
                raise not_found(path, i, n, f" {RELOAD_HINT}")
            # the span is mapped back by UTF-16 lengths, and its size compared in them
            fuzzy.require_code_units(content, old, normalised_old)
            if index is None:
                index = fuzzy.build_line_index(content)
            start, end = fuzzy.map_span(index, hit, len(normalised_old))
            if not check(content, start, end, normalised_old):
                raise not_found(path, i, n, f" {RELOAD_HINT}")
            used_fuzzy = True
        count, lines = count_occurrences(norm_content, normalised_old)
        if count > 1:
            raise duplicate(path, i, n, count, match_lines_text(lines, count))
        if used_fuzzy and is_disproportionate(content[start:end], old):
            raise _disproportionate(path, i, n)
        spans.append(Span(start, end - start, i, news[i]))
    return content, splice(content, spans, path)


# -- edit.diff-bounds (seam edit.receipts) -------------------------------------------------------


def bounded_receipts(path: str, base: str, new: str, bounds: DiffBounds) -> JsonDict:
    """spec edit.9: the diff is omitted past ``bounds`` (changed lines, time), with the reason."""
    return compute_receipts(path, base, new, bounded=True, bounds=bounds)


# -- wrap.replace-all-literal (seam edit.replace-all) ---------------------------------------------


def replace_all_literal(haystack: str, needle: str, replacement: str) -> str:
    """Every non-overlapping occurrence, left to right, replaced by ``replacement`` as written."""
    return haystack.replace(needle, replacement)


# -- the objects -------------------------------------------------------------------------------

EDIT_PATCHES: tuple[Patch, ...] = (
    Patch(PATCH_EDIT_FUZZY_SPAN, "Scope fuzzy normalisation to the matched span", (replace(MATCH, match_span),)),
    Patch(PATCH_EDIT_FIDELITY_GUARD, "Refuse a widened span that swallows a compatibility character",
          (replace(SPAN_CHECK, fuzzy.fidelity_ok),), requires=(PATCH_EDIT_FUZZY_SPAN,)),
    Patch(PATCH_EDIT_DIFF_BOUNDS, "Bound diff computation", (replace(RECEIPTS, bounded_receipts),)),
    Patch(PATCH_WRAP_REPLACE_ALL_LITERAL, "replace_all writes new_string literally",
          (replace(REPLACE_ALL, replace_all_literal),)),
)

PATCHES.register((*ENGINE_SEAMS, SPAN_CHECK, REPLACE_ALL), EDIT_PATCHES)
