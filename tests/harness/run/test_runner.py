"""The runner against tiny fake servers (tests/fixtures/fake_server.py): comparisons and diffs,
infrastructure errors for hung or dying servers, skips, saved variables, parallel workers."""

from __future__ import annotations

import shlex
import sys
import textwrap

from harness.backends.cmd import CmdBackend
from harness.corpus.loader import parse_scenario_text
from harness.model.results import ERROR, FAIL, PASS, SKIP
from harness.model.scenario import Scenario
from harness.run.runner import Runner, run_scenario, substitute
from tests.support.repo import FIXTURES

FAKE = FIXTURES / "fake_server.py"


def fake_cmd(mode: str = "", os_name: str = "") -> str:
    env = [f"FAKE_SERVER_MODE={mode}"] if mode else []
    env += [f"FAKE_OS={os_name}"] if os_name else []
    prefix = ["env", *env] if env else []
    return shlex.join([*prefix, sys.executable, str(FAKE)])


def scenario(text: str, path: str = "s.yaml") -> Scenario:
    return parse_scenario_text(textwrap.dedent(text), path)


def run_one(s: Scenario, mode: str = "", os_name: str = ""):
    backend = CmdBackend(fake_cmd(mode, os_name), hello_deadline_s=5)
    try:
        return run_scenario(backend, s)
    finally:
        backend.close()


ECHO = """\
id: t/{name}
steps:
  - tool: bash
    args: {{command: "{command}"}}
    timeout: 1
    expect: {{text: "{command}"}}
"""


def test_matching_expectations_pass_and_files_are_checked() -> None:
    res = run_one(scenario("""\
        id: t/write
        workspace:
          files: [{path: in.txt, text: "one\\n"}]
        steps:
          - tool: write
            args: {path: out.txt, content: "héllo\\r\\n"}
            expect:
              text: Wrote out.txt
              files: {out.txt: {text: "héllo\\n", eol: crlf}}
          - tool: read
            args: {path: in.txt}
            expect: {text: "one\\n", details: {path: in.txt}, content_types: [text]}
        files:
          in.txt: {text: "one\\n"}
          missing.txt: {absent: true}
    """))
    assert [(s.id, s.status, s.messages) for s in res.steps] == [
        ("step-1", PASS, ()), ("step-2", PASS, ()), ("files", PASS, ())]
    assert res.status == PASS


def test_wrong_expectation_fails_with_a_readable_diff_marking_whitespace() -> None:
    res = run_one(scenario("""\
        id: t/wrong
        steps:
          - tool: write
            args: {path: a.txt, content: "a\\tb  \\nc\\r\\n"}
          - tool: read
            args: {path: a.txt}
            expect: {text: "a b\\nc\\n"}
    """))
    assert res.status == FAIL
    assert res.steps[1].messages == (
        "text: not equal to the expected text\n"
        "--- expected\n"
        "+++ actual\n"
        "@@ -1,2 +1,2 @@\n"
        "-a b\n"
        "-c\n"
        "+a→b··\n"
        "+c␍",
    )
    assert "[step-2] text: not equal to the expected text" in res.failure_text


def test_wrong_file_content_and_details_are_reported() -> None:
    res = run_one(scenario("""\
        id: t/files
        steps:
          - tool: write
            args: {path: a.txt, content: "x"}
            expect: {files: {a.txt: {text: "y"}, b.txt: {kind: file}}}
          - tool: read
            args: {path: a.txt}
            expect: {details: {path: b.txt, extra: 1}}
    """))
    assert res.steps[0].messages == (
        "files.a.txt: content differs\n--- expected\n+++ actual\n@@ -1 +1 @@\n"
        "-y  ⟵ no newline at end\n+x  ⟵ no newline at end",
        "files.b.txt: expected to exist, but it is absent",
    )
    assert res.steps[1].messages == ("details.path: expected 'b.txt', got 'a.txt'",
                                     "details.extra: missing (expected 1)")


