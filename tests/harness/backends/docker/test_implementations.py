"""Every implementation in its container — the reference, upstream, pi, and the example adapters
as ``cmd:`` programs in a user's image:

- runs non-dumpable, so a command under test (same uid, no Yama here) cannot open its
  /proc/<pid>/mem, environ or maps: the reference by prctl, pi by its execute-only Node binary, a
  ``cmd:`` program by the supervisor's start through a private execute-only copy of its ELF
  loader (scenarios/hostile/proc-memory.yaml, on the minimax surface for the example adapters,
  which speak only that one; the hello's ``capabilities.sandbox.nondumpable``);
- killed by an everyday command (``pkill node``, ``pkill -f python3``…) is an infrastructure error
  naming the cause, never a pass, and the next scenario on the same backend passes.

Skipped without an engine unless TOOLPROOF_REQUIRE_DOCKER=1."""

from __future__ import annotations

import hashlib
import io
import tarfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.backends.docker.backend import DockerBackend, cleanup
from harness.backends.impl import Implementation, install_pi, parse_impl
from harness.corpus.loader import load_scenario, parse_scenario_text
from harness.model.results import ERROR, PASS
from harness.run.runner import run_scenario
from tests.harness.backends.docker.test_hostile import IMPLS
from tests.support.docker import docker_engine, docker_image  # noqa: F401  (fixtures)
from tests.support.repo import REPO

SCENARIO = REPO / "scenarios" / "hostile" / "proc-memory.yaml"
PYTHON_ADAPTER = REPO / "examples" / "python-adapter" / "adapter.py"
NODE_ADAPTER = REPO / "examples" / "node-adapter" / "adapter.mjs"
CMD_IMPLS = {"python": "cmd:python3 /opt/my-adapter/adapter.py",
             "node": "cmd:/opt/my-adapter/node /opt/my-adapter/adapter.mjs"}


@pytest.fixture(scope="module")
def run_id() -> Iterator[str]:
    rid = "test-nondumpable-" + uuid.uuid4().hex[:8]
    yield rid
    cleanup(rid)


@pytest.fixture(scope="module")
def adapter_image(docker_image: str) -> str:  # noqa: F811
    """docs/docker.md's recipe: FROM linux-bash, both example adapters and a Node runtime copied
    in root-owned and readable (mode 0755/0644) — nothing of the user's is execute-only."""
    import docker

    node = Path(install_pi("0.79.1", pinned_node=True).node)
    files = {"Dockerfile": f"FROM {docker_image}\nCOPY adapter /opt/my-adapter\n".encode(),
             "adapter/adapter.py": PYTHON_ADAPTER.read_bytes(), "adapter/adapter.mjs": NODE_ADAPTER.read_bytes()}
    digest = hashlib.sha256(b"".join(k.encode() + v for k, v in sorted(files.items())))
    digest.update(str(node.stat().st_size).encode())
    tag = f"toolproof-test/example-adapters:{digest.hexdigest()[:12]}"
    client = docker.from_env()
    try:
        client.images.get(tag)
        return tag
    except docker.errors.ImageNotFound:
        pass
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
        info = tar.gettarinfo(str(node), "adapter/node")
        info.mode, info.uid, info.gid = 0o755, 0, 0
        with open(node, "rb") as fh:
            tar.addfile(info, fh)
    buf.seek(0)
    client.images.build(fileobj=buf, custom_context=True, tag=tag, rm=True, pull=False, network_mode="none")
    client.close()
    return tag


def check(backend: DockerBackend, scenario_text: str | None) -> None:
    try:
        hello = backend.start()
        assert hello.capabilities.get("sandbox")["nondumpable"] is True
        scenario = (load_scenario(SCENARIO) if scenario_text is None
                    else parse_scenario_text(scenario_text, str(SCENARIO)))
        result = run_scenario(backend, scenario)
        assert result.status == PASS, [(s.id, s.messages) for s in result.steps]
    finally:
        backend.close()


@pytest.mark.docker
@pytest.mark.parametrize("impl", IMPLS, ids=[i.label for i in IMPLS])
def test_the_shipped_implementations_are_non_dumpable(docker_image: str, run_id: str,  # noqa: F811
                                                      impl: Implementation) -> None:
    check(DockerBackend(docker_image, run_id=run_id, impl=impl), None)


@pytest.mark.docker
@pytest.mark.parametrize("adapter", sorted(CMD_IMPLS))
def test_a_cmd_adapter_in_a_users_image_is_started_non_dumpable(adapter_image: str, run_id: str,
                                                                adapter: str) -> None:
    text = SCENARIO.read_text(encoding="utf-8").replace("\nsurface: pi\n", "\nsurface: minimax\n")
    check(DockerBackend(adapter_image, run_id=run_id, impl=parse_impl(CMD_IMPLS[adapter])), text)


KILLED_BY_SIGTERM = ("infrastructure: the implementation under test killed by SIGTERM (nothing outside the "
                     "container can signal it: a command it ran did) (while handling 'call')")
KILL = """\
id: hostile/kill-own-implementation
surface: {surface}
requires: {{isolation: container}}
steps:
  - tool: bash
    args: {{command: "{command}; sleep 5; echo survived"}}
    timeout: 30
    expect: {{text: "survived\\n"}}
"""
NEXT = """\
id: hostile/after-the-kill
surface: {surface}
steps:
  - tool: bash
    args: {{command: "echo fine"}}
    expect: {{text: "fine\\n"}}
"""
# What a command would run to take each implementation down, by name or command line. (The
# reference is not a "python3" process — hostile/kill-the-sandbox shows `pkill -f ^python3` misses
# it; a cmd: program started through the loader copy has the loader's fd number as its name, so
# `pkill node` misses it and `pkill -f` is what reaches it.)
KILLERS = {"reference": "pkill -f ^/opt/toolproof/bin/toolproof-reference",
           "upstream": "pkill -f ^/opt/toolproof/bin/toolproof-reference", "pi": "pkill node",
           "python": "pkill -f python3", "node": "pkill -f node"}


def check_kill(backend: DockerBackend, surface: str, command: str) -> None:
    try:
        result = run_scenario(backend, parse_scenario_text(KILL.format(surface=surface, command=command), "<kill>"))
        assert (result.status, result.message) == (ERROR, KILLED_BY_SIGTERM)
        after = run_scenario(backend, parse_scenario_text(NEXT.format(surface=surface), "<next>"))
        assert after.status == PASS, [(s.id, s.messages) for s in after.steps]
    finally:
        backend.close()


@pytest.mark.docker
@pytest.mark.parametrize("impl", IMPLS, ids=[i.label for i in IMPLS])
def test_killing_a_shipped_implementation_by_name_is_an_infrastructure_error(
        docker_image: str, run_id: str, impl: Implementation) -> None:  # noqa: F811
    check_kill(DockerBackend(docker_image, run_id=run_id, impl=impl), "pi", KILLERS[impl.kind])


@pytest.mark.docker
@pytest.mark.parametrize("adapter", sorted(CMD_IMPLS))
def test_killing_a_cmd_adapter_by_name_is_an_infrastructure_error(adapter_image: str, run_id: str,
                                                                  adapter: str) -> None:
    check_kill(DockerBackend(adapter_image, run_id=run_id, impl=parse_impl(CMD_IMPLS[adapter])), "minimax",
               KILLERS[adapter])
