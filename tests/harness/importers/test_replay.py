"""Real recordings replay faithfully (issue 22) and imported traces do not run on the host
(issue 21 item 5): the shipped recordings (tests/fixtures/recordings, README.md there) imported and
replayed on the reference with ``toolproof import --replay``, their replay reports, the start state
inferred from the trace, resyncs, and the shell commands refused, contained or conditioned."""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.backends.local import LocalBackend
from harness.cli import main as toolproof_main
from harness.corpus.loader import load_corpus
from harness.importers.importer import ImportOptions, build_session
from harness.importers.readers import read_trace
from harness.importers.workspace_files import from_directory
from harness.run.runner import Runner
from tests.support.docker import docker_engine, docker_image  # noqa: F401  (fixtures)
from tests.support.recordings import RECORDINGS, Recording, recordings, replay

ALL = recordings()
BY_NAME = {r.name: r for r in ALL}
GREEN_SHARE = 0.95
NO_WORKSPACE_IMPORT_SHARE = 0.60


def _traces(data: dict[str, Any]) -> list[dict[str, Any]]:
    return list(data.get("traces", []))


def _explained(trace: dict[str, Any]) -> None:
    """Every call is imported or skipped with a reason; every imported step that is not green is a
    skip with a reason or a named real difference; resyncs carry their reason."""
    assert trace["imported_calls"] + trace["skipped_at_import"] == trace["recorded_calls"], trace["trace"]
    assert all(s["reason"] for s in trace["skipped_calls"])
    assert all(reason for reason in trace["skipped_at_replay_by_reason"])
    assert all(d["messages"] for d in trace["real_differences"])
    assert all(r["reason"] and r["cause"] for r in trace["resyncs"])
    assert trace["green"] + trace["skipped_at_replay"] + len(trace["real_differences"]) + \
        sum(1 for e in trace["errors"] if e.get("status")) >= trace["imported_steps"] - len(trace["errors"])


# -- the manifest covers every format and every mess ----------------------------------------------------------

def test_the_shipped_recordings_cover_every_format_and_the_messes_of_the_issue() -> None:
    formats = {read_trace(str(r.trace)).format for r in ALL}
    assert formats == {"claude-code", "pi", "openai", "anthropic"}
    covered = " | ".join(c for r in ALL for c in r.covers)
    for mess in ("uncommitted start state", "out-of-band human edit", "BSD sed -i ''", "npm without node_modules",
                 "git commit", "git push", "background-task output file under /tmp", "pi Command aborted",
                 "pi --mode json", "OpenAI Responses API log", "Codex CLI rollout", "Anthropic messages log"):
        assert mess in covered, mess
    assert (RECORDINGS / "README.md").read_text(encoding="utf-8").count("written for the tests") >= 1


@pytest.mark.parametrize("rec", ALL, ids=[r.name for r in ALL])
def test_no_recorded_call_is_dropped_silently(rec: Recording, tmp_path: Path) -> None:
    """imported + skipped with a reason = recorded tool calls, with and without a workspace."""
    session = read_trace(str(rec.trace))
    ws = from_directory(str(RECORDINGS / rec.workspace["dir"])) if "dir" in rec.workspace else None
    for workspace in {id(ws): ws, 0: None}.values():
        imp = build_session(session, workspace, ImportOptions(out_dir=str(tmp_path), surface="pi"
                                                              if "pi" in rec.args else "minimax"))
        assert imp.imported + len(imp.skipped) == len(session.calls) == imp.recorded_calls
        assert all(s.reason for s in imp.skipped)


# -- replayed on the reference -----------------------------------------------------------------------------------

def test_the_shipped_recordings_replay_green_on_the_reference_on_this_host(tmp_path: Path) -> None:
    """Issue 22 done-when, on the host (--allow-host): no real difference, no error, every step
    accounted for; of the imported steps that ran, at least 95 % are green (the ones that did not
    run are the contained and platform-bound steps, skipped with their reason)."""
    steps = green = skipped = 0
    for rec in ALL:
        code, out, data = replay(rec, tmp_path)
        assert code == 0, out
        for trace in _traces(data):
            _explained(trace)
            assert not trace["real_differences"] and not trace["errors"], trace
            steps += trace["imported_steps"]
            green += trace["green"]
            skipped += trace["skipped_at_replay"]
    assert green / (steps - skipped) >= GREEN_SHARE
    assert steps > 100


@pytest.mark.parametrize("expect", ["outcome", "text"])
def test_the_shipped_recordings_replay_green_with_stricter_expectations(expect: str, tmp_path: Path) -> None:
    for rec in ALL:
        code, out, data = replay(rec, tmp_path, expect=expect)
        assert code == 0, out
        for trace in _traces(data):
            assert not trace["real_differences"] and not trace["errors"], trace


