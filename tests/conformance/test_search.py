"""Black-box conformance of grep, glob and the ripgrep runner against spec common, spec limits.2, spec ripgrep, spec grep, spec glob.

Every expected value below is derived from the spec text alone. The tools are driven the way a
host drives them: ``execute(args, ctx)`` with ``make_context`` over real fixture trees, and the
real ``python -m tools_impl.server`` over pipes for a representative subset. The argv, cwd and
exit-code rules are observed through a recording stand-in for ripgrep (``Profile.rg_binary``,
the profile setting spec ripgrep asks for); output formatting is checked against the real ripgrep. Checks
of pure functions (the absolute glob pattern split) live beside their modules' tests under
``tests/tools_impl/search/``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.repo import REPO
from tools_impl.core.context import ToolContext, make_context
from tools_impl.core.errors import ToolAborted, ToolError
from tools_impl.core.profile import REFERENCE, Profile
from tools_impl.core.result import ToolResult
from tools_impl.search import glob_tool, grep_tool

T0 = 1_700_000_000

# spec grep.3 step 6, in order.
SCAN_NAMES = [
    ".worktrees", "node_modules", ".pnpm-store", ".venv", "venv", "build_env", "__pycache__", ".pytest_cache",
    ".mypy_cache", ".ruff_cache", ".tox", ".nox", ".gradle", ".cache", "dist", "build", "out", "coverage",
]
SCAN = [f"--iglob=!**/{n}/**" for n in SCAN_NAMES]
# spec grep.3 step 7, in order.
SENSITIVE = [f"--iglob={e}" for e in [
    "!**/.git/**", "!**/.svn/**", "!**/.hg/**", "!**/.bzr/**", "!**/.jj/**", "!**/.sl/**",
    "!.env", "!.env.*", "!*.key", "!*.pem", "!*.p12", "!*.pfx", "!**/.ssh/**", "!**/.aws/**", "!**/.kube/**",
    "!.npmrc", "!id_rsa", "!id_dsa", "!id_ecdsa", "!id_ed25519",
]]
# spec glob.2 step 9.
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

# POSIX sh keeps the stand-in cheap to spawn. One log file per call (``<log>.<pid>``, so parallel
# calls cannot interleave): cwd, newline, the argv NUL-terminated, the byte count read from stdin,
# then a record separator (\036).
FAKE_RG_SOURCE = r"""#!/bin/sh
if [ -n "$FAKE_RG_LOG" ]; then
    { pwd; printf '%s\0' "$@"; printf '%s\036' "$(cat | wc -c)"; } > "$FAKE_RG_LOG.$$"
fi
[ -n "$FAKE_RG_OUT" ] && cat "$FAKE_RG_OUT"
[ -n "$FAKE_RG_ERR" ] && cat "$FAKE_RG_ERR" >&2
# the trap comes first, so a written pid file means SIGTERM is already ignored
[ -n "$FAKE_RG_IGNORE_TERM" ] && trap '' TERM
[ -n "$FAKE_RG_PIDFILE" ] && echo $$ > "$FAKE_RG_PIDFILE"
# exec: the sleeper is this very process, so a signal to it is a signal to "ripgrep"
[ "${FAKE_RG_SLEEP:-0}" != "0" ] && exec sleep "$FAKE_RG_SLEEP"
exit "${FAKE_RG_EXIT:-0}"
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
        self.binary.write_text(FAKE_RG_SOURCE)
        self.binary.chmod(0o755)
        self.log = base / "log"
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
        logs = sorted(self.log.parent.glob(self.log.name + ".*"), key=lambda p: (p.stat().st_mtime_ns, p.name))
        out = []
        for log in logs:
            record = log.read_bytes().decode("utf-8").split("\036")[0]
            cwd, _, rest = record.partition("\n")
            *argv, stdin_bytes = rest.split("\0")
            out.append({"argv": argv, "cwd": cwd, "stdin": int(stdin_bytes.strip())})
        return out


@pytest.fixture
def fake(tmp_path: Path) -> FakeRg:
    if sys.platform == "win32":
        pytest.skip("the recording ripgrep stand-in is a POSIX sh script")
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
# spec grep.2 / spec grep.3 grep: normalised inputs and argv, in order


def test_grep_default_mode_argv_cwd_and_stdin(ws: Path, fake: FakeRg) -> None:
    fake.respond(exit_code=1)
    res = grep_tool.execute({"pattern": "needle"}, fake.ctx(ws))
    assert res.text == "No matches found"
    [call] = fake.calls()
    assert call["argv"] == [*GREP_HEAD, "-l", *SCAN, *SENSITIVE, "--", "needle", "."]
    assert os.path.realpath(call["cwd"]) == os.path.realpath(ws)
    assert call["stdin"] == 0  # spec ripgrep: stdin ignored (nothing to read)


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
# spec grep.4 exit handling


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
# spec grep.5 files_with_matches


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
# spec grep.6 count


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


# ---------------------------------------------------------------------------------------------
# spec grep.7 content


def paged_file(root: Path) -> None:
    """Matches on lines 1, 4, 6 and 14; with context=2 ripgrep prints lines 1-8, ``--``, 12-15."""
    lines = []
    for i in range(1, 16):
        lines.append(f"L{i} needle" if i in (1, 4, 6, 14) else f"L{i}")
    write(root, "a.txt", "\n".join(lines) + "\n")


def test_grep_content_first_page_gives_between_context_to_the_later_match(ws: Path) -> None:
    paged_file(ws)
    res = grep(ws, pattern="needle", output_mode="content", context=2, limit=2)
    assert res.text == (
        "a.txt:1:L1 needle\na.txt:2-L2\na.txt:3-L3\na.txt:4:L4 needle"
        "\n\n[2 matches limit reached. More available — use offset=2, or refine pattern]")
    assert res.details == {}


def test_grep_content_middle_page_never_overlaps(ws: Path) -> None:
    paged_file(ws)
    res = grep(ws, pattern="needle", output_mode="content", context=2, limit=1, offset=1)
    assert res.text == (
        "a.txt:2-L2\na.txt:3-L3\na.txt:4:L4 needle"
        "\n\n[1 matches limit reached. More available — use offset=2, or refine pattern]")


