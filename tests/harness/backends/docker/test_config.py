"""The docker backend's pure parts, without an engine: container arguments (hardening), label
filters, image name resolution, the shipped code archive, and the TOOLPROOF_REQUIRE_DOCKER switch."""

from __future__ import annotations

import io
import tarfile

import pytest

from harness.backends.docker.backend import (
    BOOTSTRAP,
    ContainerSpec,
    DockerBackend,
    agent_archive,
    container_kwargs,
    label_filters,
    resolve_image,
)
from harness.images import image_tag
from tests.support import docker as docker_support


def test_container_kwargs_turn_every_hardening_option_on_by_default() -> None:
    kw = container_kwargs(ContainerSpec(image="img:1", run_id="r1", name="toolproof-r1-1"))
    assert kw["network_mode"] == "none"
    assert kw["pids_limit"] == 256
    assert kw["mem_limit"] == kw["memswap_limit"] == "1g"
    assert kw["cap_drop"] == ["ALL"]
    assert kw["cap_add"] is None
    assert kw["security_opt"] == ["no-new-privileges"]
    assert kw["user"] == "1000:1000"
    assert kw["init"] is True
    assert kw["read_only"] is True
    assert set(kw["tmpfs"]) == {"/tmp", "/work", "/home/toolproof"}
    assert all("exec" in opts.split(",") for opts in kw["tmpfs"].values())
    assert kw["labels"] == {"org.toolproof.run-id": "r1", "org.toolproof.role": "worker"}
    assert "volumes" not in kw and "mounts" not in kw


def test_label_filters_select_all_workers_or_one_run() -> None:
    assert label_filters(None) == {"label": ["org.toolproof.role=worker"]}
    assert label_filters("abc") == {"label": ["org.toolproof.role=worker", "org.toolproof.run-id=abc"]}


def test_recipe_names_resolve_to_content_hashed_tags_and_other_refs_pass_through() -> None:
    assert resolve_image(None) == image_tag("linux-bash")
    assert resolve_image("linux-pwsh") == image_tag("linux-pwsh")
    assert resolve_image("registry.example/team/img:7") == "registry.example/team/img:7"


def test_backend_gets_a_run_id_when_none_is_given() -> None:
    assert len(DockerBackend().run_id) == 12
    assert DockerBackend(run_id="mine").run_id == "mine"


def test_shipped_archive_holds_tools_impl_sources_and_the_agent_without_caches() -> None:
    with tarfile.open(fileobj=io.BytesIO(agent_archive())) as tar:
        names = set(tar.getnames())
    assert {"tools_impl/server/dispatch.py", "tools_impl/__init__.py", "toolproof_agent.py"} <= names
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)


def test_bootstrap_is_valid_python() -> None:
    compile(BOOTSTRAP, "<bootstrap>", "exec")


def test_missing_engine_skips_normally_and_fails_when_docker_is_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(docker_support.REQUIRE_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match="no engine here"):
        docker_support.unavailable("no engine here")
    monkeypatch.setenv(docker_support.REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match="TOOLPROOF_REQUIRE_DOCKER=1 but no engine here"):
        docker_support.unavailable("no engine here")


def test_host_rg_is_shipped_only_to_a_container_of_the_same_machine_type() -> None:
    import platform
    import sys

    from harness.backends.docker.backend import host_rg_for_container

    assert host_rg_for_container("no-such-arch") is None
    if not sys.platform.startswith("linux"):
        pytest.skip("the host's rg can only be shipped from a Linux host")
    rg = host_rg_for_container(platform.machine())
    assert rg is not None
    with tarfile.open(fileobj=io.BytesIO(agent_archive(rg))) as tar:
        member = tar.getmember("bin/rg")
        assert member.mode == 0o755
        assert member.size > 0
