"""``toolproof import`` end to end: the subcommand on a parser built here, the starting workspace
(directory, git revision, limits, exact bytes), and the round trip — a trace recorded against the
reference implementation imports into a scenario that passes on the local backend."""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.backends.local import LocalBackend
from harness.corpus.loader import load_corpus, parse_scenario_text
from harness.importers.cli import NO_WORKSPACE_NOTE, register_cli
from harness.importers.importer import render_yaml
from harness.importers.workspace_files import (
    WorkspaceLimits,
    WorkspaceSourceError,
    entry_for_file,
    from_directory,
    from_git,
)
from harness.model.results import PASS
from harness.model.scenario import Workspace, WorkspaceEntry
from harness.run.runner import Runner
from harness.run.workspace_archive import build_archive
from tests.support.repo import FIXTURES

TRACES = FIXTURES / "traces"


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="toolproof")
    register_cli(parser.add_subparsers(dest="command", required=True))
    out = io.StringIO()
    try:
        args = parser.parse_args(argv)
        code = int(args.func(args, out))
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, out.getvalue(), capsys.readouterr().err


def test_import_without_a_starting_workspace_infers_it_from_the_trace_and_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 22: with no workspace the start state comes from the trace alone (it used to refuse)."""
    code, out, err = run_cli(["import", str(TRACES / "pi-session.jsonl"), "--out", str(tmp_path / "o"),
                              "--surface", "pi"], capsys)
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == f"toolproof import: {NO_WORKSPACE_NOTE}"
    assert "  note: start state inferred from the trace alone (no workspace given): 1 file(s)" in out.splitlines()
    scenario = load_corpus([tmp_path / "o"])[0]
    assert [(e.path, e.data) for e in scenario.workspace.entries] == [
        ("src/app.py", b'def greet(name):\n    return "hello " + name\n')]


def test_import_writes_a_scenario_and_prints_the_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "o"
    code, out, err = run_cli(["import", str(TRACES / "pi-session.jsonl"), "--workspace-dir", str(TRACES / "proj"),
                              "--out", str(out_dir), "--surface", "pi"], capsys)
    assert (code, err) == (0, "")
    assert out.splitlines()[1:4] == [
        "  calls: 6 recorded, 5 imported as 5 step(s), 1 skipped; recorded root /work/pi-proj",
        "  skipped 1× unmappable tool ls: toolproof has no ls tool",
        f"  note: {TRACES / 'pi-session.jsonl'}:13: a shell command the user ran ('git status') is not a tool "
        "call and is not imported",
    ]
    assert out.splitlines()[-1] == (f"toolproof import: 1 scenario(s) written to {out_dir}, 5 call(s) imported, "
                                    "1 skipped")
    assert [s.id for s in load_corpus([out_dir])] == ["imported/9d2e-pi-demo"]


def test_import_never_overwrites_without_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "o"
    out_dir.mkdir()
    target = out_dir / "9d2e-pi-demo.yaml"
    target.write_text("mine\n", encoding="utf-8")
    argv = ["import", str(TRACES / "pi-session.jsonl"), "--workspace-dir", str(TRACES / "proj"), "--out", str(out_dir)]
    code, _, err = run_cli(argv, capsys)
    assert code == 2
    assert err == (f"toolproof: error: 1 file(s) already exist in {out_dir} (9d2e-pi-demo.yaml); "
                   "pass --force to overwrite them\n")
    assert target.read_text(encoding="utf-8") == "mine\n"
    code, _, _ = run_cli([*argv, "--force"], capsys)
    assert code == 0
    assert target.read_text(encoding="utf-8").startswith("# Imported by toolproof from pi-session.jsonl")


def test_malformed_traces_exit_2_with_every_problem_and_write_nothing(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    bad, missing = TRACES / "claude-code-bad-json.jsonl", TRACES / "pi-missing-ids.jsonl"
    code, out, err = run_cli(["import", str(bad), str(missing), str(TRACES / "pi-session.jsonl"),
                              "--workspace-dir", str(TRACES / "proj"), "--out", str(tmp_path / "o")], capsys)
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"{bad}:2: invalid JSON: Expecting ',' delimiter (column 152)",
        f"{missing}:2: message.content[1].id: expected the tool call's id (a non-empty string)",
        f"{missing}:3: message.toolCallId: expected the id of the tool call this result answers (a non-empty string)",
        "toolproof: 3 problem(s) found in the trace(s); nothing was written",
    ]
    assert "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_a_format_override_that_finds_no_calls_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["import", str(TRACES / "claude-code-session.jsonl"), "--format", "pi",
                            "--workspace-dir", str(TRACES / "proj"), "--out", str(tmp_path / "o")], capsys)
    assert code == 2
    assert err == "toolproof: error: no call could be imported, so no scenario was written\n"


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["import", str(TRACES / "pi-session.jsonl"), "--workspace-dir", str(TRACES / "proj"), "--out", str(tmp_path)]
    assert run_cli([*base, "--surface", "vim"], capsys)[0] == 2
    assert run_cli([*base, "--split", "0"], capsys)[0] == 2
    code, _, err = run_cli([*base, "--id-prefix", "Bad_Prefix"], capsys)
    assert code == 2 and err.startswith("toolproof: error: --id-prefix: expected an id matching")
    code, _, err = run_cli(["import", str(tmp_path / "nope.jsonl"), "--workspace-dir", str(TRACES / "proj"),
                            "--out", str(tmp_path)], capsys)
    assert (code, err) == (2, f"toolproof: error: {tmp_path / 'nope.jsonl'}: no such file or directory\n")


# -- starting workspace ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("data", "expected"), [
    (b"a\nb\n", {"text": "a\nb\n"}),
    (b"a\r\nb\r\n", {"text": "a\nb\n", "eol": "crlf"}),
    (b"a\rb", {"text": "a\nb", "eol": "cr"}),
    (b"\xef\xbb\xbfbom\n", {"text": "bom\n", "bom": True}),
    ("\ufeffwide\n".encode("utf-16-le"), {"text": "wide\n", "encoding": "utf-16le", "bom": True}),
    (b"mixed\r\nends\n", {"base64": "bWl4ZWQNCmVuZHMK"}),
    (b"\x00\x01\xff", {"base64": "AAH/"}),
])
def test_file_bytes_become_text_entries_only_when_they_round_trip(data: bytes, expected: dict[str, object]) -> None:
    assert entry_for_file("f", data) == {"path": "f", **expected}


@given(st.binary(max_size=64) | st.text(max_size=64).map(lambda s: s.encode("utf-8")))
def test_workspace_entry_loads_back_to_the_same_bytes(data: bytes) -> None:
    """Invariant: any file's entry, dumped to YAML and loaded by the project loader, yields its bytes."""
    doc = {"id": "p/x", "workspace": {"files": [entry_for_file("f", data, 0o755)]}, "steps": [{"tool": "read", "args": {}}]}
    scenario = parse_scenario_text(render_yaml(doc), "x.yaml")
    entry = scenario.workspace.entries[0]
    assert (entry.data, entry.mode) == (data, 0o755)