def test_grep_content_last_page_keeps_trailing_context_and_rejoins_groups(ws: Path) -> None:
    paged_file(ws)
    res = grep(ws, pattern="needle", output_mode="content", context=2, limit=2, offset=2)
    assert res.text == (
        "a.txt:5-L5\na.txt:6:L6 needle\na.txt:7-L7\na.txt:8-L8\n--\n"
        "a.txt:12-L12\na.txt:13-L13\na.txt:14:L14 needle\na.txt:15-L15")


def test_grep_content_pages_partition_the_output(ws: Path) -> None:
    paged_file(ws)
    whole = grep(ws, pattern="needle", output_mode="content", context=2).text
    pages = [grep(ws, pattern="needle", output_mode="content", context=2, limit=1, offset=k).text.split("\n\n[")[0]
             for k in range(4)]
    seen = [ln for page in pages for ln in page.split("\n") if ln != "--"]
    assert seen == [ln for ln in whole.split("\n") if ln != "--"]


def test_grep_content_offset_past_the_last_match_is_no_matches(ws: Path) -> None:
    paged_file(ws)
    assert grep(ws, pattern="needle", output_mode="content", offset=4).text == "No matches found"


def test_grep_content_records_are_rendered_and_groups_joined(ws: Path, fake: FakeRg) -> None:
    fake.respond(stdout="./a.txt\x001:x needle\n./a.txt\x002-ctx\n--\n./sub/b.txt\x007:needle\n\n")
    res = grep_tool.execute({"pattern": "needle", "output_mode": "content"}, fake.ctx(ws))
    assert res.text == "a.txt:1:x needle\na.txt:2-ctx\n--\nsub/b.txt:7:needle"


def test_grep_content_matches_are_counted_across_files(ws: Path, fake: FakeRg) -> None:
    fake.respond(stdout="./a\x001:n\n./a\x002:n\n./b\x001:n\n./b\x003:n\n")
    res = grep_tool.execute({"pattern": "n", "output_mode": "content", "offset": 1, "limit": 2}, fake.ctx(ws))
    assert res.text == (
        "a:2:n\nb:1:n\n\n[2 matches limit reached. More available — use offset=3, or refine pattern]")


def test_grep_content_long_lines_cut_and_notices_joined(ws: Path) -> None:
    write(ws, "a.txt", "needle " + "x" * 2500 + "\nneedle two\n")
    res = grep(ws, pattern="needle", output_mode="content", limit=1)
    line = ("a.txt:1:needle " + "x" * 2500)[:2000] + "..."
    assert res.text == (
        line + "\n\n[1 matches limit reached. More available — use offset=1, or refine pattern. "
        "Some lines truncated to 2000 chars. Use read tool for full lines]")


def test_grep_content_line_cut_counts_utf16_units(ws: Path) -> None:
    write(ws, "a.txt", "needle " + "😀" * 1500 + "\n")
    res = grep(ws, pattern="needle", output_mode="content")
    prefix = "a.txt:1:needle "  # 15 units, then 1985 units = 992 emoji + a lone high surrogate
    first = res.text.split("\n")[0]
    assert first.startswith(prefix + "😀" * 992)
    assert first.endswith("...")
    assert res.text.endswith("\n\n[Some lines truncated to 2000 chars. Use read tool for full lines]")


def test_grep_content_trailing_newlines_trimmed(ws: Path, fake: FakeRg) -> None:
    fake.respond(stdout="./a\x001:n\n./a\x002-\n./a\x003-\n")
    res = grep_tool.execute({"pattern": "n", "output_mode": "content", "context": 2}, fake.ctx(ws))
    assert res.text == "a:1:n\na:2-\na:3-"


def spec_prefix_cap(lines: list[str], max_bytes: int, notice: Any) -> tuple[str, int]:
    """spec limits.2 prefix strategy, literally: the largest count whose candidate fits."""
    best: tuple[str, int] | None = None
    for count in range(1, len(lines) + 1):
        cand = "\n".join(lines[:count]) + "\n\n" + notice(count)
        if len(cand.encode()) <= max_bytes:
            best = (cand, count)
    assert best is not None
    return best


def cap_notice(original: int, warnings: str, next_offset: int, capped: bool = False) -> str:
    safety = "ripgrep byte safety cap was reached; " if capped else ""
    return (f"[desktop grep output truncated: original_bytes={original}; {safety}{warnings}if the omitted remainder "
            f"is needed, continue with grep using offset={next_offset} and the same search arguments, or refine "
            "pattern/path/glob/context.]")


def test_grep_content_16k_cap_exact_text_and_metadata(ws: Path) -> None:
    body_lines = [f"needle {i:03d} " + "x" * 290 for i in range(100)]
    write(ws, "a.txt", "\n".join(body_lines) + "\n")
    res = grep(ws, pattern="needle", output_mode="content", offset=5, limit=60)
    rendered = [f"a.txt:{i + 1}:{body_lines[i]}" for i in range(5, 65)]
    full = "\n".join(rendered) + "\n\n[60 matches limit reached. More available — use offset=65, or refine pattern]"
    original = len(full.encode())
    text, kept = spec_prefix_cap(
        rendered, 16384, lambda n: cap_notice(original, "60 matches limit reached; ", 5 + n))
    assert res.text == text
    hint = {"tool": "grep", "preserve_args": CONTENT_PRESERVE,
            "instruction": f"If the omitted remainder is needed, call grep again with offset={5 + kept}; "
                           "preserve the same search arguments and output_mode."}
    assert res.details == {
        "desktop_output_truncation": {
            "truncated": True, "has_more": True, "strategy": "prefix_lines", "original_bytes": original,
            "returned_bytes": len(text.encode()), "max_bytes": 16384, "next_offset": 5 + kept,
            "offset_unit": "match", "continuation_hint": hint},
        "desktop_output_continuation": {
            "has_more": True, "next_offset": 5 + kept, "offset_unit": "match", "continuation_hint": hint},
    }


