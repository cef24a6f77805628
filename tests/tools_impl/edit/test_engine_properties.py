"""Hypothesis property tests of the edit tool (spec edit.3–7, spec edit.10).

Generated text uses only characters assigned in this Python's Unicode database (categories Cn
and Cs excluded): the reference runtime (Node 22) uses Unicode 17 and normalisation data for
characters this Python does not know could differ. Normalisation of assigned characters is
stable across Unicode versions, so the restriction is enough. Carriage returns and U+FEFF are
excluded where a property is about content rather than line endings or the BOM.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import assume, event, given
from hypothesis import strategies as st

from tools_impl.core.context import make_context
from tools_impl.core.errors import ToolError
from tools_impl.core.profile import REFERENCE, UPSTREAM_PI, Profile
from tools_impl.edit import tool as edit
from tools_impl.edit.engine import Edit, apply_edits
from tools_impl.edit.fuzzy import js_split, js_string, norm, py_string

ASSIGNED = st.characters(exclude_categories=("Cn", "Cs"), exclude_characters="\r\ufeff\x00")
# Characters the fuzzy matcher cares about, mixed in so that fuzzy paths are exercised often.
LOOKALIKES = st.sampled_from(
    list("ab \n\t\u2019\u201c\u201d\u2014\u00a0\u3000\uff1a\uff0c\u338f\ufb01\u2026e\u0301")
)
MIXED = st.one_of(ASSIGNED, LOOKALIKES)
DOLLAR_TOKENS = st.sampled_from(["$&", "$$", "$`", "$'", "$1", "\\1", "\\g<0>", "$<n>", "$"])
MARKER = "\x00NEW\x00"  # \x00 never occurs in generated content
BOM_BYTES = b"\xef\xbb\xbf"


def run_tool(root: Path, args: dict[str, object], profile: Profile = REFERENCE) -> dict[str, object]:
    result = edit.TOOL.call(args, make_context(str(root), {"HOME": str(root)}, profile))
    return dict(result.details or {})


def fuzzy_count(content: str, old: str) -> int:
    return len(js_split(norm(js_string(content)), norm(js_string(old)))) - 1


@given(
    parts=st.lists(st.text(ASSIGNED, max_size=8), min_size=2, max_size=5),
    needle=st.text(ASSIGNED, min_size=1, max_size=4),
    replacement=st.lists(st.one_of(DOLLAR_TOKENS, st.text(ASSIGNED, max_size=3)), max_size=4).map("".join),
)
def test_replace_all_output_equals_plain_split_join(parts: list[str], needle: str, replacement: str) -> None:
    text = needle.join(parts)
    expected = replacement.join(text.split(needle))
    assume(expected != text)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "f.txt").write_bytes(text.encode())
        run_tool(root, {"file_path": "f.txt", "old_string": needle, "new_string": replacement, "replace_all": True})
        assert (root / "f.txt").read_bytes() == expected.encode()


@given(
    prefix=st.text(MIXED, max_size=20),
    old=st.text(MIXED, min_size=1, max_size=8),
    suffix=st.text(MIXED, max_size=20),
    new=st.lists(st.one_of(MIXED, DOLLAR_TOKENS), max_size=8).map("".join),
)
def test_single_exact_unique_match_is_spliced_literally(prefix: str, old: str, suffix: str, new: str) -> None:
    content = prefix + old + suffix
    assume(content.count(old) == 1 and fuzzy_count(content, old) == 1 and new != old)
    out = apply_edits(content, [Edit(old, new)], "f.txt", REFERENCE).new
    assert out == prefix + new + suffix


@st.composite
def content_and_fuzzy_old(draw: st.DrawFn) -> tuple[str, str]:
    content = draw(st.text(MIXED, min_size=1, max_size=40))
    a = draw(st.integers(0, len(content) - 1))
    b = draw(st.integers(a + 1, len(content)))
    old = py_string(norm(js_string(content[a:b])))
    assume(old != "")
    return content, old


@given(case=content_and_fuzzy_old())
def test_fuzzy_edit_leaves_bytes_outside_span_untouched(case: tuple[str, str]) -> None:
    content, old = case
    try:
        out = apply_edits(content, [Edit(old, MARKER)], "f.txt", REFERENCE).new
    except ToolError:
        event("edit refused")
        return
    event("exact" if old in content else "fuzzy")
    before, after = js_string(out).split(MARKER)
    c = js_string(content)
    assert c.startswith(before) and c.endswith(after) and len(before) + len(after) <= len(c)
    assert norm(c[len(before) : len(c) - len(after)]) == norm(js_string(old))


# Characters whose fuzzy normalisation (spec edit.7) is known without any Unicode tables: the
# oracle of the upstream property below maps them itself instead of calling the implementation.
KNOWN_NORMALISED = {"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u2014": "-", "\u2013": "-",
                    "\u00a0": " ", "\u3000": " ", "\uff1a": ":", "\uff0c": ",", "\ufb01": "fi", "\u2026": "..."}
KNOWN_CHARS = st.sampled_from(["a", "b", " ", "\n", "\t", *KNOWN_NORMALISED])


def model_norm(text: str) -> str:
    """Upstream normalizeForFuzzyMatch on KNOWN_CHARS text: map each character, trim line ends."""
    mapped = "".join(KNOWN_NORMALISED.get(c, c) for c in text)
    return "\n".join(line.rstrip(" \t") for line in mapped.split("\n"))


@given(content=st.text(KNOWN_CHARS, min_size=1, max_size=40), data=st.data())
def test_upstream_fuzzy_edit_rewrites_the_whole_file_normalised(content: str, data: st.DataObject) -> None:
    """Upstream (spec edit.10): an exact hit is spliced into the original; a fuzzy hit switches
    the whole file to its normalised form first. Refused exactly when the oracle finds no
    unique hit."""
    a = data.draw(st.integers(0, len(content) - 1))
    b = data.draw(st.integers(a + 1, len(content)))
    old = data.draw(st.sampled_from([content[a:b], model_norm(content[a:b])]))
    needle = model_norm(old)
    assume(needle != "")
    whole = model_norm(content)
    count = len(whole.split(needle)) - 1
    if old in content and count == 1:
        expected: str | None = content.replace(old, MARKER, 1)
    elif count == 1:
        hit = whole.index(needle)
        expected = whole[:hit] + MARKER + whole[hit + len(needle):]
    else:
        expected = None
    try:
        out = apply_edits(content, [Edit(old, MARKER)], "f.txt", UPSTREAM_PI).new
    except ToolError:
        assert expected is None, "refused although the oracle finds one occurrence"
        return
    assert out == expected


@given(
    unit=st.text(st.sampled_from("abc"), min_size=1, max_size=4),
    fillers=st.lists(st.text(st.sampled_from("xy \n\u3000\u2019\uff0c\t"), max_size=6), min_size=3, max_size=7),
)
def test_two_or_more_normalised_occurrences_give_the_duplicate_error(unit: str, fillers: list[str]) -> None:
    content = unit.join(fillers)
    total = len(fillers) - 1
    offsets: list[int] = []
    pos = 0
    for filler in fillers[:-1]:
        pos += len(filler)
        offsets.append(pos)
        pos += len(unit)
    lines = ", ".join(str(content.count("\n", 0, off) + 1) for off in offsets[:3])
    more = ", ..." if total > 3 else ""
    for profile, match_lines in ((REFERENCE, f" Matches start at lines {lines}{more}."), (UPSTREAM_PI, "")):
        try:
            apply_edits(content, [Edit(unit, "Z")], "f.txt", profile)
        except ToolError as exc:
            assert str(exc) == (
                f"Found {total} occurrences of the text in f.txt.{match_lines} The text must be unique. "
                "Please provide more context to make it unique."
            )
        else:
            raise AssertionError("duplicate not detected")


@given(
    lines=st.lists(st.text(st.one_of(MIXED.filter(lambda ch: ch != "\n")), max_size=12), min_size=1, max_size=6),
    final_newline=st.booleans(),
    bom=st.booleans(),
    data=st.data(),
)
def test_crlf_and_bom_survive_any_successful_edit(lines: list[str], final_newline: bool, bom: bool, data: st.DataObject) -> None:
    lf_text = "\n".join(lines) + ("\n" if final_newline else "")
    assume("\n" in lf_text)  # a file without any newline is LF by definition
    a = data.draw(st.integers(0, len(lf_text) - 1))
    b = data.draw(st.integers(a + 1, len(lf_text)))
    new = data.draw(st.lists(st.one_of(MIXED, st.sampled_from(["\r", "\r\n"])), max_size=8).map("".join))
    raw = (BOM_BYTES if bom else b"") + lf_text.replace("\n", "\r\n").encode()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "f.txt").write_bytes(raw)
        try:
            run_tool(root, {"file_path": "f.txt", "old_string": lf_text[a:b], "new_string": new})
        except ToolError:
            event("edit refused")
            return
        written = (root / "f.txt").read_bytes()
    assert written.startswith(BOM_BYTES) == bom
    body = written[len(BOM_BYTES) if bom else 0 :].decode()
    without_crlf = body.replace("\r\n", "")
    assert "\n" not in without_crlf and "\r" not in without_crlf


LINE_CHARS = st.one_of(ASSIGNED, LOOKALIKES).filter(lambda ch: ch not in "\n\u2028\u2029")


@given(
    lines=st.lists(st.text(LINE_CHARS, max_size=10), min_size=1, max_size=8),
    data=st.data(),
)
def test_text_copied_from_read_output_works_as_old_string(lines: list[str], data: st.DataObject) -> None:
    lines = [f"L{i} {line}" for i, line in enumerate(lines)]
    a = data.draw(st.integers(0, len(lines) - 1))
    b = data.draw(st.integers(a + 1, len(lines)))
    content = "\n".join(lines) + "\n"
    old_plain = "\n".join(lines[a:b])
    assume("\u2192" not in norm(js_string(content)) and fuzzy_count(content, old_plain) == 1)
    new_lines = [line + "!" for line in lines[a:b]]
    old = "\n".join(f"{n:>6}\u2192{line}" for n, line in enumerate(lines[a:b], start=a + 1))
    new = "\n".join(f"{n:>6}\u2192{line}" for n, line in enumerate(new_lines, start=a + 1))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "f.txt").write_bytes(content.encode())
        details = run_tool(root, {"file_path": "f.txt", "old_string": old, "new_string": new})
        written = (root / "f.txt").read_bytes().decode()
    assert details["line_number_prefixes_stripped"] is True
    assert written == "\n".join(lines[:a] + new_lines + lines[b:]) + "\n"
