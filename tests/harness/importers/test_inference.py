"""The start state and resyncs inferred from a recording (harness.importers.inference)."""

from __future__ import annotations

from typing import Any

from harness.importers.inference import ABSENT, CallView, consistent, infer, patched, read_observation
from harness.importers.mapping import MappedStep
from harness.importers.trace import RecordedResult


def _ok(text: str, structured: dict[str, Any] | None = None) -> RecordedResult:
    return RecordedResult(text, False, 1, structured=structured)


def _err(text: str) -> RecordedResult:
    return RecordedResult(text, True, 1)


def _calls(*specs: tuple[str, dict[str, Any], RecordedResult] | tuple[str, dict[str, Any], RecordedResult, str],
           numbered: bool = False) -> list[CallView]:
    out = []
    for i, spec in enumerate(specs, 1):
        tool, args, result = spec[:3]
        skip = spec[3] if len(spec) > 3 else ""  # type: ignore[misc]
        out.append(CallView(i, i * 10, (MappedStep(tool, args),), result, not skip, skip, numbered))
    return out


def test_reads_before_any_change_are_the_start_state_and_win_over_the_repository() -> None:
    calls = _calls(("read", {"path": "a.txt"}, _ok("one\ntwo\n")),
                   ("edit", {"file_path": "a.txt", "old_string": "two", "new_string": "2"}, _ok("ok")))
    alone = infer(calls, {}, None, with_repository=False)
    assert alone.start == {"a.txt": "one\ntwo\n"}
    assert [(p.path, p.source, p.line) for p in alone.provenance] == [("a.txt", "trace", 10)]
    same = infer(calls, {"a.txt": "one\ntwo\n", "b.txt": "b\n"}, None, with_repository=True)
    assert same.start == {}  # the repository agrees: nothing laid over it
    assert [(p.path, p.source, p.disagreed) for p in same.provenance] == [("a.txt", "both", False),
                                                                         ("b.txt", "repository", False)]
    other = infer(calls, {"a.txt": "one\n"}, None, with_repository=True)
    assert other.start == {"a.txt": "one\ntwo\n"}
    assert other.provenance[0].describe() == ("a.txt: the repository and the trace disagree; the trace's content "
                                              "(line 10) is used")
    assert not other.resyncs


def test_partial_views_and_old_texts_build_a_file_the_calls_can_replay() -> None:
    calls = _calls(("read", {"path": "a.py", "offset": 3, "limit": 2}, _ok("c\nd\n\n[4 more lines in file. Use offset=5 "
                                                                          "to continue.]")),
                   ("edit", {"file_path": "a.py", "old_string": "zeta", "new_string": "eta"}, _ok("ok")))
    start = infer(calls, {}, None, with_repository=False).start["a.py"]
    assert isinstance(start, str)
    assert start.split("\n")[2:4] == ["c", "d"] and "zeta" in start
    assert infer(calls, {}, None, with_repository=False).provenance[0].detail.startswith("only partly shown")


def test_a_change_outside_the_recording_becomes_a_resync_with_the_file_as_read_next() -> None:
    calls = _calls(("read", {"path": "a.txt"}, _ok("v1\n")),
                   ("write", {"path": "a.txt", "content": "v2\n"}, _ok("ok")),
                   ("read", {"path": "a.txt"}, _ok("v1 by hand\n")))
    inf = infer(calls, {}, None, with_repository=False)
    (r,) = inf.resyncs
    assert (r.index, r.path, r.content, r.cause) == (3, "a.txt", "v1 by hand\n", "out-of-band")
    assert r.reason.startswith("a.txt: changed outside the recording") and "between trace lines 20 and 30" in r.reason


def test_an_edit_whose_text_was_undone_resyncs_to_the_last_version_that_holds_it() -> None:
    calls = _calls(("read", {"path": "a.txt"}, _ok("alpha\n")),
                   ("edit", {"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"}, _ok("ok")),
                   ("edit", {"file_path": "a.txt", "old_string": "alpha", "new_string": "gamma"}, _ok("ok")))
    (r,) = infer(calls, {}, None, with_repository=False).resyncs
    assert (r.index, r.content, r.cause) == (3, "alpha\n", "out-of-band")


