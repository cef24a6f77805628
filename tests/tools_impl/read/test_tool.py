"""The read tool end to end on real files (spec read.2–3, spec read.6, spec read.8–10): engine selection and
notices, wrapper numbering and caps, path variants, upstream mode and abort."""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Any

import pytest

from tools_impl.core.context import make_context
from tools_impl.core.errors import ToolAborted, ToolError
from tools_impl.core.profile import REFERENCE, UPSTREAM_PI, Profile
from tools_impl.core.result import ToolResult
from tools_impl.read import tool as read
from tools_impl.read.engine import select_text
from tools_impl.shared import paths

EMPTY = "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"


def run(root: Path, args: dict[str, Any], profile: Profile = REFERENCE) -> ToolResult:
    return read.execute(args, make_context(str(root), profile=profile))


def raised(root: Path, args: dict[str, Any], profile: Profile = REFERENCE) -> str:
    with pytest.raises(ToolError) as exc:
        run(root, args, profile)
    return str(exc.value)


@pytest.fixture
def five(tmp_path: Path) -> Path:
    (tmp_path / "f.txt").write_text("l1\nl2\nl3\nl4\nl5")
    return tmp_path


# --- wrapper numbering (spec read.8) ---------------------------------------------------------------
def test_plain_file_is_numbered_with_padded_arrow_prefix_and_keeps_its_final_newline(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n\nbeta\n")
    res = run(tmp_path, {"path": "a.txt"})
    assert res.to_json() == {"content": [{"type": "text", "text": "     1→alpha\n     2→\n     3→beta\n"}],
                             "details": {}, "is_error": False}


def test_crlf_is_kept_inside_numbered_lines(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"a\r\nb\r\n")
    assert run(tmp_path, {"path": "w.txt"}).text == "     1→a\r\n     2→b\r\n"


def test_bom_is_kept_in_the_text(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_bytes(b"\xef\xbb\xbfhi")
    assert run(tmp_path, {"path": "b.txt"}).text == "     1→\ufeffhi"


def test_invalid_utf8_becomes_replacement_characters(tmp_path: Path) -> None:
    (tmp_path / "bad.txt").write_bytes(b"a\xffb\xe2\x82")
    assert run(tmp_path, {"path": "bad.txt"}).text == "     1→a\ufffdb\ufffd"


def test_tabs_are_not_expanded(tmp_path: Path) -> None:
    (tmp_path / "t.txt").write_text("\tx")
    assert run(tmp_path, {"path": "t.txt"}).text == "     1→\tx"


def test_empty_file_gets_the_reminder(tmp_path: Path) -> None:
    (tmp_path / "e.txt").write_text("")
    assert run(tmp_path, {"path": "e.txt"}).to_json() == {
        "content": [{"type": "text", "text": EMPTY}], "details": {}, "is_error": False}


def test_offset_on_the_phantom_line_after_a_final_newline_gets_the_reminder(tmp_path: Path) -> None:
    (tmp_path / "p.txt").write_text("a\nb\n")
    assert run(tmp_path, {"path": "p.txt", "offset": 3}).text == EMPTY


def test_numbering_starts_at_the_offset(five: Path) -> None:
    assert run(five, {"path": "f.txt", "offset": 4}).text == "     4→l4\n     5→l5"


def test_numbering_width_grows_past_six_digits(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("x\n" * 1_000_000)
    assert run(tmp_path, {"path": "big.txt", "offset": 999_999, "limit": 1}).text == (
        "999999→x\n\n[2 more lines in file. Use offset=1000000 to continue.]")
    assert run(tmp_path, {"path": "big.txt", "offset": 1_000_000, "limit": 1}).text == (
        "1000000→x\n\n[1 more lines in file. Use offset=1000001 to continue.]")


def test_long_lines_are_capped_at_2000_code_points_and_reported(tmp_path: Path) -> None:
    astral = "\U0001F600"
    lines = ["short", astral * 2001, astral * 1500, "b" * 2000, "c" * 2001]
    (tmp_path / "l.txt").write_text("\n".join(lines))
    res = run(tmp_path, {"path": "l.txt"})
    assert res.text == (
        "     1→short\n"
        f"     2→{astral * 2000}... (line truncated)\n"
        f"     3→{astral * 1500}\n"
        f"     4→{'b' * 2000}\n"
        f"     5→{'c' * 2000}... (line truncated)"
        "\n\n[Lines [2, 5] were truncated to 2000 chars.]"
    )
    assert res.details == {"line_truncations": [2, 5]}


def test_engine_user_limit_notice_is_kept_verbatim_and_not_numbered(five: Path) -> None:
    assert run(five, {"path": "f.txt", "limit": 2}).text == (
        "     1→l1\n     2→l2\n\n[3 more lines in file. Use offset=3 to continue.]")


def test_line_truncation_notice_follows_the_engine_notice(tmp_path: Path) -> None:
    (tmp_path / "m.txt").write_text("z" * 2001 + "\nb\nc")
    res = run(tmp_path, {"path": "m.txt", "limit": 1})
    assert res.text == ("     1→" + "z" * 2000 + "... (line truncated)"
                        "\n\n[2 more lines in file. Use offset=2 to continue.]"
                        "\n\n[Lines [1] were truncated to 2000 chars.]")


# --- engine offsets and limits (spec read.6) -------------------------------------------------------
@pytest.mark.parametrize("offset", [None, 0, -3, 1])
def test_absent_zero_negative_and_one_offsets_start_at_line_one(five: Path, offset: int | None) -> None:
    args: dict[str, Any] = {"path": "f.txt"} if offset is None else {"path": "f.txt", "offset": offset}
    res = run(five, args, UPSTREAM_PI)
    assert res.text == "l1\nl2\nl3\nl4\nl5"


def test_offset_beyond_end_raises_with_the_line_total(five: Path) -> None:
    assert raised(five, {"path": "f.txt", "offset": 6}) == "Offset 6 is beyond end of file (5 lines total)"
    assert raised(five, {"path": "f.txt", "offset": 6.0}) == "Offset 6 is beyond end of file (5 lines total)"
    assert raised(five, {"path": "f.txt", "offset": 6.5}) == "Offset 6.5 is beyond end of file (5 lines total)"


def test_phantom_line_counts_toward_the_total(tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_text("a\nb\n")
    assert raised(tmp_path, {"path": "n.txt", "offset": 4}) == "Offset 4 is beyond end of file (3 lines total)"


def test_fractional_offset_and_limit_follow_js_slice_and_number_formatting(five: Path) -> None:
    res = run(five, {"path": "f.txt", "offset": 2.5, "limit": 2}, UPSTREAM_PI)
    assert res.text == "l2\nl3\n\n[1.5 more lines in file. Use offset=4.5 to continue.]"


def test_negative_limit_counts_from_the_end_like_js_slice(five: Path) -> None:
    res = run(five, {"path": "f.txt", "limit": -1}, UPSTREAM_PI)
    assert res.text == "l1\nl2\nl3\nl4\n\n[6 more lines in file. Use offset=0 to continue.]"


def test_limit_reaching_the_end_adds_no_notice(five: Path) -> None:
    res = run(five, {"path": "f.txt", "offset": 4, "limit": 10}, UPSTREAM_PI)
    assert res.to_json() == {"content": [{"type": "text", "text": "l4\nl5"}], "details": None, "is_error": False}


def test_first_line_too_long_gives_the_sed_hint_unnumbered(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("a" * 61440 + "\nshort\n")
    res = run(tmp_path, {"path": "big.txt"})
    assert res.text == "[Line 1 is 60.0KB, exceeds 50.0KB limit. Use bash: sed -n '1p' big.txt | head -c 51200]"
    assert res.details is not None
    assert res.details["truncation"] == {
        "content": "", "truncated": True, "truncatedBy": "bytes", "totalLines": 2, "totalBytes": 61447,
        "outputLines": 0, "outputBytes": 0, "lastLinePartial": False, "firstLineExceedsLimit": True,
        "maxLines": 2000, "maxBytes": 51200}
    assert set(res.details) == {"truncation"}


def test_first_line_hint_uses_the_offset_line_and_the_callers_path_string(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("x\n" + "b" * 52000)
    res = run(tmp_path, {"path": "./big.txt", "offset": 2})
    assert res.text == "[Line 2 is 50.8KB, exceeds 50.0KB limit. Use bash: sed -n '2p' ./big.txt | head -c 51200]"


def test_2000_line_truncation_notice_and_total_lines_difference(tmp_path: Path) -> None:
    (tmp_path / "many.txt").write_text("x\n" * 2500)
    res = run(tmp_path, {"path": "many.txt"})
    body = "".join(f"{n:>6}→x\n" for n in range(1, 2001))[:-1]
    assert res.text == body + "\n\n[Showing lines 1-2000 of 2501. Use offset=2001 to continue.]"
    assert res.details is not None
    trunc = res.details["truncation"]
    assert (trunc["totalLines"], trunc["outputLines"], trunc["truncatedBy"]) == (2500, 2000, "lines")
    assert "desktop_output_truncation" not in res.details


def test_50kb_byte_truncation_notice(tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text(("y" * 100 + "\n") * 600)
    res = run(tmp_path, {"path": "wide.txt"}, UPSTREAM_PI)
    assert res.text == "\n".join(["y" * 100] * 506) + (
        "\n\n[Showing lines 1-506 of 601 (50.0KB limit). Use offset=507 to continue.]")
    assert res.details is not None and res.details["truncation"]["outputBytes"] == 506 * 101 - 1


def test_truncation_notice_wins_over_the_user_limit_notice() -> None:
    sel = select_text("x\n" * 3000, "p", 1, 2500)
    assert sel.text.endswith("\n\n[Showing lines 1-2000 of 3001. Use offset=2001 to continue.]")


def test_untruncated_engine_result_has_no_details(five: Path) -> None:
    assert select_text("a\nb", "p", None, None).details is None
    assert select_text("a\nb", "p", None, 1).details is None


# --- 24 KiB cap (spec read.9) ----------------------------------------------------------------------
def test_24kib_cap_keeps_whole_numbered_lines_and_reports_next_offset(tmp_path: Path) -> None:
    (tmp_path / "c.txt").write_text(("a" * 40 + "\n") * 1000)
    res = run(tmp_path, {"path": "c.txt"})
    body = "\n".join(f"{n:>6}→" + "a" * 40 for n in range(1, 489))
    notice = ("[desktop read output truncated: original_bytes=50000; if the omitted remainder is needed, "
              "continue with read using offset=489 and the same path.]")
    assert res.text == body + "\n\n" + notice
    hint = {"tool": "read", "preserve_args": ["path"],
            "instruction": "If the omitted remainder is needed, call read again with offset=489; preserve the same path."}
    assert res.details == {
        "desktop_output_truncation": {
            "truncated": True, "has_more": True, "strategy": "prefix_lines", "original_bytes": 50000,
            "returned_bytes": 24546, "max_bytes": 24576, "next_offset": 489, "offset_unit": "line",
            "continuation_hint": hint},
        "desktop_output_continuation": {"has_more": True, "next_offset": 489, "offset_unit": "line",
                                        "continuation_hint": hint},
    }


def test_24kib_cap_continues_from_the_requested_offset(tmp_path: Path) -> None:
    (tmp_path / "c.txt").write_text(("a" * 40 + "\n") * 1000)
    res = run(tmp_path, {"path": "c.txt", "offset": 489})
    assert res.text.startswith("   489→")
    assert res.details is not None
    assert res.details["desktop_output_truncation"]["next_offset"] == 489 + 488


def test_24kib_cap_counts_multibyte_lines_in_utf8_bytes(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_text(("\u00e9" * 1999 + "\n") * 20)  # 4008 bytes per numbered line
    res = run(tmp_path, {"path": "w.txt", "offset": 3})
    assert res.details is not None
    assert res.details["desktop_output_truncation"]["next_offset"] == 3 + 6
    assert res.text.count("\n") == 5 + 2


def test_24kib_cap_falls_back_to_the_requested_offset_when_no_line_number_parses(tmp_path: Path) -> None:
    (tmp_path / "c.txt").write_text(("a" * 40 + "\n") * 1000)
    res = run(tmp_path, {"path": "c.txt", "offset": 2.5})
    assert res.text.startswith("   2.5→" + "a" * 40 + "\n   3.5→")
    assert res.text.endswith("continue with read using offset=2.5 and the same path.]")
    assert res.details is not None
    assert res.details["desktop_output_truncation"]["next_offset"] == 2.5


def test_text_within_24kib_is_untouched(tmp_path: Path) -> None:
    (tmp_path / "s.txt").write_text("a" * 40 + "\n")
    assert run(tmp_path, {"path": "s.txt"}).details == {}


# --- path variants (spec read.3, spec read.6 step 2) ------------------------------------------------------
def test_at_prefix_is_dropped(five: Path) -> None:
    assert run(five, {"path": "@f.txt"}).text.startswith("     1→l1")


def test_file_url_is_converted(five: Path) -> None:
    url = "file://" + str(five / "f.txt").replace(" ", "%20")
    assert run(five, {"path": url}).text.startswith("     1→l1")


def test_absolute_path_and_tilde(tmp_path: Path) -> None:
    (tmp_path / "h.txt").write_text("home")
    ctx = make_context(str(tmp_path / "elsewhere"), env={"HOME": str(tmp_path)})
    assert read.execute({"path": "~/h.txt"}, ctx).text == "     1→home"
    assert read.execute({"path": str(tmp_path / "h.txt")}, ctx).text == "     1→home"


def test_am_pm_space_variant_finds_the_narrow_nbsp_file(tmp_path: Path) -> None:
    (tmp_path / "Shot 1.02.03\u202fPM.txt").write_text("shot")
    assert run(tmp_path, {"path": "Shot 1.02.03 PM.txt"}).text == "     1→shot"


def test_am_pm_variant_is_case_insensitive_and_keeps_the_matched_case(tmp_path: Path) -> None:
    (tmp_path / "x 9.41\u202fam.txt").write_text("lower")
    assert run(tmp_path, {"path": "x 9.41 am.txt"}).text == "     1→lower"
    assert raised(tmp_path, {"path": "x 9.41 AM.txt"}) == (
        f"ENOENT: no such file or directory, access '{tmp_path / 'x 9.41 AM.txt'}'")


def test_nfd_variant_finds_a_decomposed_name(tmp_path: Path) -> None:
    (tmp_path / unicodedata.normalize("NFD", "café.txt")).write_text("nfd")
    assert run(tmp_path, {"path": unicodedata.normalize("NFC", "café.txt")}).text == "     1→nfd"


def test_curly_quote_variant_finds_the_typographic_apostrophe(tmp_path: Path) -> None:
    (tmp_path / "it\u2019s.txt").write_text("curly")
    assert run(tmp_path, {"path": "it's.txt"}).text == "     1→curly"


def test_nfd_plus_curly_variant(tmp_path: Path) -> None:
    (tmp_path / unicodedata.normalize("NFD", "café\u2019s.txt")).write_text("both")
    assert run(tmp_path, {"path": "café's.txt"}).text == "     1→both"


def test_special_spaces_in_the_argument_resolve_to_an_ascii_space_file(tmp_path: Path) -> None:
    (tmp_path / "a b.txt").write_text("space")
    assert run(tmp_path, {"path": "a\u00a0b.txt"}).text == "     1→space"


def test_literal_nbsp_name_passes_the_wrapper_but_the_engine_reports_enoent(tmp_path: Path) -> None:
    """Spec spec read.2 (inferred): the engine re-resolves the original string with spaces normalised."""
    (tmp_path / "a\u00a0b.txt").write_text("nbsp")
    assert paths.wrapper_resolve("a\u00a0b.txt", str(tmp_path), str(tmp_path)) == str(tmp_path / "a\u00a0b.txt")
    assert raised(tmp_path, {"path": "a\u00a0b.txt"}) == (
        f"ENOENT: no such file or directory, access '{tmp_path / 'a b.txt'}'")


def test_literal_candidate_lets_the_guards_see_a_nbsp_named_fifo(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "p\u00a0q"
    os.mkfifo(fifo)
    res = run(tmp_path, {"path": "p\u00a0q"})
    assert res.is_error and res.text.startswith(f"Cannot read '{fifo}': not a regular file")


def test_wrapper_returns_resolved_when_nothing_exists(tmp_path: Path) -> None:
    assert paths.wrapper_resolve("@x\u2009y.txt", str(tmp_path), "/h") == str(tmp_path / "x y.txt")


def test_engine_resolution_collapses_a_double_leading_slash() -> None:
    assert paths.engine_resolve("//etc/hosts", "/r", "/h") == "/etc/hosts"


# --- upstream mode (spec read.10) and abort --------------------------------------------------------
def test_upstream_mode_returns_raw_text_without_guards_or_numbers(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    (tmp_path / "b.exe").write_bytes(b"MZ\x00\xff")
    (tmp_path / "e.txt").write_text("")
    assert run(tmp_path, {"path": "a.txt"}, UPSTREAM_PI).to_json() == {
        "content": [{"type": "text", "text": "x\n"}], "details": None, "is_error": False}
    assert run(tmp_path, {"path": "b.exe"}, UPSTREAM_PI).text == "MZ\x00\ufffd"
    assert run(tmp_path, {"path": "e.txt"}, UPSTREAM_PI).text == ""


def test_upstream_mode_does_not_cap_long_lines_or_24kib(tmp_path: Path) -> None:
    text = ("q" * 3000 + "\n") * 15
    (tmp_path / "u.txt").write_text(text)
    assert run(tmp_path, {"path": "u.txt"}, UPSTREAM_PI).text == text


def test_upstream_schema_has_no_pages_parameter() -> None:
    assert "pages" not in read.TOOL.surface_schema(UPSTREAM_PI)["properties"]
    assert read.TOOL.surface_schema(REFERENCE) == read.SCHEMA
    assert read.SCHEMA == {"properties": {"path": {"type": "string"}, "offset": {"type": "number"},
                                          "limit": {"type": "number"}, "pages": {"type": "string"}},
                           "required": ["path"]}


@pytest.mark.parametrize("profile", [REFERENCE, UPSTREAM_PI])
def test_abort_set_before_the_call_raises_operation_aborted(five: Path, profile: Profile) -> None:
    ctx = make_context(str(five), profile=profile)
    ctx.abort.set()
    with pytest.raises(ToolAborted) as exc:
        read.execute({"path": "f.txt"}, ctx)
    assert str(exc.value) == "Operation aborted"


def test_tilde_with_a_doubled_slash_stays_under_home() -> None:
    assert paths.engine_resolve("~//etc/x", "/r", "/home/u") == "/home/u/etc/x"
    assert paths.wrapper_resolve("~//etc/x", "/r", "/home/u", exists=lambda _p: False) == "/home/u/etc/x"
    assert paths.engine_resolve("~/\\x", "/r", "/home/u") == "/home/u/\\x"
