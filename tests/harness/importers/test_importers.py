"""Trace importers: each format's reader on hand-written fixture traces, the mapping onto the
minimax and pi surfaces, expectations from recorded results, path normalisation, clear
file:line errors for malformed traces."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.importers.expectations import TextContext, build_expect, normalise_text, text_matcher
from harness.importers.importer import ImportOptions, SessionImport, build_session, render_yaml, slug
from harness.importers.mapping import Mapped, Skip, map_call, relativize_command
from harness.importers.readers import detect_format, read_trace
from harness.importers.trace import RecordedResult, RecordedSession, ToolCall, TraceError, json_records
from harness.importers.workspace_files import WorkspaceFiles, from_directory
from tests.support.repo import FIXTURES

TRACES = FIXTURES / "traces"
EMPTY_WS = WorkspaceFiles((), "test")


def _import(name: str, **opts: Any) -> SessionImport:
    return build_session(read_trace(str(TRACES / name)), from_directory(str(TRACES / "proj")), ImportOptions(**opts))


def _steps(imp: SessionImport) -> list[tuple[str, str | None, dict[str, Any]]]:
    return [(s.id, s.tool, s.args) for s in imp.scenarios[0].scenario.steps]


def _expects(imp: SessionImport) -> dict[str, dict[str, Any]]:
    return {s.id: s.raw_expect for s in imp.scenarios[0].scenario.steps}


# -- format detection and readers -----------------------------------------------------------------

@pytest.mark.parametrize(("name", "fmt"), [
    ("claude-code-session.jsonl", "claude-code"),
    ("pi-session.jsonl", "pi"),
    ("openai-log.jsonl", "openai"),
    ("anthropic-log.json", "anthropic"),
])
def test_format_is_detected_from_content(name: str, fmt: str) -> None:
    path = str(TRACES / name)
    assert detect_format(path, json_records((TRACES / name).read_text(encoding="utf-8"), path)) == fmt


def test_claude_code_reader_pairs_calls_with_results_and_reads_session_metadata() -> None:
    s = read_trace(str(TRACES / "claude-code-session.jsonl"))
    assert (s.format, s.session_id, s.cwd) == ("claude-code", "5B1F3C2A-demo", "/home/dev/proj")
    assert s.first_prompt == "Make the greeting say hi instead of hello, then run the checks"
    assert [(c.line, c.name) for c in s.calls][:3] == [(3, "Read"), (5, "Edit"), (7, "Edit")]
    edit_error = s.calls[2].result
    assert edit_error is not None and edit_error.is_error and edit_error.line == 8
    assert s.calls[-1].name == "mcp__github__create_issue" and s.calls[-1].result is None


def test_openai_reader_deduplicates_calls_repeated_in_logged_history() -> None:
    s = read_trace(str(TRACES / "openai-log.jsonl"))
    assert [c.call_id for c in s.calls] == ["call_w1", "call_r1", "call_x1", "call_b1", "call_s1"]
    assert s.calls[0].args == {"path": "NOTES.txt", "content": "first note\n"}
    assert s.calls[2].args is None
    assert s.calls[2].args_problem == "arguments are not valid JSON (Expecting ',' delimiter)"
    assert s.calls[3].result == RecordedResult("Error: (no output)\n\nCommand exited with code 3", True, 3)


def test_anthropic_reader_reads_a_pretty_printed_json_array_with_record_lines() -> None:
    s = read_trace(str(TRACES / "anthropic-log.json"))
    assert (s.format, s.cwd, s.first_prompt) == ("anthropic", "/srv/app", "Find the TODO and fix it")
    assert [(c.call_id, c.line) for c in s.calls] == [("toolu_a1", 2), ("toolu_a2", 19), ("toolu_a3", 19)]
    assert s.calls[0].result is not None and s.calls[0].result.text == "Found 1 files\nmain.py\n1: # TODO: fix"


def test_pi_reader_notes_user_shell_commands_it_does_not_import() -> None:
    s = read_trace(str(TRACES / "pi-session.jsonl"))
    assert (s.session_id, s.cwd) == ("9d2e-pi-demo", "/work/pi-proj")
    assert s.notes == (f"{TRACES / 'pi-session.jsonl'}:13: a shell command the user ran ('git status') "
                       "is not a tool call and is not imported",
                       "entries that are not tool calls, ignored: 1 model_change")


def test_malformed_json_line_is_reported_with_file_and_line() -> None:
    path = str(TRACES / "claude-code-bad-json.jsonl")
    with pytest.raises(TraceError) as exc:
        read_trace(path)
    assert exc.value.problems == [f"{path}:2: invalid JSON: Expecting ',' delimiter (column 152)"]


def test_tool_blocks_without_ids_are_reported_with_file_line_and_field() -> None:
    path = str(TRACES / "pi-missing-ids.jsonl")
    with pytest.raises(TraceError) as exc:
        read_trace(path)
    assert exc.value.problems == [
        f"{path}:2: message.content[1].id: expected the tool call's id (a non-empty string)",
        f"{path}:3: message.toolCallId: expected the id of the tool call this result answers (a non-empty string)",
    ]


def test_undecidable_content_asks_for_an_explicit_format(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"hello": 1}\n', encoding="utf-8")
    with pytest.raises(TraceError) as exc:
        read_trace(str(trace))
    assert exc.value.problems[0].startswith(f"{trace}:1: cannot tell the trace format")
    assert exc.value.problems[0].endswith("pass --format claude-code|pi|openai|anthropic")


def test_pretty_printed_single_object_with_a_syntax_error_names_its_line(tmp_path: Path) -> None:
    trace = tmp_path / "t.json"
    trace.write_text('{\n  "messages": [\n    {"role": "user",}\n  ]\n}\n', encoding="utf-8")
    with pytest.raises(TraceError) as exc:
        read_trace(str(trace))
    assert exc.value.problems == [f"{trace}:3: invalid JSON: Expecting property name enclosed in double quotes (column 21)"]


# -- mapping --------------------------------------------------------------------------------------------

def test_claude_code_session_maps_onto_minimax_with_relative_paths() -> None:
    imp = _import("claude-code-session.jsonl")
    assert _steps(imp) == [
        ("toolu-01read", "read", {"path": "src/app.py"}),
        ("toolu-02edit", "edit", {"file_path": "src/app.py", "old_string": "hello ", "new_string": "hi "}),
        ("toolu-03edit", "edit", {"file_path": "src/app.py", "old_string": "goodbye", "new_string": "bye"}),
        ("toolu-06bash", "bash", {"command": "cd . && grep -c hi src/app.py", "timeout": 5}),
        ("toolu-07grep", "grep", {"pattern": "def ", "path": "src", "output_mode": "content"}),
        ("toolu-08glob", "glob", {"pattern": "**/*.md", "path": "."}),
        ("toolu-10multi.1", "edit", {"file_path": "README.md", "old_string": "# Demo", "new_string": "# Demo app"}),
        ("toolu-10multi.2", "edit", {"file_path": "README.md", "old_string": "tiny", "new_string": "small",
                                     "replace_all": True}),
    ]


def test_unmappable_rejected_and_unanswered_calls_are_listed_with_reasons() -> None:
    imp = _import("claude-code-session.jsonl")
    assert [(s.line, s.name, s.reason) for s in imp.skipped] == [
        (9, "WebFetch", "unmappable tool WebFetch: network tool"),
        (9, "TodoWrite", "unmappable tool TodoWrite: planning tool"),
        (15, "Read", "Read: path '/etc/hostname' is outside the workspace root /home/dev/proj"),
        (19, "Write", "rejected or interrupted in the trace (it never ran)"),
        (21, "mcp__github__create_issue", "no recorded result: the trace ends before its result"),
    ]
    assert imp.imported == 7 and imp.steps == 8
    assert "#   skipped trace line 9: unmappable tool WebFetch: network tool" in imp.scenarios[0].text


def test_claude_code_session_maps_onto_pi_with_edits_list_and_upstream_profile() -> None:
    imp = _import("claude-code-session.jsonl", surface="pi")
    scenario = imp.scenarios[0].scenario
    assert (scenario.surface, scenario.profile) == ("pi", {"base": "upstream"})
    steps = {s.id: s.args for s in scenario.steps}
    assert steps["toolu-02edit"] == {"path": "src/app.py", "edits": [{"oldText": "hello ", "newText": "hi "}]}
    assert "toolu-10multi" not in steps  # replace_all has no pi equivalent
    assert (17, "MultiEdit", "MultiEdit: replace_all has no pi equivalent") in [
        (s.line, s.name, s.reason) for s in imp.skipped]


def test_pi_session_maps_find_to_glob_and_lists_ls_as_unmappable() -> None:
    imp = _import("pi-session.jsonl", surface="pi")
    assert _steps(imp) == [
        ("call-r1", "read", {"path": "src/app.py"}),
        ("call-e1", "edit", {"path": "src/app.py", "edits": [{"oldText": "def greet", "newText": "def welcome"}]}),
        ("call-e2", "edit", {"path": "src/app.py", "edits": [{"oldText": "nothing like this", "newText": "x"}]}),
        ("call-b1", "bash", {"command": "grep -c welcome ./src/app.py", "timeout": 10}),
        ("call-f1", "glob", {"pattern": "*.py", "path": "src"}),
    ]
    assert [s.reason for s in imp.skipped] == ["unmappable tool ls: toolproof has no ls tool"]


def test_pi_edit_maps_onto_minimax_edit_names() -> None:
    imp = _import("pi-session.jsonl")
    assert _steps(imp)[1] == ("call-e1", "edit", {"file_path": "src/app.py", "old_string": "def greet",
                                                  "new_string": "def welcome"})


def test_openai_malformed_arguments_and_unknown_tools_are_skipped_not_dropped() -> None:
    imp = _import("openai-log.jsonl")
    assert [s.id for s in imp.scenarios[0].scenario.steps] == ["call-w1", "call-r1", "call-b1"]
    assert [s.reason for s in imp.skipped] == [
        "malformed call: arguments are not valid JSON (Expecting ',' delimiter)",
        "unmappable tool web_search: network tool",
    ]


def test_absolute_paths_without_a_known_root_are_skipped_and_root_option_fixes_them() -> None:
    call = ToolCall("c1", "Read", {"file_path": "/repo/a.txt"}, 1, RecordedResult("x", False, 2))
    assert map_call(call, "minimax", None, "anthropic") == Skip(
        "Read: absolute path '/repo/a.txt' and the workspace root is unknown (pass --root)")
    mapped = map_call(call, "minimax", "/repo/", "anthropic")
    assert isinstance(mapped, Mapped) and mapped.steps[0].args == {"path": "a.txt"}


@pytest.mark.parametrize(("name", "fmt", "override", "seconds"), [
    ("Bash", "claude-code", None, 120),
    ("Bash", "openai", None, 120),
    ("bash", "pi", None, 120000),
    ("bash", "openai", "ms", 120),
])
def test_bash_timeout_unit_follows_the_tool_layer(name: str, fmt: str, override: str | None, seconds: int) -> None:
    call = ToolCall("c", name, {"command": "make", "timeout": 120000}, 1, RecordedResult("", False, 1))
    mapped = map_call(call, "minimax", None, fmt, timeout_unit=override)
    assert isinstance(mapped, Mapped)
    assert mapped.steps[0].args["timeout"] == seconds


def test_background_bash_has_no_pi_equivalent() -> None:
    call = ToolCall("c", "Bash", {"command": "serve", "run_in_background": True}, 1, RecordedResult("", False, 1))
    assert map_call(call, "pi", None, "claude-code") == Skip("Bash: run_in_background has no pi equivalent")
    mapped = map_call(call, "minimax", None, "claude-code")
    assert isinstance(mapped, Mapped) and mapped.steps[0].args == {"command": "serve", "run_in_background": True}


def test_grep_flags_map_and_asymmetric_context_is_refused() -> None:
    ok = ToolCall("c", "Grep", {"pattern": "x", "-i": True, "-C": 2, "head_limit": 5, "-n": True}, 1,
                  RecordedResult("", False, 1))
    mapped = map_call(ok, "minimax", None, "claude-code")
    assert isinstance(mapped, Mapped)
    assert mapped.steps[0].args == {"pattern": "x", "ignoreCase": True, "context": 2, "limit": 5}
    bad = ToolCall("c", "Grep", {"pattern": "x", "-A": 2}, 1, RecordedResult("", False, 1))
    assert map_call(bad, "minimax", None, "claude-code") == Skip(
        "Grep: different -A/-B context has no toolproof equivalent (only symmetric context)")


def test_unknown_arguments_skip_the_call_instead_of_being_dropped() -> None:
    call = ToolCall("c", "Read", {"file_path": "a", "encoding": "latin1"}, 1, RecordedResult("", False, 1))
    assert map_call(call, "minimax", None, "claude-code") == Skip(
        "Read: Read argument 'encoding' has no toolproof equivalent")


def test_failed_multiedit_is_not_split_on_minimax() -> None:
    call = ToolCall("c", "MultiEdit", {"file_path": "a", "edits": [{"old_string": "1", "new_string": "2"},
                                                                   {"old_string": "3", "new_string": "4"}]},
                    1, RecordedResult("not found", True, 2))
    assert map_call(call, "minimax", None, "claude-code") == Skip(
        "MultiEdit: a failed multi-edit cannot be split into minimax edit steps (it applied nothing)")


def test_root_in_commands_becomes_relative_but_longer_names_are_kept() -> None:
    assert relativize_command("cd /p && cat /p/a /pp/b /p", "/p") == "cd . && cat ./a /pp/b ."


# -- expectations ------------------------------------------------------------------------------------------

def test_status_expectations_follow_the_reference_error_reporting() -> None:
    imp = _import("openai-log.jsonl")
    assert _expects(imp) == {
        "call-w1": {"status": "result", "is_error": False},
        "call-r1": {"status": "result", "is_error": False},
        "call-b1": {"status": "result", "is_error": True},  # minimax bash returns is_error results
    }
    pi = _import("claude-code-session.jsonl", surface="pi")
    assert _expects(pi)["toolu-03edit"] == {"status": "error"}


def test_expect_none_keeps_only_what_the_format_cannot_omit() -> None:
    imp = _import("claude-code-session.jsonl", expect="none")
    expects = _expects(imp)
    assert expects["toolu-01read"] == {}
    assert expects["toolu-03edit"] == {"status": "error"}


def test_text_mode_on_another_surface_checks_outcomes_instead_of_text() -> None:
    imp = _import("claude-code-session.jsonl", expect="text")
    expects = _expects(imp)
    assert expects["toolu-01read"] == {"status": "result", "is_error": False}
    assert expects["toolu-02edit"] == {"status": "result", "is_error": False,
                                       "files": {"src/app.py": {"contains": ["hi "]}}}
    assert expects["toolu-03edit"] == {"status": "error"}
    assert (imp.text_steps, imp.outcome_steps) == (0, 7)
    assert ("text compared on 0 of 7 call(s); the others (recorded on claude-code, or with another agent's tool) "
            "check outcomes instead: status, exit code, files") in imp.notes


def test_text_mode_normalises_recorded_text_for_the_target_surface() -> None:
    imp = _import("claude-code-session.jsonl", expect="text", recorded_surface="minimax")
    expects = _expects(imp)
    # Claude Code's tab numbering becomes the minimax arrow numbering; not exact, so a prefix
    assert expects["toolu-01read"]["text"] == {"startswith": '     1→def greet(name):\n     2→    return "hello " + name'}
    assert expects["toolu-02edit"]["text"] == "The file src/app.py has been updated."
    assert expects["toolu-03edit"]["error"] == "String to replace not found in file.\nString: goodbye"
    assert expects["toolu-07grep"]["text"] == "$WORKSPACE/src/app.py:1:def greet(name):"
    assert "text" not in expects["toolu-10multi.1"]  # part of a recorded call: no whole-call text


def test_text_mode_strips_read_numbering_for_pi_and_numbers_raw_text_for_minimax() -> None:
    numbered = RecordedResult("     1→alpha\n     2→beta\n", False, 1)
    assert build_expect(numbered, "text", TextContext("read", "pi")) == {
        "status": "result", "is_error": False, "text": {"startswith": "alpha\nbeta"}}
    raw = RecordedResult("alpha\nbeta\n", False, 1)
    assert build_expect(raw, "text", TextContext("read", "minimax", read_start=7)) == {
        "status": "result", "is_error": False, "text": {"startswith": "     7→alpha\n     8→beta"}}
    assert build_expect(numbered, "text", TextContext("read", "minimax")) == {
        "status": "result", "is_error": False, "text": "     1→alpha\n     2→beta\n"}


def test_volatile_tokens_cut_the_expectation_to_a_stable_prefix() -> None:
    assert text_matcher("Command finished\ntook 12.5s here", True) == {"startswith": "Command finished\ntook "}
    assert text_matcher("12ms", True) is None
    long = "".join(f"line {i}\n" for i in range(60))
    assert text_matcher(long, True) == {"startswith": "line 0\nline 1\nline 2\nline 3\nline 4\n"}


def test_echoed_absolute_paths_become_the_relative_paths_the_replay_passes() -> None:
    ctx = TextContext("write", "minimax", root="/home/u/p", path_pairs=(("/home/u/p/a.txt", "a.txt"),))
    assert normalise_text("Successfully wrote 2 bytes to /home/u/p/a.txt (see /home/u/p)", ctx) == (
        "Successfully wrote 2 bytes to a.txt (see $WORKSPACE)", True)


# -- output ------------------------------------------------------------------------------------------------

def test_ids_titles_and_tags_come_from_the_session() -> None:
    imp = _import("claude-code-session.jsonl")
    s = imp.scenarios[0]
    assert (s.id, s.file_name) == ("imported/5b1f3c2a-demo", "5b1f3c2a-demo.yaml")
    assert s.scenario.title == "Make the greeting say hi instead of hello, then run the checks"
    assert s.scenario.tags == ("imported", "claude-code")
    assert slug("Toolu_01ABC") == "toolu-01abc"


def test_split_replays_earlier_parts_as_setup_steps() -> None:
    imp = _import("claude-code-session.jsonl", split=3)
    assert [g.id for g in imp.scenarios] == ["imported/5b1f3c2a-demo-part1", "imported/5b1f3c2a-demo-part2",
                                             "imported/5b1f3c2a-demo-part3"]
    part2 = [s.id for s in imp.scenarios[1].scenario.steps]
    assert part2 == ["setup-toolu-01read", "setup-toolu-02edit", "setup-toolu-03edit",
                     "toolu-06bash", "toolu-07grep", "toolu-08glob"]
    assert imp.scenarios[1].scenario.title.endswith("(part 2/3)")


def test_awkward_strings_survive_the_yaml_round_trip() -> None:
    content = "  leading spaces\ntrailing \t\n\r\nnul\x00 and \u2028 and \x85 end\n\n\n"
    call = ToolCall("c", "Write", {"file_path": "w.txt", "content": content}, 1, RecordedResult("ok", False, 1))
    session = RecordedSession("t.jsonl", "claude-code", "s1", None, "", (call,))
    imp = build_session(session, EMPTY_WS, ImportOptions())
    assert imp.scenarios[0].scenario.steps[0].args["content"] == content
    assert render_yaml({"a": content})  # dumping never raises


def _claude(tmp_path: Path, *entries: dict[str, Any]) -> Path:
    trace = tmp_path / "t.jsonl"
    base = {"sessionId": "s", "cwd": "/home/u/p", "uuid": "x"}
    trace.write_text("".join(json.dumps({**base, **e}) + "\n" for e in entries), encoding="utf-8")
    return trace


def _use(call_id: str, command: str) -> dict[str, Any]:
    return {"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": command}}]}}


def test_a_call_without_a_result_names_the_real_reason(tmp_path: Path) -> None:
    trace = _claude(tmp_path,
                    _use("toolu_1", "make"),
                    {"type": "user", "message": {"role": "user", "content": "[Request interrupted by user]"}},
                    _use("toolu_2", "make test"),
                    {"type": "user", "message": {"role": "user", "content": "carry on"}},
                    _use("toolu_3", "ls"),
                    {"type": "user", "message": {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_3", "content": "a"}]}},
                    _use("toolu_4", "make lint"))
    reasons = {c.call_id: c.missing_reason for c in read_trace(str(trace)).calls}
    assert reasons == {
        "toolu_1": "the user interrupted the turn before its result was recorded",
        "toolu_2": "no result was recorded although the session went on (the recording lost it)",
        "toolu_3": "",
        "toolu_4": "the trace ends before its result",
    }


def test_a_pi_message_that_ended_with_an_error_or_abort_names_it() -> None:
    calls = {c.call_id: c.missing_reason for c in read_trace(str(TRACES / "pi-legacy-macos.jsonl")).calls}
    assert calls["toolu_01A8"] == "the assistant message was aborted"
    assert calls["toolu_01A9"] == "the assistant message ended with an error (Connection error.)"
