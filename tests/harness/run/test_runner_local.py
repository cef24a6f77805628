"""The runner on the local backend (the reference server) with the example corpus, normalisers
and the left-behind process check."""

from __future__ import annotations

import textwrap

from harness.backends.local import LocalBackend
from harness.corpus.loader import load_corpus, parse_scenario_text
from harness.model.observation import Observation
from harness.model.results import FAIL, PASS, SKIP, XFAIL
from harness.report.baseline import apply_baseline, load_baseline
from harness.run.normalise import NormalisationContext, normalize_observation, normalize_text
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