def test_grep_content_16k_cap_trims_context_after_the_last_retained_match(ws: Path) -> None:
    lines = []
    for i in range(60):
        lines += [f"needle {i:02d} " + "m" * 200, "c" * 330]
    write(ws, "a.txt", "\n".join(lines) + "\n")
    res = grep(ws, pattern="needle", output_mode="content", context=1)
    rendered = [f"a.txt:{n + 1}{':' if n % 2 == 0 else '-'}{t}" for n, t in enumerate(lines)]
    original = len("\n".join(rendered).encode())

    def matches_in(count: int) -> int:
        return sum(1 for r in rendered[:count] if ":needle" in r)

    _, count = spec_prefix_cap(rendered, 16384, lambda n: cap_notice(original, "", matches_in(n)))
    kept = rendered[:count]
    while not kept[-1].split(":", 2)[1].isdigit():  # drop trailing context lines ("a.txt:N-…")
        kept.pop()
    assert res.text == "\n".join(kept) + "\n\n" + cap_notice(original, "", matches_in(count))
    assert res.text.split("\n\n[")[0].split("\n")[-1].startswith(f"a.txt:{len(kept)}:needle")


def test_grep_content_zero_retained_matches_drops_leading_context(ws: Path) -> None:
    wide = "中" * 1995
    write(ws, "a.txt", f"{wide}\n{wide}\n{wide}\nneedle 4\nneedle 5\n")
    res = grep(ws, pattern="needle", output_mode="content", context=3)
    ctx_lines = [(f"a.txt:{i}-" + wide)[:2000] + "..." for i in (1, 2, 3)]
    full = "\n".join([*ctx_lines, "a.txt:4:needle 4", "a.txt:5:needle 5"]) + (
        "\n\n[Some lines truncated to 2000 chars. Use read tool for full lines]")
    original = len(full.encode())
    assert res.text == "a.txt:4:needle 4\na.txt:5:needle 5\n\n" + cap_notice(
        original, "some lines were truncated to 2000 chars; use read for full lines; "
                  "leading context was omitted to keep pagination progressing; ", 2)
    assert res.details is not None
    assert res.details["desktop_output_truncation"]["next_offset"] == 2


def test_grep_content_256kb_parser_cap_then_16k_cap(ws: Path) -> None:
    write(ws, "a.txt", "".join(f"needle {i:03d} " + "x" * 2100 + "\n" for i in range(150)))
    res = grep(ws, pattern="needle", output_mode="content", limit=150)
    rendered = [(f"a.txt:{i + 1}:needle {i:03d} " + "x" * 2100)[:2000] + "..." for i in range(150)]
    kept256: list[str] = []
    for r in rendered:
        if len("\n".join([*kept256, r]).encode()) > 256 * 1024:
            break
        kept256.append(r)
    assert len(kept256) == 130
    full = "\n".join(kept256) + (
        "\n\n[256KB output limit reached. Some lines truncated to 2000 chars. Use read tool for full lines]")
    original = len(full.encode())
    text, _ = spec_prefix_cap(kept256, 16384, lambda n: cap_notice(
        original, "some lines were truncated to 2000 chars; use read for full lines; 256KB parser limit reached; ", n))
    assert res.text == text


def test_grep_content_byte_safety_cap_footer(ws: Path) -> None:
    write(ws, "a.txt", "".join(f"needle {i:03d}\n" for i in range(200)))
    res = grep(ws, REFERENCE.replace(rg_max_stdout_bytes=1000), pattern="needle", output_mode="content", limit=500)
    raw = "".join(f"./a.txt\0{i + 1}:needle {i:03d}\n" for i in range(200)).encode()[:1000]
    records = raw[: raw.rfind(b"\n")].decode().split("\n")
    body = "\n".join(r[2:].replace("\0", ":") for r in records)
    assert res.text == body + BYTE_CAP_FOOTER
    assert res.details == {"stdoutTruncated": True}


def test_grep_files_byte_safety_cap_drops_the_torn_record(ws: Path, fake: FakeRg) -> None:
    fake.respond(stdout="".join(f"./f{i:04d}.txt\n" for i in range(300)))
    res = grep_tool.execute({"pattern": "p"}, fake.ctx(ws, rg_max_stdout_bytes=500))
    names = [f"f{i:04d}.txt" for i in range(41)]  # 41 whole 12-byte records fit in 500 bytes
    assert res.text == "Found 41 files\n" + "\n".join(names) + BYTE_CAP_FOOTER
    assert res.details == {"files": 41, "stdoutTruncated": True}


def test_grep_count_byte_safety_cap_footer(ws: Path, fake: FakeRg) -> None:
    fake.respond(stdout="".join(f"./f{i:04d}:2\n" for i in range(300)))
    res = grep_tool.execute({"pattern": "p", "output_mode": "count", "limit": 500}, fake.ctx(ws, rg_max_stdout_bytes=100))
    lines = [f"f{i:04d}:2" for i in range(10)]  # 10 whole 10-byte records
    assert res.text == "\n".join(lines) + "\n\nFound 20 total occurrences across 10 files." + BYTE_CAP_FOOTER
    assert res.details == {"files": 10, "matches": 20, "stdoutTruncated": True}


def test_grep_content_cap_notice_mentions_the_ripgrep_safety_cap(ws: Path) -> None:
    write(ws, "a.txt", "".join(f"needle {i:03d} " + "x" * 300 + "\n" for i in range(200)))
    res = grep(ws, REFERENCE.replace(rg_max_stdout_bytes=40_000), pattern="needle", output_mode="content",
               limit=500)
    assert "; ripgrep byte safety cap was reached; if the omitted remainder is needed" in res.text
    assert res.text.endswith("refine pattern/path/glob/context.]" + BYTE_CAP_FOOTER)
    assert res.details is not None and res.details["stdoutTruncated"] is True


# ---------------------------------------------------------------------------------------------
# spec glob glob: argv, scope rules, errors


def glob_argv(fake: FakeRg, root: Path, **args: Any) -> list[str]:
    glob_tool.execute(dict(args), fake.ctx(root))
    [call] = fake.calls()
    return list(call["argv"])


