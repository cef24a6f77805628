"""The edit engine's code-point fast path and whole-block normalisation equal the previous code.

``apply_edits`` hands strings without surrogates to the matcher as they are (no JavaScript form),
``fuzzy.norm`` normalises whole blocks of lines, the look-alikes are replaced one character at a
time and ``unicode.normalize`` maps the few changed characters before the library's pass. The
oracle is the previous implementation, kept in ``engine_previous.py``: for every profile the
outcome (base and new text) or the error text must be the same, on text rich in what each path
cares about — compatibility forms, combining marks, look-alikes, JavaScript whitespace, CJK,
astral characters (surrogate pairs in JavaScript) and lone surrogates (which force the
JavaScript-string path).
"""

from __future__ import annotations

import unicodedata

from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.tools_impl.edit import engine_previous as previous
from tools_impl.core.errors import ToolError
from tools_impl.core.profile import PATCH_EDIT_FIDELITY_GUARD, REFERENCE, UPSTREAM_PI
from tools_impl.edit import fuzzy
from tools_impl.edit.engine import Edit, EditOutcome, apply_edits
from tools_impl.js import unicode

PROFILES = {
    "upstream": UPSTREAM_PI,
    "reference": REFERENCE,
    "reference-without-guard": REFERENCE.with_patches({PATCH_EDIT_FIDELITY_GUARD: False}),
}
PIECES = [
    "a", "b", "x", "ab", " ", "  ", "\t", "\n", "\n", "\r\n", "\r", "\u00a0", "\u3000", "\u2028", "\ufeff",
    "\u2018", "\u2019", "\u201c", "\u201d", "\u2013", "\u2014", "\u2212", "\u0301", "\u0338", "e\u0301",
    "\u00e9", "caf\u00e9", "\ufb01", "\u2460", "\uff21", "\uff1a", "\uff0c", "\u00b4", "\u2026", "\u338f",
    "\u1100", "\u1161", "\u11a8", "\u212b", "\u4e2d\u6587", "\u3002", "\U0001d400", "\U0001f600",
    "\U0001f680 ", "\U0001ccd6", "\u2002", "\u200a", "\u202f", "\u205f", "\u1680", "\u0020\u0308",
]
LONE = ["\ud83d", "\ude00"]
TEXT = st.lists(st.sampled_from(PIECES), max_size=24).map("".join)
TEXT_WITH_LONE = st.lists(st.sampled_from(PIECES + LONE), max_size=24).map("".join)


def js(s: str) -> str:
    return previous.js_string(s)


def outcome(content: str, edits: list[Edit], profile_name: str) -> EditOutcome | str:
    try:
        return apply_edits(content, edits, "f.txt", PROFILES[profile_name])
    except ToolError as exc:  # the error text is the observable answer
        return f"error: {exc}"


def old_text(content: str, data: st.DataObject) -> str:
    """An ``oldText``: a slice of the content, its normal form (a fuzzy hit), or other text."""
    if content and data.draw(st.booleans()):
        a = data.draw(st.integers(0, len(content) - 1))
        b = data.draw(st.integers(a + 1, min(len(content), a + 12)))
        piece = content[a:b]
        return data.draw(st.sampled_from([piece, previous.py_string(previous.norm(js(piece)))]))
    return data.draw(TEXT_WITH_LONE.filter(bool))


@settings(max_examples=500, deadline=None)
@given(content=TEXT, profile=st.sampled_from(sorted(PROFILES)), n=st.integers(1, 3), data=st.data())
@example(content="\U0001f600\u2019x", profile="reference", n=1, data=None)  # fuzzy hit after a pair
@example(content="\u2019\U0001d400\n", profile="upstream", n=1, data=None)  # upstream rewrite holding a pair
def test_apply_edits_equals_the_previous_engine(content: str, profile: str, n: int,
                                                data: st.DataObject | None) -> None:
    if data is None:
        edits = [Edit("'x" if "x" in content else "'", "Z")]
    else:
        edits = [Edit(old_text(content, data), data.draw(TEXT_WITH_LONE)) for _ in range(n)]
    expected = previous.outcome_or_error(content, edits, "f.txt", PROFILES[profile])
    assert outcome(content, edits, profile) == expected


