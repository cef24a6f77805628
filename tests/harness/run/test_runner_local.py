"""The runner on the local backend (the reference server) with the example corpus, normalisers
and the left-behind process check."""

from __future__ import annotations

import os
import tempfile
import textwrap

from harness.backends.base import HelloInfo
from harness.backends.local import LocalBackend
from harness.corpus.loader import load_corpus, parse_scenario_text
from harness.model.observation import Observation
from harness.model.results import FAIL, PASS, SKIP, XFAIL
from harness.report.baseline import apply_baseline, load_baseline
from harness.run.normalise import NormalisationContext, context_for, normalize_observation, normalize_text
from harness.run.runner import Runner, run_scenario
from tests.support.repo import REPO


def test_example_corpus_passes_on_local_with_the_reference_baseline() -> None:
    run = Runner(LocalBackend, jobs=2, backend_label="local").run(load_corpus([REPO / "docs/examples/scenarios"]))
    run = apply_baseline(run, load_baseline(str(REPO / "docs/examples/baseline.yaml")))
    statuses = {s.id: s.status for s in run.scenarios}
    assert statuses == {
        "examples/background-task": PASS,
        "examples/read-missing-file": PASS,
        "examples/upstream-line-numbers": XFAIL,
        "examples/windows-only": SKIP,
        "examples/workspace-kinds": PASS,
        "examples/write-then-read": PASS,
    }
    assert run.info.implementation == "toolproof-reference"
    assert run.exit_code == 0


def test_background_process_left_running_fails_the_processes_check() -> None:
    scenario = parse_scenario_text(textwrap.dedent("""\
        id: local/leak
        steps:
          - tool: bash
            args: {command: "sleep 20", run_in_background: true}
          - tool: bash
            args: {command: "sleep 0.3"}
        processes: {left_behind: 0}
    """), "leak.yaml")
    backend = LocalBackend()
    try:
        res = run_scenario(backend, scenario)
    finally:
        backend.close()
    assert res.status == FAIL
    assert res.steps[-1].id == "processes"
    assert res.steps[-1].messages[0].startswith("processes: expected at most 0 left behind, found ")


def test_normalisers_replace_only_what_they_declare() -> None:
    ctx = NormalisationContext(roots=("/tmp/ws-1",), tmpdirs=("/tmp",), homes=("/home/u",), task_ids=("bash-1a2b",))
    text = "/tmp/ws-1/a.txt /tmp/pi-bash-0123456789abcdef.log /home/u/x bash-1a2b took 12.5s and 30ms"
    assert normalize_text(text, ["workspace"], ctx) == (
        "$WORKSPACE/a.txt /tmp/pi-bash-0123456789abcdef.log /home/u/x bash-1a2b took 12.5s and 30ms")
    assert normalize_text(text, ["workspace", "tmpfiles", "home", "task_ids", "durations"], ctx) == (
        "$WORKSPACE/a.txt $TMP/pi-bash-XXXX.log $HOME/x $TASK_ID took Ns and Nms")


def test_task_ids_found_in_details_are_normalised_everywhere() -> None:
    obs = Observation("result", text='<bash_background task_id="bash-77">', details={"task_id": "bash-77", "n": 1})
    out = normalize_observation(obs, ["task_ids"], NormalisationContext())
    assert (out.text, out.details) == ('<bash_background task_id="$TASK_ID">', {"task_id": "$TASK_ID", "n": 1})


def test_a_path_in_the_hosts_real_home_or_temp_dir_does_not_read_like_the_scenarios_private_one() -> None:
    """A tool that leaked a file to the host's real HOME (or its shared /tmp) shows $HOST_HOME
    ($HOST_TMP), never the $HOME ($TMP) a private directory shows: the normalisers cannot hide a
    leak. Nested directories are named as themselves (longest path first)."""
    ctx = NormalisationContext(roots=("/tmp/tp-ws-1",), tmpdirs=("/tmp/toolproof-tmp-ab",),
                               homes=("/tmp/toolproof-tmp-ab/home",), host_tmpdirs=("/tmp",),
                               host_homes=("/root",))
    names = ["workspace", "tmpfiles", "home"]
    assert normalize_text("/tmp/toolproof-tmp-ab/home/.cfg", names, ctx) == "$HOME/.cfg"
    assert normalize_text("/root/.cfg", names, ctx) == "$HOST_HOME/.cfg"
    assert normalize_text("/tmp/toolproof-tmp-ab/x /tmp/x", names, ctx) == "$TMP/x $HOST_TMP/x"
    assert normalize_text("/tmp/tp-ws-1/a.txt", names, ctx) == "$WORKSPACE/a.txt"


def test_the_local_backends_context_keeps_the_hosts_home_and_temp_dir_apart() -> None:
    hello = HelloInfo.from_json({"implementation": "x", "capabilities": {"tmpdir": "/tmp/toolproof-tmp-ab",
                                                                        "home": "/tmp/toolproof-home-cd"}})
    scenario = parse_scenario_text("id: n/x\ntitle: t\nsteps:\n- tool: read\n  args: {path: a}\n  expect: {status: result}\n", "n/x.yaml")
    ctx = context_for(scenario, "local", hello, "/tmp/ws")
    assert "/tmp/toolproof-home-cd" in ctx.homes and os.path.expanduser("~") in ctx.host_homes
    assert tempfile.gettempdir() in ctx.host_tmpdirs and tempfile.gettempdir() not in ctx.tmpdirs
    docker = context_for(scenario, "docker", hello, "/work/ws")
    assert "/tmp" in docker.tmpdirs and not docker.host_homes and not docker.host_tmpdirs
