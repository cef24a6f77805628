"""Patches as objects (core/patches.py): every toggle ``hello`` names is a registered patch object
with seams and a spec rule; the engines hold no patch branches; ``--upstream`` is every seam's
default; the registry refuses malformed patches."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.repo import REPO
from tools_impl.core.patches import (
    PATCHES,
    SURFACE_ENGINE,
    SURFACE_WRAPPER,
    Patch,
    PatchRegistry,
    Seam,
    replace,
    wrap,
)
from tools_impl.core.profile import ALL_PATCHES, REFERENCE, UPSTREAM_PI, Profile
from tools_impl.server.patch_catalogue import PACKAGE_PATCHES, patch_catalogue

SPEC = REPO / "docs" / "spec" / "patches.md"
TOOLS = REPO / "tools_impl"
# Where toggles may be read: the profile (which holds them), the registry (which resolves seams),
# the catalogue (which lists them) and the protocol's message types (hello's and workspace's
# ``patches`` fields).
TOGGLE_READERS = {TOOLS / "core" / "profile.py", TOOLS / "core" / "patches.py",
                  TOOLS / "server" / "patch_catalogue.py", TOOLS / "protocol" / "messages.py"}
HEADING = re.compile(r"^## (patch\.[a-z0-9.-]+) — (.+?)(?: \([^()]*\))?$", re.MULTILINE)


def _spec_titles() -> dict[str, str]:
    return dict(HEADING.findall(SPEC.read_text(encoding="utf-8")))


def _hello(*flags: str) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-m", "tools_impl.server", *flags], input=b'{"id":1,"op":"hello"}\n',
                          capture_output=True, timeout=60, cwd=REPO, check=True)
    result: dict[str, Any] = json.loads(proc.stdout.splitlines()[0])["result"]
    return result


@pytest.mark.parametrize("flags", [(), ("--upstream",)], ids=["reference", "upstream"])
def test_every_toggle_in_hello_is_a_registered_patch_with_a_seam_and_a_spec_rule(flags: tuple[str, ...]) -> None:
    hello = _hello(*flags)
    titles = _spec_titles()
    assert hello["all_patches"] == list(ALL_PATCHES)
    assert set(hello["patches"]) <= set(hello["all_patches"])
    registered_seams = {s.name for s in PATCHES.seams()}
    for name in hello["all_patches"]:
        patch = PATCHES.get(name)
        assert patch.seams and set(patch.seams) <= registered_seams, name
        assert patch.spec_id == f"patch.{name}" and patch.spec_id in titles, name
        assert patch.description == titles[patch.spec_id], name


def test_hello_applies_what_the_profile_switches_on() -> None:
    assert _hello()["patches"] == sorted(REFERENCE.patches)
    assert _hello("--upstream")["patches"] == []


def test_the_registry_holds_one_object_per_toggle_and_the_catalogue_lists_them() -> None:
    assert [p.name for p in PATCHES.patches()] == list(ALL_PATCHES)
    assert PATCHES.unregistered() == []
    by_package = sorted(p.name for patches in PACKAGE_PATCHES.values() for p in patches)
    assert by_package == sorted(ALL_PATCHES)
    entries = patch_catalogue()
    assert [e.name for e in entries] == list(ALL_PATCHES)
    for e in entries:
        patch = PATCHES.get(e.name)
        assert (e.spec_id, e.description, e.seams, e.surface) == (patch.spec_id, patch.description, patch.seams,
                                                                 patch.surface)
        assert e.surface == (SURFACE_WRAPPER if e.name.startswith("wrap.") else SURFACE_ENGINE)
        assert e.name in [p.name for p in PACKAGE_PATCHES[e.package]]
        assert e.to_json()["spec"] == e.spec_id


def test_the_spec_has_a_rule_for_every_toggle_and_no_other() -> None:
    assert sorted(_spec_titles()) == sorted(f"patch.{n}" for n in ALL_PATCHES)


# -- the engines hold no patch branches -----------------------------------------------------------


def _engine_modules() -> list[Path]:
    return sorted(TOOLS.rglob("engine.py"))


def test_no_engine_module_tests_a_patch_flag() -> None:
    assert [p.relative_to(REPO).as_posix() for p in _engine_modules()] == [
        "tools_impl/bash/engine.py", "tools_impl/edit/engine.py", "tools_impl/read/engine.py"]
    flagged = {}
    for path in _engine_modules():
        code = [line for line in path.read_text(encoding="utf-8").splitlines()
                if not line.startswith(("from ", "import "))]
        hits = [line.strip() for line in code if re.search(r"\.patch\(|\.patches\b|PATCH_[A-Z]", line)]
        if hits:
            flagged[path.relative_to(REPO).as_posix()] = hits
    assert flagged == {}


class _ToggleReads(ast.NodeVisitor):
    """Ways a module can look at a patch toggle: ``x.patch(...)``, ``x.patches``, an imported
    ``PATCH_*`` name, ``ALL_PATCHES``, or a string that is exactly a toggle name."""

    def __init__(self) -> None:
        self.found: list[str] = []

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in ("patch", "patches", "with_patches"):
            self.found.append(f"{node.lineno}: .{node.attr}")
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name.startswith("PATCH_") or alias.name in ("ALL_PATCHES", "DEFAULT_PATCHES"):
                self.found.append(f"{node.lineno}: import {alias.name}")

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and node.value in ALL_PATCHES:
            self.found.append(f"{node.lineno}: {node.value!r}")


def test_outside_the_patch_objects_no_tool_module_reads_a_toggle() -> None:
    """Only ``TOGGLE_READERS`` and each package's patches.py (whose objects name their toggles)
    look at toggles; engines and wrappers ask their seams."""
    offending: dict[str, list[str]] = {}
    for path in sorted(TOOLS.rglob("*.py")):
        if path in TOGGLE_READERS or path.name == "patches.py":
            continue
        visitor = _ToggleReads()
        visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
        if visitor.found:
            offending[path.relative_to(REPO).as_posix()] = visitor.found
    assert offending == {}


def test_each_package_with_patches_registers_them_on_import() -> None:
    for package in PACKAGE_PATCHES:
        init = (TOOLS / package / "__init__.py").read_text(encoding="utf-8")
        assert f"from tools_impl.{package} import patches as patches" in init, package


def test_every_seam_declared_in_a_tool_module_is_registered() -> None:
    declared: set[str] = set()
    for path in TOOLS.rglob("*.py"):
        declared.update(re.findall(r'\bSeam\(\s*"([a-z0-9.-]+)"', path.read_text(encoding="utf-8")))
    assert declared == {s.name for s in PATCHES.seams()}
    assert all(s.surface in (SURFACE_ENGINE, SURFACE_WRAPPER) and s.doc for s in PATCHES.seams())


# -- what the seams run ------------------------------------------------------------------------------


def test_upstream_runs_the_default_at_every_seam() -> None:
    """--upstream is the engine with no patch applied."""
    for seam in PATCHES.seams():
        assert seam.of(UPSTREAM_PI) is seam.default, seam.name
        assert seam.of(REFERENCE.with_patches(dict.fromkeys(ALL_PATCHES, False))) is seam.default, seam.name


def _only(*names: str) -> Profile:
    return UPSTREAM_PI.replace(patches=frozenset(names))


def test_each_patch_changes_exactly_its_own_seams() -> None:
    for patch in PATCHES.patches():
        profile = _only(patch.name, *patch.requires)
        changed = {s.name for s in PATCHES.seams() if s.of(profile) is not s.default}
        expected = set(patch.seams) | {seam for r in patch.requires for seam in PATCHES.get(r).seams}
        assert changed == expected, patch.name


def test_a_patch_without_the_toggles_it_requires_changes_nothing() -> None:
    requiring = [p for p in PATCHES.patches() if p.requires]
    assert sorted(p.name for p in requiring) == ["bash.ps-constrained", "bash.ps51-stdin-launcher",
                                                 "edit.fidelity-guard"]
    for patch in requiring:
        assert all(s.of(_only(patch.name)) is s.default for s in PATCHES.seams()), patch.name


# -- the registry's rules, on a registry of its own ----------------------------------------------------


def _seam(name: str = "t.point", surface: str = SURFACE_ENGINE) -> Seam[str]:
    return Seam(name, surface, "pi", "a test seam")


def test_hooks_stack_in_toggle_order_over_the_default() -> None:
    reg = PatchRegistry()
    seam = _seam()
    first, second = ALL_PATCHES[0], ALL_PATCHES[1]
    reg.register([seam], [Patch(second, "second", (wrap(seam, lambda below: below + "+2"),)),
                          Patch(first, "first", (wrap(seam, lambda below: below + "+1"),))])
    assert reg.resolve(seam, _only()) == "pi"
    assert reg.resolve(seam, _only(second)) == "pi+2"
    assert reg.resolve(seam, _only(first, second)) == "pi+1+2"
    assert reg.applied(_only(second, first, "edit.diff-bounds")) == sorted([first, second])


def test_the_registry_refuses_malformed_patches() -> None:
    seam, wrapper = _seam(), _seam("t.wrapper", SURFACE_WRAPPER)
    stray = _seam("t.stray")
    cases: list[tuple[list[Seam[str]], Patch, str]] = [
        ([seam], Patch("edit.fuzzy-spam", "x", (replace(seam, "a"),)), "not a patch toggle"),
        ([seam], Patch("edit.fuzzy-span", "", (replace(seam, "a"),)), "one line"),
        ([seam], Patch("edit.fuzzy-span", "x", ()), "no seam"),
        ([seam], Patch("edit.fuzzy-span", "x", (replace(stray, "a"),)), "t.stray is not registered"),
        ([seam, wrapper], Patch("edit.fuzzy-span", "x", (replace(wrapper, "a"),)), "wrap.* names exactly"),
        ([seam], Patch("wrap.replace-all-literal", "x", (replace(seam, "a"),)), "wrap.* names exactly"),
        ([seam, wrapper], Patch("edit.fuzzy-span", "x", (replace(seam, "a"), replace(wrapper, "b"))), "both surfaces"),
        ([seam], Patch("edit.fuzzy-span", "x", (replace(seam, "a"),), requires=("no.such",)), "unknown toggle"),
    ]
    for seams, patch, message in cases:
        with pytest.raises(ValueError, match=re.escape(message)):
            PatchRegistry().register(seams, [patch])
    reg = PatchRegistry()
    reg.register([seam], [Patch("edit.fuzzy-span", "x", (replace(seam, "a"),))])
    with pytest.raises(ValueError, match="registered twice"):
        reg.register([], [Patch("edit.fuzzy-span", "x", (replace(seam, "b"),))])
    with pytest.raises(ValueError, match=re.escape("seam t.point is registered twice")):
        reg.register([_seam()], [])


def test_a_seam_whose_patches_were_never_registered_cannot_be_resolved() -> None:
    with pytest.raises(RuntimeError, match=re.escape("t.orphan is not registered")):
        PatchRegistry().resolve(_seam("t.orphan"), REFERENCE)
