"""The pi edit engine (spec edit.5–8, spec edit.10), with two seams for MiniMax's patches.

``apply_edits`` is the pure matching-and-splicing algorithm on LF-normalised, BOM-less content;
``engine_edit`` is the I/O around it: input validation, path resolution, the per-file mutation
queue, the access check, BOM and line-ending handling, the atomic write-back and the receipts.
``prepare_arguments`` is pi's legacy input shim, applied only by a host that calls it.

Seams (``core/patches.py``; default = pi v0.79.1, patches in ``edit/patches.py``):
- ``edit.match`` how each ``oldText`` is found and spliced — pi: exact, else fuzzy over the whole
  normalised content, which a fuzzy hit then rewrites whole (``match_like_pi``, spec edit.10);
  patch ``edit.fuzzy-span`` replaces only the mapped span;
- ``edit.receipts`` the ``diff``/``patch`` details of a success — pi: always in full (spec edit.9);
  patch ``edit.diff-bounds`` bounds them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Protocol

from tools_impl.core.context import ToolContext
from tools_impl.core.errors import ToolError
from tools_impl.core.patches import SURFACE_ENGINE, Seam
from tools_impl.core.profile import Profile
from tools_impl.core.result import JsonDict, ToolResult, text_result
from tools_impl.edit import fuzzy
from tools_impl.js import unicode
from tools_impl.js.node_errors import EISDIR_READ_MESSAGE, error_code, node_error_message
from tools_impl.js.text import BOM_CHAR, js_utf8, utf16_len
from tools_impl.shared.line_diff import DiffBounds, compute_receipts
from tools_impl.shared.mutation_queue import MUTATIONS
from tools_impl.shared.paths import engine_resolve

TOOL_NAME = "edit"
INVALID_INPUT_MESSAGE = "Edit tool input is invalid. edits must contain at least one replacement."
# How many duplicate start lines count_occurrences reports.
MATCH_LINES_SHOWN = 3


@dataclass(frozen=True)
class Edit:
    """One replacement as the engine receives it."""

    old_text: str
    new_text: str


@dataclass(frozen=True)
class EditOutcome:
    """``base`` is the content the edits were spliced into (the normalised whole text after an
    upstream fuzzy hit, else the input); ``new`` is the result. Receipts diff ``base`` → ``new``."""

    base: str
    new: str


# -- messages (spec edit.8) -------------------------------------------------------------------------


def not_found(path: str, i: int, n: int, tail: str = "") -> ToolError:
    """spec edit.8 not-found text; ``tail`` is appended (a patch's hint, with its space)."""
    if n == 1:
        return ToolError(
            f"Could not find the exact text in {path}. The old text must match exactly including all "
            f"whitespace and newlines.{tail}"
        )
    return ToolError(
        f"Could not find edits[{i}] in {path}. The oldText must match exactly including all whitespace "
        f"and newlines.{tail}"
    )


def duplicate(path: str, i: int, n: int, count: int, match_lines: str = "") -> ToolError:
    """spec edit.8 duplicate text; ``match_lines`` is inserted after the count (a patch's)."""
    if n == 1:
        return ToolError(
            f"Found {count} occurrences of the text in {path}.{match_lines} The text must be unique. "
            "Please provide more context to make it unique."
        )
    return ToolError(
        f"Found {count} occurrences of edits[{i}] in {path}.{match_lines} Each oldText must be unique. "
        "Please provide more context to make it unique."
    )


def _empty_old_text(path: str, i: int, n: int) -> ToolError:
    if n == 1:
        return ToolError(f"oldText must not be empty in {path}.")
    return ToolError(f"edits[{i}].oldText must not be empty in {path}.")


def _no_change(path: str, n: int) -> ToolError:
    if n == 1:
        return ToolError(
            f"No changes made to {path}. The replacement produced identical content. This might indicate "
            "an issue with special characters or the text not existing as expected."
        )
    return ToolError(f"No changes made to {path}. The replacements produced identical content.")


def _overlap(path: str, a: int, b: int) -> ToolError:
    return ToolError(
        f"edits[{a}] and edits[{b}] overlap in {path}. Merge them into one edit or target disjoint regions."
    )


# -- pure algorithm ----------------------------------------------------------------------------


def normalize_to_lf(text: str) -> str:
    """``\\r\\n`` → ``\\n``, then any remaining ``\\r`` → ``\\n``."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def count_occurrences(haystack: str, needle: str) -> tuple[int, list[int]]:
    """JavaScript ``haystack.split(needle).length - 1`` and the 1-based start lines of the first
    three occurrences (non-overlapping, left to right), for JavaScript strings and for
    code-point strings without surrogates alike."""
    if needle == "":
        # "".split("") is [] (count -1); otherwise one piece per code unit, the k-th "match"
        # ending piece k + 1 (offsets as the piece-length sum of the general case)
        count = utf16_len(haystack) - 1
        head = fuzzy.js_string(haystack[: MATCH_LINES_SHOWN + 1])
        return count, [head.count("\n", 0, k + 1) + 1 for k in range(min(count, MATCH_LINES_SHOWN))]
    count = haystack.count(needle)  # non-overlapping, left to right, as split counts them
    lines: list[int] = []
    offset = -len(needle)
    for _ in range(min(count, MATCH_LINES_SHOWN)):
        offset = haystack.find(needle, offset + len(needle))
        lines.append(haystack.count("\n", 0, offset) + 1)
    return count, lines


@dataclass(frozen=True)
class Span:
    """Where edit ``index`` replaces ``length`` code units at ``start`` with ``new_text``."""

    start: int
    length: int
    index: int
    new_text: str


def splice(base: str, spans: list[Span], path: str) -> str:
    """Apply non-overlapping ``spans`` to ``base``; overlapping ones are an error (spec edit.8)."""
    ordered = sorted(spans, key=lambda s: s.start)
    for prev, cur in pairwise(ordered):
        if prev.start + prev.length > cur.start:
            raise _overlap(path, prev.index, cur.index)
    pieces: list[str] = []
    pos = 0
    for span in ordered:
        pieces += (base[pos : span.start], span.new_text)
        pos = span.start + span.length
    pieces.append(base[pos:])
    return "".join(pieces)


class _Normalised:
    """``fuzzy.norm_whole`` of one text, computed at most once."""

    def __init__(self, text: str, normalised: str | None = None) -> None:
        self.text = text
        self._normalised = normalised

    @property
    def normalised(self) -> str:
        if self._normalised is None:
            self._normalised = fuzzy.norm_whole(self.text)
        return self._normalised


def _find_upstream(content: _Normalised, old: str, normalised_old: str) -> tuple[int, int, bool]:
    """pi's ``fuzzyFindText``: (index, length, used_fuzzy); index -1 when not found."""
    idx = content.text.find(old)
    if idx >= 0:
        return idx, len(old), False
    hit = content.normalised.find(normalised_old)
    if hit < 0:
        return -1, 0, False
    return hit, len(normalised_old), True


def match_like_pi(content: str, olds: list[str], news: list[str], path: str, profile: Profile) -> tuple[str, str]:
    """pi's ``applyEditsToNormalizedContent``: if any edit needs the fuzzy match, every edit is
    matched in the whole normalised content, which becomes the base (spec edit.10). Returns
    (base, result)."""
    n = len(olds)
    normalised_olds = [fuzzy.norm_whole(old) for old in olds]
    original = _Normalised(content)
    initial = [_find_upstream(original, old, nold) for old, nold in zip(olds, normalised_olds, strict=True)]
    if any(used for _, _, used in initial):
        # norm_whole is idempotent (the property tests check it), so the normalised base is its
        # own normal form
        base = _Normalised(original.normalised, original.normalised)
    else:
        base = original
    spans: list[Span] = []
    for i, old in enumerate(olds):
        idx, length, _ = _find_upstream(base, old, normalised_olds[i])
        if idx < 0:
            raise not_found(path, i, n)
        count, _lines = count_occurrences(base.normalised, normalised_olds[i])
        if count > 1:
            raise duplicate(path, i, n, count)
        spans.append(Span(idx, length, i, news[i]))
    return base.text, splice(base.text, spans, path)


class Matcher(Protocol):
    """Finds and splices the edits (seam ``edit.match``). The strings are JavaScript strings
    (UTF-16 code units), or, when none of them holds a surrogate code point, plain code-point
    strings: a search, a count of a text and a splice at the positions found give the same
    answer in both forms. A matcher that computes a position or length instead calls
    ``fuzzy.require_code_units`` on the strings first."""

    def __call__(self, content: str, olds: list[str], news: list[str], path: str,
                 profile: Profile) -> tuple[str, str]: ...


class Receipts(Protocol):
    def __call__(self, path: str, base: str, new: str, bounds: DiffBounds) -> JsonDict: ...


def full_receipts(path: str, base: str, new: str, bounds: DiffBounds) -> JsonDict:
    """pi's receipts: the whole diff and patch, however large."""
    return compute_receipts(path, base, new, bounded=False, bounds=bounds)


MATCH: Seam[Matcher] = Seam(
    "edit.match", SURFACE_ENGINE, match_like_pi,
    "how each oldText is found and spliced, and the not-found and duplicate texts (spec edit.6-8)")
RECEIPTS: Seam[Receipts] = Seam(
    "edit.receipts", SURFACE_ENGINE, full_receipts, "the diff and patch details of a successful edit (spec edit.9)")
ENGINE_SEAMS: tuple[Seam[Any], ...] = (MATCH, RECEIPTS)


def apply_edits(content: str, edits: Sequence[Edit], path: str, profile: Profile) -> EditOutcome:
    """Apply ``edits`` to ``content`` (already LF-normalised and BOM-less), atomically.

    Raises ``ToolError`` with the spec edit.8 message (from the ``edit.match`` seam's matcher) for
    an empty ``oldText``, a text not found, a duplicate, a refused fuzzy hit, overlapping edits, or
    a result identical to the input. ``path`` is only echoed in messages.
    """
    n = len(edits)
    olds = [normalize_to_lf(e.old_text) for e in edits]
    news = [normalize_to_lf(e.new_text) for e in edits]
    for i, old in enumerate(olds):
        if old == "":
            raise _empty_old_text(path, i, n)
    matcher = MATCH.of(profile)
    with unicode.using(profile.unicode_version):  # NFKC with the emulated runtime's data
        if not any(fuzzy.has_surrogate(s) for s in (content, *olds, *news)):
            # the fast path: no string holds a surrogate, so the matcher can take them as they
            # are (Matcher), never converting megabytes to their JavaScript form and back
            try:
                base, new = matcher(content, olds, news, path, profile)
            except fuzzy.CodeUnitsRequired:
                pass
            else:
                if new == base:
                    raise _no_change(path, n)
                return EditOutcome(base, new)
        js = fuzzy.js_string
        base, new = matcher(js(content), [js(old) for old in olds], [js(new) for new in news], path, profile)
    if new == base:
        raise _no_change(path, n)
    return EditOutcome(fuzzy.py_string(base), fuzzy.py_string(new))


# -- input shaping ----------------------------------------------------------------------------


def prepare_arguments(args: Any) -> Any:
    """pi's legacy input shim: a JSON-string ``edits`` that parses to an array is parsed; string
    top-level ``oldText`` and ``newText`` are appended to ``edits`` (created if missing) and removed."""
    if not isinstance(args, Mapping):
        return args
    out = dict(args)
    edits = out.get("edits")
    if isinstance(edits, str):
        try:
            parsed = json.loads(edits)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            out["edits"] = parsed
    old, new = out.get("oldText"), out.get("newText")
    if isinstance(old, str) and isinstance(new, str):
        current = out.get("edits")
        out["edits"] = [*(current if isinstance(current, list) else []), {"oldText": old, "newText": new}]
        del out["oldText"], out["newText"]
    return out


def parse_edits(edits: Any) -> list[Edit]:
    """Validate the engine's ``edits`` input (spec edit.5 step 1)."""
    if not isinstance(edits, list) or not edits:
        raise ToolError(INVALID_INPUT_MESSAGE)
    out: list[Edit] = []
    for i, item in enumerate(edits):
        old = item.get("oldText") if isinstance(item, Mapping) else None
        new = item.get("newText") if isinstance(item, Mapping) else None
        if not isinstance(old, str) or not isinstance(new, str):
            # Not specified: pi would fail with a JavaScript TypeError here.
            raise ToolError(f"Edit tool input is invalid. edits[{i}] must have string oldText and newText.")
        out.append(Edit(old, new))
    return out


# -- I/O ----------------------------------------------------------------------------------------


def detect_crlf(text: str) -> bool:
    """CRLF when the first ``\\n`` is preceded by ``\\r``; no ``\\n`` at all → LF."""
    first = text.find("\n")
    return first > 0 and text[first - 1] == "\r"


def encode_utf8(text: str) -> bytes:
    """UTF-8 as Node writes it: a lone surrogate becomes U+FFFD (a pair written as two halves is
    one character)."""
    try:
        return text.encode("utf-8")  # no surrogate at all: one C-level pass
    except UnicodeEncodeError:
        return js_utf8(fuzzy.py_string(text))


def _access_code(abs_path: str) -> str | None:
    """Node ``fs.access(path, R_OK | W_OK)``: ``None`` when allowed, else the error code."""
    try:
        os.stat(abs_path)
    except OSError as exc:
        return error_code(exc) or "EIO"
    if os.access(abs_path, os.R_OK | os.W_OK):
        return None
    if os.access(abs_path, os.R_OK):
        try:
            if os.statvfs(abs_path).f_flag & os.ST_RDONLY:
                return "EROFS"
        except (OSError, AttributeError):
            pass
    return "EACCES"


def engine_edit(path: str, edits: Any, ctx: ToolContext) -> ToolResult:
    """Run the engine on ``path`` (echoed verbatim in messages) with pi-style ``edits``.

    Raises ``ToolError`` (spec edit.8 texts, access and OS errors) or ``ToolAborted``; nothing is
    written unless every edit applies.
    """
    parsed = parse_edits(edits)
    if not isinstance(path, str):
        raise ToolError("Edit tool input is invalid. path must be a string.")
    profile = ctx.profile
    try:
        abs_path = engine_resolve(path, ctx.root, ctx.home)
    except ValueError as exc:
        raise ToolError(f"Could not edit file: {path}. Error: {exc}.") from exc
    with MUTATIONS.hold(abs_path):
        ctx.check_abort()
        code = _access_code(abs_path)
        if code is not None:
            raise ToolError(f"Could not edit file: {path}. Error code: {code}.")
        ctx.check_abort()
        try:
            with open(abs_path, "rb") as fh:
                raw = fh.read()
        except IsADirectoryError as exc:
            raise ToolError(EISDIR_READ_MESSAGE) from exc
        except OSError as exc:
            raise ToolError(node_error_message(exc, "open", abs_path)) from exc
        ctx.check_abort()
        text = raw.decode("utf-8", "replace")
        bom = BOM_CHAR if text.startswith(BOM_CHAR) else ""
        text = text[len(bom) :]
        crlf = detect_crlf(text)
        outcome = apply_edits(normalize_to_lf(text), parsed, path, profile)
        body = outcome.new.replace("\n", "\r\n") if crlf else outcome.new
        try:
            with open(abs_path, "wb") as fh:
                fh.write(encode_utf8(bom + body))
        except OSError as exc:
            raise ToolError(node_error_message(exc, "open", abs_path)) from exc
        ctx.check_abort()
    bounds = DiffBounds(profile.diff_max_edit_length, profile.diff_timeout_ms)
    details = RECEIPTS.of(profile)(path, outcome.base, outcome.new, bounds)
    return text_result(TOOL_NAME, f"Successfully replaced {len(parsed)} block(s) in {path}.", details)
