"""Black-box conformance of grep, glob and the ripgrep runner against spec §0, §1.2, §5, §6, §7.

Every expected value below is derived from the spec text alone. The tools are driven the way a
host drives them: ``execute(args, ctx)`` with ``make_context`` over real fixture trees, and the
real ``python -m tools_impl.server`` over pipes for a representative subset. The argv, cwd and
exit-code rules are observed through a recording stand-in for ripgrep (``Profile.rg_binary``,
the profile setting §5 asks for); output formatting is checked against the real ripgrep.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tools_impl import glob as glob_tool
from tools_impl import grep as grep_tool
from tools_impl.context import ToolContext, make_context
from tools_impl.errors import ToolAborted, ToolError
from tools_impl.profile import REFERENCE, Profile
from tools_impl.result import ToolResult

REPO = Path(__file__).resolve().parents[1]
T0 = 1_700_000_000

# §6.3 step 6, in order.
SCAN_NAMES = [
    ".worktrees", "node_modules", ".pnpm-store", ".venv", "venv", "build_env", "__pycache__", ".pytest_cache",
    ".mypy_cache", ".ruff_cache", ".tox", ".nox", ".gradle", ".cache", "dist", "build", "out", "coverage",
]
SCAN = [f"--iglob=!**/{n}/**" for n in SCAN_NAMES]
# §6.3 step 7, in order.
SENSITIVE = [f"--iglob={e}" for e in [
    "!**/.git/**", "!**/.svn/**", "!**/.hg/**", "!**/.bzr/**", "!**/.jj/**", "!**/.sl/**",
    "!.env", "!.env.*", "!*.key", "!*.pem", "!*.p12", "!*.pfx", "!**/.ssh/**", "!**/.aws/**", "!**/.kube/**",
    "!.npmrc", "!id_rsa", "!id_dsa", "!id_ecdsa", "!id_ed25519",
]]
# §7.2 step 9.
BROAD = [f"--iglob={e}" for e in [
    "!*.{png,jpg,jpeg,gif,webp,bmp,ico,tif,tiff,heic,avif,svgz}",
    "!*.{mp3,wav,flac,aac,ogg,m4a,mp4,mov,avi,mkv,webm}",
    "!*.{zip,tar,gz,tgz,bz2,xz,7z,rar}",
    "!*.{exe,dll,so,dylib,a,o,class,jar,wasm,pyc,pyo,ttf,otf,woff,woff2,eot}",
    "!*.{sqlite,sqlite3,db,safetensors,ckpt,onnx,pt,pth,bin,pdf}",
]]
GREP_HEAD = ["--no-config", "--no-messages", "--hidden", "--max-filesize=1M"]
GLOB_HEAD = ["--no-config", "--no-messages", "--files", "--hidden"]
FILES_PRESERVE = ["pattern", "path", "glob", "ignoreCase", "literal", "output_mode", "limit"]
CONTENT_PRESERVE = ["pattern", "path", "glob", "ignoreCase", "literal", "context", "output_mode", "limit"]
GLOB_PRESERVE = ["pattern", "path", "include_ignored", "limit", "sort"]
BYTE_CAP_FOOTER = "\n\n[Output hit the byte safety cap; totals may be incomplete. Refine the pattern]"
RG_NOT_FOUND = (
    "ripgrep binary not found: the bundled @vscode/ripgrep binary is unavailable and `rg` is not on PATH"
)
INCLUDE_IGNORED_ERROR = (
    "include_ignored requires a narrow path, pattern prefix, or exact filename; "
    "narrow the search scope before inspecting ignored artifacts"
)

FAKE_RG_SOURCE = """
import json, os, sys, time
log = os.environ.get("FAKE_RG_LOG")
if log:
    with open(log, "a", encoding="utf-8") as f:
        f.write(json.dumps({"argv": sys.argv[1:], "cwd": os.getcwd(), "stdin": sys.stdin.read()}) + "\\n")