@settings(max_examples=200, deadline=None)
@given(content=TEXT_WITH_LONE, profile=st.sampled_from(sorted(PROFILES)), data=st.data())
@example(content="a\ud83d\ude00b", profile="upstream", data=None)  # a pair written as two halves
def test_lone_surrogates_take_the_javascript_path_with_the_same_answer(content: str, profile: str,
                                                                        data: st.DataObject | None) -> None:
    edits = [Edit("\ud83d", "Q")] if data is None else [Edit(old_text(content, data), data.draw(TEXT_WITH_LONE))]
    expected = previous.outcome_or_error(content, edits, "f.txt", PROFILES[profile])
    assert outcome(content, edits, profile) == expected


BLOCK_PIECES = st.lists(st.sampled_from(PIECES), min_size=1, max_size=12).map("".join)


@settings(max_examples=25, deadline=None)
@given(unit=BLOCK_PIECES, tail=TEXT, profile=st.sampled_from(sorted(PROFILES)), where=st.sampled_from([0, 1, 2]))
@example(unit="\u201cq\u201d \U0001f600\n", tail="\u2019end", profile="upstream", where=2)
@example(unit="\u4e2d\uff1a\u3000\n", tail="x", profile="reference", where=1)
def test_files_longer_than_a_normalisation_block_equal_the_previous_engine(unit: str, tail: str, profile: str,
                                                                            where: int) -> None:
    """More than ``fuzzy.NORM_BLOCK`` characters: several blocks, an edit at the start, middle
    or end (unique, so it applies)."""
    body = unit * (fuzzy.NORM_BLOCK // len(unit) + 2)
    marker = "\u00abMARK\u00bb"
    at = [0, len(body) // 2, len(body)][where]
    content = body[:at] + marker + body[at:] + tail
    edits = [Edit(marker, "\u2018done\u2019 \U0001f389")]
    expected = previous.outcome_or_error(content, edits, "f.txt", PROFILES[profile])
    assert outcome(content, edits, profile) == expected


@settings(max_examples=400, deadline=None)
@given(TEXT_WITH_LONE, st.integers(0, 3))
@example("\u201c" * 300 + "\ufb01\n\U0001d400  \n", 1)
def test_norm_equals_the_previous_line_by_line_norm(text: str, repeat: int) -> None:
    """On JavaScript strings as they are; on code-point strings up to the JavaScript form (the
    fast path keeps astral characters whole)."""
    long = (text + "\n") * (repeat * 90) + text  # past the whole-block length of unicode.normalize
    for s in (text, long):
        j = js(s) if not fuzzy.has_surrogate(s) else s
        assert fuzzy.norm(j) == previous.norm(j)
        if not fuzzy.has_surrogate(s):
            assert js(fuzzy.norm(s)) == previous.norm(j)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join), st.integers(0, 40))
@example("\uff1a" * 300, 0)
@example("e\u0301" * 200 + "\u212b" * 100, 3)
def test_normalize_equals_the_library_on_long_text(text: str, pad: int) -> None:
    """Long enough for the replace-first path, with the characters it maps and some it must not."""
    s = ("\u4e2d" * pad + text + "\u00e9") * 12
    with unicode.using(unicode.DEFAULT_UNICODE_VERSION):
        data = unicode.data_for(unicode.DEFAULT_UNICODE_VERSION)
        for form in ("NFKC", "NFC", "NFD", "NFKD"):
            assert unicode.normalize(form, s) == data.normalize(form, s)


def test_the_changed_characters_are_those_each_form_changes() -> None:
    data = unicodedata
    pattern = unicode._changed_chars(data, "NFKC")
    for ch in ("\uff1a", "\u3000", "\u00a0", "\ufb01", "\u2460", "\u212b"):
        assert pattern.fullmatch(ch), ch
    for ch in ("\u00e9", "\u4e2d", "\u2019", "a", "\uac00"):
        assert not pattern.fullmatch(ch), ch


def test_require_code_units_refuses_only_astral_characters() -> None:
    fuzzy.require_code_units("abc", "\u00e9\u4e2d", js("\U0001f600"), "\ud83d")
    try:
        fuzzy.require_code_units("a", "x\U0001f600")
    except fuzzy.CodeUnitsRequired:
        return
    raise AssertionError("an astral character needs the JavaScript form")


def test_narrow_is_exact_for_every_length() -> None:
    for n in range(0, 80):
        assert fuzzy._narrow("\u00e9" * n + "\uffff")
        assert not fuzzy._narrow("\u00e9" * n + "\U00010000")
        assert fuzzy._narrow("a" * n)