def test_glob_broad_workspace_scan_argv_and_cwd(ws: Path, fake: FakeRg) -> None:
    assert glob_argv(fake, ws, pattern="**/*") == [*GLOB_HEAD, *SCAN, *BROAD, *SENSITIVE]
    assert os.path.realpath(fake.calls()[0]["cwd"]) == os.path.realpath(ws)


@pytest.mark.parametrize("pattern", ["*", "**/*", "*.*", "**", "*.", "!*.ts", "{src,lib}/*", "*.{ts,}",
                                     "**/*.?", "file*", "[ab]", "**/*.*"])
def test_glob_broad_patterns_add_media_excludes(ws: Path, fake: FakeRg, pattern: str) -> None:
    argv = glob_argv(fake, ws, pattern=pattern)
    assert argv[len(GLOB_HEAD) + len(SCAN) : -len(SENSITIVE)] == BROAD


@pytest.mark.parametrize("pattern", ["**/*.ts", "*.{png,ts}", "*.t?", "README.md", "*.[jt]s", "a/b"])
def test_glob_specific_patterns_have_no_media_excludes(ws: Path, fake: FakeRg, pattern: str) -> None:
    assert glob_argv(fake, ws, pattern=pattern) == [*GLOB_HEAD, *SCAN, *SENSITIVE]


def test_glob_narrow_scope_is_never_a_broad_scan(ws: Path, fake: FakeRg) -> None:
    (ws / "sub").mkdir()
    assert glob_argv(fake, ws, pattern="**/*", path="sub") == [*GLOB_HEAD, *SCAN, *SENSITIVE]


def test_glob_pattern_prefix_makes_the_scan_narrow(ws: Path, fake: FakeRg) -> None:
    (ws / "src").mkdir()
    assert glob_argv(fake, ws, pattern="src/**/*") == [*GLOB_HEAD, *SCAN, *SENSITIVE]


def test_glob_sort_modified_argv(ws: Path, fake: FakeRg) -> None:
    assert glob_argv(fake, ws, pattern="*.py", sort="modified") == [
        *GLOB_HEAD, "--sortr=modified", *SCAN, *SENSITIVE]


def test_glob_include_ignored_narrow_omits_every_scan_exclude(ws: Path, fake: FakeRg) -> None:
    (ws / "sub").mkdir()
    assert glob_argv(fake, ws, pattern="*.log", path="sub", include_ignored=True, sort="modified") == [
        *GLOB_HEAD, "--no-ignore", "--sortr=modified", *SENSITIVE]


def test_glob_include_ignored_exact_file_keeps_scan_excludes_minus_requested_segments(ws: Path, fake: FakeRg) -> None:
    assert glob_argv(fake, ws, pattern="dist/build/app.js", include_ignored=True) == [
        *GLOB_HEAD, "--no-ignore",
        *[f"--iglob=!**/{n}/**" for n in SCAN_NAMES if n not in ("dist", "build")], *SENSITIVE]


def test_glob_include_ignored_exact_file_at_the_root(ws: Path, fake: FakeRg) -> None:
    assert glob_argv(fake, ws, pattern="app.log", include_ignored=True) == [
        *GLOB_HEAD, "--no-ignore", *SCAN, *SENSITIVE]


def test_glob_scan_exclude_names_in_the_requested_root_are_omitted(ws: Path, fake: FakeRg) -> None:
    assert glob_argv(fake, ws, pattern="node_modules/.cache/**/*.js") == [
        *GLOB_HEAD, *[f"--iglob=!**/{n}/**" for n in SCAN_NAMES if n not in ("node_modules", ".cache")],
        *SENSITIVE]


def test_glob_scan_exclude_name_only_inside_a_segment_is_kept(ws: Path, fake: FakeRg) -> None:
    assert glob_argv(fake, ws, pattern="mydist/*.js") == [*GLOB_HEAD, *SCAN, *SENSITIVE]


def test_glob_path_names_do_not_count_as_requested_root_segments(ws: Path, fake: FakeRg) -> None:
    (ws / "dist").mkdir()
    # requestedRoot relative to the search root is "" here: nothing is omitted.
    assert glob_argv(fake, ws, pattern="*.js", path="dist") == [*GLOB_HEAD, *SCAN, *SENSITIVE]


@pytest.mark.parametrize("path", [None, "", ".", "./", "sub/.."])
def test_glob_include_ignored_without_narrow_scope_raises(ws: Path, path: str | None) -> None:
    (ws / "sub").mkdir()
    args: dict[str, Any] = {"pattern": "**/*.log", "include_ignored": True}
    if path is not None:
        args["path"] = path
    assert raised(glob_tool.execute, args, make_context(str(ws))) == INCLUDE_IGNORED_ERROR


@pytest.mark.parametrize("pattern", [".", ".."])
def test_glob_dot_patterns_are_not_exact_files(ws: Path, pattern: str) -> None:
    assert raised(glob, ws, pattern=pattern, include_ignored=True) == INCLUDE_IGNORED_ERROR


def test_glob_trailing_slash_pattern_is_not_an_exact_file(ws: Path, fake: FakeRg) -> None:
    # "dir/" has a static prefix "dir" (narrow) → allowed; scan excludes are omitted (not exact).
    (ws / "dir").mkdir()
    assert glob_argv(fake, ws, pattern="dir/", include_ignored=True) == [*GLOB_HEAD, "--no-ignore", *SENSITIVE]


@pytest.mark.parametrize("pattern", ["src/{a", "*.{ts", "a}b", "[z-a]", "[]", "foo[", "x]"])
def test_glob_invalid_patterns_raise(ws: Path, pattern: str) -> None:
    assert raised(glob, ws, pattern=pattern) == f"invalid glob pattern: {pattern}"


def test_glob_empty_pattern_raises(ws: Path) -> None:
    assert raised(glob, ws, pattern="") == "glob pattern is required"


def test_glob_missing_path_raises_with_the_callers_path(ws: Path) -> None:
    assert raised(glob, ws, pattern="*", path="nope/x") == "glob path does not exist: nope/x"


