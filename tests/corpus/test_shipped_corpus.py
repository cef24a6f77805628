"""The shipped corpus as a CI gate: it passes on the local backend with no baseline (the
reference baseline is empty), passes on the docker backend, and both backends observe the same thing at every step
(parity, docs/architecture.md), except what a scenario declares per platform.

The docker half skips without an engine unless TOOLPROOF_REQUIRE_DOCKER=1.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from harness.backends.local import LocalBackend
from harness.corpus.loader import load_corpus
from harness.model.results import RunResult
from harness.report.cross_run_diff import Difference, differences
from harness.run.runner import Runner
from harness.run.snapshots import SnapshotStore
from tests.support.docker import docker_engine, docker_image  # noqa: F401  (fixtures)
from tests.support.repo import REPO

CORPUS = REPO / "scenarios"


def _run(factory: Any, label: str) -> RunResult:
    scenarios = load_corpus([CORPUS])
    snapshots = SnapshotStore(REPO / "snapshots")
    return Runner(factory, jobs=2, backend_label=label, snapshot_factory=snapshots.hook_for,
                  trees=True).run(scenarios)


def _problems(run: RunResult) -> list[str]:
    return [f"{s.id}: {s.status}: {s.failure_text}" for s in run.scenarios
            if s.status not in ("pass", "skip")]


@pytest.fixture(scope="module")
def local_run() -> RunResult:
    return _run(LocalBackend, "local")


def test_shipped_corpus_has_at_least_sixty_scenarios_over_all_six_tools() -> None:
    scenarios = load_corpus([CORPUS])
    assert len(scenarios) >= 60
    tools = {step.tool for s in scenarios for step in s.steps if step.tool}
    assert tools >= {"read", "write", "edit", "grep", "glob", "bash"}


def test_shipped_corpus_passes_the_gate_on_the_local_backend(local_run: RunResult) -> None:
    assert _problems(local_run) == []
    assert local_run.exit_code == 0
    counts = local_run.counts()
    assert counts["pass"] >= 60
    # each skip says why; hostile scenarios need container isolation
    assert all(s.reason or s.message for s in local_run.scenarios if s.status == "skip")


# Count mode lists files in ripgrep's order (spec grep.6: its parallel walk, unsorted, so the
# directory order of the file system shows through), so which file comes first differs between
# runs and file systems; these steps pin the page with a regex or only its total. (scenario, step);
# a step of None: the whole scenario.
UNORDERED: tuple[tuple[str, str | None], ...] = (("grep/cases/count-paging", None),)


def _ordered(d: Difference) -> bool:
    return not any(d.scenario == sid and step in (None, d.step) for sid, step in UNORDERED)


@pytest.mark.docker
@pytest.mark.slow
def test_shipped_corpus_passes_on_docker_with_the_same_observations_as_local(
    docker_image: str, local_run: RunResult  # noqa: F811
) -> None:
    from harness.backends.docker.backend import DockerBackend, cleanup

    rid = "test-corpus-" + uuid.uuid4().hex[:8]
    try:
        docker_run = _run(lambda: DockerBackend(docker_image, run_id=rid), "docker")
    finally:
        assert cleanup(rid) == 0, "the corpus run left containers behind"
    assert _problems(docker_run) == []
    assert docker_run.exit_code == 0
    # One equivalence (harness/run/equivalence.py), as ``toolproof diff`` compares: every step's
    # status, observation and workspace tree after the step.
    compared = [(s.id, st.id) for s in local_run.scenarios if s.status != "skip" for st in s.steps
                if st.observation is not None]
    assert len(compared) >= 100
    assert all(st.tree is not None for s in docker_run.scenarios if s.status != "skip" for st in s.steps
               if st.observation is not None), "the docker run listed no trees"
    diffs = [d for d in differences(local_run, docker_run, ("local", "docker")) if _ordered(d)]
    assert diffs == [], "\n".join(d.render() for d in diffs)[:3000]


def test_upstream_emulation_matches_behaviour_recorded_from_published_pi() -> None:
    """adapters/pi/scenarios pin outputs recorded from the published pi 0.79.1 tools; the
    reference server with --upstream (engine only, every patch off) must reproduce them."""
    from harness.backends.registry import backend_selection

    scenarios = load_corpus([REPO / "adapters" / "pi" / "scenarios"])
    assert len(scenarios) >= 8
    # --impl upstream on the local backend: pi's grep and find find rg and fd as pi's do
    run = Runner(backend_selection("local", "upstream").factory, jobs=2, backend_label="upstream").run(scenarios)
    assert _problems(run) == []
    # only a scenario that needs a non-root run (a read-only file is writable as root) may skip, and
    # those calling pi's own search tools (tag pi-search), which the reference does not emulate
    search = {s.id for s in scenarios if "pi-search" in s.tags}
    skipped = {s.id: s.reason for s in run.scenarios if s.status == "skip"}
    assert all(reason.startswith("requires root=false") or (sid in search and reason.startswith("requires tools"))
               for sid, reason in skipped.items()), skipped
    assert search <= set(skipped)
    assert run.counts()["pass"] == len(scenarios) - len(skipped)
    assert len(set(skipped) - search) <= 1
