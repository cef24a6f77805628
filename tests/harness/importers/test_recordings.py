"""The importers on the realistic recordings the project ships (tests/fixtures/traces): what
each one imports and skips and why, the recorded agent, version and platform, and the round
trip — every recording, imported with ``--expect text``, passes when replayed faithfully on the
reference implementation from its shipped starting workspace."""

from __future__ import annotations

import argparse
import io
import json
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from harness.backends.local import LocalBackend
from harness.corpus.loader import load_corpus
from harness.importers.cli import register_cli
from harness.importers.importer import ImportOptions, SessionImport, build_session
from harness.importers.readers import READERS, detect_platform, read_trace
from harness.importers.trace import FORMATS, RecordedPlatform, TraceError
from harness.importers.workspace_files import from_directory
from harness.model.results import PASS
from harness.run.runner import Runner
from tests.support.repo import FIXTURES, REPO

TRACES = FIXTURES / "traces"
WORKSPACES = TRACES / "workspaces"
CLAUDE_MACOS = TRACES / "claude-code-macos-session.jsonl"
PI_LEGACY = TRACES / "pi-legacy-macos.jsonl"
OPENHANDS = TRACES / "openhands-log.jsonl"
CODEX = TRACES / "codex-rollout.jsonl"
ANTHROPIC_EDITOR = TRACES / "anthropic-text-editor-macos.json"


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


def _import(trace: Path, workspace: str, tmp_path: Path, **opts: Any) -> SessionImport:
    return build_session(read_trace(str(trace)), from_directory(str(WORKSPACES / workspace)),
                         ImportOptions(out_dir=str(tmp_path), **opts))


def _skips(imp: SessionImport) -> list[tuple[int, str, str]]:
    return [(s.line, s.name, s.reason) for s in imp.skipped]


def _steps(imp: SessionImport) -> list[tuple[str, str | None]]:
    return [(s.id, s.tool) for s in imp.scenarios[0].scenario.steps]


# -- Claude Code on macOS ----------------------------------------------------------------------------

def test_claude_code_recording_skips_what_never_ran_with_the_real_reason(tmp_path: Path) -> None:
    imp = _import(CLAUDE_MACOS, "shop", tmp_path)
    sibling = ('cancelled by Claude Code because a parallel call of the same turn failed ("Sibling tool call '
               'errored"); it never ran')
    assert _skips(imp) == [
        (8, "Bash", sibling),
        (9, "Grep", sibling),
        (19, "Task", "unmappable tool Task: subagent tool"),
        (31, "Bash", "rejected or interrupted in the trace (it never ran)"),
        (42, "Glob", 'no recorded result: the assistant turn ended with an API error (API Error: 529 {"type":"error",'
                     '"error":{"type":"overloaded_error","message":"Overloaded"}})'),
        (45, "Bash", "no recorded result: the trace is truncated (line 46 is incomplete) before its result"),
    ]
    # the failed call of the parallel batch is imported as the real error it was
    assert ("toolu-02bash", "bash") in _steps(imp)


def test_claude_code_create_mode_edit_becomes_a_write_with_its_content_checked(tmp_path: Path) -> None:
    imp = _import(CLAUDE_MACOS, "shop", tmp_path, expect="outcome")
    step = next(s for s in imp.scenarios[0].scenario.steps if s.id == "toolu-05edit")
    assert (step.tool, step.args["path"]) == ("write", "src/discount.js")
    assert step.raw_expect == {"status": "result", "is_error": False,
                               "files": {"src/discount.js": {"text": step.args["content"]}}}
    assert "create-mode Edit (empty old_string) mapped to write" in imp.notes


