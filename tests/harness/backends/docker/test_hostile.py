"""The hostile scenario corpus (scenarios/hostile/) on the docker backend: each scenario passes
(its harm is contained), the container has no leftover process afterwards, the next scenario on
the same backend passes, the host's file system is untouched, and no labelled container remains.
Skipped without an engine unless TOOLPROOF_REQUIRE_DOCKER=1."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from harness.backends.base import Capabilities
from harness.backends.docker.backend import LABEL_RUN_ID, DockerBackend, cleanup
from harness.corpus.loader import load_scenario, parse_scenario_text
from harness.model.results import PASS
from harness.run.runner import capability_mismatch, run_scenario
from tests.support.docker import docker_engine, docker_image  # noqa: F401  (fixtures)
from tests.support.repo import REPO

HOSTILE = sorted((REPO / "scenarios" / "hostile").glob("*.yaml"))
# Paths the hostile scenarios write to inside the container; none may appear on the host.
HOST_CANARIES = [Path(tempfile.gettempdir()) / "toolproof-hostile-canary",
                 Path(tempfile.gettempdir()) / "toolproof-hostile-symlink.txt",
                 Path("/usr/toolproof-evil.txt"), Path("/usr/bin/toolproof-evil"),
                 Path("/etc/toolproof-evil"), Path("/etc/toolproof-evil.txt")]
NEXT_SCENARIO = """\
id: hostile/next-scenario-probe
title: A plain scenario right after a hostile one
steps:
  - tool: bash
    args: {command: "echo fine; ls -A | wc -l"}
    expect:
      text: "fine\\n0\\n"
processes: {left_behind: 0}
"""


def test_every_hostile_scenario_requires_container_isolation() -> None:
    assert len(HOSTILE) == 7
    for path in HOSTILE:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert data["requires"]["isolation"] == "container", path.name
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


@pytest.fixture(scope="module")
def backend(docker_image: str, hostile_run_id: str) -> Iterator[DockerBackend]:  # noqa: F811
    for canary in HOST_CANARIES:
        assert not canary.exists(), f"{canary} exists on the host before the hostile run"
    b = DockerBackend(docker_image, run_id=hostile_run_id)
    b.start()
    yield b
    b.close()


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("path", HOSTILE, ids=[p.stem for p in HOSTILE])
def test_hostile_scenario_is_contained_and_the_next_scenario_passes(backend: DockerBackend, path: Path) -> None:
    result = run_scenario(backend, load_scenario(path))
    assert result.status == PASS, (result.message, [(s.id, s.status, s.messages, s.reason) for s in result.steps])
    assert backend.stray_processes() == []
    probe = run_scenario(backend, parse_scenario_text(NEXT_SCENARIO, "<probe>"))
    assert probe.status == PASS, [(s.id, s.messages) for s in probe.steps]
    for canary in HOST_CANARIES:
        assert not canary.exists(), f"{path.stem} reached the host: {canary}"


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
