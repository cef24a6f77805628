"""Patches as objects (spec patches): the seams of the pi engine and of the MiniMax wrapper, the
patch objects that register there, and the registry that says what a profile applies at a seam.

A **seam** (``Seam``) is one named point where an engine — the port of pi v0.79.1 — or the
wrapper asks how to do one thing (start the shell, decode its output, end it on a timeout, match
an edit…). Its default is pi's answer; at a wrapper seam, the wrapper's before the fix.

A **patch** (``Patch``) is one toggle of ``Profile.patches`` (``core/profile.py`` ``ALL_PATCHES``
names them; the profile overlays validate against that list): its name, spec rule id
(``patch.<name>``), a one-line description, the hooks it registers at seams, and the toggles it
needs. A hook builds the patch's implementation from what is below it at that seam (pi's default,
or an earlier patch's), so two patches can stack at one seam.

Each tool package declares its seams where pi's code asks them, lists its patches in its
``patches.py`` and registers both with ``PATCHES`` when the package is imported (its
``__init__``): an engine module never runs without its patches. ``seam.of(profile)`` is what the
code at a seam calls: the hooks of the toggles that are on — and whose requirements are on —
folded in ``ALL_PATCHES`` order over the default. With no toggle on (``UPSTREAM_PI``) every seam
is pi's, which is what ``--upstream`` runs. No engine code reads a toggle itself.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from tools_impl.core.profile import ALL_PATCHES, Profile

T = TypeVar("T")

# Where a seam (and so a patch) sits: in the engine, which both tool surfaces run, or in the
# wrapper, which only the minimax surface runs.
SURFACE_ENGINE = "engine"
SURFACE_WRAPPER = "wrapper"
PATCH_SURFACES: tuple[str, ...] = (SURFACE_ENGINE, SURFACE_WRAPPER)
WRAPPER_PREFIX = "wrap."  # the toggles of wrapper patches are named wrap.* (spec patches)
SPEC_PREFIX = "patch."


@dataclass(frozen=True, eq=False)
class Seam(Generic[T]):
    """A named point where a patch may replace what pi (or the unpatched wrapper) does."""

    name: str
    surface: str
    default: T
    doc: str

    def of(self, profile: Profile) -> T:
        """What ``profile`` runs here: the default with the hooks of its active patches."""
        return PATCHES.resolve(self, profile)


@dataclass(frozen=True, eq=False)
class Hook(Generic[T]):
    """A patch's registration at one seam: ``build`` makes the patch's implementation from the one
    below it."""

    seam: Seam[T]
    build: Callable[[T], T]


def replace(seam: Seam[T], implementation: T) -> Hook[T]:
    """A hook that puts ``implementation`` in place of whatever is below it."""
    return Hook(seam, lambda _below: implementation)


def wrap(seam: Seam[T], build: Callable[[T], T]) -> Hook[T]:
    """A hook whose implementation is built around the one below it (``build(below)``)."""
    return Hook(seam, build)


@dataclass(frozen=True)
class Patch:
    """One patch toggle as an object: ``name`` is the toggle, ``spec_id`` its rule."""

    name: str
    description: str
    hooks: tuple[Hook[Any], ...]
    requires: tuple[str, ...] = ()

    @property
    def spec_id(self) -> str:
        return SPEC_PREFIX + self.name

    @property
    def seams(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(h.seam.name for h in self.hooks))

    @property
    def surface(self) -> str:
        return self.hooks[0].seam.surface if self.hooks else SURFACE_ENGINE

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "spec": self.spec_id, "description": self.description,
                "surface": self.surface, "seams": list(self.seams), "requires": list(self.requires)}


def patch_problems(patch: Patch, seams: Iterable[Seam[Any]]) -> list[str]:
    """What is wrong with ``patch`` given the seams it may use; empty when it is well formed."""
    known = {s.name: s for s in seams}
    out: list[str] = []
    if patch.name not in ALL_PATCHES:
        out.append(f"{patch.name}: not a patch toggle of core/profile.py ALL_PATCHES")
    if not patch.description or "\n" in patch.description:
        out.append(f"{patch.name}: the description must be one line")
    if not patch.hooks:
        out.append(f"{patch.name}: registers at no seam")
    for hook in patch.hooks:
        if known.get(hook.seam.name) is not hook.seam:
            out.append(f"{patch.name}: seam {hook.seam.name} is not registered with it")
    if len({h.seam.surface for h in patch.hooks}) > 1:
        out.append(f"{patch.name}: its seams are on both surfaces")
    expected = SURFACE_WRAPPER if patch.name.startswith(WRAPPER_PREFIX) else SURFACE_ENGINE
    if patch.hooks and patch.surface != expected:
        out.append(f"{patch.name}: a {patch.surface} patch, but wrap.* names exactly the wrapper patches")
    out.extend(f"{patch.name}: requires unknown toggle {r}" for r in patch.requires if r not in ALL_PATCHES)
    return out


class PatchRegistry:
    """The registered seams and patches (one per process, ``PATCHES``), and per profile what each
    seam runs (cached: a profile's toggles are a frozen set)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seams: dict[str, Seam[Any]] = {}
        self._patches: dict[str, Patch] = {}
        self._resolved: dict[tuple[str, frozenset[str]], Any] = {}

    def register(self, seams: Iterable[Seam[Any]], patches: Iterable[Patch]) -> None:
        """Add one package's seams and the patches that hook them. Raises ``ValueError`` for a
        seam or toggle registered twice and for a malformed patch."""
        seams, patches = list(seams), list(patches)
        with self._lock:
            problems = [f"seam {s.name} is registered twice" for s in seams if s.name in self._seams]
            problems += [f"seam {s.name}: unknown surface {s.surface!r}" for s in seams
                         if s.surface not in PATCH_SURFACES]
            problems += [f"{p.name} is registered twice" for p in patches if p.name in self._patches]
            for p in patches:
                problems += patch_problems(p, [*self._seams.values(), *seams])
            if problems:
                raise ValueError("; ".join(problems))
            self._seams.update((s.name, s) for s in seams)
            self._patches.update((p.name, p) for p in patches)
            self._resolved.clear()

    def patches(self) -> tuple[Patch, ...]:
        """Every registered patch, in ``ALL_PATCHES`` order."""
        return tuple(self._patches[n] for n in ALL_PATCHES if n in self._patches)

    def seams(self) -> tuple[Seam[Any], ...]:
        return tuple(self._seams.values())

    def get(self, name: str) -> Patch:
        return self._patches[name]

    def unregistered(self) -> list[str]:
        """Toggles of ``ALL_PATCHES`` without a patch object (none once every package is loaded)."""
        return [n for n in ALL_PATCHES if n not in self._patches]

    def applied(self, profile: Profile) -> list[str]:
        """The registered toggles ``profile`` switches on, sorted: what ``hello`` and ``workspace``
        report as applied."""
        return sorted(n for n in profile.patches if n in self._patches)

    def active(self, profile: Profile) -> tuple[Patch, ...]:
        """The patches whose hooks ``profile`` runs: on, with every toggle they require on."""
        on = profile.patches
        return tuple(p for p in self.patches() if p.name in on and all(r in on for r in p.requires))

    def resolve(self, seam: Seam[T], profile: Profile) -> T:
        key = (seam.name, profile.patches)
        try:
            return self._resolved[key]  # type: ignore[no-any-return]
        except KeyError:
            pass
        if self._seams.get(seam.name) is not seam:
            raise RuntimeError(f"seam {seam.name} is not registered: its package's patches.py was not imported")
        implementation = seam.default
        for patch in self.active(profile):
            for hook in patch.hooks:
                if hook.seam is seam:
                    implementation = hook.build(implementation)
        with self._lock:
            self._resolved[key] = implementation
        return implementation


PATCHES = PatchRegistry()