def test_claude_code_failed_create_mode_edit_is_skipped_not_turned_into_an_overwrite(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    lines = [
        {"type": "assistant", "sessionId": "s", "cwd": "/home/u/p", "uuid": "a1", "message": {"role": "assistant",
         "content": [{"type": "tool_use", "id": "toolu_1", "name": "Edit",
                      "input": {"file_path": "/home/u/p/a.txt", "old_string": "", "new_string": "x"}}]}},
        {"type": "user", "sessionId": "s", "cwd": "/home/u/p", "uuid": "u1", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": True,
             "content": "<tool_use_error>Cannot create new file - file already exists.</tool_use_error>"}]}},
    ]
    trace.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    imp = build_session(read_trace(str(trace)), from_directory(str(WORKSPACES / "shop")),
                        ImportOptions(out_dir=str(tmp_path)))
    assert _skips(imp) == [(1, "Edit", "Edit: a create-mode Edit (empty old_string) failed in the trace (the file "
                                       "existed); a write would overwrite it instead of failing")]


def test_claude_code_recording_keeps_sidechain_image_and_structured_results(tmp_path: Path) -> None:
    session = read_trace(str(CLAUDE_MACOS))
    by_id = {c.call_id: c for c in session.calls}
    assert by_id["toolu_09Grep"].sidechain and not by_id["toolu_01Read"].sidechain
    image = by_id["toolu_11Read"].result
    assert image is not None and (image.images, image.text, image.is_error) == (1, "", False)
    structured = by_id["toolu_01Read"].result
    assert structured is not None and structured.structured is not None
    assert structured.structured["file"]["numLines"] == 6
    assert session.first_prompt == "Add a 10% discount for orders over $50 to the cart, with a test"
    assert session.notes == (
        "the conversation was compacted 1 time(s); the file keeps every call, so nothing is lost",
        "line 46 is an incomplete record (the recording was cut off mid-write) and is left out",
        "entries that are not tool calls, ignored: 1 file-history-snapshot, 1 summary, 1 system, 1 x-ide-telemetry",
        "1 call(s) made by subagents inside the session (sidechains) are imported in trace order: they ran on the "
        "same files",
    )


def test_claude_code_text_mode_falls_back_to_outcomes_on_another_surface(tmp_path: Path) -> None:
    imp = _import(CLAUDE_MACOS, "shop", tmp_path, expect="text")
    expects = {s.id: s.raw_expect for s in imp.scenarios[0].scenario.steps}
    assert expects["toolu-02bash"] == {"status": "result", "is_error": True,
                                       "text": {"endswith": "Command exited with code 1"}}
    assert expects["toolu-06edit"] == {"status": "result", "is_error": False, "files": {"src/cart.js": {"contains": [
        "import { price } from './price.js';", "import { applyDiscount } from './discount.js';"]}}}
    assert expects["toolu-14edit"] == {"status": "error"}
    assert expects["toolu-13bash"] == {"status": "result", "is_error": False}
    assert not any("text" in e and not isinstance(e["text"], dict) for e in expects.values())
    assert (imp.text_steps, imp.outcome_steps) == (0, 11)


# -- platform and version ----------------------------------------------------------------------------

@pytest.mark.parametrize(("trace", "workspace", "recording"), [
    (CLAUDE_MACOS, "shop", "recorded with Claude Code 1.0.24; platform macos (from the cwd /Users/ana/shop)"),
    (PI_LEGACY, "notes", "recorded with pi; session format v1, legacy linear sessions, so an older pi; pi does not "
                         "record its release in a session; platform macos (from the cwd /Users/ben/notes)"),
    (ANTHROPIC_EDITOR, "site", "recorded with anthropic; platform macos (from the system prompt 'Platform: darwin')"),
])
def test_a_macos_recording_says_so_and_requires_nothing_of_the_whole_scenario(
        trace: Path, workspace: str, recording: str, tmp_path: Path) -> None:
    """Issue 21 item 12: a macOS trace imported with ``requires: {os: macos}`` skipped whole, with exit
    0, on Linux. Now only the steps bound to the platform carry a condition (``when: {os: macos}``)."""
    imp = _import(trace, workspace, tmp_path)
    assert recording in imp.notes
    assert imp.scenarios[0].text.splitlines()[1] == f"# {recording}."
    assert imp.scenarios[0].scenario.requires.os is None
    anywhere = _import(trace, workspace, tmp_path, platform="any")
    assert "recorded on macos; --platform any: every step runs on any platform" in anywhere.notes


