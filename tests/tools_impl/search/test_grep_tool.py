"""The grep tool (spec grep) against real fixture trees and the real ripgrep."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools_impl.core.context import make_context
from tools_impl.core.errors import ToolError
from tools_impl.core.profile import REFERENCE, Profile
from tools_impl.core.result import ToolResult
from tools_impl.search import grep_tool as grep
from tools_impl.search.grep_tool import (
    BYTE_CAP_FOOTER,
    ContentLine,
    ContentPage,
    GrepInputs,
    build_grep_argv,
    cap_content,
    normalise_inputs,
    page_content,
    user_glob_args,
)

SCAN = [
    "--iglob=!**/.worktrees/**", "--iglob=!**/node_modules/**", "--iglob=!**/.pnpm-store/**",
    "--iglob=!**/.venv/**", "--iglob=!**/venv/**", "--iglob=!**/build_env/**", "--iglob=!**/__pycache__/**",
    "--iglob=!**/.pytest_cache/**", "--iglob=!**/.mypy_cache/**", "--iglob=!**/.ruff_cache/**",
    "--iglob=!**/.tox/**", "--iglob=!**/.nox/**", "--iglob=!**/.gradle/**", "--iglob=!**/.cache/**",
    "--iglob=!**/dist/**", "--iglob=!**/build/**", "--iglob=!**/out/**", "--iglob=!**/coverage/**",
]
SENSITIVE = [
    "--iglob=!**/.git/**", "--iglob=!**/.svn/**", "--iglob=!**/.hg/**", "--iglob=!**/.bzr/**",
    "--iglob=!**/.jj/**", "--iglob=!**/.sl/**", "--iglob=!.env", "--iglob=!.env.*", "--iglob=!*.key",
    "--iglob=!*.pem", "--iglob=!*.p12", "--iglob=!*.pfx", "--iglob=!**/.ssh/**", "--iglob=!**/.aws/**",
    "--iglob=!**/.kube/**", "--iglob=!.npmrc", "--iglob=!id_rsa", "--iglob=!id_dsa", "--iglob=!id_ecdsa",
    "--iglob=!id_ed25519",
]
T0 = 1_700_000_000
FILES_HINT_ARGS = ["pattern", "path", "glob", "ignoreCase", "literal", "output_mode", "limit"]
CONTENT_HINT_ARGS = ["pattern", "path", "glob", "ignoreCase", "literal", "context", "output_mode", "limit"]


def call(root: Path, profile: Profile = REFERENCE, **args: object) -> ToolResult:
    return grep.execute(dict(args), make_context(str(root), profile=profile))


def write(root: Path, rel: str, data: str | bytes, mtime: int | None = None) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        p.write_bytes(data)
    else:
        p.write_text(data)
    if mtime is not None:
        os.utime(p, (mtime, mtime))
    return p


def make_tree(root: Path, *, git: bool) -> Path:
    if git:
        if shutil.which("git") is None:
            pytest.skip("git is not installed")
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        write(root, ".git/needle.txt", "needle in git metadata\n")
    else:
        # A .git entry would make ripgrep treat the tree as a repository; use other VCS dirs.
        write(root, ".svn/needle.txt", "needle in svn metadata\n")
        write(root, ".hg/needle.txt", "needle in hg metadata\n")
    write(root, "src/app.py", "needle one\n", T0 + 300)
    write(root, "src/util.py", "x\nneedle two\nNEEDLE three\n", T0 + 200)
    write(root, ".hidden.txt", "needle hidden\n", T0 + 100)
    write(root, "ignored.txt", "needle ignored\n", T0 + 100)
    write(root, ".gitignore", "ignored.txt\n")
    write(root, "node_modules/pkg/index.js", "needle in dep\n")
    write(root, ".env", "needle=secret\n")
    write(root, "id_rsa", "needle key\n")
    write(root, ".ssh/config", "needle ssh\n")
    write(root, "blob.bin", b"\x00\x00\x01needle binary\x00")
    write(root, "big.txt", "needle\n" + "y" * (1024 * 1024 + 10) + "\n")
    return root


# ---------------------------------------------------------------------------------------------
# argv (observable, exact)


def test_argv_for_files_with_matches_default() -> None:
    inp = normalise_inputs({"pattern": "foo"})
    assert build_grep_argv(inp, ".") == [
        "--no-config", "--no-messages", "--hidden", "--max-filesize=1M", "-l", *SCAN, *SENSITIVE, "--", "foo", ".",
    ]


def test_argv_for_content_with_every_option() -> None:
    inp = normalise_inputs({"pattern": "-x", "output_mode": "content", "ignoreCase": True, "literal": True,
                            "context": 2.7, "limit": 10.9, "offset": 5.5, "glob": "*.ts, *.js"})
    assert build_grep_argv(inp, "a.txt") == [
        "--no-config", "--no-messages", "--hidden", "--max-filesize=1M", "--with-filename", "--line-number",
        "--null", "--max-count=16", "--ignore-case", "--fixed-strings", "--context=2", "--glob=*.ts",
        "--glob=*.js", *SCAN, *SENSITIVE, "--", "-x", "a.txt",
    ]


def test_argv_for_count_mode_ignores_context() -> None:
    inp = normalise_inputs({"pattern": "p", "output_mode": "count", "context": 3})
    assert build_grep_argv(inp, ".") == [
        "--no-config", "--no-messages", "--hidden", "--max-filesize=1M", "--count-matches", "--with-filename",
        *SCAN, *SENSITIVE, "--", "p", ".",
    ]


def test_user_glob_with_brace_is_one_trimmed_glob() -> None:
    assert user_glob_args("  *.{ts,js} ") == ["--glob=*.{ts,js}"]
    assert user_glob_args("*.ts,*.js  src/**") == ["--glob=*.ts", "--glob=*.js", "--glob=src/**"]
    assert user_glob_args(None) == []


def test_inputs_are_normalised() -> None:
    inp = normalise_inputs({"pattern": "p", "limit": 0, "offset": -3, "context": 4})
    assert inp == GrepInputs("p", None, None, "files_with_matches", False, False, 0, 1, 0)


# ---------------------------------------------------------------------------------------------
# files_with_matches


def test_gitignore_is_honoured_inside_a_git_repo(tmp_path: Path) -> None:
    make_tree(tmp_path, git=True)
    res = call(tmp_path, pattern="needle")
    assert res.text == "Found 3 files\nsrc/app.py\nsrc/util.py\n.hidden.txt"
    assert res.details == {"files": 3}
    assert res.is_error is False


def test_gitignore_is_not_honoured_outside_a_git_repo(tmp_path: Path) -> None:
    make_tree(tmp_path, git=False)
    res = call(tmp_path, pattern="needle")
    # .env, id_rsa, .ssh/, .svn/, .hg/, node_modules/, binary and >1M files stay out either way.
    assert res.text == "Found 4 files\nsrc/app.py\nsrc/util.py\n.hidden.txt\nignored.txt"


def test_files_are_paged_with_continuation_metadata(tmp_path: Path) -> None:
    make_tree(tmp_path, git=False)
    first = call(tmp_path, pattern="needle", limit=2)
    assert first.text == (
        "Found 4 files (showing 1-2)\nsrc/app.py\nsrc/util.py\n\n[More available. If the omitted remainder is "
        "needed, use offset=2 with the same search arguments and output_mode.]"
    )
    assert first.details == {
        "files": 4,
        "truncated": True,
        "desktop_output_continuation": {
            "has_more": True,
            "next_offset": 2,
            "offset_unit": "file",
            "continuation_hint": {
                "tool": "grep",
                "preserve_args": FILES_HINT_ARGS,
                "instruction": "If the omitted remainder is needed, call grep again with offset=2; preserve the "
                "same search arguments and output_mode.",
            },
        },
    }
    second = call(tmp_path, pattern="needle", limit=2, offset=2)
    assert second.text == "Found 4 files (showing 3-4)\n.hidden.txt\nignored.txt"
    assert second.details == {"files": 4}
    beyond = call(tmp_path, pattern="needle", limit=2, offset=4)
    assert beyond.text == "Found 4 files (offset 4 is beyond the end)"


def test_sort_by_name_only_switch_ignores_mtimes(tmp_path: Path) -> None:
    make_tree(tmp_path, git=False)
    res = call(tmp_path, REFERENCE.replace(sort_by_name_only=True), pattern="needle")
    assert res.text == "Found 4 files\n.hidden.txt\nignored.txt\nsrc/app.py\nsrc/util.py"


def test_path_inside_an_excluded_directory_is_searched(tmp_path: Path) -> None:
    make_tree(tmp_path, git=False)
    res = call(tmp_path, pattern="needle", path="node_modules/pkg")
    assert res.text == "Found 1 files\nindex.js"


@pytest.mark.parametrize("sensitive", [".ssh", ".svn", "src/../.ssh/"])
def test_sensitive_search_root_reports_no_matches_without_searching(tmp_path: Path, sensitive: str) -> None:
    make_tree(tmp_path, git=False)
    res = call(tmp_path, pattern="needle", path=sensitive)
    assert res.text == "No matches found"
    assert res.is_error is False


def test_file_path_as_search_root(tmp_path: Path) -> None:
    make_tree(tmp_path, git=False)
    assert call(tmp_path, pattern="needle", path="src/util.py").text == "Found 1 files\nutil.py"
    absolute = str(tmp_path / "src" / "util.py")
    assert call(tmp_path, pattern="NEEDLE", path=absolute).text == "Found 1 files\nutil.py"


def test_no_match_exit_one_is_plain_text(tmp_path: Path) -> None:
    make_tree(tmp_path, git=False)
    res = call(tmp_path, pattern="zzz-not-there")
    assert res.text == "No matches found"
    assert res.is_error is False


def test_missing_path_raises(tmp_path: Path) -> None:
    with pytest.raises(ToolError) as err:
        call(tmp_path, pattern="x", path="nope/deeper")
    assert str(err.value) == f"grep path does not exist: {tmp_path / 'nope' / 'deeper'}"


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs are POSIX")
def test_fifo_search_root_raises(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(ToolError) as err:
        call(tmp_path, pattern="x", path="pipe")
    assert str(err.value) == f"grep path must be a file or directory: {tmp_path / 'pipe'}"


def test_empty_pattern_raises(tmp_path: Path) -> None:
    with pytest.raises(ToolError) as err:
        call(tmp_path, pattern="")
    assert str(err.value) == "grep pattern is required"


def test_invalid_regex_returns_is_error_with_summary(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "foo(\n")
    res = call(tmp_path, pattern="foo(")
    assert res.is_error is True
    assert res.text == (
        "Invalid search pattern: unclosed group. Escape regex special characters (for example, use `\\(` for a "
        "literal parenthesis) or use `literal=true` for one exact string."
    )
    assert res.details is not None
    assert res.details["error_code"] == "invalid_regex"
    assert res.details["exit_code"] == 2
    assert "regex parse error:" in res.details["stderr"]
    assert res.details["stderr"].rstrip("\n").endswith("error: unclosed group")


def test_literal_treats_pattern_as_one_fixed_string(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "abc\na.c\nfoo(\n")
    assert call(tmp_path, pattern="a.c", output_mode="content").text == "a.txt:1:abc\na.txt:2:a.c"
    assert call(tmp_path, pattern="a.c", literal=True, output_mode="content").text == "a.txt:2:a.c"
    assert call(tmp_path, pattern="foo(", literal=True, output_mode="content").text == "a.txt:3:foo("


def test_ignore_case(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "Needle\nneedle\nNEEDLE\n")
    assert call(tmp_path, pattern="needle", output_mode="count").text == (
        "a.txt:1\n\nFound 1 total occurrence across 1 file."
    )
    assert call(tmp_path, pattern="needle", output_mode="count", ignoreCase=True).text == (
        "a.txt:3\n\nFound 3 total occurrences across 1 file."
    )


def test_user_glob_filters_files_and_cannot_reinclude_sensitive(tmp_path: Path) -> None:
    make_tree(tmp_path, git=False)
    assert call(tmp_path, pattern="needle", glob="*.py").text == "Found 2 files\nsrc/app.py\nsrc/util.py"
    assert call(tmp_path, pattern="needle", glob=".env").text == "No matches found"


# ---------------------------------------------------------------------------------------------
# count


def test_count_mode_totals_and_paging(tmp_path: Path) -> None:
    make_tree(tmp_path, git=False)
    res = call(tmp_path, pattern="needle", output_mode="count", ignoreCase=True)
    lines, footer = res.text.split("\n\n")
    assert sorted(lines.split("\n")) == [".hidden.txt:1", "ignored.txt:1", "src/app.py:1", "src/util.py:2"]
    assert footer == "Found 5 total occurrences across 4 files."
    assert res.details == {"files": 4, "matches": 5}
    paged = call(tmp_path, pattern="needle", output_mode="count", ignoreCase=True, limit=3, offset=0)
    assert paged.text.endswith("\n\nFound 5 total occurrences across 4 files. [More entries — use offset=3]")
    assert paged.details == {"files": 4, "matches": 5, "truncated": True}
    last = call(tmp_path, pattern="needle", output_mode="count", ignoreCase=True, limit=3, offset=3)
    assert last.text.count("\n") == 2 and last.text.endswith("Found 5 total occurrences across 4 files.")


# ---------------------------------------------------------------------------------------------
# content


def test_content_pages_by_match_with_context_never_overlapping(tmp_path: Path) -> None:
    write(tmp_path, "c.txt", "a\nneedle 1\nb\nc\nneedle 2\nd\nneedle 3\ne\n")
    pages = [call(tmp_path, pattern="needle", path="c.txt", output_mode="content", context=1, limit=1, offset=o)
             for o in range(3)]
    assert pages[0].text == (
        "c.txt:1-a\nc.txt:2:needle 1\n\n[1 matches limit reached. More available — use offset=1, or refine pattern]"
    )
    assert pages[1].text == (
        "c.txt:3-b\nc.txt:4-c\nc.txt:5:needle 2\n\n"
        "[1 matches limit reached. More available — use offset=2, or refine pattern]"
    )
    assert pages[2].text == "c.txt:6-d\nc.txt:7:needle 3\nc.txt:8-e"
    assert call(tmp_path, pattern="needle", path="c.txt", output_mode="content", offset=3).text == "No matches found"


def test_content_groups_are_rejoined_with_separator(tmp_path: Path) -> None:
    write(tmp_path, "g.txt", "needle a\n1\n2\n3\n4\nneedle b\n5\n")
    res = call(tmp_path, pattern="needle", path="g.txt", output_mode="content", context=1)
    assert res.text == "g.txt:1:needle a\ng.txt:2-1\n--\ng.txt:5-4\ng.txt:6:needle b\ng.txt:7-5"
    second = call(tmp_path, pattern="needle", path="g.txt", output_mode="content", context=1, offset=1)
    assert second.text == "g.txt:5-4\ng.txt:6:needle b\ng.txt:7-5"


def test_context_is_ignored_outside_content_mode(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "needle\n")
    assert call(tmp_path, pattern="needle", context=3).text == "Found 1 files\na.txt"


def test_long_lines_are_cut_to_2000_chars(tmp_path: Path) -> None:
    write(tmp_path, "long.txt", "needle " + "x" * 2500 + "\n")
    res = call(tmp_path, pattern="needle", output_mode="content")
    rendered = "long.txt:1:needle " + "x" * 2500
    assert res.text == rendered[:2000] + "...\n\n[Some lines truncated to 2000 chars. Use read tool for full lines]"


def test_16k_cap_keeps_whole_lines_and_continues_by_retained_matches(tmp_path: Path) -> None:
    write(tmp_path, "m.txt", "".join(f"needle {i:04d} " + "z" * 100 + "\n" for i in range(1, 301)))
    res = call(tmp_path, pattern="needle", path="m.txt", output_mode="content", limit=300)
    body, notice = res.text.split("\n\n")
    lines = body.split("\n")
    retained = len(lines)
    assert lines == [f"m.txt:{i}:needle {i:04d} " + "z" * 100 for i in range(1, retained + 1)]
    assert len(res.text.encode()) <= 16 * 1024
    assert res.details is not None
    meta = res.details["desktop_output_truncation"]
    original = meta["original_bytes"]
    assert notice == (
        f"[desktop grep output truncated: original_bytes={original}; if the omitted remainder is needed, continue "
        f"with grep using offset={retained} and the same search arguments, or refine pattern/path/glob/context.]"
    )
    assert meta["strategy"] == "prefix_lines" and meta["max_bytes"] == 16384 and meta["next_offset"] == retained
    assert meta["offset_unit"] == "match"
    assert meta["continuation_hint"]["preserve_args"] == CONTENT_HINT_ARGS
    assert res.details["desktop_output_continuation"]["next_offset"] == retained
    nxt = call(tmp_path, pattern="needle", path="m.txt", output_mode="content", limit=300, offset=retained)
    assert nxt.text.split("\n")[0] == f"m.txt:{retained + 1}:needle {retained + 1:04d} " + "z" * 100


def test_256kb_parser_cap_reported_as_warning_in_16k_notice(tmp_path: Path) -> None:
    write(tmp_path, "w.txt", "".join(f"needle {'w' * 300}\n" for _ in range(1200)))
    res = call(tmp_path, pattern="needle", path="w.txt", output_mode="content", limit=1000)
    assert "; 1000 matches limit reached; 256KB parser limit reached; if the omitted remainder" in res.text
    assert res.details is not None
    # original_bytes counts the parser-capped body plus its notices.
    assert 250 * 1024 < res.details["desktop_output_truncation"]["original_bytes"] <= 256 * 1024 + 200


def test_git_metadata_root_is_sensitive_inside_a_repo(tmp_path: Path) -> None:
    make_tree(tmp_path, git=True)
    assert call(tmp_path, pattern="needle", path=".git").text == "No matches found"
    assert call(tmp_path, pattern="needle", path=str(tmp_path / ".git") + "/").text == "No matches found"


def test_leading_context_is_dropped_when_no_match_would_fit(tmp_path: Path) -> None:
    write(tmp_path, "lc.txt", "".join("c" * 1990 + "\n" for _ in range(10)) + "needle here\n")
    res = call(tmp_path, pattern="needle", path="lc.txt", output_mode="content", context=10)
    assert res.text.startswith("lc.txt:11:needle here\n\n[desktop grep output truncated: original_bytes=")
    assert "leading context was omitted to keep pagination progressing; if the omitted" in res.text
    assert "continue with grep using offset=1 " in res.text


def test_byte_safety_cap_footer_and_flag(tmp_path: Path) -> None:
    for i in range(200):
        write(tmp_path, f"f{i:03d}.txt", "needle\n")
    res = call(tmp_path, REFERENCE.replace(rg_max_stdout_bytes=300), pattern="needle")
    assert res.text.endswith(BYTE_CAP_FOOTER)
    assert res.text.startswith("Found ")
    assert res.details is not None and res.details["stdoutTruncated"] is True


# ---------------------------------------------------------------------------------------------
# pure content pager


def test_page_content_slices_context_between_matches_to_the_later_match() -> None:
    out = "a\x001-x\na\x002:m1\na\x003-y\na\x004:m2\na\x005-z\n--\nb\x001:m3\n"
    page = page_content(out, 1, 1)
    assert [ln.text for ln in page.lines] == ["a:3-y", "a:4:m2", "a:5-z"]
    assert page.limit_reached is True
    page2 = page_content(out, 1, 2)
    assert [ln.text for ln in page2.lines] == ["a:3-y", "a:4:m2", "a:5-z", "--", "b:1:m3"]
    assert page2.limit_reached is False


def test_cap_content_returns_text_unchanged_under_the_cap() -> None:
    page = ContentPage((ContentLine("a:1:m", True),), False, False, False)
    capped = cap_content(page, "a:1:m", 0, 10, 16384, False)
    assert capped.truncated is False and capped.text == "a:1:m"


def test_cap_content_mentions_ripgrep_safety_cap() -> None:
    lines = tuple(ContentLine(f"f:{i}:" + "m" * 50, True) for i in range(10))
    page = ContentPage(lines, False, False, False)
    full = "\n".join(ln.text for ln in lines)
    capped = cap_content(page, full, 0, 10, 400, True)
    assert capped.truncated is True
    assert "; ripgrep byte safety cap was reached; if the omitted" in capped.text
    assert len(capped.text.encode()) <= 400
    assert capped.text.startswith("f:0:")
