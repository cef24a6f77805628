"""The glob tool (spec glob) against real fixture trees and the real ripgrep."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tools_impl.core.context import make_context
from tools_impl.core.errors import ToolError
from tools_impl.core.profile import REFERENCE, Profile
from tools_impl.core.result import ToolResult
from tools_impl.search import glob_tool as glob
from tools_impl.search.glob_tool import (
    TRUNCATED_BEFORE_PAGE,
    build_glob_argv,
    is_exact_file,
    line_regex,
    split_absolute_pattern,
    static_dir_prefix,
)

SCAN_NAMES = [
    ".worktrees", "node_modules", ".pnpm-store", ".venv", "venv", "build_env", "__pycache__", ".pytest_cache",
    ".mypy_cache", ".ruff_cache", ".tox", ".nox", ".gradle", ".cache", "dist", "build", "out", "coverage",
]
SCAN = [f"--iglob=!**/{n}/**" for n in SCAN_NAMES]
BROAD = [
    "--iglob=!*.{png,jpg,jpeg,gif,webp,bmp,ico,tif,tiff,heic,avif,svgz}",
    "--iglob=!*.{mp3,wav,flac,aac,ogg,m4a,mp4,mov,avi,mkv,webm}",
    "--iglob=!*.{zip,tar,gz,tgz,bz2,xz,7z,rar}",
    "--iglob=!*.{exe,dll,so,dylib,a,o,class,jar,wasm,pyc,pyo,ttf,otf,woff,woff2,eot}",
    "--iglob=!*.{sqlite,sqlite3,db,safetensors,ckpt,onnx,pt,pth,bin,pdf}",
]
SENSITIVE = [
    "--iglob=!**/.git/**", "--iglob=!**/.svn/**", "--iglob=!**/.hg/**", "--iglob=!**/.bzr/**",
    "--iglob=!**/.jj/**", "--iglob=!**/.sl/**", "--iglob=!.env", "--iglob=!.env.*", "--iglob=!*.key",
    "--iglob=!*.pem", "--iglob=!*.p12", "--iglob=!*.pfx", "--iglob=!**/.ssh/**", "--iglob=!**/.aws/**",
    "--iglob=!**/.kube/**", "--iglob=!.npmrc", "--iglob=!id_rsa", "--iglob=!id_dsa", "--iglob=!id_ecdsa",
    "--iglob=!id_ed25519",
]
BASE = ["--no-config", "--no-messages", "--files", "--hidden"]
T0 = 1_700_000_000


def call(root: Path, profile: Profile = REFERENCE, **args: object) -> ToolResult:
    return glob.execute(dict(args), make_context(str(root), profile=profile))


def write(root: Path, rel: str, data: str | bytes = "x\n", mtime: int | None = None) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        p.write_bytes(data)
    else:
        p.write_text(data)
    if mtime is not None:
        os.utime(p, (mtime, mtime))


def make_tree(root: Path, *, git: bool) -> Path:
    if git:
        if shutil.which("git") is None:
            pytest.skip("git is not installed")
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    write(root, "src/app.py", mtime=T0 + 300)
    write(root, "src/util.py", mtime=T0 + 100)
    write(root, "src/deep/mod.py", mtime=T0 + 200)
    write(root, ".hidden.txt")
    write(root, "ignored.txt")
    write(root, "dist/bundle.js")
    write(root, ".gitignore", "ignored.txt\ndist/\n")
    write(root, "node_modules/pkg/index.js")
    write(root, ".env")
    write(root, "id_rsa")
    write(root, ".ssh/config")
    write(root, "logo.png", b"\x89PNG\r\n")
    write(root, "clip.mp4", b"\x00\x00")
    write(root, "big.txt", "y" * (1024 * 1024 + 10))
    return root


def sorted_lines(text: str) -> list[str]:
    return sorted(text.split("\n"))


# ---------------------------------------------------------------------------------------------
# pure pieces


def test_argv_for_a_broad_workspace_scan() -> None:
    argv = build_glob_argv(include_ignored=False, sort="none", narrow=False, exact_file=False,
                           requested_rel="", broad=True)
    assert argv == [*BASE, *SCAN, *BROAD, *SENSITIVE]


def test_argv_include_ignored_narrow_omits_scan_excludes() -> None:
    argv = build_glob_argv(include_ignored=True, sort="modified", narrow=True, exact_file=False,
                           requested_rel="dist", broad=False)
    assert argv == [*BASE, "--no-ignore", "--sortr=modified", *SENSITIVE]


def test_argv_include_ignored_exact_file_keeps_scan_excludes() -> None:
    argv = build_glob_argv(include_ignored=True, sort="none", narrow=False, exact_file=True,
                           requested_rel="", broad=False)
    assert argv == [*BASE, "--no-ignore", *SCAN, *SENSITIVE]


def test_argv_drops_scan_names_that_are_segments_of_the_requested_root() -> None:
    argv = build_glob_argv(include_ignored=False, sort="none", narrow=True, exact_file=False,
                           requested_rel="node_modules/pkg/dist", broad=False)
    expected_scan = [f"--iglob=!**/{n}/**" for n in SCAN_NAMES if n not in ("node_modules", "dist")]
    assert argv == [*BASE, *expected_scan, *SENSITIVE]


@pytest.mark.parametrize(
    ("pattern", "root", "rest"),
    [
        ("/a/b/c.txt", "/a/b", "c.txt"),
        ("/a/*/c", "/a", "*/c"),
        ("/*.ts", "/", "*.ts"),
        ("/a/b/**/x.py", "/a/b", "**/x.py"),
        ("/x", "/", "x"),
        ("/a/b/{c,d}.md", "/a/b", "{c,d}.md"),
        ("/a/@(b|c)/d", "/a", "@(b|c)/d"),
    ],
)
def test_absolute_pattern_split(pattern: str, root: str, rest: str) -> None:
    assert split_absolute_pattern(pattern) == (root, rest)


@pytest.mark.parametrize(("pattern", "root", "rest"), [
    ("/ws/src/*.ts", "/ws/src", "*.ts"),
    ("/ws/src/a.ts", "/ws/src", "a.ts"),
    ("/*.conf", "/", "*.conf"),                      # cut at index 0 → "/"
    ("/a.conf", "/", "a.conf"),
    ("/ws/{a,b}/x.ts", "/ws", "{a,b}/x.ts"),
    ("/ws/src/!(x).ts", "/ws/src", "!(x).ts"),       # extglob openers are magic
    ("/ws/src/+(x).ts", "/ws/src", "+(x).ts"),
    ("/ws/src/@(x).ts", "/ws/src", "@(x).ts"),
    ("/ws/a[0-9]/b.ts", "/ws", "a[0-9]/b.ts"),
    ("/ws/a?/b.ts", "/ws", "a?/b.ts"),
    ("C:/*.ts", "C:/", "*.ts"),                      # a bare drive gets its slash back
    ("C:\\src\\*.ts", "C:\\src", "*.ts"),
    ("C:\\*.ts", "C:/", "*.ts"),
    ("C:/a.ts", "C:/", "a.ts"),
])
def test_glob_absolute_pattern_split(pattern: str, root: str, rest: str) -> None:
    assert split_absolute_pattern(pattern) == (root, rest)


def test_static_prefix_and_exact_file() -> None:
    assert static_dir_prefix("src/**/*.ts") == "src"
    assert static_dir_prefix("src/a/b.ts") == "src/a"
    assert static_dir_prefix("*.ts") == ""
    assert is_exact_file("src/a.ts") and is_exact_file("a")
    assert not is_exact_file("src/") and not is_exact_file(".") and not is_exact_file("..")
    assert not is_exact_file("*.ts") and not is_exact_file("")


def test_line_regex_prefixes_globstar_only_without_slash() -> None:
    assert line_regex("*.py").search("src/deep/mod.py")
    assert not line_regex("src/*.py").search("src/deep/mod.py")
    assert line_regex("src/**/*.py").search("src/deep/mod.py")


# ---------------------------------------------------------------------------------------------
# listing


def test_gitignore_honoured_inside_git_repo_and_sensitive_media_excluded(tmp_path: Path) -> None:
    make_tree(tmp_path, git=True)
    res = call(tmp_path, pattern="**/*")
    assert sorted_lines(res.text) == [".gitignore", ".hidden.txt", "big.txt", "src/app.py", "src/deep/mod.py",
                                      "src/util.py"]
    assert res.details == {"matched": 6, "limit": 200, "offset": 0}


def test_gitignore_not_honoured_outside_git_repo(tmp_path: Path) -> None:
    make_tree(tmp_path, git=False)
    res = call(tmp_path, pattern="*.txt")
    assert sorted_lines(res.text) == [".hidden.txt", "big.txt", "ignored.txt"]


def test_media_files_are_listed_when_the_pattern_names_them(tmp_path: Path) -> None:
    make_tree(tmp_path, git=True)
    assert call(tmp_path, pattern="*.png").text == "logo.png"


def test_pattern_prefix_reaches_into_default_excluded_directory(tmp_path: Path) -> None:
    make_tree(tmp_path, git=True)
    assert call(tmp_path, pattern="node_modules/**/*.js").text == "node_modules/pkg/index.js"
    assert call(tmp_path, pattern="**/*.js").text == "No files matched"


def test_include_ignored_requires_narrow_scope(tmp_path: Path) -> None:
    make_tree(tmp_path, git=True)
    with pytest.raises(ToolError) as err:
        call(tmp_path, pattern="**/*.js", include_ignored=True)
    assert str(err.value) == (
        "include_ignored requires a narrow path, pattern prefix, or exact filename; narrow the search scope "
        "before inspecting ignored artifacts"
    )


def test_include_ignored_with_pattern_prefix_lists_ignored_files(tmp_path: Path) -> None:
    make_tree(tmp_path, git=True)
    assert call(tmp_path, pattern="dist/*.js").text == "No files matched"
    assert call(tmp_path, pattern="dist/*.js", include_ignored=True).text == "dist/bundle.js"
    assert call(tmp_path, pattern="*.js", path="dist", include_ignored=True).text == "bundle.js"


def test_include_ignored_with_exact_filename(tmp_path: Path) -> None:
    make_tree(tmp_path, git=True)
    assert call(tmp_path, pattern="ignored.txt").text == "No files matched"
    assert call(tmp_path, pattern="ignored.txt", include_ignored=True).text == "ignored.txt"


def test_sensitive_files_cannot_be_globbed(tmp_path: Path) -> None:
    make_tree(tmp_path, git=True)
    assert call(tmp_path, pattern=".env").text == "No files matched"
    assert call(tmp_path, pattern="id_rsa", include_ignored=True).text == "No files matched"
    assert call(tmp_path, pattern="*", path=".ssh").text == "No files matched"


def test_sort_modified_is_newest_first_and_pages(tmp_path: Path) -> None:
    make_tree(tmp_path, git=True)
    full = call(tmp_path, pattern="**/*.py", sort="modified")
    assert full.text == "src/app.py\nsrc/deep/mod.py\nsrc/util.py"
    first = call(tmp_path, pattern="**/*.py", sort="modified", limit=2)
    assert first.text == (
        "src/app.py\nsrc/deep/mod.py\n\n[Results truncated: showing 2 paths from offset 0. If the omitted "
        "remainder is needed, use offset=2 with the same search arguments. Refine path/pattern or pass "
        'sort="modified" to surface recently changed files]'
    )
    assert first.details == {
        "matched": 3, "limit": 2, "offset": 0, "truncated": True, "next_offset": 2,
        "desktop_output_continuation": {
            "has_more": True, "next_offset": 2, "offset_unit": "file",
            "continuation_hint": {
                "tool": "glob",
                "preserve_args": ["pattern", "path", "include_ignored", "limit", "sort"],
                "instruction": "If the omitted remainder is needed, call glob again with offset=2; preserve the same "
                "search arguments.",
            },
        },
    }
    second = call(tmp_path, pattern="**/*.py", sort="modified", limit=2, offset=2)
    assert second.text == "src/util.py"
    assert second.details == {"matched": 3, "limit": 2, "offset": 2}
    beyond = call(tmp_path, pattern="**/*.py", sort="modified", limit=2, offset=5)
    assert beyond.text == "No more files matched at offset 5"


def test_truncated_before_the_page_is_reached(tmp_path: Path) -> None:
    for i in range(100):
        write(tmp_path, f"file_{i:03d}.txt")
    res = call(tmp_path, REFERENCE.replace(rg_max_stdout_bytes=200), pattern="*.txt", offset=60)
    assert res.text == "No more files matched at offset 60" + TRUNCATED_BEFORE_PAGE
    assert res.details is not None
    details = dict(res.details)
    assert 0 < details.pop("matched") < 60
    assert details == {"limit": 200, "offset": 60, "truncated": True}


def test_absolute_pattern_inside_workspace_is_relativised(tmp_path: Path) -> None:
    make_tree(tmp_path, git=True)
    res = call(tmp_path, pattern=f"{tmp_path}/src/*.py")
    assert sorted_lines(res.text) == ["src/app.py", "src/util.py"]


def test_absolute_pattern_escaping_the_search_path_raises(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, "a.py")
    write(tmp_path, "other/b.py")
    with pytest.raises(ToolError) as err:
        call(ws, pattern=f"{tmp_path}/other/*.py")
    assert str(err.value) == (
        f"glob absolute pattern escapes the approved search path ({ws}); pass the directory via \"path\" so the "
        "permission gate can review it"
    )


def test_absolute_pattern_root_missing_raises(tmp_path: Path) -> None:
    with pytest.raises(ToolError) as err:
        call(tmp_path, pattern=f"{tmp_path}/missing/*.py")
    assert str(err.value) == f"glob path does not exist: {tmp_path}/missing"


def test_missing_path_raises_with_the_callers_path(tmp_path: Path) -> None:
    with pytest.raises(ToolError) as err:
        call(tmp_path, pattern="*.py", path="nope")
    assert str(err.value) == "glob path does not exist: nope"


def test_invalid_glob_raises(tmp_path: Path) -> None:
    with pytest.raises(ToolError) as err:
        call(tmp_path, pattern="src/{a")
    assert str(err.value) == "invalid glob pattern: src/{a"


def test_empty_pattern_raises(tmp_path: Path) -> None:
    with pytest.raises(ToolError) as err:
        call(tmp_path, pattern="")
    assert str(err.value) == "glob pattern is required"


def test_file_as_search_root_reports_spawn_enotdir(tmp_path: Path) -> None:
    write(tmp_path, "a.py")
    with pytest.raises(ToolError) as err:
        call(tmp_path, pattern="*.py", path="a.py")
    assert str(err.value).startswith("spawn ") and str(err.value).endswith(" ENOTDIR")
