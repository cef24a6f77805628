"""The MiniMax ``edit`` wrapper: schema, translation, line-number retry, ``replace_all``
(spec edit.1–4, toggle ``wrap.replace-all-literal``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools_impl.core.context import ToolContext, make_context
from tools_impl.core.errors import ToolError
from tools_impl.core.profile import PATCH_WRAP_REPLACE_ALL_LITERAL, REFERENCE, UPSTREAM_PI, Profile
from tools_impl.edit import tool as edit
from tools_impl.edit.patches import RELOAD_HINT
from tools_impl.edit.tool import (
    MINIMAX_SCHEMA,
    PI_SCHEMA,
    replace_all_js_patterns,
    strip_line_number_prefixes_from_block,
)

PATTERNS_ON = REFERENCE.with_patches({PATCH_WRAP_REPLACE_ALL_LITERAL: False})
NOT_FOUND = (
    "Could not find the exact text in {path}. The old text must match exactly including all whitespace "
    "and newlines. " + RELOAD_HINT
)


def ctx_for(root: Path, profile: Profile = REFERENCE) -> ToolContext:
    return make_context(str(root), {"HOME": str(root)}, profile)


def call(root: Path, profile: Profile = REFERENCE, **args: object) -> tuple[str, dict[str, object]]:
    result = edit.TOOL.call(dict(args), ctx_for(root, profile))
    assert result.tool_name == "edit"
    assert result.is_error is False
    return result.text, dict(result.details or {})


def raised(root: Path, profile: Profile = REFERENCE, **args: object) -> ToolError:
    with pytest.raises(ToolError) as info:
        edit.TOOL.call(dict(args), ctx_for(root, profile))
    return info.value


# -- schema and translation ---------------------------------------------------------------------


def test_schema_depends_on_the_surface() -> None:
    assert edit.TOOL.surface_schema(REFERENCE) is MINIMAX_SCHEMA
    assert MINIMAX_SCHEMA == {
        "properties": {
            "file_path": {"type": "string"},
            "old_string": {"type": "string"},
            "new_string": {"type": "string"},
            "replace_all": {"type": "boolean"},
        },
        "required": ["file_path", "old_string", "new_string"],
        "additionalProperties": False,
    }
    assert edit.TOOL.surface_schema(UPSTREAM_PI) is PI_SCHEMA
    assert PI_SCHEMA["required"] == ["path", "edits"]
    assert edit.NAME == "edit"


def test_schema_for_args_routes_pi_form_to_the_pi_schema() -> None:
    assert edit.schema_for_args(REFERENCE, {"path": "f", "edits": []}) is PI_SCHEMA
    assert edit.schema_for_args(REFERENCE, {"file_path": "f"}) is MINIMAX_SCHEMA
    assert edit.schema_for_args(UPSTREAM_PI, {"file_path": "f"}) is PI_SCHEMA


def test_wrapper_translates_to_one_engine_edit(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"alpha\nbeta\n")
    text, details = call(tmp_path, file_path="f.txt", old_string="beta", new_string="gamma")
    assert text == "Successfully replaced 1 block(s) in f.txt."
    assert "line_number_prefixes_stripped" not in details
    assert (tmp_path / "f.txt").read_bytes() == b"alpha\ngamma\n"


def test_replace_all_false_is_a_plain_unique_edit(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"x x\n")
    err = raised(tmp_path, file_path="f.txt", old_string="x", new_string="y", replace_all=False)
    # Two occurrences on one line: each occurrence lists its own start line.
    assert str(err) == (
        "Found 2 occurrences of the text in f.txt. Matches start at lines 1, 1. The text must be unique. "
        "Please provide more context to make it unique."
    )


def test_wrapper_also_accepts_pi_form(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"a b c")
    text, _ = call(tmp_path, path="f.txt", edits=[{"oldText": "a", "newText": "A"}, {"oldText": "c", "newText": "C"}])
    assert text == "Successfully replaced 2 block(s) in f.txt."
    assert (tmp_path / "f.txt").read_bytes() == b"A b C"


def test_engine_errors_raise_through_the_wrapper(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"abc")
    err = raised(tmp_path, file_path="f.txt", old_string="zzz", new_string="y")
    assert str(err) == NOT_FOUND.format(path="f.txt")


def test_non_replace_all_edit_is_literal_with_dollar_sequences(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"TOKEN\n")
    call(tmp_path, PATTERNS_ON, file_path="f.txt", old_string="TOKEN", new_string="$& $$ $` $'")
    assert (tmp_path / "f.txt").read_bytes() == b"$& $$ $` $'\n"


def test_upstream_profile_is_the_bare_engine_on_the_pi_surface(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes("“q”   \nx\n".encode())
    text, _ = call(tmp_path, UPSTREAM_PI, path="f.txt", edits=[{"oldText": '"q"', "newText": "Q"}])
    assert text == "Successfully replaced 1 block(s) in f.txt."
    assert (tmp_path / "f.txt").read_bytes() == b"Q\nx\n"


def test_upstream_profile_applies_the_legacy_shim(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"abc")
    text, _ = call(tmp_path, UPSTREAM_PI, path="f.txt", oldText="b", newText="B")
    assert text == "Successfully replaced 1 block(s) in f.txt."
    assert (tmp_path / "f.txt").read_bytes() == b"aBc"


def test_upstream_profile_has_no_line_number_retry(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"abc\n")
    err = raised(tmp_path, UPSTREAM_PI, path="f.txt", edits=[{"oldText": "     1\u2192abc", "newText": "x"}])
    assert str(err) == (
        "Could not find the exact text in f.txt. The old text must match exactly including all whitespace "
        "and newlines."
    )


# -- line-number-prefix retry (spec edit.3) ------------------------------------------------------------


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ("     1\u2192a\n     2\u2192b", "a\nb"),
        ("1\ta\n2\tb", "a\nb"),
        ("  10\u2192x\n\n  12\u2192", "x\n\n"),
        ("\u3000 7\u2192 indented", " indented"),
        ("", None),
        ("\n\n", None),
        ("     1\u2192a\nplain", None),
        ("     1\u2192a\n   ", None),
        ("     1\u2192a\r\n     2\u2192b", None),
        ("\u0661\u2192arabic digit", None),
        ("1:a", None),
        ("no prefix", None),
    ],
)
def test_strip_line_number_prefixes_from_block(block: str, expected: str | None) -> None:
    assert strip_line_number_prefixes_from_block(block) == expected


def test_retry_strips_read_prefixes_and_reports_it(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_bytes(b"def f():\n    return 1\n")
    text, details = call(
        tmp_path,
        file_path="f.py",
        old_string="     1\u2192def f():\n     2\u2192    return 1",
        new_string="     1\u2192def g():\n     2\u2192    return 2",
    )
    assert text == "Successfully replaced 1 block(s) in f.py."
    assert details["line_number_prefixes_stripped"] is True
    assert (tmp_path / "f.py").read_bytes() == b"def g():\n    return 2\n"


def test_retry_strips_old_and_new_independently(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"a\nb\n")
    _, details = call(tmp_path, file_path="f.txt", old_string="1\ta\n2\tb", new_string="3 lines\u2192kept")
    assert details["line_number_prefixes_stripped"] is True
    assert (tmp_path / "f.txt").read_bytes() == "3 lines\u2192kept\n".encode()


def test_retry_failure_reraises_the_original_error(tmp_path: Path) -> None:
    # The first attempt fails with not-found; the stripped retry would fail with a duplicate.
    (tmp_path / "f.txt").write_bytes(b"x\nx\n")
    err = raised(tmp_path, file_path="f.txt", old_string="     1\u2192x", new_string="y")
    assert str(err) == NOT_FOUND.format(path="f.txt")
    assert (tmp_path / "f.txt").read_bytes() == b"x\nx\n"


def test_no_retry_when_nothing_can_be_stripped(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"abc")
    err = raised(tmp_path, file_path="f.txt", old_string="nothing", new_string="1\u2192y")
    assert str(err) == NOT_FOUND.format(path="f.txt")
    assert (tmp_path / "f.txt").read_bytes() == b"abc"


def test_prefixes_in_the_file_itself_match_on_the_first_attempt(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes("1\u2192a\n".encode())
    _, details = call(tmp_path, file_path="f.txt", old_string="1\u2192a", new_string="b")
    assert "line_number_prefixes_stripped" not in details
    assert (tmp_path / "f.txt").read_bytes() == b"b\n"


# -- replace_all (spec edit.4) -------------------------------------------------------------------------


def test_replace_all_replaces_every_occurrence_and_shows_the_absolute_path(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"foo bar foo\nfoo\n")
    text, _ = call(tmp_path, file_path="f.txt", old_string="foo", new_string="baz", replace_all=True)
    assert text == f"Successfully replaced 1 block(s) in {tmp_path / 'f.txt'}."
    assert (tmp_path / "f.txt").read_bytes() == b"baz bar baz\nbaz\n"


def test_replace_all_empty_old_string(tmp_path: Path) -> None:
    err = raised(tmp_path, file_path="f.txt", old_string="", new_string="x", replace_all=True)
    assert str(err) == f"replace_all: old_string must be non-empty (path={tmp_path / 'f.txt'})."
    assert err.code == "OLD_STRING_EMPTY"


def test_replace_all_missing_file(tmp_path: Path) -> None:
    err = raised(tmp_path, file_path="nope.txt", old_string="a", new_string="x", replace_all=True)
    assert str(err) == f"Could not read file for replace_all: {tmp_path / 'nope.txt'}. ENOENT."
    assert err.code == "READ_FAILED"


def test_replace_all_on_a_directory(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    err = raised(tmp_path, file_path="d", old_string="a", new_string="x", replace_all=True)
    assert str(err) == f"Could not read file for replace_all: {tmp_path / 'd'}. EISDIR."
    assert err.code == "READ_FAILED"


def test_replace_all_not_found(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"abc")
    err = raised(tmp_path, file_path="f.txt", old_string="zz", new_string="x", replace_all=True)
    assert str(err) == f"replace_all: old_string was not found in {tmp_path / 'f.txt'}."
    assert err.code == "OLD_STRING_NOT_FOUND"


def test_replace_all_counts_non_overlapping_occurrences(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"aaaaa")
    call(tmp_path, file_path="f.txt", old_string="aa", new_string="b", replace_all=True)
    assert (tmp_path / "f.txt").read_bytes() == b"bba"


@pytest.mark.parametrize("replacement", ["$&", "$$", "$`", "$'", "$1", "[$&|$$|$`|$'|$0|$<n>]", "\\1 \\g<0>"])
def test_replace_all_writes_dollar_sequences_literally(tmp_path: Path, replacement: str) -> None:
    (tmp_path / "f.txt").write_bytes(b"a TOKEN b TOKEN c")
    call(tmp_path, file_path="f.txt", old_string="TOKEN", new_string=replacement, replace_all=True)
    assert (tmp_path / "f.txt").read_bytes() == f"a {replacement} b {replacement} c".encode()


@pytest.mark.parametrize(
    ("replacement", "expected"),
    [
        ("[$&]", "a [TOKEN] b [TOKEN] c"),
        ("$$", "a $ b $ c"),
        ("<$`>", "a <a > b <a TOKEN b > c"),
        ("<$'>", "a < b TOKEN c> b < c> c"),
        ("$1$0$<n>$", "a $1$0$<n>$ b $1$0$<n>$ c"),
        ("$$&", "a $& b $& c"),
    ],
)
def test_replace_all_with_literal_fix_off_expands_js_patterns(tmp_path: Path, replacement: str, expected: str) -> None:
    (tmp_path / "f.txt").write_bytes(b"a TOKEN b TOKEN c")
    call(tmp_path, PATTERNS_ON, file_path="f.txt", old_string="TOKEN", new_string=replacement, replace_all=True)
    assert (tmp_path / "f.txt").read_bytes() == expected.encode()


def test_replace_all_with_fix_off_and_dollar_ampersand_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"TOKEN")
    err = raised(tmp_path, PATTERNS_ON, file_path="f.txt", old_string="TOKEN", new_string="$&", replace_all=True)
    assert str(err) == (
        f"No changes made to {tmp_path / 'f.txt'}. The replacement produced identical content. This might "
        "indicate an issue with special characters or the text not existing as expected."
    )


def test_js_replace_patterns_helper() -> None:
    assert replace_all_js_patterns("xAyAz", "A", "($`|$')") == "x(x|yAz)y(xAy|z)z"


def test_replace_all_on_crlf_file_keeps_crlf(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"a\r\nb\r\na\r\n")
    call(tmp_path, file_path="f.txt", old_string="a", new_string="z", replace_all=True)
    assert (tmp_path / "f.txt").read_bytes() == b"z\r\nb\r\nz\r\n"


def test_replace_all_on_bom_file_raises_the_engine_not_found_error(tmp_path: Path) -> None:
    # (inferred, spec edit.4) oldText is the raw text with its BOM, which the engine has stripped.
    (tmp_path / "f.txt").write_bytes(b"\xef\xbb\xbfa b a\n")
    err = raised(tmp_path, file_path="f.txt", old_string="a", new_string="z", replace_all=True)
    assert str(err) == NOT_FOUND.format(path=tmp_path / "f.txt")
    assert err.code is None
    assert (tmp_path / "f.txt").read_bytes() == b"\xef\xbb\xbfa b a\n"