def test_a_file_a_skipped_or_shell_call_changed_is_resynced_with_that_cause() -> None:
    calls = _calls(("read", {"path": "a.txt"}, _ok("x\n")),
                   ("bash", {"command": "sed -i '' s/x/y/ a.txt"}, _ok(""), "platform"),
                   ("read", {"path": "a.txt"}, _ok("y\n")))
    (r,) = infer(calls, {}, None, with_repository=False).resyncs
    assert (r.cause, r.content) == ("skipped-call", "y\n")
    assert "which is not replayed (platform)" in r.reason
    calls[1] = CallView(2, 20, calls[1].steps, calls[1].result, True)
    (r,) = infer(calls, {}, None, with_repository=False).resyncs
    assert r.cause == "unmodelled-command"


def test_a_recorded_failure_the_replay_would_not_give_is_dropped_with_the_reason() -> None:
    calls = _calls(("read", {"path": "a.txt"}, _ok("needle\n")),
                   ("edit", {"file_path": "a.txt", "old_string": "needle", "new_string": "pin"},
                    _err("String to replace not found in file.")))
    assert infer(calls, {}, None, with_repository=False).dropped[2].startswith("the recorded failure cannot be "
                                                                               "reproduced")


def test_a_file_read_as_missing_is_left_out_of_the_repository() -> None:
    calls = _calls(("read", {"path": "gone.txt"}, _err("ENOENT: no such file or directory")))
    inf = infer(calls, {"gone.txt": "old\n"}, None, with_repository=True)
    assert inf.start == {"gone.txt": ABSENT}


def test_without_a_repository_calls_that_need_one_are_dropped_with_the_reason() -> None:
    calls = _calls(("bash", {"command": "npm run build"}, _ok("")),
                   ("bash", {"command": "ls"}, _ok("a\n")),
                   ("bash", {"command": "cat notes.txt"}, _ok("hi\n")),
                   ("bash", {"command": "grep -rn TODO src"}, _ok("")),
                   ("bash", {"command": "wc -l notes.txt"}, _ok("1 notes.txt\n")))
    inf = infer(calls, {}, None, with_repository=False)
    assert inf.dropped == {
        1: "needs the repository: npm works on the project, not on files the recording shows",
        2: "needs the repository: ls lists the project's files",
        4: "needs the repository: a recursive command over the project",
    }
    assert inf.start == {"notes.txt": "hi\n"}  # cat showed it whole


def test_read_views_of_every_tool_layer_are_understood() -> None:
    numbered = read_observation("a", {}, _ok("     1→x\n     2→y\n\n<system-reminder>\nbe careful\n</system-reminder>\n"),
                                1, True)
    assert numbered is not None and (numbered.kind, numbered.lines, numbered.to_eof) == ("lines", ("x", "y"), True)
    cat_n = read_observation("a", {}, _ok("Here's the result of running `cat -n` on /w/a:\n     1\tx\n     2\ty\n"), 1,
                             True)
    assert cat_n is not None and cat_n.lines == ("x", "y")
    raw = read_observation("a", {"offset": 2, "limit": 1}, _ok("y\n\n[1 more lines in file. Use offset=3 to continue.]"),
                           1, False)
    assert raw is not None and (raw.kind, raw.start, raw.lines, raw.to_eof) == ("lines", 2, ("y",), False)
    structured = read_observation("a", {}, _ok("ignored", {"file": {"content": "x\ny\n", "startLine": 1,
                                                                    "numLines": 2, "totalLines": 3}}), 1, True)
    assert structured is not None and (structured.kind, structured.text) == ("exact", "x\ny\n")
    cut = read_observation("a", {}, _ok("     1→" + "z" * 10 + "... (line truncated)\n"), 1, True)
    assert cut is not None and cut.lines == (None,)


def test_consistency_follows_the_edit_tools_fuzzy_matching() -> None:
    obs = read_observation("a", {}, _ok("x\n"), 1, False)
    assert obs is not None and consistent("x\n", obs) and not consistent("y\n", obs)
    assert patched("a\nb\nc\n", read_observation("a", {"offset": 2, "limit": 1}, _ok("B\n\n[1 more lines in file. "
                                                                                    "Use offset=3 to continue.]"),
                                                   1, False)) == "a\nB\nc\n"  # type: ignore[arg-type]
    calls = _calls(("read", {"path": "q.txt"}, _ok("say “hi”  \n")),
                   ("edit", {"file_path": "q.txt", "old_string": 'say "hi"', "new_string": "x"}, _ok("ok")))
    assert not infer(calls, {}, None, with_repository=False).resyncs  # the edit's fuzzy match finds it