@pytest.mark.parametrize("rel", [".git", ".git/refs", "a/.ssh", ".AWS", ".kube"])
def test_glob_sensitive_root_answers_no_files_without_running_ripgrep(ws: Path, fake: FakeRg, rel: str) -> None:
    (ws / rel).mkdir(parents=True)
    write(ws / rel, "f.txt", "x")
    res = glob_tool.execute({"pattern": "**/*", "path": rel}, fake.ctx(ws))
    assert (res.text, res.is_error) == ("No files matched", False)
    assert fake.calls() == []


def test_glob_absolute_pattern_inside_the_workspace_runs_from_the_base(ws: Path, fake: FakeRg) -> None:
    (ws / "src").mkdir()
    fake.respond(stdout="src/a.py\nsrc/b.txt\nother/c.py\n")
    res = glob_tool.execute({"pattern": f"{ws}/src/*.py"}, fake.ctx(ws))
    assert res.text == "src/a.py"
    [call] = fake.calls()
    assert call["cwd"] == os.path.realpath(ws)
    assert call["argv"] == [*GLOB_HEAD, *SCAN, *SENSITIVE]  # narrow: "src" prefix


def test_glob_absolute_pattern_without_magic_is_directory_plus_basename(ws: Path) -> None:
    write(ws, "src/a.py", "")
    write(ws, "src/b.py", "")
    res = glob(ws, pattern=f"{ws}/src/a.py")
    assert res.text == "src/a.py"
    assert res.details == {"matched": 1, "limit": 200, "offset": 0}


def test_glob_absolute_extglob_pattern_splits_before_the_opener(ws: Path) -> None:
    for n in ("a.py", "b.py", "c.py"):
        write(ws, f"src/{n}", "")
    res = glob(ws, REFERENCE.replace(), pattern=f"{ws}/src/@(a|b).py")
    assert sorted(res.text.split("\n")) == ["src/a.py", "src/b.py"]


def test_glob_absolute_pattern_with_a_path_is_checked_against_that_path(ws: Path) -> None:
    write(ws, "sub/x/a.py", "")
    res = glob(ws, pattern=f"{ws}/sub/x/*.py", path="sub")
    assert res.text == "x/a.py"


def test_glob_absolute_pattern_escaping_the_search_path_raises(tmp_path: Path, ws: Path) -> None:
    (tmp_path / "outside").mkdir()
    (ws / "sub").mkdir()
    msg = raised(glob, ws, pattern=f"{tmp_path}/outside/*.py", path="sub")
    assert msg == (f"glob absolute pattern escapes the approved search path ({ws / 'sub'}); "
                   'pass the directory via "path" so the permission gate can review it')


def test_glob_absolute_pattern_cut_at_index_zero_has_root_slash(ws: Path) -> None:
    msg = raised(glob, ws, pattern="/*.conf")
    assert msg == (f"glob absolute pattern escapes the approved search path ({ws}); "
                   'pass the directory via "path" so the permission gate can review it')


def test_glob_absolute_pattern_root_missing_raises(ws: Path) -> None:
    assert raised(glob, ws, pattern=f"{ws}/nope/*.py") == f"glob path does not exist: {ws}/nope"
    assert raised(glob, ws, pattern=f"{ws}/nope/*.py", path=".") == "glob path does not exist: ."


def test_glob_absolute_pattern_with_missing_path_names_the_path(ws: Path) -> None:
    write(ws, "a.py", "")
    assert raised(glob, ws, pattern=f"{ws}/*.py", path="gone") == "glob path does not exist: gone"


# ---------------------------------------------------------------------------------------------
# spec glob.2 glob: stream filter and output


def test_glob_pattern_without_slash_matches_at_any_depth_and_dotfiles(ws: Path, fake: FakeRg) -> None:
    fake.respond(stdout="a.py\nsrc/b.py\nsrc/.hidden/c.py\n.d.py\nsrc/e.pyc\n")
    res = glob_tool.execute({"pattern": "*.py"}, fake.ctx(ws))
    assert res.text == "a.py\nsrc/b.py\nsrc/.hidden/c.py\n.d.py"
    assert res.details == {"matched": 4, "limit": 200, "offset": 0}


def test_glob_pattern_with_slash_is_anchored(ws: Path, fake: FakeRg) -> None:
    fake.respond(stdout="src/a.py\nsrc/x/b.py\nlib/src/c.py\n")
    assert glob_tool.execute({"pattern": "src/*.py"}, fake.ctx(ws)).text == "src/a.py"


def test_glob_stdout_lines_are_normalised_before_matching(ws: Path, fake: FakeRg) -> None:
    fake.respond(stdout="src\\a.py\r\nsrc/b.py\r\n")
    assert glob_tool.execute({"pattern": "src/*.py"}, fake.ctx(ws)).text == "src/a.py\nsrc/b.py"


def test_glob_brace_and_class_patterns_filter(ws: Path, fake: FakeRg) -> None:
    fake.respond(stdout="a.ts\nb.tsx\nc.js\nd.jsx\n")
    assert glob_tool.execute({"pattern": "*.{ts,jsx}"}, fake.ctx(ws)).text == "a.ts\nd.jsx"


def test_glob_no_files_matched(ws: Path, fake: FakeRg) -> None:
    fake.respond(stdout="a.txt\n", exit_code=0)
    res = glob_tool.execute({"pattern": "*.py"}, fake.ctx(ws))
    assert res.text == "No files matched"
    assert res.details == {"matched": 0, "limit": 200, "offset": 0}


def test_glob_ripgrep_exit_one_is_no_files_matched(ws: Path, fake: FakeRg) -> None:
    fake.respond(exit_code=1)
    assert glob_tool.execute({"pattern": "*.py"}, fake.ctx(ws)).text == "No files matched"


def test_glob_no_more_files_at_offset(ws: Path, fake: FakeRg) -> None:
    fake.respond(stdout="a.py\nb.py\n")
    res = glob_tool.execute({"pattern": "*.py", "offset": 2}, fake.ctx(ws))
    assert res.text == "No more files matched at offset 2"
    assert res.details == {"matched": 2, "limit": 200, "offset": 2}


