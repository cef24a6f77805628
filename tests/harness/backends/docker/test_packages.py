"""The reference's optional packages are in its container image: importable there as the tool uid
(no network, read-only root), reported by the hello exactly as pinned, and the Unicode version of
the container's reference is the local one's. Skipped without an engine unless
TOOLPROOF_REQUIRE_DOCKER=1."""

from __future__ import annotations

import uuid

import pytest

from harness.backends.docker.backend import DockerBackend, cleanup
from harness.backends.local import LocalBackend
from harness.images.runtime import REFERENCE_PACKAGES
from tests.support.docker import docker_engine, docker_image  # noqa: F401  (fixtures)

pytestmark = pytest.mark.docker

IMPORTS = (
    "import sys; sys.path[:0] = ['/opt/toolproof', '/opt/toolproof/site-packages']\n"
    "import unicodedata2, stringzilla, tree_sitter, tree_sitter_bash, pypdf, PIL.Image\n"
    "parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))\n"
    "print(unicodedata2.unidata_version, stringzilla.count(b'a\\nb\\n', b'\\n'), pypdf.__version__, PIL.__version__,"
    " parser.parse(b'ls | wc -l').root_node.children[0].type)\n"
)


def test_the_optional_packages_import_in_the_reference_image_as_the_tool_uid(docker_image: str) -> None:  # noqa: F811
    import docker

    rid = "test-packages-" + uuid.uuid4().hex[:8]
    backend = DockerBackend(docker_image, run_id=rid)
    try:
        backend.start()
        image = backend.image
    finally:
        backend.close()
        cleanup(rid)
    client = docker.from_env()
    out = client.containers.run(image, ["python3", "-I", "-B", "-c", IMPORTS], entrypoint=[], remove=True,
                                network_mode="none", user="1000:1000", read_only=True)
    client.close()
    assert out.decode() == "17.0.0 2 7.1.1 13.0.0 pipeline\n"


def test_the_containers_hello_reports_the_pinned_packages_and_the_local_unicode_version(
        docker_image: str) -> None:  # noqa: F811
    rid = "test-packages-" + uuid.uuid4().hex[:8]
    backend = DockerBackend(docker_image, run_id=rid)
    local = LocalBackend()
    try:
        caps = backend.start().capabilities
        local_caps = local.start().capabilities
    finally:
        backend.close()
        local.close()
        cleanup(rid)
    assert caps.get("packages") == dict(r.split("==") for r in REFERENCE_PACKAGES)
    assert caps.get("unicode") == local_caps.get("unicode") == "17.0.0"
