"""Putting one mutant into a Python process: an import hook that hands Python the mutated source
of each module the mutant changes, before anything imports it.

``install(mutant)`` checks every edit against the current source (the text to replace must occur
exactly once, and the result must compile), then puts a finder at the front of ``sys.meta_path``
that loads those modules from their mutated source (compiled under the original file name, so
tracebacks still point at the file; no bytecode is written or read for them). Nothing else is
touched: a process that never calls ``install`` runs the reference unchanged, and the reference
package never imports this one (tests/harness/mutants check both).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from harness.mutants.catalogue import Mutant, SourceEdit


class MutantError(Exception):
    """A mutant that does not apply to the current source (its text is gone, or not unique)."""


def module_source(module: str) -> tuple[str, Path]:
    """The source text and file of ``module``, found without importing it or its packages (a
    package's ``__init__`` may import the very module to mutate)."""
    top, _, rest = module.partition(".")
    spec = importlib.util.find_spec(top)
    if spec is None or not spec.submodule_search_locations:
        raise MutantError(f"{module}: package {top} not found")
    base = Path(next(iter(spec.submodule_search_locations))).joinpath(*rest.split(".")) if rest else None
    for path in ((base.with_suffix(".py"), base / "__init__.py") if base is not None else ()):
        if path.is_file():
            return path.read_text(encoding="utf-8"), path
    raise MutantError(f"{module}: no Python source to mutate")


def mutated_sources(mutant: Mutant) -> dict[str, tuple[str, Path]]:
    """Module name → (mutated source, file) for every module ``mutant`` edits; ``MutantError``
    when an edit's text does not occur exactly once or the result does not compile."""
    out: dict[str, tuple[str, Path]] = {}
    for edit in mutant.edits:
        source, path = out.get(edit.module) or module_source(edit.module)
        out[edit.module] = (_apply_edit(mutant.name, edit, source), path)
    for module, (source, path) in out.items():
        try:
            compile(source, str(path), "exec")
        except SyntaxError as exc:
            raise MutantError(f"{mutant.name}: {module} does not compile after the edit: {exc}") from None
    return out


def _apply_edit(name: str, edit: SourceEdit, source: str) -> str:
    count = source.count(edit.old)
    if count != 1:
        where = "does not occur" if count == 0 else f"occurs {count} times"
        raise MutantError(f"{name}: in {edit.module}, the text to replace {where}: {edit.old!r}")
    return source.replace(edit.old, edit.new)


class _MutatedLoader(importlib.abc.Loader):
    def __init__(self, source: str, path: Path) -> None:
        self.source = source
        self.path = path

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # the default module object

    def exec_module(self, module: ModuleType) -> None:
        exec(compile(self.source, str(self.path), "exec"), module.__dict__)


class MutantFinder(importlib.abc.MetaPathFinder):
    """Finds the mutated modules; every other import goes on to the normal finders."""

    def __init__(self, sources: dict[str, tuple[str, Path]]) -> None:
        self.sources = sources

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        found = self.sources.get(fullname)
        if found is None:
            return None
        source, file = found
        spec = importlib.util.spec_from_loader(fullname, _MutatedLoader(source, file), origin=str(file))
        if spec is not None:
            spec.has_location = True
            if file.name == "__init__.py":
                spec.submodule_search_locations = [str(file.parent)]
        return spec


def install(mutant: Mutant) -> MutantFinder:
    """Make the next imports of ``mutant``'s modules load their mutated source. Call it before the
    reference is imported; ``MutantError`` when a module is already loaded or an edit does not apply."""
    sources = mutated_sources(mutant)
    loaded = [m for m in sources if m in sys.modules]
    if loaded:
        raise MutantError(f"{mutant.name}: already imported, cannot be mutated: {', '.join(loaded)}")
    finder = MutantFinder(sources)
    sys.meta_path.insert(0, finder)
    return finder