def test_directory_source_excludes_defaults_keeps_links_modes_and_empty_dirs(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref\n")
    (tmp_path / "node_modules" / "m").mkdir(parents=True)
    (tmp_path / "node_modules" / "m" / "i.js").write_text("x")
    (tmp_path / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(tmp_path / "run.sh", 0o755)
    (tmp_path / "empty").mkdir()
    os.symlink("run.sh", tmp_path / "link")
    os.symlink(str(tmp_path / "run.sh"), tmp_path / "abs-link")
    (tmp_path / "build.log").write_text("noise")
    ws = from_directory(str(tmp_path), WorkspaceLimits(excludes=(".git", "node_modules", "*.log")))
    assert list(ws.entries) == [
        {"path": "abs-link", "symlink": "run.sh"},
        {"path": "empty", "dir": True},
        {"path": "link", "symlink": "run.sh"},
        {"path": "run.sh", "text": "#!/bin/sh\n", "mode": "0755"},
    ]


def test_directory_over_the_limits_fails_clearly(tmp_path: Path) -> None:
    (tmp_path / "big.bin").write_bytes(b"x" * 100)
    with pytest.raises(WorkspaceSourceError) as exc:
        from_directory(str(tmp_path), WorkspaceLimits(max_file_bytes=99))
    assert str(exc.value) == (f"{tmp_path}: big.bin is 100 bytes, over the per-file limit of 99 bytes; "
                              "exclude it (--exclude) or raise --max-file-bytes")
    (tmp_path / "more.bin").write_bytes(b"y" * 100)
    with pytest.raises(WorkspaceSourceError, match="over the total limit of 150 bytes"):
        from_directory(str(tmp_path), WorkspaceLimits(max_total_bytes=150))


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def test_git_revision_source_takes_the_files_as_committed(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.txt").write_text("old\n")
    (tmp_path / "tool.sh").write_text("echo\n")
    os.chmod(tmp_path / "tool.sh", 0o755)
    os.symlink("a.txt", tmp_path / "ln")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "one")
    (tmp_path / "a.txt").write_text("changed since\n")
    ws = from_git(str(tmp_path), "HEAD")
    assert list(ws.entries) == [
        {"path": "a.txt", "text": "old\n"},
        {"path": "ln", "symlink": "a.txt"},
        {"path": "tool.sh", "text": "echo\n", "mode": "0755"},
    ]
    with pytest.raises(WorkspaceSourceError, match="--git: git rev-parse failed"):
        from_git(str(tmp_path), "no-such-rev")


# -- round trip ----------------------------------------------------------------------------------------------

CLAUDE_NAMES = {"read": "Read", "write": "Write", "edit": "Edit", "grep": "Grep", "glob": "Glob", "bash": "Bash"}


def _record_claude_trace(start: Path, calls: list[tuple[str, dict[str, object]]], trace: Path) -> None:
    """Run ``calls`` on the reference implementation (absolute paths, as Claude Code passes them)
    and write what happened as a Claude Code session JSONL whose cwd is the workspace root."""
    entries = tuple(WorkspaceEntry(path=p.name, kind="file", data=p.read_bytes()) for p in sorted(start.iterdir()))
    backend = LocalBackend()
    try:
        backend.start()
        root = backend.new_workspace(build_archive(Workspace(entries)), {}, None)
        lines = [{"type": "user", "sessionId": "round-trip", "cwd": root, "uuid": "u0",
                  "message": {"role": "user", "content": "Round trip through the reference"}}]
        for i, (tool, args) in enumerate(calls, 1):
            concrete = {k: (f"{root}/{v}" if k in ("file_path", "path") else v) for k, v in args.items()}
            ref_args = {("path" if k == "file_path" and tool in ("read", "write") else k): v for k, v in concrete.items()}
            resp = backend.request("call", {"tool": tool, "args": ref_args}, deadline_s=30)
            if resp.ok:
                blocks = resp.result["content"]
                text, is_error = "\n".join(b["text"] for b in blocks), bool(resp.result.get("is_error"))
            else:
                text, is_error = resp.error_message, True
            lines.append({"type": "assistant", "sessionId": "round-trip", "cwd": root, "uuid": f"a{i}",
                          "message": {"role": "assistant", "content": [
                              {"type": "tool_use", "id": f"toolu_{i}", "name": CLAUDE_NAMES[tool], "input": concrete}]}})
            lines.append({"type": "user", "sessionId": "round-trip", "cwd": root, "uuid": f"r{i}",
                          "message": {"role": "user", "content": [
                              {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": text, "is_error": is_error}]}})
        backend.drop_workspace(root)
    finally:
        backend.close()
    trace.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


@pytest.mark.parametrize("expect", ["text", "status"])
def test_trace_recorded_against_the_reference_imports_and_passes_on_local(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], expect: str) -> None:
    start = tmp_path / "start"
    start.mkdir()
    (start / "a.txt").write_text("alpha\nbeta\n")
    (start / "b.md").write_text("# title\n")
    calls: list[tuple[str, dict[str, object]]] = [
        ("read", {"file_path": "a.txt"}),
        ("write", {"file_path": "c.txt", "content": "new file\n"}),
        ("edit", {"file_path": "a.txt", "old_string": "beta", "new_string": "gamma"}),
        ("edit", {"file_path": "a.txt", "old_string": "not there", "new_string": "x"}),
        ("grep", {"pattern": "gamma", "output_mode": "content"}),
        ("glob", {"pattern": "*.md"}),
        ("bash", {"command": "echo hi; pwd", "timeout": 10000}),
        ("bash", {"command": "exit 3"}),
    ]
    trace = tmp_path / "session.jsonl"
    _record_claude_trace(start, calls, trace)
    out_dir = tmp_path / "out"
    # recorded against the reference: the recording's surface is minimax, so text is compared
    code, _, err = run_cli(["import", str(trace), "--workspace-dir", str(start), "--out", str(out_dir),
                            "--expect", expect, "--recorded-surface", "minimax"], capsys)
    assert (code, err) == (0, "")
    scenarios = load_corpus([out_dir])
    steps = scenarios[0].steps
    assert len(steps) == len(calls)
    if expect == "text":
        assert steps[1].expect.text is not None and steps[1].expect.text.equals == "Successfully wrote 9 bytes to c.txt"
        assert steps[3].expect.error is not None and steps[3].expect.error.equals is not None
        assert steps[6].expect.text is not None and steps[6].expect.text.startswith == "hi\n$WORKSPACE\n"
    run = Runner(LocalBackend, backend_label="local").run(scenarios)
    result = run.scenarios[0]
    assert result.status == PASS, result.failure_text