@pytest.mark.docker
def test_the_shipped_recordings_replay_green_in_the_container(tmp_path: Path, docker_image: str) -> None:  # noqa: F811
    """Issue 22 done-when, as ``toolproof import --replay`` runs by default (in a container): at least
    95 % of all imported steps green; the rest skipped with a reason (a program the image lacks, a
    macOS-only command)."""
    steps = green = 0
    for rec in ALL:
        code, out, data = replay(rec, tmp_path, host=False, jobs=2)
        assert code == 0, out
        for trace in _traces(data):
            _explained(trace)
            assert not trace["real_differences"] and not trace["errors"], trace
            steps += trace["imported_steps"]
            green += trace["green"]
    assert green / steps >= GREEN_SHARE


def test_without_a_workspace_most_calls_import_and_replay_green(tmp_path: Path) -> None:
    """Issue 22 done-when: from the recording alone at least 60 % of the recorded calls are
    imported (the rest skipped with reasons such as "needs the repository") and at least 95 % of the
    imported steps that ran are green."""
    recorded = imported = steps = green = skipped = 0
    for rec in ALL:
        code, out, data = replay(rec, tmp_path, workspace=False)
        assert code == 0, out
        for trace in _traces(data):
            _explained(trace)
            assert not trace["real_differences"] and not trace["errors"], trace
            recorded += trace["recorded_calls"]
            imported += trace["imported_calls"]
            steps += trace["imported_steps"]
            green += trace["green"]
            skipped += trace["skipped_at_replay"]
    assert imported / recorded >= NO_WORKSPACE_IMPORT_SHARE
    assert green / (steps - skipped) >= GREEN_SHARE


NUMBERED_RE = re.compile(r"^\s*\d+(?:→|\t|: )")


def _shown(call: Any) -> tuple[list[str], bool] | None:
    """The lines a successful read showed, and whether it showed the whole file (None: not a
    plain text read)."""
    result = call.result
    if result is None or result.is_error or result.images:
        return None
    file_rec = (result.structured or {}).get("file")
    if isinstance(file_rec, dict):
        content = str(file_rec["content"])
        return content.rstrip("\n").split("\n"), file_rec.get("startLine", 1) == 1
    text = result.text.split("\n\n<system-reminder>")[0].split("\n\n[")[0]
    text = re.sub(r"\AHere's the result of running `cat -n` on [^\n]*:\n", "", text)
    rows = text.rstrip("\n").split("\n")
    if rows and all(NUMBERED_RE.match(r) for r in rows):
        rows = [NUMBERED_RE.sub("", r, count=1) for r in rows]
    return rows, "offset" not in (call.args or {}) and "view_range" not in (call.args or {})


@pytest.mark.parametrize("rec", ALL, ids=[r.name for r in ALL])
def test_without_a_workspace_every_file_read_before_its_first_edit_is_reproduced(rec: Recording,
                                                                                  tmp_path: Path) -> None:
    """The start state inferred from the recording alone holds every file the session read before
    anything changed it, with the lines the read showed (the whole file when it showed it whole)."""
    session = read_trace(str(rec.trace))
    surface = "pi" if "pi" in rec.args else "minimax"
    imp = build_session(session, None, ImportOptions(out_dir=str(tmp_path), surface=surface))
    if not imp.scenarios:
        return
    start = {e.path: e.data.decode("utf-8") for e in imp.scenarios[0].scenario.workspace.entries}
    changed: set[str] = set()
    checked = 0
    for call in session.calls:
        args = call.args or {}
        raw = args.get("file_path") or args.get("path") or ""
        path = str(raw).replace(f"{imp.root}/", "") if imp.root else str(raw)
        tool = call.name.lower()
        if tool in ("read", "str_replace_editor", "str_replace_based_edit_tool") and args.get("command", "view") \
                == "view" and path not in changed and not path.startswith("/"):
            shown = _shown(call)
            if shown is not None and path in start:
                rows, whole = shown
                have = start[path].rstrip("\n").split("\n")
                first = int(args.get("offset") or (args.get("view_range") or [1])[0])
                assert have[first - 1:first - 1 + len(rows)] == rows, path
                if whole:
                    assert len(have) == len(rows), path
                checked += 1
        if tool not in ("read", "grep", "glob", "find"):
            changed.update(p for p in start if p in json.dumps(args) or p.rsplit("/", 1)[-1] in json.dumps(args))
    if rec.name in ("pi-release-quotes", "claude-code-inventory", "pi-json-events", "codex-todo"):
        assert checked >= 1 or rec.name == "codex-todo"