def test_a_linux_recording_requires_nothing_and_names_the_codex_release(tmp_path: Path) -> None:
    imp = _import(CODEX, "api", tmp_path)
    assert imp.scenarios[0].scenario.requires.os is None
    assert "recorded with Codex CLI 0.36.0; originator codex_cli_rs; platform linux (from the cwd /home/dev/api)" \
        in imp.notes


@pytest.mark.parametrize(("cwd", "expected"), [
    ("/Users/ana/p", RecordedPlatform("macos", "cwd /Users/ana/p")),
    ("C:\\Users\\ana\\p", RecordedPlatform("windows", "cwd C:\\Users\\ana\\p")),
    ("/home/ana/p", RecordedPlatform("linux", "cwd /home/ana/p")),
    ("/opt/x", RecordedPlatform("linux", "cwd /opt/x")),
    ("relative/dir", RecordedPlatform()),
    (None, RecordedPlatform()),
])
def test_platform_comes_from_the_recorded_working_directory(cwd: str | None, expected: RecordedPlatform) -> None:
    assert detect_platform(cwd) == expected


def test_a_stated_platform_wins_over_the_working_directory() -> None:
    assert detect_platform("/home/x", "<env>\nPlatform: win32\n</env>") == RecordedPlatform(
        "windows", "system prompt 'Platform: win32'")


# -- the round trip ------------------------------------------------------------------------------------

ROUND_TRIPS = [
    pytest.param(CLAUDE_MACOS, "shop", ["--surface", "minimax"], 0, id="claude-code-minimax"),
    pytest.param(CLAUDE_MACOS, "shop", ["--surface", "pi"], 0, id="claude-code-pi"),
    pytest.param(PI_LEGACY, "notes", ["--surface", "pi"], 6, id="pi-pi"),  # "2\n" is too short to compare
    pytest.param(PI_LEGACY, "notes", ["--surface", "minimax"], 0, id="pi-minimax"),
    pytest.param(OPENHANDS, "shop", ["--root", "/workspace"], 0, id="openhands"),
    pytest.param(CODEX, "api", [], 0, id="codex"),
    pytest.param(ANTHROPIC_EDITOR, "site", [], 0, id="anthropic-text-editor"),
]


