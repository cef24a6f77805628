"""The read guards (spec read.4 device and non-regular guards, spec read.5 binary guard), unit and
through the wrapper pipeline on real files."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from tools_impl.core.context import make_context
from tools_impl.core.result import ToolResult
from tools_impl.read import tool as read
from tools_impl.read.guards import (
    BINARY_EXTENSION_CLASSES,
    BINARY_READ_EXTENSIONS,
    BLOCKED_DEVICE_PATHS,
    classify_binary,
    device_guard_message,
    extension_of,
    non_regular_kind,
)


def run(root: Path, args: dict) -> ToolResult:
    return read.execute(args, make_context(str(root)))


def device_msg(p: str) -> str:
    return f"Cannot read '{p}': this device file would block or produce infinite output."


def binary_ext_msg(ext: str) -> str:
    return (f"This tool cannot read binary files. The file appears to be a binary {ext} file. "
            "Please use appropriate tools for binary file analysis.")


NUL_MSG = ("File appears to be binary (NUL bytes detected). Use bash (e.g. `file`, `hexdump -C | head`, "
           "or a format-specific tool) to inspect it.")
NONPRINT_MSG = ("File appears to be binary (mostly non-printable content). Use bash (e.g. `file`, "
                "`hexdump -C | head`, or a format-specific tool) to inspect it.")


# --- device guard ---------------------------------------------------------------------------
def test_blocked_device_paths_are_exactly_the_spec_list() -> None:
    assert BLOCKED_DEVICE_PATHS == (
        "/dev/zero", "/dev/random", "/dev/urandom", "/dev/full", "/dev/stdin", "/dev/tty",
        "/dev/console", "/dev/stdout", "/dev/stderr", "/dev/fd/0", "/dev/fd/1", "/dev/fd/2",
    )


@pytest.mark.parametrize("p", BLOCKED_DEVICE_PATHS)
def test_every_blocked_device_path_returns_the_guard_error(tmp_path: Path, p: str) -> None:
    res = run(tmp_path, {"path": p})
    assert res.to_json() == {"content": [{"type": "text", "text": device_msg(p)}], "details": {},
                             "is_error": True}


@pytest.mark.parametrize("p", ["/proc/123/fd/0", "/proc/self/fd/1", "/proc/1/task/1/fd/2"])
def test_proc_fd_0_to_2_paths_are_blocked(p: str) -> None:
    assert device_guard_message(p) == device_msg(p)


@pytest.mark.parametrize("p", ["/proc/self/fd/3", "/proc/self/fd/10", "/dev/null", "/dev/fd/3", "/proc/fd/0x"])
def test_other_device_like_paths_pass_the_device_guard(p: str) -> None:
    assert device_guard_message(p) is None


def test_device_guard_matches_after_backslashes_become_slashes_and_echoes_the_original() -> None:
    p = "\\dev\\zero"
    assert device_guard_message(p) == device_msg(p)


@pytest.mark.parametrize("name", ["con", "CON.txt", "prn.log", "aux", "nul.tar.gz", " nul .txt", "COM1",
                                  "lpt9.md", "com5.anything"])
def test_win32_reserved_names_are_blocked_only_on_win32(name: str) -> None:
    p = "C:\\work\\" + name
    assert device_guard_message(p, platform="win32") == device_msg(p)
    assert device_guard_message(p, platform="linux") is None


@pytest.mark.parametrize("name", ["COM0", "LPT10.txt", "console.txt", "nully", "auxiliary.c", "com.txt"])
def test_names_that_only_resemble_win32_reserved_names_pass(name: str) -> None:
    assert device_guard_message("C:/work/" + name, platform="win32") is None


def test_dev_null_is_allowed_and_reads_as_an_empty_file(tmp_path: Path) -> None:
    res = run(tmp_path, {"path": "/dev/null"})
    assert res.to_json() == {
        "content": [{"type": "text",
                     "text": "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"}],
        "details": {}, "is_error": False}


# --- non-regular guard ----------------------------------------------------------------------
def nonreg_msg(p: str, kind: str) -> str:
    return (f"Cannot read '{p}': not a regular file ({kind}) — reading it would block or never terminate. "
            "Use bash if you need to consume its stream.")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs mkfifo")
def test_fifo_returns_the_non_regular_error_with_an_em_dash(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    res = run(tmp_path, {"path": "pipe"})
    assert res.is_error and res.details == {}
    assert res.text == nonreg_msg(str(tmp_path / "pipe"), "named pipe (FIFO)")
    assert "\u2014" in res.text


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs mkfifo")
def test_symlink_to_fifo_is_caught_because_stat_follows_links(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    os.symlink(tmp_path / "pipe", tmp_path / "link")
    assert run(tmp_path, {"path": "link"}).text == nonreg_msg(str(tmp_path / "link"), "named pipe (FIFO)")


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="needs unix sockets")
def test_unix_socket_returns_the_non_regular_error(tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.bind(str(path))
        res = run(tmp_path, {"path": "s.sock"})
    assert res.is_error and res.text == nonreg_msg(str(path), "socket")


def test_non_regular_kinds_by_mode() -> None:
    assert non_regular_kind(stat.S_IFIFO | 0o644) == "named pipe (FIFO)"
    assert non_regular_kind(stat.S_IFSOCK | 0o644) == "socket"
    assert non_regular_kind(stat.S_IFBLK | 0o644) == "block device"
    for mode in (stat.S_IFREG, stat.S_IFDIR, stat.S_IFCHR, stat.S_IFLNK):
        assert non_regular_kind(mode | 0o644) is None


def test_missing_file_passes_the_guards_and_the_engine_raises_enoent(tmp_path: Path) -> None:
    with pytest.raises(Exception) as exc:
        run(tmp_path, {"path": "nope.txt"})
    assert str(exc.value) == f"ENOENT: no such file or directory, access '{tmp_path / 'nope.txt'}'"


def test_directory_passes_the_guards_and_the_engine_raises_eisdir(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(Exception) as exc:
        run(tmp_path, {"path": "d"})
    assert str(exc.value) == "EISDIR: illegal operation on a directory, read"


# --- binary guard ---------------------------------------------------------------------------
def test_binary_extension_list_is_complete() -> None:
    assert sum(len(v) for v in BINARY_EXTENSION_CLASSES.values()) == len(BINARY_READ_EXTENSIONS) == 94
    assert {".lockb", ".rlib", ".3ds", ".z", ".idx", ".fla", ".opus", ".ear"} <= BINARY_READ_EXTENSIONS


NON_EXEMPT = sorted(BINARY_READ_EXTENSIONS - {".pdf", ".png", ".jpg", ".jpeg", ".gif", ".webp"})


@pytest.mark.parametrize("ext", NON_EXEMPT)
def test_every_binary_extension_rejects_even_plain_text(tmp_path: Path, ext: str) -> None:
    (tmp_path / f"f{ext}").write_text("just text\n")
    res = run(tmp_path, {"path": f"f{ext}"})
    assert res.to_json() == {"content": [{"type": "text", "text": binary_ext_msg(ext)}], "details": {},
                             "is_error": True}


def test_extension_is_compared_lower_cased_and_reported_lower_cased(tmp_path: Path) -> None:
    (tmp_path / "SETUP.EXE").write_text("text")
    assert run(tmp_path, {"path": "SETUP.EXE"}).text == binary_ext_msg(".exe")


def test_bmp_is_rejected_by_extension(tmp_path: Path) -> None:
    (tmp_path / "pic.bmp").write_bytes(b"BM" + b"\x00" * 60)
    assert run(tmp_path, {"path": "pic.bmp"}).text == binary_ext_msg(".bmp")


@pytest.mark.parametrize("ext", [".png", ".jpg", ".jpeg", ".gif", ".webp"])
def test_engine_image_extensions_are_exempt_so_text_content_is_read_as_text(tmp_path: Path, ext: str) -> None:
    (tmp_path / f"a{ext}").write_text("not an image\n")
    assert run(tmp_path, {"path": f"a{ext}"}).text == "     1→not an image\n"


def test_pdf_extension_is_exempt_from_the_extension_verdict() -> None:
    assert classify_binary(".pdf", b"hello") is None


def test_video_extension_is_exempt_only_when_the_video_reader_recognises_it() -> None:
    assert classify_binary(".mp4", b"hello", video_recognised=True) is None
    assert classify_binary(".mp4", b"hello") == binary_ext_msg(".mp4")


def test_image_magic_overrides_a_binary_extension(tmp_path: Path) -> None:
    gif = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;"
    assert classify_binary(".bmp", gif) is None


def test_unreadable_sample_is_not_binary() -> None:
    assert classify_binary(".exe", None) is None


def test_extension_of_follows_node_extname() -> None:
    assert extension_of("/a/b.tar.GZ") == ".gz"
    assert extension_of("/a/.bashrc") == ""
    assert extension_of("/a/noext") == ""
    assert extension_of("/a.d/noext") == ""
    assert extension_of("/a/x.") == "."


def test_nul_byte_in_sample_is_binary(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_bytes(b"abc\x00def")
    assert run(tmp_path, {"path": "x.txt"}).text == NUL_MSG


def test_empty_sample_and_utf16_boms_are_not_binary() -> None:
    assert classify_binary("", b"") is None
    assert classify_binary("", b"\xff\xfeh\x00i\x00") is None
    assert classify_binary("", b"\xfe\xff\x00h\x00i") is None


def test_utf16_file_is_read_by_the_engine_as_utf8(tmp_path: Path) -> None:
    (tmp_path / "u.txt").write_bytes(b"\xff\xfeh\x00")
    assert run(tmp_path, {"path": "u.txt"}).text == "     1→\ufffd\ufffdh\x00"


def test_control_ratio_above_30_percent_is_binary_and_exactly_30_is_not() -> None:
    assert classify_binary("", b"\x01\x02\x03abcdefg") is None  # 3/10 = 0.3
    assert classify_binary("", b"\x01\x02\x03\x7fabcdef") == NONPRINT_MSG  # 4/10
    assert classify_binary("", b"\x01\x02\x03\x04abcdef") == NONPRINT_MSG


def test_tab_lf_cr_and_high_bytes_never_count_as_control() -> None:
    assert classify_binary("", b"\t\n\r\t\n\r\t\n\r\t") is None
    assert classify_binary("", bytes(range(0x80, 0x100))) is None


def test_sniff_reads_exactly_4100_bytes(tmp_path: Path) -> None:
    (tmp_path / "late.txt").write_bytes(b"a" * 4100 + b"\x00")
    (tmp_path / "edge.txt").write_bytes(b"a" * 4099 + b"\x00")
    assert run(tmp_path, {"path": "late.txt"}).is_error is False
    assert run(tmp_path, {"path": "edge.txt"}).text == NUL_MSG