def test_glob_first_page_truncated_footer_and_details(ws: Path, fake: FakeRg) -> None:
    fake.respond(stdout="".join(f"f{i}.py\n" for i in range(10)))
    res = glob_tool.execute({"pattern": "*.py", "limit": 3}, fake.ctx(ws))
    assert res.text == (
        "f0.py\nf1.py\nf2.py\n\n[Results truncated: showing 3 paths from offset 0. If the omitted remainder is "
        "needed, use offset=3 with the same search arguments. Refine path/pattern or pass sort=\"modified\" to "
        "surface recently changed files]")
    assert res.details == {
        "matched": 4, "limit": 3, "offset": 0, "truncated": True, "next_offset": 3,
        "desktop_output_continuation": {
            "has_more": True, "next_offset": 3, "offset_unit": "file",
            "continuation_hint": {
                "tool": "glob", "preserve_args": GLOB_PRESERVE,
                "instruction": "If the omitted remainder is needed, call glob again with offset=3; "
                               "preserve the same search arguments.",
            },
        },
    }


def test_glob_middle_page(ws: Path, fake: FakeRg) -> None:
    fake.respond(stdout="".join(f"f{i}.py\n" for i in range(10)))
    res = glob_tool.execute({"pattern": "*.py", "limit": 3.7, "offset": 4.2}, fake.ctx(ws))
    assert res.text.startswith("f4.py\nf5.py\nf6.py\n\n[Results truncated: showing 3 paths from offset 4. If the "
                               "omitted remainder is needed, use offset=7 with")
    assert res.details is not None
    assert (res.details["matched"], res.details["limit"], res.details["offset"], res.details["next_offset"]) == (
        8, 3, 4, 7)


def test_glob_last_page_exactly_filled_is_not_truncated(ws: Path, fake: FakeRg) -> None:
    fake.respond(stdout="".join(f"f{i}.py\n" for i in range(6)))
    res = glob_tool.execute({"pattern": "*.py", "limit": 3, "offset": 3}, fake.ctx(ws))
    assert res.text == "f3.py\nf4.py\nf5.py"
    assert res.details == {"matched": 6, "limit": 3, "offset": 3}


def test_glob_limit_zero_means_one(ws: Path, fake: FakeRg) -> None:
    fake.respond(stdout="a.py\nb.py\n")
    res = glob_tool.execute({"pattern": "*.py", "limit": 0}, fake.ctx(ws))
    assert res.text.startswith("a.py\n\n[Results truncated: showing 1 paths from offset 0.")


def test_glob_truncated_before_the_page_is_reached(ws: Path, fake: FakeRg) -> None:
    fake.respond(stdout="".join(f"f{i:03d}.py\n" for i in range(500)))
    res = glob_tool.execute({"pattern": "*.py", "offset": 100}, fake.ctx(ws, rg_max_stdout_bytes=100))
    assert res.text == ("No more files matched at offset 100\n\n[Output was truncated before this page could be "
                        "reached. Refine path/pattern or reduce offset]")
    assert res.details == {"matched": 12, "limit": 200, "offset": 100, "truncated": True}  # 12 whole 8-byte records


def test_glob_byte_cap_with_something_shown_is_truncated(ws: Path, fake: FakeRg) -> None:
    fake.respond(stdout="".join(f"f{i:03d}.py\n" for i in range(500)))
    res = glob_tool.execute({"pattern": "*.py"}, fake.ctx(ws, rg_max_stdout_bytes=100))
    assert res.text.startswith("f000.py\n")
    assert "\n\n[Results truncated: showing 12 paths from offset 0. If the omitted remainder is needed, use " \
           "offset=12 with" in res.text
    assert res.details is not None and res.details["truncated"] is True and res.details["matched"] == 12


def test_glob_failure_raises(ws: Path, fake: FakeRg) -> None:
    fake.respond(stderr=" bad thing\n", exit_code=2)
    assert raised(glob_tool.execute, {"pattern": "*"}, fake.ctx(ws)) == "glob failed: bad thing"
    fake.respond(exit_code=2)
    assert raised(glob_tool.execute, {"pattern": "*"}, fake.ctx(ws)) == "glob failed: ripgrep exited with code 2"


def test_glob_real_tree_excludes_and_ignore_rules(ws: Path) -> None:
    write(ws, "src/a.ts", "")
    write(ws, ".hidden/b.ts", "")
    write(ws, "node_modules/p/c.ts", "")
    write(ws, "build/d.ts", "")
    write(ws, ".git/e.ts", "")
    write(ws, "keys/server.key", "")
    write(ws, ".env", "")
    write(ws, "img.png", "")
    write(ws, "notes.txt", "")
    res = glob(ws, pattern="**/*")
    assert sorted(res.text.split("\n")) == [".hidden/b.ts", "notes.txt", "src/a.ts"]
    assert glob(ws, pattern="*.png").text == "img.png"
    assert glob(ws, pattern="node_modules/**/*.ts").text == "node_modules/p/c.ts"


def test_glob_sort_modified_newest_first_with_real_ripgrep(ws: Path) -> None:
    write(ws, "old.py", "", T0)
    write(ws, "new.py", "", T0 + 200)
    write(ws, "sub/mid.py", "", T0 + 100)
    assert glob(ws, pattern="*.py", sort="modified").text == "new.py\nsub/mid.py\nold.py"


def test_glob_include_ignored_lists_ignored_files_in_a_narrow_scope(ws: Path) -> None:
    write(ws, ".gitignore", "*.log\n")
    (ws / ".git").mkdir()
    write(ws, "logs/a.log", "")
    write(ws, "logs/node_modules/b.log", "")
    assert glob(ws, pattern="logs/*.log").text == "No files matched"
    assert glob(ws, pattern="logs/*.log", include_ignored=True).text == "logs/a.log"
    assert sorted(glob(ws, pattern="**/*.log", path="logs", include_ignored=True).text.split("\n")) == [
        "a.log", "node_modules/b.log"]


