"""Black-box conformance checks of read, write and edit against the spec (spec common–edit, spec patches, spec versions).

Every expected value here is derived from the spec text alone, the way an outside conformance
suite would derive it: tool name and arguments in, content text / details / is_error / raised
message out. A representative subset goes through ``python -m tools_impl.server`` over real
pipes; the rest calls each module's ``execute(args, ctx)``. Checks of pure functions (number and
size formatting, argument validation text, declared modes) live beside their modules' tests under
``tests/tools_impl/``.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.repo import REPO
from tools_impl.core.context import ToolContext, make_context
from tools_impl.core.errors import ToolAborted, ToolError
from tools_impl.core.profile import REFERENCE, UPSTREAM_PI, Profile
from tools_impl.core.result import ImageBlock, TextBlock, ToolResult
from tools_impl.edit import tool as edit_tool
from tools_impl.read import tool as read_tool
from tools_impl.write import tool as write_tool

ARROW = "\u2192"
RELOAD_HINT = (
    "If oldText was written from memory or an earlier read, the file may have changed since - use the "
    "read tool to reload it before retrying."
)
EMPTY_REMINDER = "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"
TOOLS = {"read": read_tool, "write": write_tool, "edit": edit_tool}


def ctx_for(root: Path, profile: Profile = REFERENCE) -> ToolContext:
    home = root / "home"
    home.mkdir(exist_ok=True)
    return make_context(str(root), {"HOME": str(home)}, profile)


def call(tool: str, args: dict[str, Any], root: Path, profile: Profile = REFERENCE) -> ToolResult:
    return TOOLS[tool].execute(args, ctx_for(root, profile))


def raised(tool: str, args: dict[str, Any], root: Path, profile: Profile = REFERENCE) -> str:
    with pytest.raises(ToolError) as info:
        TOOLS[tool].execute(args, ctx_for(root, profile))
    return str(info.value)


def num(lines: list[str], start: int = 1) -> str:
    """Lines numbered the way spec read.8 step 5 says: ``String(n).padStart(6) + '→' + line``."""
    return "\n".join(f"{start + i:>6}{ARROW}{line}" for i, line in enumerate(lines))


# =============================================================================================
# spec common.2 result model, spec common.3 paths, spec common.7 modes


def test_relative_paths_resolve_against_the_workspace_root_and_absolute_paths_are_accepted(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    outside = tmp_path / "home" / "o.txt"
    outside.parent.mkdir()
    outside.write_text("y")
    assert call("read", {"path": "a.txt"}, tmp_path).text == num(["x"])
    assert call("read", {"path": str(outside)}, tmp_path).text == num(["y"])


def test_tilde_expands_to_home_but_a_tilde_name_is_literal(tmp_path: Path) -> None:
    res = call("write", {"path": "~/t.txt", "content": "h"}, tmp_path)
    assert res.text == "Successfully wrote 1 bytes to ~/t.txt"
    assert (tmp_path / "home" / "t.txt").read_text() == "h"
    call("write", {"path": "~draft.md", "content": "d"}, tmp_path)
    assert (tmp_path / "~draft.md").read_text() == "d"
    assert raised("read", {"path": "~"}, tmp_path) == "EISDIR: illegal operation on a directory, read"


def test_engine_resolution_maps_special_spaces_drops_one_at_and_converts_file_urls(tmp_path: Path) -> None:
    call("write", {"path": "a\u00a0b\u3000c.txt", "content": "1"}, tmp_path)
    assert (tmp_path / "a b c.txt").read_text() == "1"
    call("write", {"path": "@at.txt", "content": "2"}, tmp_path)
    assert (tmp_path / "at.txt").read_text() == "2"
    call("write", {"path": "@@two.txt", "content": "3"}, tmp_path)
    assert (tmp_path / "@two.txt").read_text() == "3"
    res = call("write", {"path": f"file://{tmp_path}/url.txt", "content": "4"}, tmp_path)
    assert res.text == f"Successfully wrote 1 bytes to file://{tmp_path}/url.txt"
    assert (tmp_path / "url.txt").read_text() == "4"


def test_an_invalid_file_url_raises(tmp_path: Path) -> None:
    with pytest.raises(ToolError):
        call("write", {"path": "file://remote-host/x.txt", "content": "x"}, tmp_path)


def test_messages_echo_the_callers_path_string_verbatim(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    res = call("write", {"path": "./sub/../a.txt", "content": "abc"}, tmp_path)
    assert res.text == "Successfully wrote 3 bytes to ./sub/../a.txt"
    res = call("edit", {"file_path": "./sub/../a.txt", "old_string": "b", "new_string": "B"}, tmp_path)
    assert res.text == "Successfully replaced 1 block(s) in ./sub/../a.txt."
    assert raised("edit", {"file_path": "sub/../nope.txt", "old_string": "a", "new_string": "b"}, tmp_path) == (
        "Could not edit file: sub/../nope.txt. Error code: ENOENT."
    )


def test_os_errors_are_rendered_in_node_form_with_the_absolute_path(tmp_path: Path) -> None:
    assert raised("read", {"path": "nope.txt"}, tmp_path) == (
        f"ENOENT: no such file or directory, access '{tmp_path}/nope.txt'"
    )
    (tmp_path / "d").mkdir()
    assert raised("read", {"path": "d"}, tmp_path) == "EISDIR: illegal operation on a directory, read"
    assert raised("write", {"path": "d", "content": "x"}, tmp_path) == (
        f"EISDIR: illegal operation on a directory, open '{tmp_path}/d'"
    )
    (tmp_path / "f.txt").write_text("x")
    assert raised("write", {"path": "f.txt/inner.txt", "content": "x"}, tmp_path) == (
        f"EEXIST: file already exists, mkdir '{tmp_path}/f.txt'"
    )


@pytest.mark.parametrize("tool,args", [
    ("read", {"path": "a.txt"}),
    ("write", {"path": "new.txt", "content": "x"}),
    ("edit", {"file_path": "a.txt", "old_string": "a", "new_string": "b"}),
])
@pytest.mark.parametrize("profile", [REFERENCE, UPSTREAM_PI], ids=["reference", "upstream"])
def test_a_set_abort_signal_raises_operation_aborted_and_changes_nothing(
    tmp_path: Path, tool: str, args: dict[str, Any], profile: Profile
) -> None:
    (tmp_path / "a.txt").write_text("a")
    if not profile.wrapper and tool == "edit":
        args = {"path": "a.txt", "edits": [{"oldText": "a", "newText": "b"}]}
    ctx = ctx_for(tmp_path, profile)
    ctx.abort.set()
    with pytest.raises(ToolAborted) as info:
        TOOLS[tool].execute(args, ctx)
    assert str(info.value) == "Operation aborted"
    assert (tmp_path / "a.txt").read_text() == "a"
    assert not (tmp_path / "new.txt").exists()


# =============================================================================================
# spec read read


def test_read_numbers_lines_and_keeps_the_final_newline_unnumbered(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n\nworld\n")
    res = call("read", {"path": "a.txt"}, tmp_path)
    assert res.text == num(["hello", "", "world"]) + "\n"
    assert res.is_error is False
    assert len(res.content) == 1


def test_read_number_field_is_six_wide_and_wider_numbers_are_not_cut(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n" * 3)
    assert call("read", {"path": "a.txt", "offset": 2, "limit": 1}, tmp_path).text == (
        f"     2{ARROW}x\n\n[2 more lines in file. Use offset=3 to continue.]"
    )
    from tools_impl.read.tool import number_lines

    assert number_lines("a\nb", 1234567, 2000)[0] == f"1234567{ARROW}a\n1234568{ARROW}b"


def test_read_keeps_cr_and_bom_and_does_not_expand_tabs(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"\xef\xbb\xbfa\tb\r\nc\r\n")
    assert call("read", {"path": "a.txt"}, tmp_path).text == num(["\ufeffa\tb\r", "c\r"]) + "\n"


def test_read_decodes_invalid_utf8_with_replacement_characters(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"a\xffb\n")
    assert call("read", {"path": "a.txt"}, tmp_path).text == num(["a\ufffdb"]) + "\n"


def test_read_offset_beyond_end_raises_with_the_split_line_count(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    assert raised("read", {"path": "a.txt", "offset": 3}, tmp_path) == "Offset 3 is beyond end of file (2 lines total)"
    (tmp_path / "e.txt").write_text("")
    assert raised("read", {"path": "e.txt", "offset": 2}, tmp_path) == "Offset 2 is beyond end of file (1 lines total)"


@pytest.mark.parametrize("offset", [0, -5])
def test_read_zero_and_negative_offsets_start_at_line_one(tmp_path: Path, offset: int) -> None:
    (tmp_path / "a.txt").write_text("a\nb")
    assert call("read", {"path": "a.txt", "offset": offset}, tmp_path).text == num(["a", "b"])


def test_read_fractional_offset_follows_javascript_slice_and_number_formatting(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\nb\nc\nd")
    res = call("read", {"path": "a.txt", "offset": 2.5, "limit": 1}, tmp_path)
    # startLine 1.5 → slice from 1; end = min(2.5, 4) → slice(1.5, 2.5) = ["b"]; 4 - 2.5 = 1.5 more.
    # The wrapper's notice pattern wants `\d+ more lines`, so "1.5 more lines" is not split off and
    # is numbered like body text (literal reading of spec read.8 step 2).
    assert res.text == (f"   2.5{ARROW}b\n   3.5{ARROW}\n   4.5{ARROW}"
                        "[1.5 more lines in file. Use offset=3.5 to continue.]")
    engine = call("read", {"path": "a.txt", "offset": 2.5, "limit": 1}, tmp_path, UPSTREAM_PI)
    assert engine.text == "b\n\n[1.5 more lines in file. Use offset=3.5 to continue.]"


def test_read_limit_notice_counts_the_phantom_line(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\nb\nc\n")
    res = call("read", {"path": "a.txt", "limit": 2}, tmp_path)
    assert res.text == num(["a", "b"]) + "\n\n[2 more lines in file. Use offset=3 to continue.]"
    assert res.details == {}


def test_read_limit_covering_the_rest_has_no_notice(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\nb\nc")
    assert call("read", {"path": "a.txt", "offset": 2, "limit": 5}, tmp_path).text == num(["b", "c"], 2)


def test_read_zero_limit_numbers_one_empty_line_before_the_notice(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\nb")
    res = call("read", {"path": "a.txt", "limit": 0}, tmp_path, UPSTREAM_PI)
    assert res.text == "\n\n[2 more lines in file. Use offset=1 to continue.]"


def test_read_line_truncation_notice_and_details_for_upstream_engine(tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_text("".join(f"{i}\n" for i in range(1, 2501)))
    res = call("read", {"path": "n.txt"}, tmp_path, UPSTREAM_PI)
    body = "\n".join(str(i) for i in range(1, 2001))
    assert res.text == body + "\n\n[Showing lines 1-2000 of 2501. Use offset=2001 to continue.]"
    assert res.details is not None
    trunc = res.details["truncation"]
    assert (trunc["truncated"], trunc["truncatedBy"], trunc["totalLines"], trunc["outputLines"]) == (
        True, "lines", 2500, 2000)
    assert (trunc["maxLines"], trunc["maxBytes"], trunc["firstLineExceedsLimit"]) == (2000, 51200, False)


def test_read_byte_truncation_notice_names_the_50kb_limit(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_text(("x" * 99 + "\n") * 600)
    res = call("read", {"path": "w.txt", "offset": 3}, tmp_path, UPSTREAM_PI)
    # 99 + 100 * (k - 1) <= 51200 → k = 512 lines: 3..514
    assert res.text == "\n".join(["x" * 99] * 512) + (
        "\n\n[Showing lines 3-514 of 601 (50.0KB limit). Use offset=515 to continue.]")
    assert res.details is not None and res.details["truncation"]["truncatedBy"] == "bytes"


def test_read_truncation_notice_wins_over_the_limit_notice(tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_text("y\n" * 3000)
    res = call("read", {"path": "n.txt", "limit": 2500}, tmp_path, UPSTREAM_PI)
    assert res.text.endswith("\n\n[Showing lines 1-2000 of 3001. Use offset=2001 to continue.]")


def test_read_long_first_line_gives_the_sed_hint_unnumbered(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("short\n" + "z" * 60000 + "\n")
    for profile in (REFERENCE, UPSTREAM_PI):
        res = call("read", {"path": "./big.txt", "offset": 2}, tmp_path, profile)
        assert res.text == "[Line 2 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '2p' ./big.txt | head -c 51200]"
        assert res.is_error is False
        assert res.details is not None and res.details["truncation"]["firstLineExceedsLimit"] is True
        assert "line_truncations" not in res.details
        assert "desktop_output_truncation" not in res.details


def test_read_wrapper_keeps_engine_notice_unnumbered(tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_text("".join(f"{i}\n" for i in range(1, 2501)))
    res = call("read", {"path": "n.txt", "offset": 2498}, tmp_path)
    assert res.text == num(["2498", "2499", "2500"], 2498) + "\n"
    res = call("read", {"path": "n.txt", "offset": 10, "limit": 2}, tmp_path)
    assert res.text == num(["10", "11"], 10) + "\n\n[2490 more lines in file. Use offset=12 to continue.]"


def test_read_long_line_cap_counts_code_points_and_reports_line_numbers(tmp_path: Path) -> None:
    emoji = "\U0001f600"
    lines = [emoji * 1500, "b" * 2001, "c", emoji * 2001]
    (tmp_path / "l.txt").write_text("\n".join(lines) + "\n")
    res = call("read", {"path": "l.txt"}, tmp_path)
    expected = num([emoji * 1500, "b" * 2000 + "... (line truncated)", "c", emoji * 2000 + "... (line truncated)"])
    assert res.text == expected + "\n\n\n[Lines [2, 4] were truncated to 2000 chars.]"
    assert res.details == {"line_truncations": [2, 4]}


def test_read_24kib_cap_keeps_a_numbered_prefix_and_reports_next_offset(tmp_path: Path) -> None:
    lines = ["x" * 99] * 400
    (tmp_path / "c.txt").write_text("\n".join(lines) + "\n")
    res = call("read", {"path": "c.txt"}, tmp_path)
    full = num(lines) + "\n"
    original = len(full.encode())

    def notice(next_offset: int) -> str:
        return (f"[desktop read output truncated: original_bytes={original}; if the omitted remainder is needed, "
                f"continue with read using offset={next_offset} and the same path.]")

    best = ""
    for count in range(1, len(lines) + 1):
        candidate = num(lines[:count]) + "\n\n" + notice(count + 1)
        if len(candidate.encode()) <= 24 * 1024:
            best, kept = candidate, count
    assert res.text == best
    assert res.details == {
        "desktop_output_truncation": {
            "truncated": True, "has_more": True, "strategy": "prefix_lines", "original_bytes": original,
            "returned_bytes": len(best.encode()), "max_bytes": 24576, "next_offset": kept + 1,
            "offset_unit": "line",
            "continuation_hint": {
                "tool": "read", "preserve_args": ["path"],
                "instruction": f"If the omitted remainder is needed, call read again with offset={kept + 1}; "
                               "preserve the same path.",
            },
        },
        "desktop_output_continuation": {
            "has_more": True, "next_offset": kept + 1, "offset_unit": "line",
            "continuation_hint": {
                "tool": "read", "preserve_args": ["path"],
                "instruction": f"If the omitted remainder is needed, call read again with offset={kept + 1}; "
                               "preserve the same path.",
            },
        },
    }


def test_read_24kib_cap_next_offset_follows_the_last_kept_number(tmp_path: Path) -> None:
    lines = ["y" * 99] * 400
    (tmp_path / "c.txt").write_text("\n".join(lines))
    res = call("read", {"path": "c.txt", "offset": 50}, tmp_path)
    meta = (res.details or {})["desktop_output_truncation"]
    kept = res.text[: res.text.rindex("\n\n[")].split("\n")
    assert kept[0] == f"    50{ARROW}" + "y" * 99
    last = int(kept[-1].split(ARROW)[0])
    assert meta["next_offset"] == last + 1 == 50 + len(kept)
    assert res.text.endswith(f"continue with read using offset={last + 1} and the same path.]")


def test_read_upstream_has_no_numbers_guards_reminder_or_cap(tmp_path: Path) -> None:
    (tmp_path / "e.txt").write_text("")
    (tmp_path / "a.txt").write_text("a\nb\n")
    (tmp_path / "bin.dat").write_bytes(b"ab\x00cd")
    (tmp_path / "big.txt").write_text(("y" * 99 + "\n") * 400)
    assert call("read", {"path": "e.txt"}, tmp_path, UPSTREAM_PI).text == ""
    res = call("read", {"path": "a.txt"}, tmp_path, UPSTREAM_PI)
    assert (res.text, res.details) == ("a\nb\n", None)
    assert call("read", {"path": "bin.dat"}, tmp_path, UPSTREAM_PI).text == "ab\x00cd"
    res = call("read", {"path": "big.txt"}, tmp_path, UPSTREAM_PI)
    assert res.text == ("y" * 99 + "\n") * 400 and res.details is None
    assert "pages" not in read_tool.TOOL.surface_schema(UPSTREAM_PI)["properties"]
    assert "pages" in read_tool.TOOL.surface_schema(REFERENCE)["properties"]


# spec read.3 wrapper path candidates


def test_read_finds_special_space_at_and_file_url_variants(tmp_path: Path) -> None:
    (tmp_path / "a b.txt").write_text("s")
    assert call("read", {"path": "a\u202fb.txt"}, tmp_path).text == num(["s"])
    assert call("read", {"path": "@a b.txt"}, tmp_path).text == num(["s"])
    assert call("read", {"path": f"file://{tmp_path}/a b.txt"}, tmp_path).text == num(["s"])


def test_a_name_with_a_real_nbsp_is_found_by_the_wrapper_but_not_by_the_engine(tmp_path: Path) -> None:
    (tmp_path / "a\u00a0b.txt").write_text("x")
    assert raised("read", {"path": "a\u00a0b.txt"}, tmp_path) == (
        f"ENOENT: no such file or directory, access '{tmp_path}/a b.txt'"
    )


# spec read.4 guards


def test_device_guard_shows_the_resolved_absolute_path(tmp_path: Path) -> None:
    rel = os.path.relpath("/dev/zero", tmp_path)
    res = call("read", {"path": rel}, tmp_path)
    assert res.text == "Cannot read '/dev/zero': this device file would block or produce infinite output."


def test_fifo_and_socket_are_refused_by_the_non_regular_guard(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "p")
    os.symlink(tmp_path / "p", tmp_path / "link")
    res = call("read", {"path": "p"}, tmp_path)
    assert res.text == (
        f"Cannot read '{tmp_path}/p': not a regular file (named pipe (FIFO)) \u2014 reading it would block or "
        "never terminate. Use bash if you need to consume its stream."
    )
    assert (res.is_error, res.details) == (True, {})
    assert call("read", {"path": "link"}, tmp_path).text.startswith(f"Cannot read '{tmp_path}/link': not a regular file")
    sock_path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(sock_path))
        res = call("read", {"path": "s"}, tmp_path)
    assert res.text.startswith(f"Cannot read '{sock_path}': not a regular file (socket) \u2014 ")
    assert res.is_error is True


# spec read.5 binary guard


def test_binary_guard_by_extension_uses_the_lower_cased_extension(tmp_path: Path) -> None:
    (tmp_path / "pic.BMP").write_text("plain text")
    res = call("read", {"path": "pic.BMP"}, tmp_path)
    assert res.text == ("This tool cannot read binary files. The file appears to be a binary .bmp file. "
                        "Please use appropriate tools for binary file analysis.")
    assert (res.is_error, res.details) == (True, {})


def test_an_empty_file_with_a_binary_extension_is_binary(tmp_path: Path) -> None:
    (tmp_path / "e.zip").write_bytes(b"")
    assert call("read", {"path": "e.zip"}, tmp_path).is_error is True


def test_a_leading_dot_name_follows_node_extname(tmp_path: Path) -> None:
    (tmp_path / ".zip").write_text("dotfile")
    assert call("read", {"path": ".zip"}, tmp_path).text == num(["dotfile"])
    (tmp_path / "..zip").write_text("dots")
    assert call("read", {"path": "..zip"}, tmp_path).is_error is True  # path.extname('..zip') == '.zip'


def test_exempt_extensions_fall_through_to_content_checks(tmp_path: Path) -> None:
    (tmp_path / "t.png").write_text("not an image")
    assert call("read", {"path": "t.png"}, tmp_path).text == num(["not an image"])


def test_a_real_image_under_a_binary_extension_is_read_as_an_image(tmp_path: Path) -> None:
    png = _tiny_png()
    (tmp_path / "x.zip").write_bytes(png)
    res = call("read", {"path": "x.zip"}, tmp_path)
    assert res.is_error is False
    assert isinstance(res.content[0], TextBlock) and res.content[0].text == "Read image file [image/png]"
    assert isinstance(res.content[1], ImageBlock) and res.content[1].mime_type == "image/png"
    assert res.details is None


def test_content_sniff_nul_and_non_printable_messages(tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_bytes(b"abc\x00def")
    res = call("read", {"path": "n.txt"}, tmp_path)
    assert res.text == ("File appears to be binary (NUL bytes detected). Use bash (e.g. `file`, `hexdump -C | head`, "
                        "or a format-specific tool) to inspect it.")
    assert (res.is_error, res.details) == (True, {})
    (tmp_path / "c4.txt").write_bytes(b"\x01\x02\x03\x7fabcdef")  # 4/10 > 0.3
    assert call("read", {"path": "c4.txt"}, tmp_path).text.startswith(
        "File appears to be binary (mostly non-printable content). ")
    (tmp_path / "c3.txt").write_bytes(b"\x01\x02\x03abcdefg")  # 3/10 is not > 0.3
    assert call("read", {"path": "c3.txt"}, tmp_path).is_error is False
    (tmp_path / "hi.txt").write_bytes(b"\xff\xfe" + b"\x01" * 10)  # UTF-16 BOM: never binary by content
    assert call("read", {"path": "hi.txt"}, tmp_path).is_error is False
    (tmp_path / "late.txt").write_bytes(b"a" * 4100 + b"\x00")  # NUL outside the 4100-byte sample
    assert call("read", {"path": "late.txt"}, tmp_path).is_error is False


# spec read.7 images


def _tiny_png() -> bytes:
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00\xff\x00\x00")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def test_image_reads_ignore_offset_and_limit_and_have_no_details(tmp_path: Path) -> None:
    (tmp_path / "p.png").write_bytes(_tiny_png())
    for profile in (REFERENCE, UPSTREAM_PI):
        res = call("read", {"path": "p.png", "offset": 5, "limit": 1}, tmp_path, profile)
        assert [type(b) for b in res.content] == [TextBlock, ImageBlock]
        assert res.content[0] == TextBlock("Read image file [image/png]")
        assert res.details is None


def test_bmp_magic_is_read_as_text_by_the_engine(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_bytes(b"BM plain")
    assert call("read", {"path": "b.txt"}, tmp_path, UPSTREAM_PI).text == "BM plain"


# =============================================================================================
# spec write write


def test_write_new_file_text_and_details(tmp_path: Path) -> None:
    res = call("write", {"path": "d1/d2/n.txt", "content": "h\u00e9\U0001f600"}, tmp_path)
    assert res.text == "Successfully wrote 7 bytes to d1/d2/n.txt"
    assert res.details == {"created": True, "bytes_written": 7, "encoding": "utf-8", "bom": False}
    assert res.is_error is False
    assert (tmp_path / "d1/d2/n.txt").read_bytes() == "h\u00e9\U0001f600".encode()


def test_write_upstream_counts_utf16_units_and_has_no_details(tmp_path: Path) -> None:
    res = call("write", {"path": "n.txt", "content": "h\u00e9\U0001f600"}, tmp_path, UPSTREAM_PI)
    assert (res.text, res.details) == ("Successfully wrote 4 bytes to n.txt", None)
    (tmp_path / "b.txt").write_bytes(b"\xef\xbb\xbfold")
    res = call("write", {"path": "b.txt", "content": "new"}, tmp_path, UPSTREAM_PI)
    assert res.text == "Successfully wrote 3 bytes to b.txt"  # no "(overwrote existing file)" upstream
    assert (tmp_path / "b.txt").read_bytes() == b"new"  # no BOM preservation upstream


def test_write_overwrite_appends_suffix_and_patch(tmp_path: Path) -> None:
    (tmp_path / "o.txt").write_text("a\nb\n")
    res = call("write", {"path": "o.txt", "content": "a\nc\n"}, tmp_path)
    assert res.text == "Successfully wrote 4 bytes to o.txt (overwrote existing file)"
    assert res.details is not None
    assert (res.details["created"], res.details["bytes_written"], res.details["firstChangedLine"]) == (False, 4, 2)
    assert "@@ -1,2 +1,2 @@\n a\n-b\n+c\n" in res.details["patch"]


def test_write_preserves_an_old_utf8_bom_and_counts_its_bytes(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_bytes(b"\xef\xbb\xbfold")
    res = call("write", {"path": "b.txt", "content": "new"}, tmp_path)
    assert res.text == "Successfully wrote 6 bytes to b.txt (overwrote existing file)"
    assert (res.details or {})["bom"] is True and (res.details or {})["encoding"] == "utf-8"
    assert (tmp_path / "b.txt").read_bytes() == b"\xef\xbb\xbfnew"


def test_write_new_content_bom_is_written_once(tmp_path: Path) -> None:
    res = call("write", {"path": "n.txt", "content": "\ufeffhi"}, tmp_path)
    assert res.details == {"created": True, "bytes_written": 5, "encoding": "utf-8", "bom": True}
    assert (tmp_path / "n.txt").read_bytes() == b"\xef\xbb\xbfhi"
    (tmp_path / "b.txt").write_bytes(b"\xef\xbb\xbfold")
    call("write", {"path": "b.txt", "content": "\ufeffnew"}, tmp_path)
    assert (tmp_path / "b.txt").read_bytes() == b"\xef\xbb\xbfnew"


def test_write_keeps_utf16le_and_always_writes_its_bom(tmp_path: Path) -> None:
    (tmp_path / "u.txt").write_bytes(b"\xff\xfeo\x00")
    res = call("write", {"path": "u.txt", "content": "h\u00e9"}, tmp_path)
    assert res.text == "Successfully wrote 6 bytes to u.txt (overwrote existing file)"
    assert res.details is not None
    assert (res.details["encoding"], res.details["bom"], res.details["bytes_written"]) == ("utf16le", True, 6)
    assert (tmp_path / "u.txt").read_bytes() == b"\xff\xfeh\x00\xe9\x00"


def test_write_does_not_detect_a_big_endian_bom(tmp_path: Path) -> None:
    (tmp_path / "be.txt").write_bytes(b"\xfe\xff\x00o")
    res = call("write", {"path": "be.txt", "content": "x"}, tmp_path)
    assert res.details is not None
    assert (res.details["encoding"], res.details["bom"]) == ("utf-8", False)
    assert (tmp_path / "be.txt").read_bytes() == b"x"


def test_write_skips_capture_for_large_and_binary_old_files(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_bytes(b"\xef\xbb\xbf" + b"a" * (1024 * 1024))
    res = call("write", {"path": "big.txt", "content": "z"}, tmp_path)
    assert res.text == "Successfully wrote 4 bytes to big.txt (overwrote existing file)"
    assert res.details == {"created": False, "bytes_written": 4, "encoding": "utf-8", "bom": True,
                           "capture_skipped": "too_large"}
    (tmp_path / "exact.txt").write_bytes(b"a" * (1024 * 1024))  # exactly 1 MiB is captured
    assert "capture_skipped" not in (call("write", {"path": "exact.txt", "content": "z"}, tmp_path).details or {})
    (tmp_path / "bin.txt").write_bytes(b"ab\x00c")
    res = call("write", {"path": "bin.txt", "content": "t"}, tmp_path)
    assert res.details == {"created": False, "bytes_written": 1, "encoding": "utf-8", "bom": False,
                           "capture_skipped": "binary"}
    (tmp_path / "late.txt").write_bytes(b"a" * 4096 + b"\x00")
    assert "patch" in (call("write", {"path": "late.txt", "content": "t"}, tmp_path).details or {})


def test_write_omits_patch_for_a_new_body_over_one_mib(tmp_path: Path) -> None:
    (tmp_path / "s.txt").write_text("small")
    res = call("write", {"path": "s.txt", "content": "q" * (1024 * 1024 + 1)}, tmp_path)
    assert res.details is not None and res.details["patch_omitted"] == "too_large"
    assert "patch" not in res.details


def test_write_follows_symlinks(tmp_path: Path) -> None:
    (tmp_path / "target.txt").write_text("old")
    os.symlink("target.txt", tmp_path / "link.txt")
    call("write", {"path": "link.txt", "content": "new"}, tmp_path)
    assert (tmp_path / "target.txt").read_text() == "new"
    assert os.path.islink(tmp_path / "link.txt")


# =============================================================================================
# spec edit edit


def test_edit_success_text_and_receipts(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\nb\nc\n")
    res = call("edit", {"file_path": "a.txt", "old_string": "b", "new_string": "B"}, tmp_path)
    assert res.text == "Successfully replaced 1 block(s) in a.txt."
    assert res.is_error is False
    assert res.details == {
        "diff": " 1 a\n-2 b\n+2 B\n 3 c",
        "patch": "--- a.txt\n+++ a.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
        "firstChangedLine": 2,
    }
    assert (tmp_path / "a.txt").read_text() == "a\nB\nc\n"


def test_edit_numbered_diff_skips_long_unchanged_runs(tmp_path: Path) -> None:
    lines = [f"l{i}" for i in range(1, 21)]
    (tmp_path / "a.txt").write_text("\n".join(lines))
    res = call("edit", {"file_path": "a.txt", "old_string": "l10\n", "new_string": "L10\n"}, tmp_path)
    assert res.details is not None
    assert res.details["diff"] == "\n".join([
        "    ...", "  6 l6", "  7 l7", "  8 l8", "  9 l9", "-10 l10", "+10 L10",
        " 11 l11", " 12 l12", " 13 l13", " 14 l14", "    ...",
    ])
    assert res.details["firstChangedLine"] == 10


def test_edit_patch_marks_a_missing_final_newline(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    res = call("edit", {"file_path": "a.txt", "old_string": "x", "new_string": "y"}, tmp_path)
    assert (res.details or {})["patch"] == (
        "--- a.txt\n+++ a.txt\n@@ -1,1 +1,1 @@\n-x\n\\ No newline at end of file\n+y\n\\ No newline at end of file\n"
    )


def test_edit_not_found_message_reference_and_upstream(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello")
    assert raised("edit", {"file_path": "a.txt", "old_string": "nope", "new_string": "x"}, tmp_path) == (
        "Could not find the exact text in a.txt. The old text must match exactly including all whitespace and "
        f"newlines. {RELOAD_HINT}"
    )
    assert raised("edit", {"path": "a.txt", "edits": [{"oldText": "nope", "newText": "x"}]}, tmp_path,
                  UPSTREAM_PI) == (
        "Could not find the exact text in a.txt. The old text must match exactly including all whitespace and "
        "newlines."
    )
    multi = {"path": "a.txt", "edits": [{"oldText": "hello", "newText": "x"}, {"oldText": "nope", "newText": "y"}]}
    assert raised("edit", multi, tmp_path) == (
        "Could not find edits[1] in a.txt. The oldText must match exactly including all whitespace and newlines. "
        f"{RELOAD_HINT}"
    )
    assert raised("edit", multi, tmp_path, UPSTREAM_PI) == (
        "Could not find edits[1] in a.txt. The oldText must match exactly including all whitespace and newlines."
    )
    assert (tmp_path / "a.txt").read_text() == "hello"


def test_edit_duplicate_messages_list_the_first_three_lines(tmp_path: Path) -> None:
    (tmp_path / "d.txt").write_text("x\ny\nx\nx\nx\n")
    assert raised("edit", {"file_path": "d.txt", "old_string": "x", "new_string": "z"}, tmp_path) == (
        "Found 4 occurrences of the text in d.txt. Matches start at lines 1, 3, 4, .... The text must be unique. "
        "Please provide more context to make it unique."
    )
    (tmp_path / "t.txt").write_text("q\nx\nx\n")
    assert raised("edit", {"file_path": "t.txt", "old_string": "x", "new_string": "z"}, tmp_path) == (
        "Found 2 occurrences of the text in t.txt. Matches start at lines 2, 3. The text must be unique. "
        "Please provide more context to make it unique."
    )
    assert raised("edit", {"path": "t.txt", "edits": [{"oldText": "x", "newText": "z"}]}, tmp_path, UPSTREAM_PI) == (
        "Found 2 occurrences of the text in t.txt. The text must be unique. Please provide more context to make it "
        "unique."
    )
    multi = {"path": "t.txt", "edits": [{"oldText": "q", "newText": "Q"}, {"oldText": "x", "newText": "z"}]}
    assert raised("edit", multi, tmp_path) == (
        "Found 2 occurrences of edits[1] in t.txt. Matches start at lines 2, 3. Each oldText must be unique. "
        "Please provide more context to make it unique."
    )
    assert raised("edit", multi, tmp_path, UPSTREAM_PI) == (
        "Found 2 occurrences of edits[1] in t.txt. Each oldText must be unique. Please provide more context to "
        "make it unique."
    )


def test_edit_duplicates_are_counted_in_fuzzy_space_without_overlap(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a \u201cq\u201d\na \"q\"\n")
    assert raised("edit", {"file_path": "f.txt", "old_string": 'a "q"', "new_string": "z"}, tmp_path).startswith(
        "Found 2 occurrences of the text in f.txt. Matches start at lines 1, 2.")
    (tmp_path / "aaa.txt").write_text("aaa")
    res = call("edit", {"file_path": "aaa.txt", "old_string": "aa", "new_string": "b"}, tmp_path)
    assert res.text == "Successfully replaced 1 block(s) in aaa.txt."
    assert (tmp_path / "aaa.txt").read_text() == "ba"


def test_edit_empty_old_text_messages(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("abc")
    assert raised("edit", {"file_path": "a.txt", "old_string": "", "new_string": "x"}, tmp_path) == (
        "oldText must not be empty in a.txt.")
    multi = {"path": "a.txt", "edits": [{"oldText": "nope", "newText": "x"}, {"oldText": "", "newText": "y"}]}
    # the empty check runs before any matching, so edits[0]'s miss is never reported
    assert raised("edit", multi, tmp_path) == "edits[1].oldText must not be empty in a.txt."
    assert raised("edit", multi, tmp_path, UPSTREAM_PI) == "edits[1].oldText must not be empty in a.txt."


def test_edit_no_change_messages(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("abc")
    assert raised("edit", {"file_path": "a.txt", "old_string": "b", "new_string": "b"}, tmp_path) == (
        "No changes made to a.txt. The replacement produced identical content. This might indicate an issue with "
        "special characters or the text not existing as expected."
    )
    multi = {"path": "a.txt", "edits": [{"oldText": "a", "newText": "a"}, {"oldText": "c", "newText": "c"}]}
    assert raised("edit", multi, tmp_path) == "No changes made to a.txt. The replacements produced identical content."


def test_edit_overlap_names_indices_in_sorted_order_and_touching_spans_are_fine(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("abcdef")
    edits = [{"oldText": "cde", "newText": "1"}, {"oldText": "abc", "newText": "2"}]
    assert raised("edit", {"path": "a.txt", "edits": edits}, tmp_path) == (
        "edits[1] and edits[0] overlap in a.txt. Merge them into one edit or target disjoint regions."
    )
    same = [{"oldText": "b", "newText": "1"}, {"oldText": "b", "newText": "2"}]
    assert raised("edit", {"path": "a.txt", "edits": same}, tmp_path) == (
        "edits[0] and edits[1] overlap in a.txt. Merge them into one edit or target disjoint regions."
    )
    touching = [{"oldText": "cd", "newText": "CD"}, {"oldText": "ab", "newText": "AB"}]
    res = call("edit", {"path": "a.txt", "edits": touching}, tmp_path)
    assert res.text == "Successfully replaced 2 block(s) in a.txt."
    assert (tmp_path / "a.txt").read_text() == "ABCDef"


def test_edit_invalid_engine_input_raises(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("abc")
    for edits in ([], None, "nope"):
        assert raised("edit", {"path": "a.txt", "edits": edits}, tmp_path) == (
            "Edit tool input is invalid. edits must contain at least one replacement.")


def test_edit_legacy_inputs_are_accepted_by_prepare_arguments(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("abc")
    args = edit_tool.TOOL.prepare({"path": "a.txt", "oldText": "b", "newText": "B"})
    assert call("edit", args, tmp_path).text == "Successfully replaced 1 block(s) in a.txt."
    args = edit_tool.TOOL.prepare({"path": "a.txt", "edits": json.dumps([{"oldText": "c", "newText": "C"}])})
    call("edit", args, tmp_path)
    assert (tmp_path / "a.txt").read_text() == "aBC"


def test_edit_access_and_directory_errors(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    assert raised("edit", {"file_path": "d", "old_string": "a", "new_string": "b"}, tmp_path) == (
        "EISDIR: illegal operation on a directory, read")
    assert raised("edit", {"file_path": "d/x/y.txt", "old_string": "a", "new_string": "b"}, tmp_path) == (
        "Could not edit file: d/x/y.txt. Error code: ENOENT.")


def test_edit_crlf_file_keeps_crlf_and_new_text_newlines_take_it(tmp_path: Path) -> None:
    (tmp_path / "c.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    call("edit", {"file_path": "c.txt", "old_string": "a\nb", "new_string": "x\ny\nz"}, tmp_path)
    assert (tmp_path / "c.txt").read_bytes() == b"x\r\ny\r\nz\r\nc\r\n"
    call("edit", {"file_path": "c.txt", "old_string": "y\r\nz", "new_string": "Y"}, tmp_path)
    assert (tmp_path / "c.txt").read_bytes() == b"x\r\nY\r\nc\r\n"


def test_edit_mixed_endings_become_the_first_seen_and_lone_cr_becomes_lf(tmp_path: Path) -> None:
    (tmp_path / "m.txt").write_bytes(b"a\nb\r\nc\r\n")
    call("edit", {"file_path": "m.txt", "old_string": "b", "new_string": "B"}, tmp_path)
    assert (tmp_path / "m.txt").read_bytes() == b"a\nB\nc\n"
    (tmp_path / "m2.txt").write_bytes(b"a\r\nb\nc")
    call("edit", {"file_path": "m2.txt", "old_string": "c", "new_string": "C"}, tmp_path)
    assert (tmp_path / "m2.txt").read_bytes() == b"a\r\nb\r\nC"
    (tmp_path / "cr.txt").write_bytes(b"a\rb\rc")
    call("edit", {"file_path": "cr.txt", "old_string": "b", "new_string": "B"}, tmp_path)
    assert (tmp_path / "cr.txt").read_bytes() == b"a\nB\nc"


def test_edit_keeps_the_bom_and_a_bom_in_old_text_never_matches(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_bytes(b"\xef\xbb\xbfhello\n")
    res = call("edit", {"file_path": "b.txt", "old_string": "hello", "new_string": "bye"}, tmp_path)
    assert (tmp_path / "b.txt").read_bytes() == b"\xef\xbb\xbfbye\n"
    assert (res.details or {})["patch"].startswith("--- b.txt\n+++ b.txt\n@@ -1,1 +1,1 @@\n-hello\n+bye\n")
    with pytest.raises(ToolError) as info:
        call("edit", {"file_path": "b.txt", "old_string": "\ufeffbye", "new_string": "x"}, tmp_path)
    assert str(info.value).startswith("Could not find the exact text in b.txt.")


def test_edit_new_text_is_spliced_literally(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("TOKEN")
    call("edit", {"file_path": "a.txt", "old_string": "TOKEN", "new_string": "$&$$$`$'"}, tmp_path)
    assert (tmp_path / "a.txt").read_text() == "$&$$$`$'"


# spec edit.6 / spec edit.7 fuzzy matching


def test_fuzzy_edit_replaces_only_the_mapped_span(tmp_path: Path) -> None:
    (tmp_path / "z.txt").write_text("名称：值\n备注：“旧”   \n")
    call("edit", {"file_path": "z.txt", "old_string": "名称:值", "new_string": "名称:新值"}, tmp_path)
    assert (tmp_path / "z.txt").read_text() == "名称:新值\n备注：“旧”   \n"
    (tmp_path / "u.txt").write_text("名称：值\n备注：“旧”   \n")
    call("edit", {"path": "u.txt", "edits": [{"oldText": "名称:值", "newText": "名称:新值"}]}, tmp_path, UPSTREAM_PI)
    assert (tmp_path / "u.txt").read_text() == '名称:新值\n备注:"旧"\n'


def test_fidelity_guard_rejects_a_span_that_swallows_a_compatibility_character(tmp_path: Path) -> None:
    (tmp_path / "k.txt").write_text("total: 3\u338f\n")
    assert raised("edit", {"file_path": "k.txt", "old_string": "3k", "new_string": "4k"}, tmp_path) == (
        "Could not find the exact text in k.txt. The old text must match exactly including all whitespace and "
        f"newlines. {RELOAD_HINT}"
    )
    no_guard = REFERENCE.with_patches({"edit.fidelity-guard": False})
    call("edit", {"file_path": "k.txt", "old_string": "3k", "new_string": "4k"}, tmp_path, no_guard)
    assert (tmp_path / "k.txt").read_text() == "total: 4k\n"


def test_fuzzy_span_excludes_trailing_whitespace_at_the_end_of_a_line(tmp_path: Path) -> None:
    (tmp_path / "s.txt").write_text("it\u2019s   \nnext\n")
    call("edit", {"file_path": "s.txt", "old_string": "it's", "new_string": "it is"}, tmp_path)
    assert (tmp_path / "s.txt").read_text() == "it is   \nnext\n"


def test_disproportion_guard_refuses_a_fuzzy_span_far_longer_than_old_text(tmp_path: Path) -> None:
    (tmp_path / "g.txt").write_text("a" + " " * 600 + "\nb\n")
    assert raised("edit", {"file_path": "g.txt", "old_string": "a\nb", "new_string": "X"}, tmp_path) == (
        "Refusing to replace the text in g.txt: the fuzzy match spans far more text than oldText. Provide a more "
        "exact oldText (copy it from the file, including whitespace)."
    )
    (tmp_path / "ok.txt").write_text("a" + " " * 400 + "\nb\n")
    call("edit", {"file_path": "ok.txt", "old_string": "a\nb", "new_string": "X"}, tmp_path)
    assert (tmp_path / "ok.txt").read_text() == "X\n"


def test_disproportion_message_names_the_edit_index_for_multiple_edits(tmp_path: Path) -> None:
    (tmp_path / "g.txt").write_text("q\na" + " " * 600 + "\nb\n")
    edits = [{"oldText": "q", "newText": "Q"}, {"oldText": "a\nb", "newText": "X"}]
    assert raised("edit", {"path": "g.txt", "edits": edits}, tmp_path) == (
        "Refusing to replace edits[1] in g.txt: the fuzzy match spans far more text than oldText. Provide a more "
        "exact oldText (copy it from the file, including whitespace)."
    )


def test_whitespace_only_old_text_never_matches_fuzzily_in_the_reference(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_text("abc\n")
    assert raised("edit", {"file_path": "w.txt", "old_string": "  ", "new_string": "x"}, tmp_path).startswith(
        "Could not find the exact text in w.txt.")


def test_upstream_whitespace_only_old_text_degenerates(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_text("abc")
    assert raised("edit", {"path": "w.txt", "edits": [{"oldText": "  ", "newText": "x"}]}, tmp_path, UPSTREAM_PI) == (
        "Found 2 occurrences of the text in w.txt. The text must be unique. Please provide more context to make it "
        "unique."
    )
    (tmp_path / "s.txt").write_text("ab")
    call("edit", {"path": "s.txt", "edits": [{"oldText": "  ", "newText": "x"}]}, tmp_path, UPSTREAM_PI)
    assert (tmp_path / "s.txt").read_text() == "xab"


def test_upstream_has_no_disproportion_guard(tmp_path: Path) -> None:
    (tmp_path / "g.txt").write_text("a" + " " * 600 + "\nb\n")
    call("edit", {"path": "g.txt", "edits": [{"oldText": "a\nb", "newText": "X"}]}, tmp_path, UPSTREAM_PI)
    assert (tmp_path / "g.txt").read_text() == "X\n"


# spec edit.3 line-number retry


def test_line_number_prefixes_are_stripped_on_retry(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("foo\n\nbar\n")
    res = call("edit", {"file_path": "a.txt", "old_string": f"     1{ARROW}foo\n\n     3{ARROW}bar",
                        "new_string": f"     1{ARROW}FOO\n\n     3\tBAR"}, tmp_path)
    assert res.text == "Successfully replaced 1 block(s) in a.txt."
    assert (res.details or {})["line_number_prefixes_stripped"] is True
    assert (tmp_path / "a.txt").read_text() == "FOO\n\nBAR\n"


def test_line_number_retry_strips_old_and_new_independently(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("foo\n")
    call("edit", {"file_path": "a.txt", "old_string": "  12\tfoo", "new_string": "7 bar"}, tmp_path)
    assert (tmp_path / "a.txt").read_text() == "7 bar\n"


def test_line_number_retry_failure_reraises_the_original_error(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("foo\n")
    old = f"     1{ARROW}nope"
    assert raised("edit", {"file_path": "a.txt", "old_string": old, "new_string": "x"}, tmp_path) == (
        "Could not find the exact text in a.txt. The old text must match exactly including all whitespace and "
        f"newlines. {RELOAD_HINT}"
    )
    # a whitespace-only line without a prefix disqualifies the whole block
    (tmp_path / "b.txt").write_text("foo\n  \nbar\n")
    with pytest.raises(ToolError):
        call("edit", {"file_path": "b.txt", "old_string": f"1{ARROW}foo\n  \n3{ARROW}bar", "new_string": "x"},
             tmp_path)
    assert (tmp_path / "b.txt").read_text() == "foo\n  \nbar\n"


def test_the_original_successful_attempt_has_no_stripped_flag(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(f"1{ARROW}x\n")
    res = call("edit", {"file_path": "a.txt", "old_string": f"1{ARROW}x", "new_string": "y"}, tmp_path)
    assert "line_number_prefixes_stripped" not in (res.details or {})
    assert (tmp_path / "a.txt").read_text() == "y\n"


# spec edit.4 replace_all


def test_replace_all_replaces_every_occurrence_and_reports_the_absolute_path(tmp_path: Path) -> None:
    (tmp_path / "r.txt").write_text("a.a.a")
    res = call("edit", {"file_path": "r.txt", "old_string": "a", "new_string": "$&", "replace_all": True}, tmp_path)
    assert res.text == f"Successfully replaced 1 block(s) in {tmp_path}/r.txt."
    assert (tmp_path / "r.txt").read_text() == "$&.$&.$&"
    assert (res.details or {})["patch"].startswith(f"--- {tmp_path}/r.txt\n+++ {tmp_path}/r.txt\n")


def test_replace_all_counts_non_overlapping_occurrences(tmp_path: Path) -> None:
    (tmp_path / "r.txt").write_text("aaaa")
    call("edit", {"file_path": "r.txt", "old_string": "aa", "new_string": "b", "replace_all": True}, tmp_path)
    assert (tmp_path / "r.txt").read_text() == "bb"


def test_replace_all_errors(tmp_path: Path) -> None:
    (tmp_path / "r.txt").write_text("abc")
    assert raised("edit", {"file_path": "r.txt", "old_string": "", "new_string": "x", "replace_all": True},
                  tmp_path) == f"replace_all: old_string must be non-empty (path={tmp_path}/r.txt)."
    assert raised("edit", {"file_path": "nope.txt", "old_string": "a", "new_string": "x", "replace_all": True},
                  tmp_path) == f"Could not read file for replace_all: {tmp_path}/nope.txt. ENOENT."
    assert raised("edit", {"file_path": "r.txt", "old_string": "zz", "new_string": "x", "replace_all": True},
                  tmp_path) == f"replace_all: old_string was not found in {tmp_path}/r.txt."
    (tmp_path / "d").mkdir()
    assert raised("edit", {"file_path": "d", "old_string": "a", "new_string": "x", "replace_all": True},
                  tmp_path) == f"Could not read file for replace_all: {tmp_path}/d. EISDIR."


def test_replace_all_error_codes(tmp_path: Path) -> None:
    (tmp_path / "r.txt").write_text("abc")
    codes = []
    for old, path in (("", "r.txt"), ("a", "nope.txt"), ("zz", "r.txt")):
        with pytest.raises(ToolError) as info:
            call("edit", {"file_path": path, "old_string": old, "new_string": "x", "replace_all": True}, tmp_path)
        codes.append(info.value.code)
    assert codes == ["OLD_STRING_EMPTY", "READ_FAILED", "OLD_STRING_NOT_FOUND"]


def test_replace_all_on_a_bom_file_raises_the_engine_not_found_error(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_bytes(b"\xef\xbb\xbfa a")
    assert raised("edit", {"file_path": "b.txt", "old_string": "a", "new_string": "x", "replace_all": True},
                  tmp_path) == (
        f"Could not find the exact text in {tmp_path}/b.txt. The old text must match exactly including all "
        f"whitespace and newlines. {RELOAD_HINT}"
    )


def test_replace_all_works_on_crlf_files(tmp_path: Path) -> None:
    (tmp_path / "c.txt").write_bytes(b"a\r\nb\r\na\r\n")
    call("edit", {"file_path": "c.txt", "old_string": "a", "new_string": "x\ny", "replace_all": True}, tmp_path)
    assert (tmp_path / "c.txt").read_bytes() == b"x\r\ny\r\nb\r\nx\r\ny\r\n"


def test_replace_all_with_the_literal_fix_off_expands_replacement_patterns(tmp_path: Path) -> None:
    off = REFERENCE.with_patches({"wrap.replace-all-literal": False})
    (tmp_path / "r.txt").write_text("axb")
    call("edit", {"file_path": "r.txt", "old_string": "x", "new_string": "[$`|$'|$$|$1]", "replace_all": True},
         tmp_path, off)
    assert (tmp_path / "r.txt").read_text() == "a[a|b|$|$1]b"
    (tmp_path / "s.txt").write_text("TOKEN")
    assert raised("edit", {"file_path": "s.txt", "old_string": "TOKEN", "new_string": "$&", "replace_all": True},
                  tmp_path, off) == (
        f"No changes made to {tmp_path}/s.txt. The replacement produced identical content. This might indicate "
        "an issue with special characters or the text not existing as expected."
    )


def test_replace_all_false_is_an_ordinary_unique_edit(tmp_path: Path) -> None:
    (tmp_path / "r.txt").write_text("a a")
    assert raised("edit", {"file_path": "r.txt", "old_string": "a", "new_string": "b", "replace_all": False},
                  tmp_path).startswith("Found 2 occurrences of the text in r.txt.")


def test_edit_is_atomic_when_one_of_several_edits_fails(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"one\ntwo\n")
    with pytest.raises(ToolError):
        call("edit", {"path": "a.txt", "edits": [{"oldText": "one", "newText": "1"},
                                                  {"oldText": "zzz", "newText": "3"}]}, tmp_path)
    assert (tmp_path / "a.txt").read_bytes() == b"one\ntwo\n"


# =============================================================================================
# Through the protocol server (python -m tools_impl.server over real pipes)


def serve(requests: list[dict[str, Any]], *flags: str) -> dict[Any, dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, "-m", "tools_impl.server", *flags],
        input="".join(json.dumps(r, ensure_ascii=False) + "\n" for r in requests),
        capture_output=True, text=True, encoding="utf-8", cwd=REPO, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return {msg["id"]: msg for msg in map(json.loads, proc.stdout.splitlines())}


def test_server_round_trip_of_read_write_and_edit(tmp_path: Path) -> None:
    (tmp_path / "e.txt").write_text("")
    (tmp_path / "bin.txt").write_bytes(b"\x00\x01")
    reqs: list[dict[str, Any]] = [
        {"id": 1, "op": "workspace", "root": str(tmp_path), "env": {"HOME": str(tmp_path)}},
        {"id": 2, "op": "call", "tool": "write", "args": {"path": "a.txt", "content": "one\ntwo\n"}},
    ]
    out = serve(reqs)
    assert out[2] == {"id": 2, "ok": True, "result": {
        "content": [{"type": "text", "text": "Successfully wrote 8 bytes to a.txt"}],
        "details": {"created": True, "bytes_written": 8, "encoding": "utf-8", "bom": False},
        "is_error": False}}
    reqs = [
        {"id": 1, "op": "workspace", "root": str(tmp_path), "env": {"HOME": str(tmp_path)}},
        {"id": 3, "op": "call", "tool": "read", "args": {"path": "a.txt", "offset": "2"}},
        {"id": 4, "op": "call", "tool": "read", "args": {"path": "e.txt"}},
        {"id": 5, "op": "call", "tool": "read", "args": {"path": "bin.txt"}},
        {"id": 6, "op": "call", "tool": "read", "args": {"path": "nope.txt"}},
        {"id": 7, "op": "call", "tool": "edit",
         "args": {"file_path": "a.txt", "old_string": f"     2{ARROW}two", "new_string": "TWO"}},
        {"id": 8, "op": "call", "tool": "edit", "args": {"file_path": "a.txt", "old_string": "zz", "new_string": "y"}},
        {"id": 9, "op": "call", "tool": "edit",
         "args": {"file_path": "a.txt", "old_string": "o", "new_string": "0", "replace_all": True}},
    ]
    out = serve(reqs)
    assert out[3]["result"] == {"content": [{"type": "text", "text": f"     2{ARROW}two\n"}], "details": {},
                                "is_error": False}
    assert out[4]["result"]["content"] == [{"type": "text", "text": EMPTY_REMINDER}]
    assert out[5]["result"] == {"content": [{"type": "text", "text": (
        "File appears to be binary (NUL bytes detected). Use bash (e.g. `file`, `hexdump -C | head`, or a "
        "format-specific tool) to inspect it.")}], "details": {}, "is_error": True}
    assert out[6]["ok"] is False
    assert out[6]["error"]["message"] == f"ENOENT: no such file or directory, access '{tmp_path}/nope.txt'"
    assert out[7]["ok"] is True
    assert out[7]["result"]["content"] == [{"type": "text", "text": "Successfully replaced 1 block(s) in a.txt."}]
    assert out[7]["result"]["details"]["line_number_prefixes_stripped"] is True
    assert out[8]["ok"] is False and out[8]["error"]["message"].startswith("Could not find the exact text in a.txt.")
    assert out[9]["result"]["content"][0]["text"] == f"Successfully replaced 1 block(s) in {tmp_path}/a.txt."
    assert (tmp_path / "a.txt").read_text() == "0ne\nTWO\n"


def test_server_upstream_profile_serves_the_bare_engine(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\ny\n")
    out = serve([
        {"id": 1, "op": "workspace", "root": str(tmp_path), "profile": {"base": "upstream"}},
        {"id": 2, "op": "call", "tool": "read", "args": {"path": "a.txt"}},
        {"id": 3, "op": "call", "tool": "write", "args": {"path": "w.txt", "content": "\U0001f600"}},
        {"id": 4, "op": "call", "tool": "edit", "args": {"path": "a.txt", "edits": [{"oldText": "q", "newText": "z"}]}},
        {"id": 5, "op": "call", "tool": "edit", "args": {"path": "a.txt", "oldText": "y", "newText": "Y"}},
    ])
    assert out[2]["result"]["content"] == [{"type": "text", "text": "x\ny\n"}]
    assert out[2]["result"]["details"] is None
    assert out[3]["result"]["content"] == [{"type": "text", "text": "Successfully wrote 2 bytes to w.txt"}]
    assert out[3]["result"]["details"] is None
    assert out[4]["error"]["message"] == (
        "Could not find the exact text in a.txt. The old text must match exactly including all whitespace and "
        "newlines.")
    assert out[5]["result"]["content"][0]["text"] == "Successfully replaced 1 block(s) in a.txt."
    assert (tmp_path / "a.txt").read_text() == "x\nY\n"


def test_server_validation_error_for_a_missing_required_property(tmp_path: Path) -> None:
    out = serve([
        {"id": 1, "op": "workspace", "root": str(tmp_path)},
        {"id": 2, "op": "call", "tool": "write", "args": {"path": "a.txt"}},
    ])
    assert out[2]["ok"] is False
    assert out[2]["error"]["message"] == (
        'Validation failed for tool "write":\n  - content: must have required properties content\n\n'
        'Received arguments:\n{\n  "path": "a.txt"\n}'
    )


def test_server_write_then_concurrent_edits_through_a_symlink_alias_serialise(tmp_path: Path) -> None:
    (tmp_path / "t.txt").write_text("a\n")
    os.symlink("t.txt", tmp_path / "alias.txt")
    reqs: list[dict[str, Any]] = [{"id": 0, "op": "workspace", "root": str(tmp_path)}]
    for i in range(1, 21):
        name = "t.txt" if i % 2 else "alias.txt"
        reqs.append({"id": i, "op": "call", "tool": "edit",
                     "args": {"path": name, "edits": [{"oldText": "a\n", "newText": f"a\nl{i}\n"}]}})
    started = time.monotonic()
    out = serve(reqs)
    assert time.monotonic() - started < 60
    assert all(out[i]["ok"] for i in range(1, 21)), [out[i] for i in range(1, 21) if not out[i]["ok"]]
    lines = (tmp_path / "t.txt").read_text().split("\n")
    assert sorted(lines[1:-1]) == sorted(f"l{i}" for i in range(1, 21))
    assert stat.S_ISLNK(os.lstat(tmp_path / "alias.txt").st_mode)


def test_server_pipelined_calls_honour_execution_modes_in_arrival_order(tmp_path: Path) -> None:
    """spec common.7: write and edit are sequential, read is parallel — a pipelined write, edit, read of one
    file observes the calls in the order they were sent."""
    reqs: list[dict[str, Any]] = [{"id": 0, "op": "workspace", "root": str(tmp_path)}]
    for rnd in range(5):
        base = 10 * (rnd + 1)
        name = f"f{rnd}.txt"
        reqs += [
            {"id": base, "op": "call", "tool": "write", "args": {"path": name, "content": "A"}},
            {"id": base + 1, "op": "call", "tool": "write", "args": {"path": name, "content": "B\n"}},
            {"id": base + 2, "op": "call", "tool": "edit", "args": {"file_path": name, "old_string": "B",
                                                                      "new_string": "C"}},
            {"id": base + 3, "op": "call", "tool": "read", "args": {"path": name}},
            {"id": base + 4, "op": "fs_read", "paths": [name]},
        ]
    out = serve(reqs)
    for rnd in range(5):
        base = 10 * (rnd + 1)
        assert out[base + 1]["result"]["content"][0]["text"] == (
            f"Successfully wrote 2 bytes to f{rnd}.txt (overwrote existing file)")
        assert out[base + 2]["ok"] is True, out[base + 2]
        assert out[base + 3]["result"]["content"][0]["text"] == f"     1{ARROW}C\n"
        assert out[base + 4]["result"]["files"][f"f{rnd}.txt"]["data"] == "Qwo="  # base64 of "C\n"


# spec patches toggles individually off


def test_fuzzy_span_off_alone_rewrites_the_whole_file_and_shortens_messages(tmp_path: Path) -> None:
    off = REFERENCE.with_patches({"edit.fuzzy-span": False})
    (tmp_path / "z.txt").write_text("名称：值\n备注：“旧”   \n")
    call("edit", {"file_path": "z.txt", "old_string": "名称:值", "new_string": "名称:新值"}, tmp_path, off)
    assert (tmp_path / "z.txt").read_text() == '名称:新值\n备注:"旧"\n'
    (tmp_path / "d.txt").write_text("x\nx\n")
    assert raised("edit", {"file_path": "d.txt", "old_string": "x", "new_string": "y"}, tmp_path, off) == (
        "Found 2 occurrences of the text in d.txt. The text must be unique. Please provide more context to make it "
        "unique."
    )
    assert raised("edit", {"file_path": "d.txt", "old_string": "q", "new_string": "y"}, tmp_path, off) == (
        "Could not find the exact text in d.txt. The old text must match exactly including all whitespace and "
        "newlines."
    )
    (tmp_path / "g.txt").write_text("a" + " " * 600 + "\nb\n")
    call("edit", {"file_path": "g.txt", "old_string": "a\nb", "new_string": "X"}, tmp_path, off)
    assert (tmp_path / "g.txt").read_text() == "X\n"


def test_diff_bounds_on_omits_an_oversized_diff_but_still_writes(tmp_path: Path) -> None:
    on = REFERENCE.with_patches({"edit.diff-bounds": True})
    old = "".join(f"a{i}\n" for i in range(1200))
    new = "".join(f"b{i}\n" for i in range(1200))
    (tmp_path / "big.txt").write_text(old)
    res = call("edit", {"file_path": "big.txt", "old_string": old, "new_string": new}, tmp_path, on)
    assert res.text == "Successfully replaced 1 block(s) in big.txt."
    assert res.details is not None
    assert res.details["diff"] == "(diff omitted: more than 1000 lines changed)"
    assert "patch" not in res.details and "diffOmitted" in res.details
    assert (tmp_path / "big.txt").read_text() == new
    res = call("edit", {"file_path": "big.txt", "old_string": new, "new_string": old}, tmp_path)
    assert res.details is not None and "patch" in res.details and "diffOmitted" not in res.details


def test_wrapper_on_with_every_patch_off_still_numbers_and_guards(tmp_path: Path) -> None:
    bare = Profile(patches=frozenset())
    (tmp_path / "a.txt").write_text("a\n")
    assert call("read", {"path": "a.txt"}, tmp_path, bare).text == num(["a"]) + "\n"
    assert call("read", {"path": "/dev/zero"}, tmp_path, bare).is_error is True
    assert call("write", {"path": "a.txt", "content": "b"}, tmp_path, bare).text == (
        "Successfully wrote 1 bytes to a.txt (overwrote existing file)")


def test_a_symlink_loop_fails_in_the_mutation_queue_with_the_realpath_error(tmp_path: Path) -> None:
    os.symlink("loop.txt", tmp_path / "loop.txt")
    assert raised("write", {"path": "loop.txt", "content": "x"}, tmp_path) == (
        f"ELOOP: too many symbolic links encountered, realpath '{tmp_path}/loop.txt'"
    )
    assert raised("edit", {"file_path": "loop.txt", "old_string": "a", "new_string": "b"}, tmp_path) == (
        f"ELOOP: too many symbolic links encountered, realpath '{tmp_path}/loop.txt'"
    )


def test_server_writes_a_lone_surrogate_as_replacement_and_escapes_it_in_echoes(tmp_path: Path) -> None:
    lines = [
        json.dumps({"id": 1, "op": "workspace", "root": str(tmp_path)}),
        '{"id": 2, "op": "call", "tool": "write", "args": {"path": "s.txt", "content": "a\\ud83d"}}',
        '{"id": 3, "op": "call", "tool": "write", "args": {"path": "\\ud83d"}}',
    ]
    proc = subprocess.run([sys.executable, "-m", "tools_impl.server"], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, encoding="utf-8", cwd=REPO, timeout=60)
    out = {m["id"]: m for m in map(json.loads, proc.stdout.splitlines())}
    assert out[2]["result"]["content"][0]["text"] == "Successfully wrote 4 bytes to s.txt"
    assert (tmp_path / "s.txt").read_bytes() == b"a\xef\xbf\xbd"
    assert out[3]["ok"] is False and '"path": "\ud83d"' in out[3]["error"]["message"]