# -- the messes, one by one ------------------------------------------------------------------------------------

def _report(data: dict[str, Any]) -> dict[str, Any]:
    (trace,) = _traces(data)
    return trace


def test_the_pi_recording_lists_its_out_of_band_edit_as_a_resync(tmp_path: Path) -> None:
    """Issue 22 done-when: the human undid an edit outside the recording; the report lists the
    resync (the file as the recording saw it next) instead of failing every later step."""
    code, out, data = replay(BY_NAME["pi-release-quotes"], tmp_path, expect="text")
    assert code == 0, out
    trace = _report(data)
    assert [(r["path"], r["cause"], r["status"]) for r in trace["resyncs"]] == [("src/quotes.js", "out-of-band", "green")]
    assert "changed outside the recording" in trace["resyncs"][0]["reason"]
    assert "Resyncs (the file as the recording saw it next):" in out
    start = {p["path"]: p for p in trace["start_state"]}
    assert start["src/quotes.js"]["disagreed"] and start["src/quotes.js"]["trace_line"] == 3  # uncommitted work
    assert start["package.json"]["source"] == "both" and not start["package.json"]["disagreed"]


def test_without_the_resync_the_later_steps_of_the_pi_recording_fail(tmp_path: Path) -> None:
    """The resync is what keeps the replay faithful: drop it and the read after the human's revert
    shows the agent's discarded edit instead of what the recording read."""
    replay(BY_NAME["pi-release-quotes"], tmp_path, expect="text")
    out_dir = tmp_path / "out-pi-release-quotes"
    (scenario_file,) = out_dir.glob("*.yaml")
    doc = yaml.safe_load(scenario_file.read_text(encoding="utf-8"))
    doc["steps"] = [s for s in doc["steps"] if not s["id"].startswith("resync-")]
    scenario_file.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
    result = Runner(LocalBackend).run(load_corpus([out_dir])).scenarios[0]
    failing = [s.id for s in result.steps if s.status == "fail"]
    assert failing[:1] == ["toolu-01rc"], result.failure_text


def test_shell_commands_that_reach_outside_never_run_on_the_host(tmp_path: Path) -> None:
    """Issue 21 item 5 done-when: replayed on local, `touch ~/…`, `git push` and `curl` do not run on
    the host (refused at import, or contained: run only in a container and skipped here), and the
    summary says so."""
    home = Path(os.path.expanduser("~"))
    markers = [home / ".quotes-released", home / ".inventory-checked"]
    assert not any(m.exists() for m in markers), "a marker of an earlier run is left in HOME"
    code, out, data = replay(BY_NAME["pi-release-quotes"], tmp_path)
    assert code == 0, out
    trace = _report(data)
    reasons = {s["trace_line"]: s["reason"] for s in trace["skipped_calls"]}
    assert reasons[28].startswith("reaches the network (git push: talks to a git remote)")
    assert reasons[34].startswith("reaches the network (curl: network client)")
    assert "  skipped 1× reaches the network (git push: talks to a git remote): a replay must not run it, and " \
           "cannot reproduce it" in out.splitlines()
    assert trace["contained"] == [{"trace_line": 32, "why": "reaches outside the workspace: the home directory "
                                                            "(~/.quotes-released)"}]
    assert "  1 shell step(s) run only in a container (--backend docker) and skip on a host backend; they never " \
           "run on the host:" in out.splitlines()
    assert trace["skipped_at_replay_by_reason"] == {
        "when: requires isolation=container; the backend has isolation=none": 1}
    code, out, _ = replay(BY_NAME["claude-code-inventory"], tmp_path)
    assert code == 0 and "    trace line 30: reaches outside the workspace: a path above the workspace (..)" in out
    assert not any(m.exists() for m in markers)