def test_raised_error_is_not_a_returned_result() -> None:
    res = run_one(scenario("""\
        id: t/raise
        steps:
          - tool: bash
            args: {command: "raise boom"}
            expect: {text: boom}
          - tool: bash
            args: {command: "raise boom"}
            expect: {status: error, error: boom, error_kind: tool}
    """))
    assert [s.status for s in res.steps] == [FAIL, PASS]
    assert res.steps[0].messages == ("status: expected result, got raised error (tool): 'boom'",)


def test_saved_value_is_substituted_into_later_steps() -> None:
    res = run_one(scenario("""\
        id: t/save
        steps:
          - tool: bash
            args: {command: "first"}
            save: {word: text}
          - tool: bash
            args: {command: "${word}-second"}
            expect: {text: "first-second"}
    """))
    assert res.status == PASS
    assert substitute({"a": ["${n}", "x${n}"]}, {"n": 3}) == {"a": [3, "x3"]}


def test_workspace_path_is_normalised_in_details() -> None:
    res = run_one(scenario("""\
        id: t/norm
        steps:
          - tool: bash
            args: {command: "x"}
            expect: {details: {root: $WORKSPACE}}
    """))
    assert res.status == PASS


def test_requires_mismatch_is_a_skip_with_reason() -> None:
    res = run_one(scenario("id: t/win\nrequires: {os: windows}\nsteps: [{tool: read}]\n"))
    assert (res.status, res.reason) == (SKIP, "requires os=windows; the backend has os=linux")
    res = run_one(scenario("id: t/iso\nrequires: {isolation: container}\nsteps: [{tool: read}]\n"))
    assert (res.status, res.reason) == (SKIP, "requires isolation=container; the backend has isolation=none")
    res = run_one(scenario("id: t/knob\nrequires: {profile_overlay: true}\nsteps: [{tool: read}]\n"))
    assert (res.status, res.reason) == (SKIP, "requires profile_overlay=true; the backend has profile_overlay=none")
    res = run_one(scenario("id: t/tools\nrequires: {tools: [grep]}\nsteps: [{tool: read}]\n"))
    assert (res.status, res.reason) == (SKIP, "requires tools grep; the implementation offers read, write, bash")


def test_step_when_skips_only_that_step() -> None:
    res = run_one(scenario("""\
        id: t/when
        steps:
          - tool: bash
            args: {command: "a"}
            when: {os: windows}
          - tool: bash
            args: {command: "b"}
            expect: {text: b}
    """), os_name="linux")
    assert [(s.status, s.reason) for s in res.steps] == [(SKIP, "when: requires os=windows; the backend has os=linux"),
                                                        (PASS, "")]
    assert res.status == PASS


def corpus(*names_and_commands: tuple[str, str]) -> list[Scenario]:
    return [scenario(ECHO.format(name=n, command=c)) for n, c in names_and_commands]


def test_hanging_server_is_an_infrastructure_error_and_the_run_continues() -> None:
    runner = Runner(lambda: CmdBackend(fake_cmd(), hello_deadline_s=5), jobs=1)
    run = runner.run(corpus(("a", "ok"), ("b", "hang"), ("c", "fine")))
    assert [s.status for s in run.scenarios] == [PASS, ERROR, PASS]
    assert run.scenarios[1].message == ("infrastructure: implementation did not answer the bash call within its "
                                        "deadline of 1 s (the step's timeout)")
    assert run.exit_code == 2


def test_server_exiting_mid_run_is_an_infrastructure_error_and_the_run_continues() -> None:
    runner = Runner(lambda: CmdBackend(fake_cmd(), hello_deadline_s=5), jobs=1)
    run = runner.run(corpus(("a", "die"), ("b", "ok")))
    assert [s.status for s in run.scenarios] == [ERROR, PASS]
    assert run.scenarios[0].message == "infrastructure: implementation exited or closed its output while handling 'call'"
    assert run.scenarios[0].steps[0].status == ERROR


