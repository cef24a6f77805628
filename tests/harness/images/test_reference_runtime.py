"""The reference's runtime image carries the reference's Python dependencies as installed on the
host (Unicode tables, the bash parser, PDF and image reading), so the reference in a container
behaves as on the host: ``toolproof diff`` local vs docker finds no difference on scenarios that
need them. The docker part skips without an engine (required under TOOLPROOF_REQUIRE_DOCKER=1)."""

from __future__ import annotations

import io
import json
from importlib import metadata
from pathlib import Path

import pytest

from harness.cli import main
from harness.images.runtime import REFERENCE_DISTRIBUTIONS, Payload, add_host_distributions, runtime_tag
from tests.support.docker import docker_engine, docker_image  # noqa: F401  (fixtures)
from tests.support.repo import REPO


def test_installed_dependencies_are_copied_under_site_and_hashed_by_version_and_record() -> None:
    payload = Payload()
    copied = add_host_distributions(payload)
    assert copied == list(REFERENCE_DISTRIBUTIONS)  # the test extras install every one of them
    assert any(a.startswith("site/unicodedata2") and a.endswith(".so") for a in payload.files)
    assert "site/tree_sitter_bash/__init__.py" in payload.files
    assert "site/pypdf/__init__.py" in payload.files
    assert not [a for a in payload.files if "__pycache__" in a or a.endswith(".pyc")]
    version = metadata.version("unicodedata2")
    (fingerprint,) = [data for name, data in payload.fingerprints if name == "site/unicodedata2"]
    assert fingerprint.startswith(f"{version}\0".encode())
    # a different installed version is a different image
    other = Payload(fingerprints=[(n, d.replace(version.encode(), b"0.0.0", 1)) for n, d in payload.fingerprints])
    assert runtime_tag("reference", "sha256:base", payload) != runtime_tag("reference", "sha256:base", other)


def test_a_distribution_that_is_not_installed_is_left_out() -> None:
    payload = Payload()
    assert add_host_distributions(payload, ("no-such-distribution-xyz",)) == []
    assert payload.files == {} and payload.fingerprints == []


@pytest.mark.docker
def test_local_and_docker_agree_on_scenarios_that_need_the_parser_and_pypdf(
        docker_image: str, tmp_path: Path) -> None:  # noqa: F811
    paths = [str(REPO / "scenarios" / p) for p in ("classify/echo.yaml", "classify/pipeline.yaml",
                                                  "read/binary/pdf-not-by-extension.yaml")]
    out = io.StringIO()
    code = main(["diff", *paths, "--backend-a", "local", "--backend-b", "docker", "--json", str(tmp_path / "d.json")], out)
    report = json.loads((tmp_path / "d.json").read_text(encoding="utf-8"))
    assert (code, report["differences"], report["errors"]) == (0, [], []), out.getvalue()
    assert report["scenarios"] == 3
