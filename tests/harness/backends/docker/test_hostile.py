"""The hostile scenario corpus (scenarios/hostile/) on the docker backend, for the reference, the
upstream emulation and (when installed) the published pi 0.79.1: every scenario passes (its harm
is contained), the next scenario on the same backend passes, the host's file system is untouched,
the plant-then-check pair finds nothing carried over, an implementation killed from inside is an
infrastructure error naming the cause, and no labelled container remains.
Skipped without an engine unless TOOLPROOF_REQUIRE_DOCKER=1."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from harness.backends.base import Capabilities
from harness.backends.docker.backend import LABEL_RUN_ID, DockerBackend, cleanup
from harness.backends.impl import Implementation, parse_impl
from harness.corpus.loader import load_corpus, load_scenario, parse_scenario_text
from harness.model.results import ERROR, PASS
from harness.run.runner import Runner, capability_mismatch, run_scenario
from tests.support.docker import docker_engine, docker_image  # noqa: F401  (fixtures)
from tests.support.repo import REPO

HOSTILE = sorted((REPO / "scenarios" / "hostile").glob("*.yaml"))
ATTACK_CLASSES = {
    "forge-through-proc", "steal-requests", "ptrace-implementation", "tamper-implementation",
    "path-planting", "kill-the-sandbox", "leak-1-plant", "leak-2-check", "sparse-read", "cpu-quota",
    "proc-memory",
}
# Paths the hostile scenarios write to inside the container; none may appear on the host.
HOST_CANARIES = [Path(tempfile.gettempdir()) / "toolproof-hostile-canary",
                 Path(tempfile.gettempdir()) / "toolproof-hostile-symlink.txt",
                 Path(tempfile.gettempdir()) / "toolproof-leak", Path(tempfile.gettempdir()) / "stolen",
                 Path("/usr/toolproof-evil.txt"), Path("/usr/bin/toolproof-evil"),
                 Path("/etc/toolproof-evil"), Path("/etc/toolproof-evil.txt")]
NEXT_SCENARIO = """\
id: hostile/next-scenario-probe
title: A plain scenario right after a hostile one
surface: pi
steps:
  - tool: bash
    args: {command: "echo fine; ls -A | wc -l; ls -A /tmp ~ | grep -c toolproof-leak || true"}
    expect:
      text: "fine\\n0\\n0\\n"