@pytest.mark.parametrize(("trace", "workspace", "extra", "text_steps"), ROUND_TRIPS)
def test_every_shipped_recording_replays_faithfully_on_the_reference(
        trace: Path, workspace: str, extra: list[str], text_steps: int, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code, _, err = run_cli(["import", str(trace), "--workspace-dir", str(WORKSPACES / workspace), "--out", str(out),
                                  "--expect", "text", "--platform", "any", *extra], capsys)
    assert (code, err) == (0, "")
    scenarios = load_corpus([out])
    assert len(scenarios) == 1 and scenarios[0].steps
    if text_steps:  # recorded on the target surface: the texts themselves are compared
        assert sum(1 for s in scenarios[0].steps if s.expect.text or s.expect.error) == text_steps
    result = Runner(LocalBackend, backend_label="local").run(scenarios).scenarios[0]
    assert result.status == PASS, result.failure_text


def test_a_replay_from_another_starting_state_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The round trip can fail: the same recording replayed from a workspace whose script (never
    shown in the trace, so the trace cannot correct it) answers differently does."""
    start = tmp_path / "notes"
    shutil.copytree(WORKSPACES / "notes", start)
    (start / "scripts" / "count.sh").write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    out = tmp_path / "out"
    code, _, _ = run_cli(["import", str(PI_LEGACY), "--workspace-dir", str(start), "--out", str(out),
                          "--expect", "text", "--platform", "any", "--surface", "pi"], capsys)
    assert code == 0
    result = Runner(LocalBackend, backend_label="local").run(load_corpus([out])).scenarios[0]
    assert result.status != PASS


def test_where_the_repository_and_the_trace_disagree_the_trace_wins_and_the_summary_says_where(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 22: the session did not start from the files given (uncommitted work): the first read
    shows what the file held, so that is the start state, and the summary names the file and line."""
    start = tmp_path / "notes"
    shutil.copytree(WORKSPACES / "notes", start)
    (start / "todo.md").write_text("# Todo\n\n- [x] buy milk\n", encoding="utf-8")
    out = tmp_path / "out"
    code, summary, _ = run_cli(["import", str(PI_LEGACY), "--workspace-dir", str(start), "--out", str(out),
                                "--expect", "text", "--platform", "any", "--surface", "pi"], capsys)
    assert code == 0
    assert ("  note: todo.md: the repository and the trace disagree; the trace's content (line 3) is used"
            in summary.splitlines())
    scenario = load_corpus([out])[0]
    todo = next(e for e in scenario.workspace.entries if e.path == "todo.md")
    assert todo.data == (WORKSPACES / "notes" / "todo.md").read_bytes()
    result = Runner(LocalBackend, backend_label="local").run([scenario]).scenarios[0]
    assert result.status == PASS, result.failure_text


# -- robustness ------------------------------------------------------------------------------------------

SHIPPED = sorted(p for p in TRACES.iterdir() if p.is_file())


@pytest.mark.parametrize("fmt", ["auto", *FORMATS])
@pytest.mark.parametrize("trace", SHIPPED, ids=[p.name for p in SHIPPED])
def test_every_importer_reads_every_shipped_trace_without_a_traceback(trace: Path, fmt: str, tmp_path: Path) -> None:
    """Any reader on any trace either imports or raises ``TraceError`` with one-line
    ``file:line: …`` problems — never another exception."""
    try:
        session = read_trace(str(trace), fmt)
    except TraceError as exc:
        assert exc.problems and all("\n" not in p and p.startswith(f"{trace}:") for p in exc.problems)
        return
    for surface in ("minimax", "pi"):
        for expect in ("status", "text"):
            imp = build_session(session, from_directory(str(WORKSPACES / "shop")),
                                ImportOptions(surface=surface, expect=expect, out_dir=str(tmp_path)))
            assert imp.imported + len(imp.skipped) == len(session.calls)
    assert set(READERS) == set(FORMATS)


def test_user_mistakes_give_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = ["--workspace-dir", str(WORKSPACES / "shop"), "--out", str(tmp_path / "o")]
    unknown = tmp_path / "notes.json"
    unknown.write_text('{"title": "not a trace"}\n', encoding="utf-8")
    code, _, err = run_cli(["import", str(unknown), *ws], capsys)
    assert code == 2 and err.splitlines()[0].startswith(f"{unknown}:1: cannot tell the trace format")
    assert len(err.splitlines()) == 2 and "Traceback" not in err
    latin1 = tmp_path / "latin1.jsonl"
    latin1.write_bytes(b'{"type": "user"}\n{"text": "caf\xe9"}\n')
    code, _, err = run_cli(["import", str(latin1), *ws], capsys)
    assert (code, err.splitlines()[0]) == (2, f"{latin1}:2: expected UTF-8 text (invalid continuation byte)")
    code, _, err = run_cli(["import", str(tmp_path / "missing.jsonl"), *ws], capsys)
    assert (code, err) == (2, f"toolproof: error: {tmp_path / 'missing.jsonl'}: no such file or directory\n")
    code, _, err = run_cli(["import", str(PI_LEGACY), *ws, "--tool-map", "run"], capsys)
    assert code == 2 and "--tool-map: expected NAME=TOOL, got 'run'" in err
    code, _, err = run_cli(["import", str(PI_LEGACY), *ws, "--tool-map", "run=teleport"], capsys)
    assert code == 2 and "unknown tool 'teleport' in 'run=teleport'; expected one of read, write" in err
    code, _, err = run_cli(["import", str(PI_LEGACY), "--git", "no-such-repo@HEAD", "--out", str(tmp_path / "o")],
                           capsys)
    assert (code, err) == (2, "toolproof: error: --git: no-such-repo: not a directory\n")


def test_a_truncated_last_line_is_left_out_but_a_bad_middle_line_is_an_error(tmp_path: Path) -> None:
    good = CLAUDE_MACOS.read_text(encoding="utf-8").split("\n")
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join([*good[:3], good[3][:50], *good[4:]]), encoding="utf-8")
    with pytest.raises(TraceError) as exc:
        read_trace(str(broken))
    assert exc.value.problems == [f"{broken}:4: invalid JSON: Unterminated string starting at (column 47)"]
    session = read_trace(str(broken), skip_bad_lines=True)
    assert "1 line(s) of invalid JSON left out (--skip-bad-lines): 4" in session.notes


