"""Workspace path resolution (spec common.3, spec read.3, spec ripgrep)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tools_impl.core.errors import ToolError
from tools_impl.shared.paths import (
    engine_resolve,
    engine_resolve_read,
    expand_tilde,
    search_root,
    wrapper_resolve,
)

ROOT = "/ws/root"
HOME = "/home/u"


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("a.txt", "/ws/root/a.txt"),
        ("@a.txt", "/ws/root/a.txt"),
        ("@@a.txt", "/ws/root/@a.txt"),
        ("/abs/../x", "/x"),
        ("~", HOME),
        ("~/notes.md", "/home/u/notes.md"),
        ("~draft.md", "/ws/root/~draft.md"),
        ("file:///tmp/a%20b.txt", "/tmp/a b.txt"),
        ("my\u00a0file.txt", "/ws/root/my file.txt"),
        ("x\u3000y", "/ws/root/x y"),
        ("sub/./dir/../f", "/ws/root/sub/f"),
    ],
)
def test_engine_resolution_rules(given: str, expected: str) -> None:
    assert engine_resolve(given, ROOT, HOME) == expected


def test_engine_resolution_rejects_a_file_url_with_a_host() -> None:
    with pytest.raises(ToolError):
        engine_resolve("file://server/share/x", ROOT, HOME)


def test_tilde_backslash_only_on_windows() -> None:
    assert expand_tilde("~\\x", HOME) == "~\\x"
    assert expand_tilde("~\\x", "C:\\Users\\u", windows=True) == "C:\\Users\\u\\x"


def test_engine_read_tries_macos_variants_in_order(tmp_path: Path) -> None:
    shot = "Screenshot 2024-01-01 at 10.00.00\u202fAM.png"
    (tmp_path / shot).write_bytes(b"x")
    assert engine_resolve_read("Screenshot 2024-01-01 at 10.00.00 AM.png", str(tmp_path), HOME) == str(tmp_path / shot)
    curly = "it\u2019s.txt"
    (tmp_path / curly).write_text("x")
    assert engine_resolve_read("it's.txt", str(tmp_path), HOME) == str(tmp_path / curly)
    missing = engine_resolve_read("nope's.txt", str(tmp_path), HOME)
    assert missing == str(tmp_path / "nope's.txt")


def test_wrapper_prefers_the_literal_path_with_special_spaces(tmp_path: Path) -> None:
    literal = tmp_path / "a\u00a0b.txt"
    literal.write_text("x")
    assert wrapper_resolve("a\u00a0b.txt", str(tmp_path), HOME) == str(literal)
    # the engine would normalise the special space first and miss it
    assert engine_resolve("a\u00a0b.txt", str(tmp_path), HOME) == str(tmp_path / "a b.txt")


def test_wrapper_falls_back_to_normalised_then_nfd(tmp_path: Path) -> None:
    nfd_name = "cafe\u0301.txt"
    (tmp_path / nfd_name).write_text("x")
    got = wrapper_resolve("@caf\u00e9.txt", str(tmp_path), HOME)
    assert got == os.path.join(str(tmp_path), nfd_name)


def test_search_root_blank_absolute_relative() -> None:
    assert search_root(None, ROOT) == ROOT
    assert search_root("  ", ROOT) == ROOT
    assert search_root("/etc/../tmp", ROOT) == "/tmp"
    assert search_root("src", ROOT) == "/ws/root/src"
