"""``toolproof diff`` compares behaviour, not what is random by nature: task ids, pids, wall-clock
timestamps and session ids are replaced on both sides before comparing."""

from __future__ import annotations

from harness.model.results import PASS, SKIP, RunInfo, RunResult, ScenarioResult, StepResult
from harness.report.cross_run_diff import comparable, differences, one_sided_skips


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