def test_local_replay_needs_allow_host(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = toolproof_main(["import", str(BY_NAME["pi-json-events"].trace), "--out", str(tmp_path / "o"), "--replay",
                           "--backend", "local"])
    assert code == 2
    assert "--backend local would run the recorded shell commands on this host: pass --allow-host" in \
        capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_environment_and_platform_become_skips_with_their_reason(tmp_path: Path) -> None:
    """Issue 22 item 3 and issue 21 item 12: a missing program, BSD sed on GNU, a recorded missing
    python, npm without node_modules, pi's "Command aborted": skips with their reasons, never a
    failure of the tool layer, and never a whole scenario skipped as a silent green."""
    code, out, data = replay(BY_NAME["claude-code-macos-sed"], tmp_path)
    assert code == 0, out
    trace = _report(data)
    assert trace["skipped_at_replay_by_reason"] == {"when: requires os=macos; the backend has os=linux": 3}
    assert trace["green"] == 5 and not trace["real_differences"]
    assert trace["resyncs"][0]["cause"] == "unmodelled-command"  # the file the BSD sed changed, as read next
    scenario = load_corpus([tmp_path / "out-claude-code-macos-sed"])[0]
    assert scenario.requires.os is None
    sed = next(s for s in scenario.steps if "sed -i" in str(s.args.get("command")))
    assert sed.when == {"os": "macos"}
    code, out, data = replay(BY_NAME["claude-code-macos-sed"], tmp_path, extra=("--platform", "any"))
    assert not any(s.when.get("os") for s in load_corpus([tmp_path / "out-claude-code-macos-sed"])[0].steps)
    code, out, data = replay(BY_NAME["claude-code-inventory"], tmp_path)
    reasons = {s["trace_line"]: s["reason"] for s in _report(data)["skipped_calls"]}
    assert reasons[4] == ("the recording's host did not have python (command not found); a replay host that has it "
                          "answers differently")
    assert reasons[26].startswith("reads a Claude Code background-task output file outside the workspace "
                                  "(/tmp/claude-1000/")
    assert reasons[34] == "needs a git repository (the replay workspace is none: pass --git REPO@REV or --git-init)"
    assert "when: requires program code; not found on the replay host" in \
        _report(data)["skipped_at_replay_by_reason"]
    code, out, data = replay(BY_NAME["pi-release-quotes"], tmp_path)
    reasons = {s["trace_line"]: s["reason"] for s in _report(data)["skipped_calls"]}
    assert reasons[9].startswith("needs the project's installed dependencies (node_modules is not in the replay "
                                 "workspace)")
    assert reasons[30].startswith("aborted by the user while it ran (pi \"Command aborted\")")


def test_git_implies_a_repository_in_the_replay_workspace(tmp_path: Path) -> None:
    """Issue 21 item 12: ``--git REPO@REV`` did not imply ``--git-init``, so the recorded ``git
    commit`` failed with "not a git repository"."""
    code, out, data = replay(BY_NAME["pi-release-quotes"], tmp_path)
    assert code == 0, out
    scenario = load_corpus([tmp_path / "out-pi-release-quotes"])[0]
    assert scenario.workspace.git
    commit = next(s for s in scenario.steps if "git commit" in str(s.args.get("command")))
    assert commit.id == "toolu-01bd"
    assert not any(d["step"] == "toolu-01bd" for d in _report(data)["real_differences"])


def test_two_traces_of_one_session_do_not_collide_on_one_scenario_id(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    source = BY_NAME["pi-json-events"].trace
    (a / "session.jsonl").write_bytes(source.read_bytes())
    (b / "session.jsonl").write_bytes(source.read_bytes())
    code = toolproof_main(["import", str(a / "session.jsonl"), str(b / "session.jsonl"), "--out",
                           str(tmp_path / "o")])
    assert code == 0
    assert sorted(s.id for s in load_corpus([tmp_path / "o"])) == ["imported/session", "imported/session-2"]


def test_the_report_is_written_as_json_and_markdown(tmp_path: Path) -> None:
    md = tmp_path / "report.md"
    code, out, data = replay(BY_NAME["claude-code-inventory"], tmp_path, extra=("--report-markdown", str(md)))
    assert code == 0, out
    text = md.read_text(encoding="utf-8")
    assert text.startswith("## toolproof replay report\n")
    assert "| trace | recorded | imported | green | resynced | skipped (import + replay) | real differences |" in text
    assert json.dumps(data)  # parsed from the --report-json file
    assert data["totals"]["recorded_calls"] == 19


def test_running_imported_scenarios_on_this_host_says_what_stays_in_the_container(tmp_path: Path) -> None:
    """Issue 21 item 5: ``toolproof run`` of imported scenarios on a host backend says so, and the
    contained step (``touch ~/…``) is skipped with its reason, not run."""
    out_dir = tmp_path / "o"
    assert toolproof_main(["import", str(BY_NAME["pi-release-quotes"].trace), "--out", str(out_dir),
                           "--surface", "pi"]) == 0
    out = io.StringIO()
    code = toolproof_main(["run", str(out_dir), "--json", str(tmp_path / "r.json")], out=out)
    assert code == 0, out.getvalue()
    assert ("toolproof: 1 imported scenario(s) replay recorded shell commands on this host (backend local); their "
            "steps that reach outside the workspace skip here and run only in a container (--backend docker)"
            in out.getvalue().splitlines())
    steps = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["scenarios"][0]["steps"]
    touch = next(s for s in steps if s["id"] == "toolu-01bi")
    assert (touch["status"], touch["reason"]) == ("skip", "when: requires isolation=container; the backend has "
                                                          "isolation=none")
