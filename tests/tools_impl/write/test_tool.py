"""The write tool (spec write): engine behaviour, the wrapper capture writer and upstream pi mode.

All tests write real files under tmp_path and assert exact text, details and bytes.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tools_impl.core.context import ToolContext, make_context
from tools_impl.core.errors import ToolAborted, ToolError
from tools_impl.core.profile import REFERENCE, UPSTREAM_PI, Profile
from tools_impl.server import tools as registry
from tools_impl.write.tool import NAME, SCHEMA, execute

MIB = 1024 * 1024


def _ctx(root: Path, profile: Profile = REFERENCE) -> ToolContext:
    return make_context(str(root), profile=profile)


def _write(root: Path, path: str, content: str, profile: Profile = REFERENCE):  # type: ignore[no-untyped-def]
    return execute({"path": path, "content": content}, _ctx(root, profile))


# ---------------------------------------------------------------------------------------------
# Module surface


def test_write_is_registered_with_path_and_content_required() -> None:
    assert registry.TOOLS["write"].name == NAME == "write"
    assert SCHEMA == {
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"],
    }


# ---------------------------------------------------------------------------------------------
# Wrapper capture writer (reference profile)


def test_new_file_reports_bytes_written_and_created(tmp_path: Path) -> None:
    result = _write(tmp_path, "hello.txt", "héllo\n")
    assert result.text == "Successfully wrote 7 bytes to hello.txt"
    assert result.details == {"created": True, "bytes_written": 7, "encoding": "utf-8", "bom": False}
    assert result.is_error is False
    assert (tmp_path / "hello.txt").read_bytes() == "héllo\n".encode()


def test_overwrite_reports_patch_and_first_changed_line(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_bytes(b"one\ntwo\nthree\n")
    result = _write(tmp_path, "notes.txt", "one\nTWO\nthree\n")
    assert result.text == "Successfully wrote 14 bytes to notes.txt (overwrote existing file)"
    assert result.details == {
        "created": False,
        "bytes_written": 14,
        "encoding": "utf-8",
        "bom": False,
        "patch": "--- notes.txt\n+++ notes.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
        "firstChangedLine": 2,
    }
    assert (tmp_path / "notes.txt").read_bytes() == b"one\nTWO\nthree\n"


def test_overwrite_with_identical_content_has_header_only_patch_and_no_first_changed_line(tmp_path: Path) -> None:
    (tmp_path / "same.txt").write_bytes(b"x\n")
    result = _write(tmp_path, "same.txt", "x\n")
    assert result.text == "Successfully wrote 2 bytes to same.txt (overwrote existing file)"
    assert result.details == {
        "created": False,
        "bytes_written": 2,
        "encoding": "utf-8",
        "bom": False,
        "patch": "--- same.txt\n+++ same.txt\n",
    }


def test_message_echoes_the_callers_path_string(tmp_path: Path) -> None:
    result = _write(tmp_path, "@./sub/../a.txt", "a")
    assert result.text == "Successfully wrote 1 bytes to @./sub/../a.txt"
    assert (tmp_path / "a.txt").read_bytes() == b"a"


def test_absolute_path_is_written_and_echoed(tmp_path: Path) -> None:
    target = tmp_path / "abs.txt"
    result = _write(tmp_path / "elsewhere", str(target), "z")
    assert result.text == f"Successfully wrote 1 bytes to {target}"
    assert target.read_bytes() == b"z"


def test_missing_parent_directories_are_created(tmp_path: Path) -> None:
    result = _write(tmp_path, "a/b/c/deep.txt", "deep\n")
    assert result.text == "Successfully wrote 5 bytes to a/b/c/deep.txt"
    assert (tmp_path / "a" / "b" / "c" / "deep.txt").read_bytes() == b"deep\n"


def test_utf8_bom_file_keeps_its_bom_when_content_has_none(tmp_path: Path) -> None:
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbfold\n")
    result = _write(tmp_path, "bom.txt", "new\n")
    assert result.text == "Successfully wrote 7 bytes to bom.txt (overwrote existing file)"
    assert result.details == {
        "created": False,
        "bytes_written": 7,
        "encoding": "utf-8",
        "bom": True,
        "patch": "--- bom.txt\n+++ bom.txt\n@@ -1,1 +1,1 @@\n-old\n+new\n",
        "firstChangedLine": 1,
    }
    assert (tmp_path / "bom.txt").read_bytes() == b"\xef\xbb\xbfnew\n"


def test_leading_feff_in_content_gives_a_new_file_a_bom(tmp_path: Path) -> None:
    result = _write(tmp_path, "new.txt", "\ufeffhi\n")
    assert result.text == "Successfully wrote 6 bytes to new.txt"
    assert result.details == {"created": True, "bytes_written": 6, "encoding": "utf-8", "bom": True}
    assert (tmp_path / "new.txt").read_bytes() == b"\xef\xbb\xbfhi\n"


def test_bom_file_and_bom_content_do_not_double_the_bom(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_bytes(b"\xef\xbb\xbfa\n")
    result = _write(tmp_path, "b.txt", "\ufeffa\n")
    assert (tmp_path / "b.txt").read_bytes() == b"\xef\xbb\xbfa\n"
    assert result.details is not None
    assert result.details["bom"] is True
    assert result.details["patch"] == "--- b.txt\n+++ b.txt\n"


def test_utf16le_file_stays_utf16le_with_bom_and_counts_encoded_bytes(tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_bytes(b"\xff\xfe" + "old line\n".encode("utf-16-le"))
    result = _write(tmp_path, "wide.txt", "héllo 😀\n")
    expected = b"\xff\xfe" + "héllo 😀\n".encode("utf-16-le")
    assert len(expected) == 20
    assert result.text == "Successfully wrote 20 bytes to wide.txt (overwrote existing file)"
    assert result.details == {
        "created": False,
        "bytes_written": 20,
        "encoding": "utf16le",
        "bom": True,
        "patch": "--- wide.txt\n+++ wide.txt\n@@ -1,1 +1,1 @@\n-old line\n+héllo 😀\n",
        "firstChangedLine": 1,
    }
    assert (tmp_path / "wide.txt").read_bytes() == expected


def test_big_endian_bom_is_not_detected(tmp_path: Path) -> None:
    # FE FF is not a recognised BOM: the file counts as UTF-8, and its NUL bytes make it binary.
    (tmp_path / "be.txt").write_bytes(b"\xfe\xff" + "ab\n".encode("utf-16-be"))
    result = _write(tmp_path, "be.txt", "ab\n")
    assert result.text == "Successfully wrote 3 bytes to be.txt (overwrote existing file)"
    assert result.details == {
        "created": False,
        "bytes_written": 3,
        "encoding": "utf-8",
        "bom": False,
        "capture_skipped": "binary",
    }
    assert (tmp_path / "be.txt").read_bytes() == b"ab\n"


def test_binary_old_file_skips_capture(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"PK\x03\x04\x00\x00data")
    result = _write(tmp_path, "blob.bin", "text\n")
    assert result.text == "Successfully wrote 5 bytes to blob.bin (overwrote existing file)"
    assert result.details == {
        "created": False,
        "bytes_written": 5,
        "encoding": "utf-8",
        "bom": False,
        "capture_skipped": "binary",
    }


def test_nul_after_the_first_4096_bytes_is_not_binary(tmp_path: Path) -> None:
    (tmp_path / "late.txt").write_bytes(b"a\n" * 2048 + b"\x00\n")
    result = _write(tmp_path, "late.txt", "a\n")
    assert result.details is not None
    assert "capture_skipped" not in result.details
    assert result.details["firstChangedLine"] == 2


def test_old_file_over_1_mib_skips_capture_but_keeps_its_bom(tmp_path: Path) -> None:
    (tmp_path / "huge.txt").write_bytes(b"\xef\xbb\xbf" + b"x" * MIB)
    result = _write(tmp_path, "huge.txt", "small\n")
    assert result.text == "Successfully wrote 9 bytes to huge.txt (overwrote existing file)"
    assert result.details == {
        "created": False,
        "bytes_written": 9,
        "encoding": "utf-8",
        "bom": True,
        "capture_skipped": "too_large",
    }
    assert (tmp_path / "huge.txt").read_bytes() == b"\xef\xbb\xbfsmall\n"


def test_old_file_of_exactly_1_mib_is_captured(tmp_path: Path) -> None:
    (tmp_path / "edge.txt").write_bytes(b"y\n" * (MIB // 2))
    result = _write(tmp_path, "edge.txt", "z\n" + "y\n" * (MIB // 2 - 1))
    assert result.details is not None
    assert "capture_skipped" not in result.details
    # jsdiff keeps the run of equal lines together: it adds z first and removes the last y.
    assert result.details["patch"] == (
        "--- edge.txt\n+++ edge.txt\n@@ -1,4 +1,5 @@\n+z\n y\n y\n y\n y\n"
        "@@ -524284,5 +524285,4 @@\n y\n y\n y\n y\n-y\n"
    )
    assert result.details["firstChangedLine"] == 1


def test_new_body_over_1_mib_omits_the_patch(tmp_path: Path) -> None:
    (tmp_path / "grow.txt").write_bytes(b"a\n")
    content = "b" * MIB + "\n"
    result = _write(tmp_path, "grow.txt", content)
    assert result.text == f"Successfully wrote {MIB + 1} bytes to grow.txt (overwrote existing file)"
    assert result.details == {
        "created": False,
        "bytes_written": MIB + 1,
        "encoding": "utf-8",
        "bom": False,
        "patch_omitted": "too_large",
    }


def test_patch_over_256_k_chars_is_omitted(tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_bytes(b"a\n")
    content = "x" * (256 * 1024) + "\n"
    result = _write(tmp_path, "long.txt", content)
    assert result.details is not None
    assert result.details["patch_omitted"] == "too_large"
    assert "patch" not in result.details
    assert "firstChangedLine" not in result.details


def test_patch_just_under_256_k_chars_is_kept(tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_bytes(b"a\n")
    header = "--- long.txt\n+++ long.txt\n@@ -1,1 +1,1 @@\n-a\n+"
    content = "x" * (256 * 1024 - len(header) - 1) + "\n"
    result = _write(tmp_path, "long.txt", content)
    assert result.details is not None
    assert len(result.details["patch"]) == 256 * 1024
    assert result.details["firstChangedLine"] == 1


def test_slow_diff_omits_the_patch_as_timeout(tmp_path: Path) -> None:
    (tmp_path / "slow.txt").write_text("".join(f"old {i}\n" for i in range(3000)))
    profile = REFERENCE.replace(write_diff_timeout_ms=1)
    result = _write(tmp_path, "slow.txt", "".join(f"new {i}\n" for i in range(3000)), profile)
    assert result.details is not None
    assert result.details["patch_omitted"] == "timeout"
    assert (tmp_path / "slow.txt").read_text().startswith("new 0\n")


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root can read a mode-0200 file")
def test_unreadable_old_file_falls_back_to_the_engine_text_with_empty_details(tmp_path: Path) -> None:
    target = tmp_path / "wo.txt"
    target.write_bytes(b"\xef\xbb\xbfsecret\n")
    target.chmod(0o200)
    result = _write(tmp_path, "wo.txt", "😀\n")
    assert result.text == "Successfully wrote 3 bytes to wo.txt"
    assert result.details == {}
    target.chmod(0o600)
    assert target.read_bytes() == "😀\n".encode()


def test_write_follows_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_bytes(b"before\n")
    (tmp_path / "link.txt").symlink_to("real.txt")
    result = _write(tmp_path, "link.txt", "after\n")
    assert result.text == "Successfully wrote 6 bytes to link.txt (overwrote existing file)"
    assert (tmp_path / "link.txt").is_symlink()
    assert (tmp_path / "real.txt").read_bytes() == b"after\n"


def test_directory_target_raises_eisdir(tmp_path: Path) -> None:
    (tmp_path / "adir").mkdir()
    with pytest.raises(ToolError) as info:
        _write(tmp_path, "adir", "x")
    assert str(info.value) == f"EISDIR: illegal operation on a directory, open '{tmp_path / 'adir'}'"


def test_file_as_parent_raises_eexist_for_mkdir(tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(ToolError) as info:
        _write(tmp_path, "file/child.txt", "x")
    assert str(info.value) == f"EEXIST: file already exists, mkdir '{tmp_path / 'file'}'"


def test_file_as_grandparent_raises_enotdir_like_node(tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(ToolError) as info:
        _write(tmp_path, "file/sub/child.txt", "x")
    assert str(info.value) == f"ENOTDIR: not a directory, mkdir '{tmp_path / 'file' / 'sub'}'"


def test_aborted_call_raises_operation_aborted_and_writes_nothing(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    ctx.abort.set()
    with pytest.raises(ToolAborted) as info:
        execute({"path": "a.txt", "content": "x"}, ctx)
    assert str(info.value) == "Operation aborted"
    assert not (tmp_path / "a.txt").exists()


# ---------------------------------------------------------------------------------------------
# Upstream pi (wrapper off)


def test_upstream_counts_utf16_code_units_and_has_no_details(tmp_path: Path) -> None:
    result = _write(tmp_path, "emoji.txt", "😀é\n", UPSTREAM_PI)
    assert result.text == "Successfully wrote 4 bytes to emoji.txt"
    assert result.details is None
    assert (tmp_path / "emoji.txt").read_bytes() == "😀é\n".encode()


def test_upstream_overwrite_drops_bom_and_utf16_encoding(tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_bytes(b"\xff\xfe" + "old\n".encode("utf-16-le"))
    result = _write(tmp_path, "wide.txt", "new\n", UPSTREAM_PI)
    assert result.text == "Successfully wrote 4 bytes to wide.txt"
    assert result.details is None
    assert (tmp_path / "wide.txt").read_bytes() == b"new\n"


def test_upstream_creates_parents_and_raises_the_same_os_errors(tmp_path: Path) -> None:
    assert _write(tmp_path, "x/y.txt", "", UPSTREAM_PI).text == "Successfully wrote 0 bytes to x/y.txt"
    with pytest.raises(ToolError) as info:
        _write(tmp_path, "x", "", UPSTREAM_PI)
    assert str(info.value) == f"EISDIR: illegal operation on a directory, open '{tmp_path / 'x'}'"


def test_lone_surrogates_are_written_as_replacement_characters(tmp_path: Path) -> None:
    result = _write(tmp_path, "s.txt", "a\ud800b")
    assert result.text == "Successfully wrote 5 bytes to s.txt"
    assert (tmp_path / "s.txt").read_bytes() == b"a\xef\xbf\xbdb"


# ---------------------------------------------------------------------------------------------
# Properties

_OLD_ENCODINGS = {
    "utf-8": b"",
    "utf-8-bom": b"\xef\xbb\xbf",
    "utf16le": b"\xff\xfe",
}
_CONTENT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40).map(
    lambda s: s if s[:1] != "\ufeff" else s[1:]
) | st.text(max_size=10).map(lambda s: "\ufeff" + s.replace("\ud800", ""))


@given(st.sampled_from(sorted(_OLD_ENCODINGS)), st.text(st.characters(exclude_categories=("Cs",)), max_size=20), _CONTENT)
def test_a_bom_stays_a_bom_and_utf16le_stays_utf16le_after_any_write(kind: str, old: str, content: str) -> None:
    """Whatever is written, an old UTF-8 BOM is kept, an old UTF-16LE file stays UTF-16LE with its
    BOM, the body decodes back to the content without a leading U+FEFF, and bytes_written is the
    size on disk."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        prefix = _OLD_ENCODINGS[kind]
        old_bytes = prefix + (old.encode("utf-16-le") if kind == "utf16le" else old.replace("\x00", "").encode())
        (root / "f.txt").write_bytes(old_bytes)
        result = _write(root, "f.txt", content)
        data = (root / "f.txt").read_bytes()
        body = content[1:] if content.startswith("\ufeff") else content
        assert result.details is not None
        assert result.details["bytes_written"] == len(data)
        assert result.text == f"Successfully wrote {len(data)} bytes to f.txt (overwrote existing file)"
        if kind == "utf16le":
            assert data[:2] == b"\xff\xfe"
            assert data[2:].decode("utf-16-le") == body
            assert result.details["encoding"] == "utf16le"
        else:
            has_bom = kind == "utf-8-bom" or content.startswith("\ufeff")
            assert data == (b"\xef\xbb\xbf" if has_bom else b"") + body.encode()
            assert result.details["encoding"] == "utf-8"
            assert result.details["bom"] is has_bom