out = os.environ.get("FAKE_RG_OUT")
if out:
    with open(out, "rb") as f:
        sys.stdout.buffer.write(f.read())
    sys.stdout.flush()
err = os.environ.get("FAKE_RG_ERR")
if err:
    with open(err, "rb") as f:
        sys.stderr.buffer.write(f.read())
    sys.stderr.flush()
time.sleep(float(os.environ.get("FAKE_RG_SLEEP", "0")))
sys.exit(int(os.environ.get("FAKE_RG_EXIT", "0")))
"""


# ---------------------------------------------------------------------------------------------
# helpers


def write(root: Path, rel: str, data: str | bytes = "", mtime: int | None = None) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        p.write_bytes(data)
    else:
        p.write_bytes(data.encode("utf-8"))
    if mtime is not None:
        os.utime(p, (mtime, mtime))
    return p


class FakeRg:
    """A recording stand-in for ripgrep: logs argv/cwd/stdin, prints canned stdout/stderr."""

    def __init__(self, base: Path) -> None:
        base.mkdir(parents=True, exist_ok=True)
        self.binary = base / "fake-rg"
        self.binary.write_text(f"#!{sys.executable}\n{FAKE_RG_SOURCE}")
        self.binary.chmod(0o755)
        self.log = base / "log.jsonl"
        self.out = base / "stdout"
        self.err = base / "stderr"
        self.env: dict[str, str | None] = {"FAKE_RG_LOG": str(self.log)}

    def respond(self, stdout: str | bytes = "", stderr: str = "", exit_code: int = 0, sleep: float = 0) -> None:
        self.out.write_bytes(stdout.encode("utf-8") if isinstance(stdout, str) else stdout)
        self.err.write_text(stderr, encoding="utf-8")
        self.env.update({"FAKE_RG_OUT": str(self.out), "FAKE_RG_ERR": str(self.err),
                         "FAKE_RG_EXIT": str(exit_code), "FAKE_RG_SLEEP": str(sleep)})

    def profile(self, **changes: Any) -> Profile:
        return REFERENCE.replace(rg_binary=str(self.binary), **changes)

    def ctx(self, root: Path, **changes: Any) -> ToolContext:
        return make_context(str(root), env=self.env, profile=self.profile(**changes))

    def calls(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def fake(tmp_path: Path) -> FakeRg:
    f = FakeRg(tmp_path / "fake")
    f.respond()
    return f


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def grep(root: Path, profile: Profile = REFERENCE, **args: Any) -> ToolResult:
    return grep_tool.execute(dict(args), make_context(str(root), profile=profile))


def glob(root: Path, profile: Profile = REFERENCE, **args: Any) -> ToolResult:
    return glob_tool.execute(dict(args), make_context(str(root), profile=profile))


def raised(fn: Any, *a: Any, **kw: Any) -> str:
    with pytest.raises(ToolError) as info:
        fn(*a, **kw)
    return str(info.value)


def serve(requests: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, "-m", "tools_impl.server"],
        input="".join(json.dumps(r, ensure_ascii=False) + "\n" for r in requests),
        capture_output=True, text=True, encoding="utf-8", cwd=REPO, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return {msg["id"]: msg for msg in map(json.loads, proc.stdout.splitlines())}


# ---------------------------------------------------------------------------------------------
# §6.2 / §6.3 grep: normalised inputs and argv, in order


def test_grep_default_mode_argv_cwd_and_stdin(ws: Path, fake: FakeRg) -> None:
    fake.respond(exit_code=1)
    res = grep_tool.execute({"pattern": "needle"}, fake.ctx(ws))
    assert res.text == "No matches found"
    [call] = fake.calls()
    assert call["argv"] == [*GREP_HEAD, "-l", *SCAN, *SENSITIVE, "--", "needle", "."]
    assert os.path.realpath(call["cwd"]) == os.path.realpath(ws)
    assert call["stdin"] == ""  # §5: stdin ignored


def test_grep_count_mode_argv(ws: Path, fake: FakeRg) -> None:
    fake.respond(exit_code=1)
    grep_tool.execute({"pattern": "x", "output_mode": "count", "context": 3}, fake.ctx(ws))
    assert fake.calls()[0]["argv"] == [
        *GREP_HEAD, "--count-matches", "--with-filename", *SCAN, *SENSITIVE, "--", "x", "."]


def test_grep_content_argv_with_every_option_in_spec_order(ws: Path, fake: FakeRg) -> None:
    fake.respond(exit_code=1)
    grep_tool.execute({"pattern": "-x", "output_mode": "content", "offset": 3, "limit": 5, "context": 2,
                       "ignoreCase": True, "literal": True, "glob": "*.py, *.txt\t*.md"}, fake.ctx(ws))
    assert fake.calls()[0]["argv"] == [
        *GREP_HEAD, "--with-filename", "--line-number", "--null", "--max-count=9",
        "--ignore-case", "--fixed-strings", "--context=2",
        "--glob=*.py", "--glob=*.txt", "--glob=*.md", *SCAN, *SENSITIVE, "--", "-x", "."]


@pytest.mark.parametrize(("args", "max_count", "context"), [
    ({}, 101, None),                                   # limit 100, offset 0
    ({"limit": 0}, 2, None),                           # max(1, floor(0)) = 1
    ({"limit": -7}, 2, None),
    ({"limit": 2.9, "offset": 1.5}, 4, None),          # floor both: 1 + 2 + 1
    ({"offset": -4, "limit": 10}, 11, None),           # offset <= 0 → 0
    ({"context": 2.7}, 101, "--context=2"),
    ({"context": 0}, 101, None),
    ({"context": -1}, 101, None),
    ({"context": 0.5}, 101, None),                     # ctx = floor(0.5) = 0 → no flag
])
def test_grep_content_max_count_is_offset_plus_limit_plus_one(
        ws: Path, fake: FakeRg, args: dict[str, Any], max_count: int, context: str | None) -> None:
    fake.respond(exit_code=1)
    grep_tool.execute({"pattern": "p", "output_mode": "content", **args}, fake.ctx(ws))
    argv = fake.calls()[0]["argv"]
    assert argv[5:8] == ["--line-number", "--null", f"--max-count={max_count}"]
    assert [a for a in argv if a.startswith("--context")] == ([context] if context else [])


@pytest.mark.parametrize(("glob", "expected"), [
    ("  src/*.{ts,tsx} ", ["--glob=src/*.{ts,tsx}"]),       # a `{` → one trimmed --glob
    ("*.{a, b}", ["--glob=*.{a, b}"]),
    ("*.py,*.pyi", ["--glob=*.py", "--glob=*.pyi"]),
    ("!tests/**", ["--glob=!tests/**"]),
    ("", []),
])
def test_grep_user_globs(ws: Path, fake: FakeRg, glob: str, expected: list[str]) -> None:
    fake.respond(exit_code=1)
    grep_tool.execute({"pattern": "p", "glob": glob}, fake.ctx(ws))
    argv = fake.calls()[0]["argv"]
    assert argv[5 : 5 + len(expected)] == expected
    assert argv[5 + len(expected)] == SCAN[0]


def test_grep_file_target_runs_in_its_parent_with_its_basename(ws: Path, fake: FakeRg) -> None:
    write(ws, "sub/dir/a.txt", "x\n")
    fake.respond(exit_code=1)
    grep_tool.execute({"pattern": "p", "path": "sub/dir/a.txt"}, fake.ctx(ws))
    [call] = fake.calls()
    assert call["argv"][-3:] == ["--", "p", "a.txt"]
    assert os.path.realpath(call["cwd"]) == os.path.realpath(ws / "sub/dir")


@pytest.mark.parametrize("path", ["", "   ", None])
def test_grep_blank_path_searches_the_workspace(ws: Path, fake: FakeRg, path: str | None) -> None:
    fake.respond(exit_code=1)
    args: dict[str, Any] = {"pattern": "p"} if path is None else {"pattern": "p", "path": path}
    grep_tool.execute(args, fake.ctx(ws))
    [call] = fake.calls()
    assert os.path.realpath(call["cwd"]) == os.path.realpath(ws)
    assert call["argv"][-1] == "."


def test_grep_absolute_path_is_used_without_containment(tmp_path: Path, ws: Path, fake: FakeRg) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    fake.respond(exit_code=1)
    grep_tool.execute({"pattern": "p", "path": str(outside) + "/./"}, fake.ctx(ws))
    assert os.path.realpath(fake.calls()[0]["cwd"]) == os.path.realpath(outside)


def test_grep_empty_pattern_raises(ws: Path) -> None:
    assert raised(grep, ws, pattern="") == "grep pattern is required"


def test_grep_missing_path_raises_with_the_resolved_path(ws: Path) -> None:
    assert raised(grep, ws, pattern="p", path="no/such") == f"grep path does not exist: {ws / 'no/such'}"


def test_grep_non_regular_target_raises(ws: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    os.mkfifo(ws / "pipe")
    assert raised(grep, ws, pattern="p", path="pipe") == f"grep path must be a file or directory: {ws / 'pipe'}"


@pytest.mark.parametrize("rel", [
    ".git", ".git/objects", "sub/.svn", ".hg", ".bzr", ".jj", ".sl", ".ssh", "home/.aws/x", ".kube",
    ".GIT", "Sub/.SSH",                      # minimatch nocase
    ".env", "cfg/.env.local", "server.key", "cert.PEM", "a.p12", "b.pfx", ".npmrc",
    "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519",
])
def test_grep_sensitive_roots_answer_no_matches_without_running_ripgrep(ws: Path, fake: FakeRg, rel: str) -> None:
    target = ws / rel
    is_file = ("." in target.name and not target.name.startswith(".")) or target.name.startswith(
        ("id_", ".env", ".npmrc"))
    if is_file:
        write(ws, rel, "needle\n")
    else:
        target.mkdir(parents=True)
        write(target, "f.txt", "needle\n")
    res = grep_tool.execute({"pattern": "needle", "path": rel}, fake.ctx(ws))
    assert (res.text, res.is_error) == ("No matches found", False)
    assert fake.calls() == []


def test_grep_symlink_into_sensitive_dir_is_sensitive_by_realpath(ws: Path, fake: FakeRg) -> None:
    write(ws, ".ssh/config", "needle\n")
    os.symlink(ws / ".ssh", ws / "link")
    res = grep_tool.execute({"pattern": "needle", "path": "link"}, fake.ctx(ws))
    assert res.text == "No matches found"
    assert fake.calls() == []


@pytest.mark.parametrize("rel", ["github", ".github", "env", "x.env", "keys", "my.keychain", "gitlab/.gitkeep"])
def test_grep_look_alike_names_are_not_sensitive(ws: Path, fake: FakeRg, rel: str) -> None:
    (ws / rel).mkdir(parents=True)
    fake.respond(exit_code=1)
    grep_tool.execute({"pattern": "needle", "path": rel}, fake.ctx(ws))
    assert len(fake.calls()) == 1


# ---------------------------------------------------------------------------------------------
# §6.4 exit handling


def test_grep_invalid_regex_returns_is_error_with_last_error_line(ws: Path, fake: FakeRg) -> None:
    stderr = "rg: regex parse error:\n    (?:()\n    ^\nerror: first\nerror: unclosed group\n"
    fake.respond(stderr=stderr, exit_code=2)
    res = grep_tool.execute({"pattern": "("}, fake.ctx(ws))
    assert res.is_error is True
    assert res.text == (
        "Invalid search pattern: unclosed group. Escape regex special characters (for example, use `\\(` "
        "for a literal parenthesis) or use `literal=true` for one exact string.")
    assert res.details == {"error_code": "invalid_regex", "exit_code": 2, "stderr": stderr}


def test_grep_invalid_regex_without_error_line_uses_generic_summary(ws: Path, fake: FakeRg) -> None:
    fake.respond(stderr="Regex Parse Error: something\n", exit_code=2)
    res = grep_tool.execute({"pattern": "("}, fake.ctx(ws))
    assert res.text.startswith("Invalid search pattern: invalid regular expression. Escape regex")
    assert res.is_error is True


def test_grep_invalid_regex_stderr_detail_is_capped_at_4_kib(ws: Path, fake: FakeRg) -> None:
    stderr = "regex parse error:\n" + "x" * 5000 + "\nerror: bad\n"
    fake.respond(stderr=stderr, exit_code=2)
    res = grep_tool.execute({"pattern": "("}, fake.ctx(ws))
    assert res.details is not None and res.details["stderr"] == stderr[:4096]


def test_grep_invalid_regex_with_real_ripgrep(ws: Path) -> None:
    write(ws, "a.txt", "(\n")
    res = grep(ws, pattern="(")
    assert res.is_error is True
    assert res.text.startswith("Invalid search pattern: unclosed group. Escape regex special characters")
    assert res.details is not None and res.details["error_code"] == "invalid_regex"
    assert res.details["exit_code"] == 2


def test_grep_other_failures_raise_with_trimmed_stderr(ws: Path, fake: FakeRg) -> None:
    fake.respond(stderr="  something broke \n", exit_code=2)
    assert raised(grep_tool.execute, {"pattern": "p"}, fake.ctx(ws)) == "grep failed: something broke"


def test_grep_failure_without_stderr_names_the_exit_code(ws: Path, fake: FakeRg) -> None:
    fake.respond(exit_code=3)
    assert raised(grep_tool.execute, {"pattern": "p"}, fake.ctx(ws)) == "grep failed: ripgrep exited with code 3"


def test_grep_blank_output_with_exit_zero_is_no_matches(ws: Path, fake: FakeRg) -> None:
    for mode in ("files_with_matches", "count", "content"):
        fake.respond(stdout="\n \n", exit_code=0)
        res = grep_tool.execute({"pattern": "p", "output_mode": mode}, fake.ctx(ws))
        assert res.text == "No matches found", mode


def test_grep_timeout_raises(ws: Path, fake: FakeRg) -> None:
    fake.respond(sleep=10)
    ctx = fake.ctx(ws, rg_timeout_ms=200, rg_kill_grace_ms=200)
    assert raised(grep_tool.execute, {"pattern": "p"}, ctx) == "grep timed out"


def test_glob_timeout_raises(ws: Path, fake: FakeRg) -> None:
    fake.respond(sleep=10)
    ctx = fake.ctx(ws, rg_timeout_ms=200, rg_kill_grace_ms=200)
    assert raised(glob_tool.execute, {"pattern": "*.py"}, ctx) == "glob timed out"


# ---------------------------------------------------------------------------------------------
# §6.5 files_with_matches


def files_tree(root: Path) -> None:
    write(root, "old.txt", "needle\n", T0)
    write(root, "sub/new.txt", "needle\n", T0 + 300)
    write(root, "mid.txt", "needle\n", T0 + 200)
    write(root, "other.txt", "nothing\n", T0 + 400)


def test_grep_files_newest_first_with_dot_slash_stripped(ws: Path) -> None:
    files_tree(ws)
    res = grep(ws, pattern="needle")
    assert res.text == "Found 3 files\nsub/new.txt\nmid.txt\nold.txt"
    assert res.details == {"files": 3}
    assert res.is_error is False


def test_grep_files_single_file_header_is_literal(ws: Path) -> None:
    write(ws, "a.txt", "needle\n")
    assert grep(ws, pattern="needle").text == "Found 1 files\na.txt"


def test_grep_files_first_page_with_more_available(ws: Path) -> None:
    files_tree(ws)
    res = grep(ws, pattern="needle", limit=2)
    assert res.text == (
        "Found 3 files (showing 1-2)\nsub/new.txt\nmid.txt"
        "\n\n[More available. If the omitted remainder is needed, use offset=2 with the same search "
        "arguments and output_mode.]")
    assert res.details == {
        "files": 3,
        "truncated": True,
        "desktop_output_continuation": {
            "has_more": True, "next_offset": 2, "offset_unit": "file",
            "continuation_hint": {
                "tool": "grep", "preserve_args": FILES_PRESERVE,
                "instruction": "If the omitted remainder is needed, call grep again with offset=2; "
                               "preserve the same search arguments and output_mode.",
            },
        },
    }


def test_grep_files_last_page_shows_range_without_footer(ws: Path) -> None:
    files_tree(ws)
    res = grep(ws, pattern="needle", limit=2, offset=2)
    assert res.text == "Found 3 files (showing 3-3)\nold.txt"
    assert res.details == {"files": 3}


def test_grep_files_middle_page_next_offset_is_offset_plus_limit(ws: Path) -> None:
    for i in range(5):
        write(ws, f"f{i}.txt", "needle\n", T0 + 100 * i)
    res = grep(ws, pattern="needle", limit=2, offset=1)
    assert res.text.startswith("Found 5 files (showing 2-3)\nf3.txt\nf2.txt\n\n[More available. If the omitted "
                               "remainder is needed, use offset=3 with")
    assert res.details is not None and res.details["desktop_output_continuation"]["next_offset"] == 3


@pytest.mark.parametrize("offset", [3, 4, 99])
def test_grep_files_offset_beyond_the_end(ws: Path, offset: int) -> None:
    files_tree(ws)
    res = grep(ws, pattern="needle", offset=offset)
    assert res.text == f"Found 3 files (offset {offset} is beyond the end)"
    assert res.details == {"files": 3}


def test_grep_files_offset_within_range_without_cut_still_shows_range(ws: Path) -> None:
    files_tree(ws)
    assert grep(ws, pattern="needle", offset=1).text == "Found 3 files (showing 2-3)\nmid.txt\nold.txt"


def test_grep_files_stdout_lines_are_cleaned_and_unreadable_files_sort_last(ws: Path, fake: FakeRg) -> None:
    write(ws, "a.txt", "", T0)
    write(ws, "b.txt", "", T0 + 10)
    fake.respond(stdout="./gone.txt\r\n  ./a.txt  \r\n\n./b.txt\r\n")
    res = grep_tool.execute({"pattern": "p"}, fake.ctx(ws))
    assert res.text == "Found 3 files\nb.txt\na.txt\ngone.txt"


def test_grep_files_mtime_ties_use_locale_order(ws: Path, fake: FakeRg) -> None:
    names = ["b.txt", "B.txt", "a_b.txt", "a-b.txt", "a.txt", "A.txt", "_x.txt", "1x.txt", "ab.txt", "aB.txt"]
    for n in names:
        write(ws, n, "", T0)
    fake.respond(stdout="".join(f"./{n}\n" for n in names))
    res = grep_tool.execute({"pattern": "p"}, fake.ctx(ws))
    # JavaScript localeCompare (ICU root): punctuation < digits < letters; lower case first on ties.
    assert res.text.split("\n")[1:] == [
        "_x.txt", "1x.txt", "a_b.txt", "a-b.txt", "a.txt", "A.txt", "ab.txt", "aB.txt", "b.txt", "B.txt"]


def test_grep_files_test_mode_switch_sorts_by_name_only(ws: Path) -> None:
    write(ws, "b.txt", "needle\n", T0 + 100)
    write(ws, "a.txt", "needle\n", T0)
    res = grep(ws, REFERENCE.replace(sort_by_name_only=True), pattern="needle")
    assert res.text == "Found 2 files\na.txt\nb.txt"


def test_grep_file_target_lists_the_basename(ws: Path) -> None:
    write(ws, "sub/a.txt", "needle\n")
    assert grep(ws, pattern="needle", path="sub/a.txt").text == "Found 1 files\na.txt"


def test_grep_excludes_and_ignore_rules_with_real_ripgrep(ws: Path) -> None:
    write(ws, ".hidden.txt", "needle\n", T0 + 9)
    write(ws, "node_modules/p/i.js", "needle\n")
    write(ws, "dist/x.js", "needle\n")
    write(ws, "deep/build/x.js", "needle\n")
    write(ws, ".env", "needle\n")
    write(ws, "conf/.env.prod", "needle\n")
    write(ws, "k/server.KEY", "needle\n")
    write(ws, ".svn/x", "needle\n")
    write(ws, "big.txt", "needle\n" + "y" * (1024 * 1024 + 1))  # over --max-filesize=1M
    write(ws, "keep.txt", "needle\n", T0)
    res = grep(ws, pattern="needle", glob="**")
    assert res.text == "Found 2 files\n.hidden.txt\nkeep.txt"


def test_grep_path_inside_a_scan_excluded_directory_is_searched(ws: Path) -> None:
    write(ws, "node_modules/pkg/index.js", "needle\n")
    assert grep(ws, pattern="needle", path="node_modules/pkg").text == "Found 1 files\nindex.js"


# ---------------------------------------------------------------------------------------------
# §6.6 count


def test_grep_count_totals_occurrences_in_ripgrep_order(ws: Path, fake: FakeRg) -> None:
    fake.respond(stdout="./b.txt:3\n./dir:with:colons.txt:2\r\na.txt:1\n")
    res = grep_tool.execute({"pattern": "p", "output_mode": "count"}, fake.ctx(ws))
    assert res.text == "b.txt:3\ndir:with:colons.txt:2\na.txt:1\n\nFound 6 total occurrences across 3 files."
    assert res.details == {"files": 3, "matches": 6}


def test_grep_count_singular_words(ws: Path) -> None:
    write(ws, "a.txt", "needle\n")
    res = grep(ws, pattern="needle", output_mode="count")
    assert res.text == "a.txt:1\n\nFound 1 total occurrence across 1 file."
    assert res.details == {"files": 1, "matches": 1}


def test_grep_count_counts_occurrences_not_lines(ws: Path) -> None:
    write(ws, "a.txt", "needle needle\nneedle\n")
    res = grep(ws, pattern="needle", output_mode="count")
    assert res.text == "a.txt:3\n\nFound 3 total occurrences across 1 file."


def test_grep_count_paging_with_more_entries_suffix(ws: Path, fake: FakeRg) -> None:
    fake.respond(stdout="./a:1\n./b:2\n./c:3\n./d:4\n")
    res = grep_tool.execute({"pattern": "p", "output_mode": "count", "limit": 2, "offset": 1}, fake.ctx(ws))
    assert res.text == "b:2\nc:3\n\nFound 10 total occurrences across 4 files. [More entries — use offset=3]"
    assert res.details == {"files": 4, "matches": 10, "truncated": True}
    res = grep_tool.execute({"pattern": "p", "output_mode": "count", "limit": 2, "offset": 2}, fake.ctx(ws))
    assert res.text == "c:3\nd:4\n\nFound 10 total occurrences across 4 files."
    assert res.details == {"files": 4, "matches": 10}


def test_grep_count_offset_past_the_end_keeps_the_totals(ws: Path, fake: FakeRg) -> None:
    fake.respond(stdout="./a:1\n./b:2\n")
    res = grep_tool.execute({"pattern": "p", "output_mode": "count", "offset": 5}, fake.ctx(ws))
    assert res.text == "\n\nFound 3 total occurrences across 2 files."
    assert res.details == {"files": 2, "matches": 3}
