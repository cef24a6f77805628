"""The pi edit engine with MiniMax's patches and its upstream emulation (spec edit.5–8, spec edit.10).

Tests here assert result text and file bytes only; receipts (details) are covered in
test_edit_receipts.py because they belong to the diff module.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tools_impl.core.context import ToolContext, make_context
from tools_impl.core.errors import ToolAborted, ToolError
from tools_impl.core.profile import PATCH_EDIT_FIDELITY_GUARD, REFERENCE, UPSTREAM_PI, Profile
from tools_impl.edit.engine import (
    INVALID_INPUT_MESSAGE,
    Edit,
    apply_edits,
    detect_crlf,
    engine_edit,
    prepare_arguments,
)
from tools_impl.edit.patches import RELOAD_HINT, is_disproportionate

NOT_FOUND_1 = (
    "Could not find the exact text in f.txt. The old text must match exactly including all whitespace "
    "and newlines."
)
NO_GUARD = REFERENCE.with_patches({PATCH_EDIT_FIDELITY_GUARD: False})


def apply1(content: str, old: str, new: str, profile: Profile = REFERENCE) -> str:
    return apply_edits(content, [Edit(old, new)], "f.txt", profile).new


def apply_n(content: str, pairs: list[tuple[str, str]], profile: Profile = REFERENCE) -> str:
    return apply_edits(content, [Edit(o, n) for o, n in pairs], "f.txt", profile).new


def error_of(content: str, pairs: list[tuple[str, str]], profile: Profile = REFERENCE) -> str:
    with pytest.raises(ToolError) as info:
        apply_n(content, pairs, profile)
    return str(info.value)


def ctx_for(root: Path, profile: Profile = REFERENCE) -> ToolContext:
    return make_context(str(root), {"HOME": str(root)}, profile)


# -- error messages (spec edit.8), both wordings ------------------------------------------------------


def test_not_found_single_edit_reference_wording() -> None:
    assert error_of("abc\n", [("xyz", "q")]) == f"{NOT_FOUND_1} {RELOAD_HINT}"


def test_not_found_single_edit_upstream_wording() -> None:
    assert error_of("abc\n", [("xyz", "q")], UPSTREAM_PI) == NOT_FOUND_1


def test_not_found_multi_edit_reference_and_upstream_wording() -> None:
    base = (
        "Could not find edits[1] in f.txt. The oldText must match exactly including all whitespace and "
        "newlines."
    )
    assert error_of("abc\n", [("a", "A"), ("xyz", "q")]) == f"{base} {RELOAD_HINT}"
    assert error_of("abc\n", [("a", "A"), ("xyz", "q")], UPSTREAM_PI) == base


def test_reload_hint_text_is_verbatim() -> None:
    assert RELOAD_HINT == (
        "If oldText was written from memory or an earlier read, the file may have changed since - use the "
        "read tool to reload it before retrying."
    )


def test_duplicate_single_edit_lists_start_lines_in_reference_only() -> None:
    content = "x = 1\ny\nx = 1\n"
    assert error_of(content, [("x = 1", "z")]) == (
        "Found 2 occurrences of the text in f.txt. Matches start at lines 1, 3. The text must be unique. "
        "Please provide more context to make it unique."
    )
    assert error_of(content, [("x = 1", "z")], UPSTREAM_PI) == (
        "Found 2 occurrences of the text in f.txt. The text must be unique. Please provide more context "
        "to make it unique."
    )


def test_duplicate_multi_edit_wording_both_profiles() -> None:
    content = "a\nb\nb\n"
    pairs = [("a", "A"), ("b", "B")]
    assert error_of(content, pairs) == (
        "Found 2 occurrences of edits[1] in f.txt. Matches start at lines 2, 3. Each oldText must be "
        "unique. Please provide more context to make it unique."
    )
    assert error_of(content, pairs, UPSTREAM_PI) == (
        "Found 2 occurrences of edits[1] in f.txt. Each oldText must be unique. Please provide more "
        "context to make it unique."
    )


def test_duplicate_with_four_occurrences_shows_first_three_lines_and_ellipsis() -> None:
    content = "k\nk\nother\nk\nk\n"
    assert error_of(content, [("k", "z")]) == (
        "Found 4 occurrences of the text in f.txt. Matches start at lines 1, 2, 4, .... The text must "
        "be unique. Please provide more context to make it unique."
    )


def test_duplicates_are_counted_in_fuzzy_space_even_after_an_exact_hit() -> None:
    content = "say \u201chi\u201d\nsay \"hi\"\n"
    assert error_of(content, [('say "hi"', "x")]).startswith(
        "Found 2 occurrences of the text in f.txt. Matches start at lines 1, 2."
    )


def test_occurrences_do_not_overlap_aaa_contains_aa_once() -> None:
    assert apply1("aaa", "aa", "X") == "Xa"


def test_empty_old_text_errors_in_both_profiles() -> None:
    for profile in (REFERENCE, UPSTREAM_PI):
        assert error_of("abc", [("", "x")], profile) == "oldText must not be empty in f.txt."
        assert error_of("abc", [("a", "b"), ("", "x")], profile) == "edits[1].oldText must not be empty in f.txt."


def test_empty_old_text_is_checked_before_any_matching() -> None:
    assert error_of("abc", [("missing", "x"), ("", "y")]) == "edits[1].oldText must not be empty in f.txt."


def test_crlf_only_old_text_is_not_empty() -> None:
    assert apply1("a\n\nb", "\r\n\r\n", "\n") == "a\nb"


def test_no_change_errors_single_and_multi() -> None:
    for profile in (REFERENCE, UPSTREAM_PI):
        assert error_of("abc", [("b", "b")], profile) == (
            "No changes made to f.txt. The replacement produced identical content. This might indicate an "
            "issue with special characters or the text not existing as expected."
        )
        assert error_of("abc", [("a", "a"), ("c", "c")], profile) == (
            "No changes made to f.txt. The replacements produced identical content."
        )


def test_overlap_error_names_indices_in_sorted_order() -> None:
    msg = error_of("abcdef", [("cde", "X"), ("abc", "Y")])
    assert msg == "edits[1] and edits[0] overlap in f.txt. Merge them into one edit or target disjoint regions."
    assert error_of("abcdef", [("cde", "X"), ("abc", "Y")], UPSTREAM_PI) == msg


def test_identical_edits_overlap() -> None:
    assert error_of("abcdef", [("bc", "X"), ("bc", "X")]) == (
        "edits[0] and edits[1] overlap in f.txt. Merge them into one edit or target disjoint regions."
    )


def test_touching_spans_are_allowed_and_spliced_from_the_end() -> None:
    assert apply_n("abcdef", [("def", "3"), ("abc", "1")]) == "13"


def test_disproportion_error_wording_single_and_multi() -> None:
    content = "a" + " " * 501 + "\nb\nzzz\n"
    assert error_of(content, [("a\nb", "x")]) == (
        "Refusing to replace the text in f.txt: the fuzzy match spans far more text than oldText. Provide "
        "a more exact oldText (copy it from the file, including whitespace)."
    )
    assert error_of(content, [("zzz", "y"), ("a\nb", "x")]) == (
        "Refusing to replace edits[1] in f.txt: the fuzzy match spans far more text than oldText. Provide "
        "a more exact oldText (copy it from the file, including whitespace)."
    )


def test_disproportion_additive_char_threshold_boundary() -> None:
    # old "a\nb" trims to 3 chars: limit max(3 + 500, 3 * 4) = 503 trimmed chars of the span.
    assert apply1("a" + " " * 500 + "\nb", "a\nb", "ok") == "ok"
    with pytest.raises(ToolError, match=r"^Refusing to replace the text"):
        apply1("a" + " " * 501 + "\nb", "a\nb", "ok")


def test_disproportion_multiplicative_char_threshold_boundary() -> None:
    # old trims to 202 chars: limit max(702, 808) = 808.
    old = "x" * 200 + "\ny"
    assert apply1("x" * 200 + " " * 606 + "\ny", old, "ok") == "ok"
    with pytest.raises(ToolError, match=r"^Refusing to replace the text"):
        apply1("x" * 200 + " " * 607 + "\ny", old, "ok")


def test_disproportion_char_threshold_applies_only_to_multi_line_old_text() -> None:
    assert apply1("q\u201c" + " " * 900 + "\n", 'q"', "ok") == "ok" + " " * 900 + "\n"


@pytest.mark.parametrize(
    ("matched_lines", "old_lines", "refused"),
    [(4, 1, True), (3, 1, False), (8, 4, True), (7, 4, False), (5, 2, True), (4, 2, False)],
)
def test_disproportion_line_threshold(matched_lines: int, old_lines: int, refused: bool) -> None:
    # Unreachable through matching (normalisation preserves line counts), so tested directly.
    matched = "\n".join("m" for _ in range(matched_lines))
    old = "\n".join("o" for _ in range(old_lines))
    assert is_disproportionate(matched, old) is refused


def test_upstream_has_no_disproportion_guard() -> None:
    content = "a" + " " * 700 + "\nb"
    assert apply1(content, "a\nb", "ok", UPSTREAM_PI) == "ok"


# -- fuzzy matching ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "old", "new", "expected"),
    [
        ("x\nprint(\u2018hi\u2019)\ny \u201cq\u201d\n", "print('hi')", "print('yo')", "x\nprint('yo')\ny \u201cq\u201d\n"),
        ("a \u2014 b\nc \u2013 d\n", "a - b", "A", "A\nc \u2013 d\n"),
        ("key:\u00a0value\nnbsp\u00a0kept\n", "key: value", "k", "k\nnbsp\u00a0kept\n"),
        ("函数（参数）：\n其他，保留\n", "函数(参数):", "新", "新\n其他，保留\n"),
        ("one   \ntwo\t\nthree  \n", "one\ntwo", "1\n2", "1\n2\t\nthree  \n"),
        ("end\u3000\u3000\nnext\n", "end", "END", "END\u3000\u3000\nnext\n"),
    ],
)
def test_fuzzy_edit_replaces_only_the_mapped_span(content: str, old: str, new: str, expected: str) -> None:
    assert apply1(content, old, new) == expected


def test_kg_example_guard_on_is_not_found() -> None:
    assert error_of("total: 3\u338f\n", [("3k", "3g")]) == f"{NOT_FOUND_1} {RELOAD_HINT}"


def test_kg_example_guard_off_replaces_the_whole_compatibility_character() -> None:
    assert apply1("total: 3\u338f\n", "3k", "3g", NO_GUARD) == "total: 3g\n"


def test_chinese_example_reference_changes_only_line_one() -> None:
    content = "名称：值\n备注：“旧”   \n"
    assert apply1(content, "名称:值", "名称:新值") == "名称:新值\n备注：“旧”   \n"


def test_chinese_example_upstream_normalises_the_whole_file() -> None:
    content = "名称：值\n备注：“旧”   \n"
    assert apply1(content, "名称:值", "名称:新值", UPSTREAM_PI) == '名称:新值\n备注:"旧"\n'


def test_upstream_exact_hits_leave_the_file_unnormalised() -> None:
    content = "a\u2019  \nb\n"
    assert apply1(content, "b", "c", UPSTREAM_PI) == "a\u2019  \nc\n"


def test_upstream_any_fuzzy_edit_normalises_content_for_all_edits() -> None:
    content = "x\u2019\ny  \n\u201cz\u201d\n"
    out = apply_n(content, [("y", "Y"), ("x'", "X")], UPSTREAM_PI)
    assert out == 'X\nY\n"z"\n'


def test_upstream_whitespace_only_old_text_on_longer_content_is_a_duplicate() -> None:
    assert error_of("abc", [("  ", "X")], UPSTREAM_PI) == (
        "Found 2 occurrences of the text in f.txt. The text must be unique. Please provide more context "
        "to make it unique."
    )


def test_upstream_whitespace_only_old_text_on_short_content_inserts_at_start() -> None:
    assert apply1("ab", "  ", "X", UPSTREAM_PI) == "Xab"


def test_reference_whitespace_only_old_text_without_exact_hit_is_not_found() -> None:
    assert error_of("ab", [("  ", "X")]) == f"{NOT_FOUND_1} {RELOAD_HINT}"


def test_old_text_with_crlf_matches_lf_content() -> None:
    assert apply1("a\nb\nc", "a\r\nb", "x\r\ny") == "x\ny\nc"


# -- I/O pipeline (spec edit.5) -------------------------------------------------------------------------


def run(root: Path, path: str, pairs: list[tuple[str, str]], profile: Profile = REFERENCE) -> str:
    edits = [{"oldText": o, "newText": n} for o, n in pairs]
    return engine_edit(path, edits, ctx_for(root, profile)).text


def test_success_text_counts_blocks(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"a\nb\nc\n")
    assert run(tmp_path, "f.txt", [("a", "A"), ("c", "C")]) == "Successfully replaced 2 block(s) in f.txt."
    assert (tmp_path / "f.txt").read_bytes() == b"A\nb\nC\n"


@pytest.mark.parametrize("edits", [None, "not-a-list", [], {"oldText": "a"}])
def test_invalid_edits_input(tmp_path: Path, edits: object) -> None:
    with pytest.raises(ToolError) as info:
        engine_edit("f.txt", edits, ctx_for(tmp_path))
    assert str(info.value) == INVALID_INPUT_MESSAGE
    assert INVALID_INPUT_MESSAGE == "Edit tool input is invalid. edits must contain at least one replacement."


def test_missing_file_reports_error_code_with_callers_path(tmp_path: Path) -> None:
    with pytest.raises(ToolError) as info:
        run(tmp_path, "./nope.txt", [("a", "b")])
    assert str(info.value) == "Could not edit file: ./nope.txt. Error code: ENOENT."


@pytest.mark.skipif(os.geteuid() == 0, reason="root passes the read+write access check")
def test_unreadable_file_reports_eacces(tmp_path: Path) -> None:
    target = tmp_path / "locked.txt"
    target.write_bytes(b"abc")
    target.chmod(0)
    try:
        with pytest.raises(ToolError) as info:
            run(tmp_path, "locked.txt", [("a", "b")])
        assert str(info.value) == "Could not edit file: locked.txt. Error code: EACCES."
    finally:
        target.chmod(0o644)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root passes the access check on a read-only file")
def test_read_only_file_passes_access_check_as_root(tmp_path: Path) -> None:
    target = tmp_path / "ro.txt"
    target.write_bytes(b"abc")
    target.chmod(0o444)
    assert run(tmp_path, "ro.txt", [("b", "B")]) == "Successfully replaced 1 block(s) in ro.txt."
    assert target.read_bytes() == b"aBc"


def test_directory_raises_eisdir_read(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(ToolError) as info:
        run(tmp_path, "d", [("a", "b")])
    assert str(info.value) == "EISDIR: illegal operation on a directory, read"


def test_crlf_file_stays_crlf_and_new_text_takes_the_file_ending(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    run(tmp_path, "f.txt", [("b", "x\ny")])
    assert (tmp_path / "f.txt").read_bytes() == b"a\r\nx\r\ny\r\nc\r\n"


def test_mixed_endings_become_the_first_seen_ending(tmp_path: Path) -> None:
    (tmp_path / "crlf_first.txt").write_bytes(b"a\r\nb\nc\rd")
    run(tmp_path, "crlf_first.txt", [("d", "D")])
    assert (tmp_path / "crlf_first.txt").read_bytes() == b"a\r\nb\r\nc\r\nD"
    (tmp_path / "lf_first.txt").write_bytes(b"a\nb\r\nc")
    run(tmp_path, "lf_first.txt", [("c", "C")])
    assert (tmp_path / "lf_first.txt").read_bytes() == b"a\nb\nC"


def test_lone_cr_file_becomes_lf(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"a\rb\rc")
    run(tmp_path, "f.txt", [("b", "B")])
    assert (tmp_path / "f.txt").read_bytes() == b"a\nB\nc"


def test_detect_crlf_looks_only_at_the_first_newline() -> None:
    assert detect_crlf("a\r\nb\n") is True
    assert detect_crlf("a\nb\r\n") is False
    assert detect_crlf("a\rb") is False
    assert detect_crlf("\nx") is False


def test_bom_is_stripped_for_matching_and_restored(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"\xef\xbb\xbfhello\r\nworld\r\n")
    run(tmp_path, "f.txt", [("hello", "hi")])
    assert (tmp_path / "f.txt").read_bytes() == b"\xef\xbb\xbfhi\r\nworld\r\n"


def test_bom_inside_old_text_never_matches(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"\xef\xbb\xbfhello\n")
    with pytest.raises(ToolError) as info:
        run(tmp_path, "f.txt", [("\ufeffhello", "hi")])
    assert str(info.value) == (
        "Could not find the exact text in f.txt. The old text must match exactly including all whitespace "
        f"and newlines. {RELOAD_HINT}"
    )
    assert (tmp_path / "f.txt").read_bytes() == b"\xef\xbb\xbfhello\n"


def test_failures_are_atomic_nothing_is_written(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"one\ntwo\n")
    with pytest.raises(ToolError, match=r"^Could not find edits\[1\]"):
        run(tmp_path, "f.txt", [("one", "1"), ("three", "3")])
    assert (tmp_path / "f.txt").read_bytes() == b"one\ntwo\n"


def test_fuzzy_edit_through_a_file_keeps_other_bytes(tmp_path: Path) -> None:
    original = "名称：值\r\n备注：“旧”   \r\n".encode()
    (tmp_path / "f.txt").write_bytes(original)
    run(tmp_path, "f.txt", [("名称:值", "名称:新值")])
    assert (tmp_path / "f.txt").read_bytes() == "名称:新值\r\n备注：“旧”   \r\n".encode()


def test_upstream_fuzzy_edit_through_a_file_normalises_it(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes("名称：值\n备注：“旧”   \n".encode())
    run(tmp_path, "f.txt", [("名称:值", "名称:新值")], UPSTREAM_PI)
    assert (tmp_path / "f.txt").read_bytes() == '名称:新值\n备注:"旧"\n'.encode()


def test_engine_resolution_drops_at_and_expands_tilde(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"abc")
    assert run(tmp_path, "@f.txt", [("b", "B")]) == "Successfully replaced 1 block(s) in @f.txt."
    assert run(tmp_path, "~/f.txt", [("B", "b")]) == "Successfully replaced 1 block(s) in ~/f.txt."
    assert (tmp_path / "f.txt").read_bytes() == b"abc"


def test_abort_before_start_raises_operation_aborted(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"abc")
    ctx = ctx_for(tmp_path)
    ctx.abort.set()
    with pytest.raises(ToolAborted) as info:
        engine_edit("f.txt", [{"oldText": "a", "newText": "b"}], ctx)
    assert str(info.value) == "Operation aborted"
    assert (tmp_path / "f.txt").read_bytes() == b"abc"


def test_lone_surrogate_from_a_split_pair_is_written_as_replacement_character(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes("x\U0001d400y\n".encode())
    run(tmp_path, "f.txt", [("xA", "Q")], NO_GUARD)
    assert (tmp_path / "f.txt").read_bytes() == "Q\ufffdy\n".encode()


# -- legacy input shim ---------------------------------------------------------------------------


def test_prepare_arguments_parses_json_string_edits() -> None:
    args = {"path": "f", "edits": '[{"oldText": "a", "newText": "b"}]'}
    assert prepare_arguments(args) == {"path": "f", "edits": [{"oldText": "a", "newText": "b"}]}


def test_prepare_arguments_keeps_unparseable_or_non_array_strings() -> None:
    assert prepare_arguments({"path": "f", "edits": "{oops"}) == {"path": "f", "edits": "{oops"}
    assert prepare_arguments({"path": "f", "edits": '{"a": 1}'}) == {"path": "f", "edits": '{"a": 1}'}


def test_prepare_arguments_appends_top_level_pair() -> None:
    assert prepare_arguments({"path": "f", "oldText": "a", "newText": "b"}) == {
        "path": "f",
        "edits": [{"oldText": "a", "newText": "b"}],
    }
    assert prepare_arguments(
        {"path": "f", "edits": [{"oldText": "x", "newText": "y"}], "oldText": "a", "newText": "b"}
    ) == {"path": "f", "edits": [{"oldText": "x", "newText": "y"}, {"oldText": "a", "newText": "b"}]}
