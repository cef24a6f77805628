"""The reference's optional packages in its container image, without an engine: the exact
versions agree with pyproject.toml, the wheel platforms follow the container's C library, the
site-packages tree is content-hashed into the runtime tag and on the reference's sys.path."""

from __future__ import annotations

import io
import platform
import tarfile
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

from harness.backends.docker.runtime import REFERENCE_LAUNCH
from harness.images.runtime import (
    REFERENCE_PACKAGES,
    ContainerPython,
    packages_key,
    reference_payload,
    runtime_tag,
    write_context,
)
from tests.support.repo import REPO

BOOKWORM = ContainerPython("cpython", "3.11", "x86_64", "glibc", "2.36")


def test_the_shipped_versions_are_pyprojects_pins_and_satisfy_its_ranges() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = [Requirement(r) for r in project["dependencies"]]
    declared += [Requirement(r) for extra, reqs in project["optional-dependencies"].items() if extra != "test"
                 for r in reqs]
    shipped = {Requirement(r).name.lower(): Version(r.split("==")[1]) for r in REFERENCE_PACKAGES}
    assert sorted(shipped) == ["pillow", "pypdf", "stringzilla", "tree-sitter", "tree-sitter-bash", "unicodedata2"]
    for req in declared:
        name = req.name.lower()
        if name not in shipped:
            continue
        assert req.specifier.contains(shipped[name]), (str(req), shipped[name])
        pins = [s.version for s in req.specifier if s.operator == "=="]
        if pins:
            assert [Version(p) for p in pins] == [shipped[name]], str(req)
    assert {r.name.lower() for r in declared} >= set(shipped)


def test_wheel_platforms_follow_the_containers_glibc() -> None:
    assert ContainerPython("cpython", "3.11", "x86_64", "glibc", "2.19").wheel_platforms() == [
        "manylinux_2_19_x86_64", "manylinux_2_18_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64"]
    assert BOOKWORM.wheel_platforms()[0] == "manylinux_2_36_x86_64"
    assert len(BOOKWORM.wheel_platforms()) == 36 - 17 + 1 + 1
    assert ContainerPython("cpython", "3.12", "aarch64", "", "").wheel_platforms() == []  # musl: none


def test_the_packages_key_covers_interpreter_platform_and_pins() -> None:
    other_python = ContainerPython("cpython", "3.12", "x86_64", "glibc", "2.36")
    assert packages_key(BOOKWORM) == packages_key(BOOKWORM)
    assert packages_key(BOOKWORM) != packages_key(other_python)
    assert packages_key(BOOKWORM) != packages_key(BOOKWORM, ("pypdf==7.1.0",))


def test_a_packages_tree_is_shipped_under_site_packages_and_changes_the_tag(tmp_path: Path) -> None:
    site = tmp_path / f"cp311-x86_64-{packages_key(BOOKWORM)}"
    (site / "pypdf").mkdir(parents=True)
    (site / "pypdf" / "__init__.py").write_text("__version__ = '7.1.1'\n")
    (site / "pypdf" / "__pycache__").mkdir()
    (site / "pypdf" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (site / ".complete").write_text("done\n")
    bare, shipped = reference_payload(platform.machine()), reference_payload(platform.machine(), site)
    assert shipped.trees == {"site-packages": site} and bare.trees == {}
    assert runtime_tag("reference", "sha256:1", bare) != runtime_tag("reference", "sha256:1", shipped)
    buf = io.BytesIO()
    write_context(buf, "base:1", shipped)
    with tarfile.open(fileobj=io.BytesIO(buf.getvalue())) as tar:
        names = [n for n in tar.getnames() if n.startswith("opt/toolproof/site-packages")]
        assert names == ["opt/toolproof/site-packages", "opt/toolproof/site-packages/pypdf",
                         "opt/toolproof/site-packages/pypdf/__init__.py"]
        assert tar.getmember("opt/toolproof/site-packages/pypdf/__init__.py").mode == 0o644
    assert "sys.path[:0] = ['/opt/toolproof', '/opt/toolproof/site-packages']\n" in REFERENCE_LAUNCH
