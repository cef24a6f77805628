"""The reference's patch objects, all of them: importing this module imports every tool package
that has patches (each registers its own at its seams, ``core/patches.py``), so the registry is
complete here. ``hello`` and ``workspace`` report from it, and the harness takes patch names and
descriptions from ``patch_catalogue()`` (``toolproof patches``, patch pins) — an implementation
under test is never asked for any of it.
"""

from __future__ import annotations

from dataclasses import dataclass

from tools_impl.bash.patches import BASH_PATCHES
from tools_impl.core.patches import PATCHES, Patch
from tools_impl.core.profile import Profile
from tools_impl.edit.patches import EDIT_PATCHES
from tools_impl.read.patches import READ_PATCHES

# The tool packages with patches, and their objects (each package's patches.py).
PACKAGE_PATCHES: dict[str, tuple[Patch, ...]] = {"bash": BASH_PATCHES, "edit": EDIT_PATCHES, "read": READ_PATCHES}


@dataclass(frozen=True)
class PatchEntry:
    """One patch toggle as the catalogue lists it. ``surface`` is the layer it changes: ``engine``
    (pi's code, on both tool surfaces) or ``wrapper`` (MiniMax's wrapper, the minimax surface)."""

    name: str
    spec_id: str
    description: str
    surface: str
    seams: tuple[str, ...]
    requires: tuple[str, ...]
    package: str

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "spec": self.spec_id, "description": self.description, "surface": self.surface,
                "seams": list(self.seams), "requires": list(self.requires), "package": self.package}


def patch_catalogue() -> tuple[PatchEntry, ...]:
    """Every patch toggle, in ``ALL_PATCHES`` order. Raises ``RuntimeError`` when a toggle has no
    registered object (a toggle added to the profile without its patch)."""
    missing = PATCHES.unregistered()
    if missing:
        raise RuntimeError(f"patch toggles without a registered patch object: {', '.join(missing)}")
    package_of = {p.name: pkg for pkg, patches in PACKAGE_PATCHES.items() for p in patches}
    return tuple(PatchEntry(p.name, p.spec_id, p.description, p.surface, p.seams, p.requires, package_of[p.name])
                 for p in PATCHES.patches())


def all_patch_names() -> list[str]:
    """``hello.all_patches``: every registered toggle, in ``ALL_PATCHES`` order."""
    return [p.name for p in PATCHES.patches()]


def applied_patches(profile: Profile) -> list[str]:
    """``hello.patches`` and ``workspace.patches``: the registered toggles ``profile`` switches on, sorted."""
    return PATCHES.applied(profile)