# -- directories of traces ------------------------------------------------------------------------------

def test_a_directory_of_traces_imports_each_session_and_passes_over_the_rest(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    traces = tmp_path / "sessions"
    (traces / "sub").mkdir(parents=True)
    shutil.copy(CLAUDE_MACOS, traces / "main.jsonl")
    shutil.copy(CODEX, traces / "sub" / "rollout.jsonl")
    (traces / "settings.json").write_text('{"theme": "dark"}\n', encoding="utf-8")
    (traces / "README.txt").write_text("not even looked at\n", encoding="utf-8")
    agent = [{"type": "user", "isSidechain": True, "agentId": "a81f", "sessionId": "7c0e", "cwd": "/Users/ana/shop",
              "uuid": "s1", "message": {"role": "user", "content": "Find formatting"}},
             {"type": "assistant", "isSidechain": True, "agentId": "a81f", "sessionId": "7c0e", "cwd": "/Users/ana/shop",
              "uuid": "s2", "message": {"role": "assistant", "content": [
                  {"type": "tool_use", "id": "toolu_s1", "name": "Grep", "input": {"pattern": "toFixed"}}]}},
             {"type": "user", "isSidechain": True, "agentId": "a81f", "sessionId": "7c0e", "cwd": "/Users/ana/shop",
              "uuid": "s3", "message": {"role": "user", "content": [
                  {"type": "tool_result", "tool_use_id": "toolu_s1", "content": "No files found"}]}}]
    (traces / "agent-a81f.jsonl").write_text("".join(json.dumps(x) + "\n" for x in agent), encoding="utf-8")
    out = tmp_path / "out"
    code, summary, err = run_cli(["import", str(traces), "--workspace-dir", str(WORKSPACES / "shop"),
                                  "--out", str(out)], capsys)
    assert (code, err) == (0, "")
    assert sorted(p.name for p in out.iterdir()) == ["0199a2f3-5d1e-7c40-b1f2-8e5a9c0d4b17.yaml",
                                                     "7c0e4b1d-3a52-4f0e-9c57-2b8d6f1e0a44.yaml"]
    assert ("  skipped 1× subagent transcript of session 7c0e: its calls ran in the middle of the parent session, "
            "from files this import cannot reconstruct") in summary.splitlines()
    assert f"toolproof import: passed over {traces / 'settings.json'}: not a recorded session of a known format" \
        in summary.splitlines()


def test_an_empty_directory_of_traces_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["import", str(tmp_path), "--workspace-dir", str(WORKSPACES / "shop"),
                            "--out", str(tmp_path / "o")], capsys)
    assert (code, err) == (2, f"toolproof: error: {tmp_path}: the directory holds no trace files "
                              "(.jsonl, .json, .ndjson)\n")


# -- the starting workspace is referenced, never duplicated ---------------------------------------------

