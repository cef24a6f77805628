"""``toolproof diff`` compares behaviour, not what is random by nature: task ids, pids, wall-clock
timestamps and session ids are replaced on both sides before comparing."""

from __future__ import annotations

from harness.model.results import FAIL, PASS, SKIP, RunInfo, RunResult, ScenarioResult, StepResult
from harness.report.cross_run_diff import differences, one_sided_skips
from harness.run.equivalence import comparable


def background(task: str, pid: int, at: float, session: str, text_extra: str = "") -> dict[str, object]:
    return {"status": "result", "duration_s": at % 1,
            "text": f'<bash_background task_id="{task}">\nStarted.{text_extra}\n</bash_background>',
            "details": {"task_id": task, "pid": pid, "created_at": at, "ended_at": None,
                        "origin": {"parentSessionId": session, "parentTurnId": str(pid)}}}


def run(*steps: dict[str, object], status: str = PASS, reason: str = "") -> RunResult:
    st = tuple(StepResult(f"s{i}", PASS, observation=o) for i, o in enumerate(steps, 1))  # type: ignore[arg-type]
    return RunResult(RunInfo(), (ScenarioResult("b/bg", status, steps=st, reason=reason),))


def test_task_ids_pids_timestamps_and_session_ids_are_not_differences() -> None:
    a = run(background("bash-3037cd51", 12154, 1796123395.74, "ccaef433"))
    b = run(background("bash-04aa6076", 17, 1796123407.88, "fc6a98d3"))
    assert differences(a, b) == []
    assert comparable(a.scenarios[0].steps[0].observation) == {
        "status": "result", "text": '<bash_background task_id="$TASK_ID1">\nStarted.\n</bash_background>',
        "details": {"task_id": "$TASK_ID1", "pid": "$PID", "created_at": "$TIME", "ended_at": None,
                    "origin": {"parentSessionId": "$SESSION_ID", "parentTurnId": "$TURN_ID"}}}


def test_real_differences_remain_next_to_normalised_noise() -> None:
    a = run(background("bash-1", 1, 1.0, "x"))
    b = run(background("bash-2", 2, 2.0, "y", text_extra=" (exit 1)"))
    (diff,) = differences(a, b, ("local", "docker"))
    assert (diff.scenario, diff.step, diff.fields) == ("b/bg", "s1", ("text",))
    assert "--- local\n+++ docker\n" in diff.diff and "(exit 1)" in diff.diff


def test_a_timestamp_present_on_one_side_only_still_differs() -> None:
    left = background("bash-1", 1, 1.0, "x")
    right = background("bash-2", 2, 2.0, "y")
    right["details"]["ended_at"] = 5.0  # type: ignore[index]
    (diff,) = differences(run(left), run(right))
    assert diff.fields == ("details",)


def test_a_scenario_skipped_on_one_side_is_listed_as_not_compared_not_as_a_difference() -> None:
    ran = run(background("bash-1", 1, 1.0, "x"))
    skipped = RunResult(RunInfo(), (ScenarioResult("b/bg", SKIP, reason="requires isolation=container"),))
    assert differences(skipped, ran) == []
    assert one_sided_skips(skipped, ran) == [("b/bg", "skip vs pass: requires isolation=container")]


def test_a_pid_reported_on_one_side_only_is_timing_not_a_difference() -> None:
    left = background("bash-1", 1, 1.0, "x")
    right = background("bash-2", 2, 1.0, "y")
    right["details"]["pid"] = None  # type: ignore[index]
    assert differences(run(left), run(right)) == []


def _scenario(*steps: StepResult, status: str = PASS) -> RunResult:
    return RunResult(RunInfo(), (ScenarioResult("w/x", status, steps=steps),))


def test_a_file_written_differently_is_a_difference_though_the_responses_agree() -> None:
    obs = {"status": "result", "text": "Successfully wrote 3 bytes to a.txt"}
    tree_a = {"a.txt": {"kind": "file", "mode": 0o644, "size": 3, "sha256": "aa"}}
    tree_b = {"a.txt": {"kind": "file", "mode": 0o644, "size": 3, "sha256": "bb"}}
    a = _scenario(StepResult("w", PASS, observation=obs, tree=tree_a))
    b = _scenario(StepResult("w", PASS, observation=obs, tree=tree_b))
    (diff,) = differences(a, b, ("local", "docker"))
    assert diff.fields == ("files",)
    assert "a.txt" in diff.diff and '"sha256": "aa"' in diff.diff and '"sha256": "bb"' in diff.diff
    # a path present on one side only is named with "absent" on the other
    c = _scenario(StepResult("w", PASS, observation=obs, tree={**tree_a, "stray": {"kind": "file"}}))
    (diff,) = differences(a, c, ("local", "docker"))
    assert "stray: local: absent; docker:" in diff.diff


def test_a_step_that_passes_on_one_side_and_fails_on_the_other_is_a_difference() -> None:
    a = _scenario(StepResult("files", PASS))
    b = _scenario(StepResult("files", FAIL, ("files: a.txt: expected …",)), status=FAIL)
    (diff,) = differences(a, b, ("local", "docker"))
    assert (diff.step, diff.fields) == ("files", ("status",))
    assert "status: local pass, docker fail" in diff.diff


def test_steps_and_scenarios_on_one_side_only_are_differences_and_one_sided_step_skips_are_listed() -> None:
    a = _scenario(StepResult("s1", PASS), StepResult("s2", PASS), StepResult("s3", PASS))
    b = _scenario(StepResult("s1", PASS), StepResult("s2", SKIP, reason="when: os=windows"),
                  StepResult("s4", PASS))
    diffs = differences(a, b, ("local", "docker"))
    assert [(d.step, d.fields) for d in diffs] == [("s3", ("step",)), ("s4", ("step",))]
    assert one_sided_skips(a, b) == [("w/x s2", "pass vs skip: when: os=windows")]
    only_left = RunResult(RunInfo(), (*a.scenarios, ScenarioResult("w/y", PASS)))
    assert [(d.scenario, d.note) for d in differences(only_left, a, ("l", "r"))] == [("w/y", "ran on l only")]