def test_server_that_never_answers_hello_errors_every_scenario() -> None:
    runner = Runner(lambda: CmdBackend(fake_cmd("hang-hello"), hello_deadline_s=0.5), jobs=1)
    run = runner.run(corpus(("a", "x"), ("b", "y")))
    assert [s.status for s in run.scenarios] == [ERROR, ERROR]
    assert run.scenarios[0].message == ("infrastructure: implementation did not answer 'hello' within the host "
                                        "deadline of 0.5 s")


def test_server_that_exits_at_start_errors_and_is_never_a_pass() -> None:
    runner = Runner(lambda: CmdBackend(fake_cmd("dead"), hello_deadline_s=5), jobs=1)
    run = runner.run(corpus(("a", "x")))
    assert run.scenarios[0].status == ERROR
    assert run.scenarios[0].message.startswith("infrastructure: implementation exited or closed its output while handling 'hello'")
    assert run.counts()[PASS] == 0


def test_missing_executable_is_an_infrastructure_error() -> None:
    runner = Runner(lambda: CmdBackend("/nonexistent/toolproof-impl"), jobs=1)
    run = runner.run(corpus(("a", "x")))
    assert run.scenarios[0].status == ERROR
    assert run.scenarios[0].message.startswith(
        "infrastructure: cannot start implementation 'cmd:/nonexistent/toolproof-impl': [Errno 2]")


def test_parallel_run_keeps_input_order_and_uses_one_backend_per_worker() -> None:
    made: list[CmdBackend] = []

    def factory() -> CmdBackend:
        b = CmdBackend(fake_cmd(), hello_deadline_s=5)
        made.append(b)
        return b

    items = corpus(*[(f"s{i}", f"cmd{i}") for i in range(8)])
    run = Runner(factory, jobs=3).run(items)
    assert [s.id for s in run.scenarios] == [s.id for s in items]
    assert {s.status for s in run.scenarios} == {PASS}
    assert 1 <= len(made) <= 3
    assert all(b.pid is None for b in made)  # closed after the run


def test_op_result_is_details_and_its_output_field_is_the_text() -> None:
    from harness.backends.client import Response
    from harness.model.observation import Observation

    obs = Observation.from_response(Response(1, True, {"status": "succeeded", "output": "bg-done\n"}), 0.1)
    assert (obs.status, obs.text, obs.is_error, obs.details) == (
        "result", "bg-done\n", False, {"status": "succeeded", "output": "bg-done\n"})
    assert Observation.from_response(Response(2, True, {"stopped": True}), 0.1).text == ""


READ_STEP = """\
id: t/{name}
workspace:
  files: [{{path: a.txt, text: "x\\n"}}]
steps:
  - tool: read
    args: {{path: a.txt}}
    expect: {{text: "x\\n"}}
"""


def test_an_implementation_that_never_answers_a_read_costs_its_call_deadline_not_a_minute() -> None:
    """Issue 21 item 6: each read of a device or FIFO that hangs waited out a 60 s host deadline. By
    default a read's deadline is 5 s (the message names the tool and the deadline), the backend is
    restarted, and the next scenario runs. No wall-clock assert: the step's recorded duration is
    only bounded by the old 60 s deadline, which no loaded machine turns into a flake."""
    runner = Runner(lambda: CmdBackend(fake_cmd("hang-read"), hello_deadline_s=30), jobs=1)
    run = runner.run([scenario(READ_STEP.format(name=n)) for n in ("a", "b")] + corpus(("c", "fine")))
    assert [s.status for s in run.scenarios] == [ERROR, ERROR, PASS]
    for res in run.scenarios[:2]:
        assert res.message == ("infrastructure: implementation did not answer the read call within its deadline of "
                               "5 s (the default call timeout (--call-timeout))")
        assert res.steps[0].duration_s < 60
    quick = Runner(lambda: CmdBackend(fake_cmd("hang-read"), hello_deadline_s=30), jobs=1, call_timeout=0.5)
    res = quick.run([scenario(READ_STEP.format(name="d"))]).scenarios[0]
    assert res.message == ("infrastructure: implementation did not answer the read call within its deadline of 0.5 s "
                           "(--call-timeout)")