def test_split_parts_reference_one_workspace_instead_of_copying_it(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code, _, _ = run_cli(["import", str(CLAUDE_MACOS), "--workspace-dir", str(WORKSPACES / "shop"), "--out", str(out),
                          "--split", "3", "--platform", "any"], capsys)
    assert code == 0
    docs = [yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(out.iterdir())]
    assert len(docs) == 4
    refs = [d["workspace"] for d in docs]
    assert all(set(r) == {"from"} for r in refs) and len({json.dumps(r) for r in refs}) == 1
    assert (out / refs[0]["from"]["dir"]).resolve() == (WORKSPACES / "shop").resolve()
    assert refs[0]["from"]["exclude"] == [".git", "node_modules"] and len(refs[0]["from"]["sha256"]) == 64
    schema = json.loads((REPO / "harness/schemas/scenario.schema.json").read_text(encoding="utf-8"))
    for doc in docs:
        jsonschema.validate(doc, schema)
    inline = tmp_path / "inline"
    run_cli(["import", str(CLAUDE_MACOS), "--workspace-dir", str(WORKSPACES / "shop"), "--out", str(inline),
             "--split", "3", "--platform", "any", "--inline-workspace"], capsys)
    inline_docs = [yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(inline.iterdir())]
    assert all(len(d["workspace"]["files"]) == 5 for d in inline_docs)
    referenced = sum(p.stat().st_size for p in out.iterdir())
    copied = sum(p.stat().st_size for p in inline.iterdir())
    assert referenced < copied
    scenarios = load_corpus([out])
    assert [e.path for e in scenarios[0].workspace.entries] == ["README.md", "logo.png", "package.json",
                                                                "src/cart.js", "src/price.js"]
    run = Runner(LocalBackend, backend_label="local").run(scenarios)
    assert [r.status for r in run.scenarios] == [PASS] * 4, [r.failure_text for r in run.scenarios]


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e",
           "PATH": "/usr/bin:/bin", "HOME": str(repo)}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env,
                          text=True).stdout.strip()


def test_a_git_revision_is_referenced_by_its_commit_and_replays(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "api"
    shutil.copytree(WORKSPACES / "api", repo)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "start")
    commit = _git(repo, "rev-parse", "HEAD")
    (repo / "app.py").write_text("changed after the session\n", encoding="utf-8")  # the work tree moved on
    out = tmp_path / "out"
    code, _, err = run_cli(["import", str(CODEX), "--git", f"{repo}@HEAD", "--out", str(out), "--expect", "text"],
                           capsys)
    assert (code, err) == (0, "")
    doc = yaml.safe_load(next(out.iterdir()).read_text(encoding="utf-8"))
    assert doc["workspace"]["from"]["repo"] == "../api" and doc["workspace"]["from"]["rev"] == commit
    result = Runner(LocalBackend, backend_label="local").run(load_corpus([out])).scenarios[0]
    assert result.status == PASS, result.failure_text


def test_a_tarball_is_referenced_and_replays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archive = tmp_path / "notes.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(WORKSPACES / "notes", arcname=".")
    out = tmp_path / "out"
    code, _, err = run_cli(["import", str(PI_LEGACY), "--workspace-archive", str(archive), "--out", str(out),
                            "--expect", "text", "--platform", "any", "--surface", "pi"], capsys)
    assert (code, err) == (0, "")
    doc = yaml.safe_load(next(out.iterdir()).read_text(encoding="utf-8"))
    assert doc["workspace"]["from"]["archive"] == "../notes.tar.gz"
    scenario = load_corpus([out])[0]
    assert next(e for e in scenario.workspace.entries if e.path == "scripts/count.sh").mode == 0o755
    result = Runner(LocalBackend, backend_label="local").run([scenario]).scenarios[0]
    assert result.status == PASS, result.failure_text


def test_only_one_workspace_source_is_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["import", str(PI_LEGACY), "--workspace-dir", str(WORKSPACES / "notes"),
                            "--workspace-archive", "x.tar", "--out", str(tmp_path)], capsys)
    assert (code, err) == (2, "toolproof: error: pass only one of --workspace-dir, --git and --workspace-archive "
                              "(got --workspace-dir, --workspace-archive)\n")