# ---------------------------------------------------------------------------------------------
# spec ripgrep ripgrep runner


@pytest.mark.parametrize("tool", [grep_tool, glob_tool])
def test_missing_ripgrep_binary_raises(ws: Path, tmp_path: Path, tool: Any) -> None:
    ctx = make_context(str(ws), profile=REFERENCE.replace(rg_binary=str(tmp_path / "no-such-rg")))
    assert raised(tool.execute, {"pattern": "*.py"}, ctx) == RG_NOT_FOUND


@pytest.mark.parametrize("tool", [grep_tool, glob_tool])
def test_abort_already_set_raises_without_running_ripgrep(ws: Path, fake: FakeRg, tool: Any) -> None:
    ctx = fake.ctx(ws)
    ctx.abort.set()
    with pytest.raises(ToolAborted) as info:
        tool.execute({"pattern": "*.py"}, ctx)
    assert str(info.value) == "Operation aborted"
    assert fake.calls() == []


@pytest.mark.parametrize("tool", [grep_tool, glob_tool])
def test_abort_during_the_run_raises_promptly(ws: Path, fake: FakeRg, tool: Any) -> None:
    fake.respond(sleep=20)
    ctx = fake.ctx(ws)
    threading.Timer(0.3, ctx.abort.set).start()
    started = time.monotonic()
    with pytest.raises(ToolAborted) as info:
        tool.execute({"pattern": "*.py"}, ctx)
    assert str(info.value) == "Operation aborted"
    assert time.monotonic() - started < 5


def test_glob_line_filter_stops_after_offset_plus_limit_plus_one_kept_lines(ws: Path, fake: FakeRg) -> None:
    fake.respond(stdout="".join(f"skip{i}.txt\nf{i}.py\n" for i in range(100)))
    res = glob_tool.execute({"pattern": "*.py", "limit": 2, "offset": 1}, fake.ctx(ws))
    assert res.text.startswith("f1.py\nf2.py\n\n[Results truncated: showing 2 paths from offset 1.")
    assert res.details is not None and res.details["matched"] == 4


# ---------------------------------------------------------------------------------------------
# over the real protocol server


def test_search_tools_through_the_server_subprocess(ws: Path) -> None:
    write(ws, "src/app.py", "import os\nneedle = 1\n", T0 + 100)
    write(ws, "src/util.py", "needle()\n", T0)
    write(ws, "README.md", "no match\n", T0)
    write(ws, ".git/x.md", "needle\n", T0)
    out = serve([
        {"id": 1, "op": "workspace", "root": str(ws)},
        {"id": 2, "op": "call", "tool": "grep", "args": {"pattern": "needle"}},
        {"id": 3, "op": "call", "tool": "grep", "args": {"pattern": "needle", "output_mode": "content",
                                                         "path": "src/app.py", "context": 1}},
        {"id": 4, "op": "call", "tool": "grep", "args": {"pattern": "needle", "output_mode": "count", "limit": 1,
                                                         "path": "src/util.py"}},
        {"id": 5, "op": "call", "tool": "grep", "args": {"pattern": "("}},
        {"id": 6, "op": "call", "tool": "grep", "args": {"pattern": "x", "path": "missing"}},
        {"id": 7, "op": "call", "tool": "glob", "args": {"pattern": "src/*.py", "sort": "modified", "limit": 1}},
        {"id": 8, "op": "call", "tool": "glob", "args": {"pattern": "**/*.log", "include_ignored": True}},
        {"id": 9, "op": "call", "tool": "glob", "args": {"pattern": "*.md", "path": ".git"}},
        {"id": 10, "op": "shutdown"},
    ])
    assert out[2]["result"] == {"content": [{"type": "text", "text": "Found 2 files\nsrc/app.py\nsrc/util.py"}],
                                "details": {"files": 2}, "is_error": False}
    assert out[3]["result"]["content"] == [{"type": "text", "text": "app.py:1-import os\napp.py:2:needle = 1"}]
    assert out[4]["result"] == {
        "content": [{"type": "text", "text": "util.py:1\n\nFound 1 total occurrence across 1 file."}],
        "details": {"files": 1, "matches": 1}, "is_error": False}
    assert out[5]["ok"] is True and out[5]["result"]["is_error"] is True
    assert out[5]["result"]["content"][0]["text"].startswith("Invalid search pattern: unclosed group. Escape")
    assert out[5]["result"]["details"]["error_code"] == "invalid_regex"
    assert out[6] == {"id": 6, "ok": False, "error": {
        "message": f"grep path does not exist: {ws / 'missing'}", "kind": "tool"}}
    assert out[7]["result"]["content"][0]["text"] == (
        "src/app.py\n\n[Results truncated: showing 1 paths from offset 0. If the omitted remainder is needed, use "
        "offset=1 with the same search arguments. Refine path/pattern or pass sort=\"modified\" to surface "
        "recently changed files]")
    assert out[7]["result"]["details"]["next_offset"] == 1
    assert out[8] == {"id": 8, "ok": False, "error": {"message": INCLUDE_IGNORED_ERROR, "kind": "tool"}}
    assert out[9]["result"]["content"] == [{"type": "text", "text": "No files matched"}]


# ---------------------------------------------------------------------------------------------
# corners: JavaScript semantics the spec's expressions imply


def test_grep_glob_split_uses_javascript_whitespace(ws: Path, fake: FakeRg) -> None:
    fake.respond(exit_code=1)
    grep_tool.execute({"pattern": "p", "glob": "*.py\ufeff*.txt\x1c*.md"}, fake.ctx(ws))
    assert fake.calls()[0]["argv"][5:8] == ["--glob=*.py", "--glob=*.txt\x1c*.md", SCAN[0]]


def test_grep_count_total_parses_the_integer_after_the_last_colon(ws: Path, fake: FakeRg) -> None:
    fake.respond(stdout="./a:3\n./b:x\n./c:+2\n")
    res = grep_tool.execute({"pattern": "p", "output_mode": "count"}, fake.ctx(ws))
    assert res.text.endswith("\n\nFound 5 total occurrences across 3 files.")