processes: {left_behind: 0}
"""
PI_VERSION = "0.79.1"


def implementations() -> list[Implementation]:
    impls = [parse_impl("reference"), parse_impl("upstream")]
    pi_dir = Path(os.environ.get("TOOLPROOF_PI_CACHE", Path.home() / ".cache" / "toolproof" / "pi")) / PI_VERSION
    if (pi_dir / "node_modules").is_dir() or os.environ.get("TOOLPROOF_REQUIRE_PI") == "1":
        impls.append(parse_impl(f"pi@{PI_VERSION}"))
    return impls


IMPLS = implementations()


def test_every_hostile_scenario_requires_container_isolation_and_runs_on_pis_surface() -> None:
    assert {p.stem for p in HOSTILE} >= ATTACK_CLASSES
    for path in HOSTILE:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert data["requires"]["isolation"] == "container", path.name
        assert data["surface"] == "pi", path.name
        assert data["id"] == f"hostile/{path.stem}"


@pytest.mark.parametrize("path", HOSTILE, ids=[p.stem for p in HOSTILE])
def test_hostile_scenario_is_skipped_by_a_backend_without_container_isolation(path: Path) -> None:
    scenario = load_scenario(path)
    assert ("isolation", "container") in scenario.requires.items()
    assert capability_mismatch(scenario.requires.items(), Capabilities()) == (
        "requires isolation=container; the backend has isolation=none")


@pytest.fixture(scope="module")
def hostile_run_id() -> Iterator[str]:
    rid = "test-hostile-" + uuid.uuid4().hex[:8]
    yield rid
    cleanup(rid)


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("impl", IMPLS, ids=[i.label for i in IMPLS])
def test_hostile_corpus_is_contained_for_every_implementation_with_two_jobs(
        docker_image: str, hostile_run_id: str, impl: Implementation) -> None:  # noqa: F811
    for canary in HOST_CANARIES:
        assert not canary.exists(), f"{canary} exists on the host before the hostile run"
    scenarios = load_corpus([REPO / "scenarios" / "hostile"])
    run = Runner(lambda: DockerBackend(docker_image, run_id=hostile_run_id, impl=impl), jobs=2).run(scenarios)
    bad = [(r.id, r.status, r.message, [(s.id, s.messages) for s in r.steps if s.status != PASS])
           for r in run.scenarios if r.status != PASS]
    assert bad == []
    for canary in HOST_CANARIES:
        assert not canary.exists(), f"the hostile corpus reached the host: {canary}"


@pytest.mark.docker
@pytest.mark.slow
def test_plant_then_check_and_a_plain_scenario_pass_in_sequence_on_one_backend(
        docker_image: str, hostile_run_id: str) -> None:  # noqa: F811
    b = DockerBackend(docker_image, run_id=hostile_run_id)
    try:
        for name in ("leak-1-plant", "leak-2-check", "tamper-implementation", "kill-the-sandbox"):
            result = run_scenario(b, load_scenario(REPO / "scenarios" / "hostile" / f"{name}.yaml"))
            assert result.status == PASS, (name, [(s.id, s.messages) for s in result.steps])
            probe = run_scenario(b, parse_scenario_text(NEXT_SCENARIO, "<probe>"))
            assert probe.status == PASS, (name, [(s.id, s.messages) for s in probe.steps])
    finally:
        b.close()


@pytest.mark.docker
def test_killing_the_implementation_from_inside_is_an_infrastructure_error_naming_the_signal(
        docker_image: str, hostile_run_id: str) -> None:  # noqa: F811
    text = """\
id: hostile/kill-own-implementation
surface: pi
requires: {isolation: container}
steps:
  - tool: bash
    args: {command: "kill -9 $PPID; sleep 5"}
    timeout: 30
    expect: {text: "unreachable"}
"""
    b = DockerBackend(docker_image, run_id=hostile_run_id)
    try:
        result = run_scenario(b, parse_scenario_text(text, "<kill>"))
        assert result.status == ERROR
        assert result.message == (
            "infrastructure: the implementation under test killed by SIGKILL (nothing outside the container "
            "can signal it: a command it ran did) (while handling 'call')")
        probe = run_scenario(b, parse_scenario_text(NEXT_SCENARIO, "<probe>"))
        assert probe.status == PASS
    finally:
        b.close()


@pytest.mark.docker
def test_an_oom_killed_implementation_is_reported_as_out_of_memory_with_the_limit(
        docker_image: str, hostile_run_id: str) -> None:  # noqa: F811
    from harness.errors import InfrastructureError

    hog = parse_impl("cmd:python3 -c \"b = bytearray(1 << 20) * 2048\"")
    b = DockerBackend(docker_image, run_id=hostile_run_id, impl=hog)
    try:
        with pytest.raises(InfrastructureError) as info:
            b.start()
        assert str(info.value).endswith("the implementation under test killed by SIGKILL: out of memory "
                                        "(limit 1 GiB)")
    finally:
        b.close()


@pytest.mark.docker
@pytest.mark.slow
def test_no_labelled_container_is_left_after_the_hostile_run(docker_image: str) -> None:  # noqa: F811
    import docker

    rid = "test-hostile-close-" + uuid.uuid4().hex[:8]
    b = DockerBackend(docker_image, run_id=rid)
    run_scenario(b, load_scenario(REPO / "scenarios" / "hostile" / "closed-stdout.yaml"))
    b.close()
    client = docker.from_env()
    assert client.containers.list(all=True, filters={"label": f"{LABEL_RUN_ID}={rid}"}) == []
    client.close()