def test_no_match_results_carry_an_empty_details_dict(ws: Path) -> None:
    write(ws, "a.txt", "x\n")
    (ws / ".git").mkdir()
    for res in (grep(ws, pattern="zzz"), grep(ws, pattern="x", path=".git"),
                grep(ws, pattern="zzz", output_mode="content"), glob(ws, pattern="*", path=".git")):
        assert res.details == {}
        assert res.is_error is False


def test_glob_absolute_pattern_without_magic_uses_node_dirname_and_basename(ws: Path) -> None:
    write(ws, "src/a.py", "")
    write(ws, "lib/src", "")
    # dirname("<ws>/src/") = "<ws>", basename = "src": an exact file name matched at any depth.
    assert glob(ws, pattern=f"{ws}/src/").text == "lib/src"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0); look at its state
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def _pid(fake: FakeRg, timeout: float = 5) -> int:
    pidfile = Path(str(fake.env["FAKE_RG_PIDFILE"]))
    deadline = time.monotonic() + timeout
    while not (pidfile.exists() and pidfile.read_text()):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    return int(pidfile.read_text())


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_timeout_escalates_to_sigkill_after_the_grace_period(ws: Path, fake: FakeRg, tmp_path: Path) -> None:
    fake.respond(sleep=30)
    fake.env.update({"FAKE_RG_IGNORE_TERM": "1", "FAKE_RG_PIDFILE": str(tmp_path / "pid")})
    started = time.monotonic()
    # 1 s leaves the stand-in time to ignore TERM even on a loaded machine
    assert raised(grep_tool.execute, {"pattern": "p"}, fake.ctx(ws, rg_timeout_ms=1000, rg_kill_grace_ms=400)) == (
        "grep timed out")
    assert 1.35 <= time.monotonic() - started < 15
    assert not _alive(_pid(fake))


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_abort_keeps_the_kill_escalation_armed(ws: Path, fake: FakeRg, tmp_path: Path) -> None:
    fake.respond(sleep=30)
    fake.env.update({"FAKE_RG_IGNORE_TERM": "1", "FAKE_RG_PIDFILE": str(tmp_path / "pid")})
    ctx = fake.ctx(ws, rg_kill_grace_ms=3000)
    aborted_at: list[float] = []

    def abort_once_running() -> None:  # a fixed delay could abort before the spawn on a loaded machine
        _pid(fake, timeout=30)
        aborted_at.append(time.monotonic())
        ctx.abort.set()

    threading.Thread(target=abort_once_running, daemon=True).start()
    with pytest.raises(ToolAborted):
        glob_tool.execute({"pattern": "*"}, ctx)
    assert time.monotonic() - aborted_at[0] < 2.5  # raised before the 3 s grace period ran out
    pid = _pid(fake)
    assert _alive(pid)  # SIGTERM was ignored ...
    deadline = time.monotonic() + 15
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(pid)  # ... and SIGKILL followed


def test_grep_content_notice_alone_when_no_line_fits(ws: Path) -> None:
    write(ws, "a.txt", "needle " + "x" * 400 + "\nneedle\n")
    res = grep(ws, REFERENCE.replace(grep_content_max_bytes=150), pattern="needle", output_mode="content")
    full = f"a.txt:1:needle {'x' * 400}\na.txt:2:needle"
    expected = cap_notice(len(full.encode()), "", 0).encode()[:150].decode()  # the notice alone, cut
    assert res.text == expected
    assert res.details is not None
    assert res.details["desktop_output_truncation"]["next_offset"] == 0
    assert res.details["desktop_output_truncation"]["returned_bytes"] == 150


@pytest.mark.parametrize("tool", [grep_tool, glob_tool])
def test_blank_path_uses_javascript_trim(ws: Path, fake: FakeRg, tool: Any) -> None:
    fake.respond(exit_code=1)
    tool.execute({"pattern": "*.py", "path": "\ufeff \t"}, fake.ctx(ws))
    assert os.path.realpath(fake.calls()[0]["cwd"]) == os.path.realpath(ws)


def test_glob_escaping_pattern_prefix_is_ignored_for_scope(ws: Path) -> None:
    (ws / "sub").mkdir()
    args = {"pattern": "../x/*.log", "include_ignored": True}
    assert raised(glob_tool.execute, args, make_context(str(ws))) == INCLUDE_IGNORED_ERROR
    assert glob_tool.execute({**args, "path": "sub"}, make_context(str(ws))).text == "No files matched"


def test_grep_and_glob_calls_run_in_parallel_over_the_server(ws: Path, fake: FakeRg) -> None:
    fake.respond(stdout="a.py\n", sleep=3)
    env = {k: v for k, v in fake.env.items() if v is not None}
    started = time.monotonic()
    out = serve([
        {"id": 1, "op": "workspace", "root": str(ws), "env": env, "profile": {"rg_binary": str(fake.binary)}},
        {"id": 2, "op": "call", "tool": "glob", "args": {"pattern": "*.py"}},
        {"id": 3, "op": "call", "tool": "grep", "args": {"pattern": "x"}},
        {"id": 4, "op": "call", "tool": "glob", "args": {"pattern": "*.py"}},
    ])
    assert time.monotonic() - started < 8.5  # three 3 s runs overlapped, not 9 s in a row (spec common.7: parallel)
    assert out[2]["result"]["content"][0]["text"] == "a.py"
    assert out[3]["result"]["content"][0]["text"] == "Found 1 files\na.py"
    assert len(fake.calls()) == 3


def test_byte_cap_is_exceeded_only_past_the_limit(ws: Path, fake: FakeRg) -> None:
    fake.respond(stdout="".join(f"./f{i:04d}.txt\n" for i in range(10)))  # exactly 120 bytes
    res = grep_tool.execute({"pattern": "p"}, fake.ctx(ws, rg_max_stdout_bytes=120))
    assert res.details == {"files": 10}
    res = grep_tool.execute({"pattern": "p"}, fake.ctx(ws, rg_max_stdout_bytes=119))
    assert res.details == {"files": 9, "stdoutTruncated": True}
