"""The layout rules of docs/architecture.md, checked on the source tree: the top level of each
package holds only sub-packages (plus a few named modules), no import cycles inside a package,
and no imports inside functions except of optional dependencies, each explained by a comment."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.repo import REPO

TOP_LEVEL_MODULES_ALLOWED = {
    "tools_impl": {"__init__.py"},
    "harness": {"__init__.py", "errors.py", "pytest_plugin.py"},
}
# Third-party packages that are optional extras (fcntl: POSIX only): importing them late keeps the core usable
# without them. Anything else imported inside a function is a layering problem in disguise.
OPTIONAL_DEPENDENCIES = {"pypdf", "PIL", "tree_sitter", "tree_sitter_bash", "docker", "unicodedata2", "syrupy",
                         "fcntl"}
# Modules of our own that need an optional dependency (the docker SDK) at import time.
OPTIONAL_MODULES = ("harness.backends.docker",)


def _module_name(path: Path) -> str:
    rel = path.relative_to(REPO).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources(package: str) -> dict[str, Path]:
    return {_module_name(p): p for p in sorted((REPO / package).rglob("*.py"))}


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _top_level_imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """Modules of the same tree imported at module level (not under ``if TYPE_CHECKING``)."""
    name = _module_name(path)
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(name, is_package, node)
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                if candidate in modules:
                    found.add(candidate)
                elif target in modules:
                    found.add(target)
    found.discard(name)
    return found


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


@pytest.mark.parametrize("package", sorted(TOP_LEVEL_MODULES_ALLOWED))
def test_package_top_level_holds_only_subpackages_and_named_modules(package: str) -> None:
    stray = sorted(p.name for p in (REPO / package).iterdir()
                   if p.is_file() and p.suffix == ".py" and p.name not in TOP_LEVEL_MODULES_ALLOWED[package])
    assert stray == []


@pytest.mark.parametrize("package", sorted(TOP_LEVEL_MODULES_ALLOWED))
def test_no_import_cycle_inside_package(package: str) -> None:
    modules = _sources(package)
    graph = {name: _top_level_imports(path, modules) for name, path in modules.items()}
    # Importing a sub-module runs its package's __init__ first: an __init__ that imports one of
    # its own sub-modules is fine, the edge back from the sub-module to the package is not a cycle.
    for name in graph:
        graph[name] = {t for t in graph[name] if not name.startswith(t + ".")}
    assert _find_cycle(graph) is None


def _function_level_imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[int, str]] = []
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(func):
            if isinstance(node, ast.Import):
                found.extend((node.lineno, a.name) for a in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level:
                found.append((node.lineno, node.module or ""))
            elif isinstance(node, ast.ImportFrom):
                found.append((node.lineno, "." * node.level + (node.module or "")))
    return sorted(set(found))


def _explained(lines: list[str], lineno: int) -> bool:
    """A comment on the import's line, or above the block of import lines it belongs to."""
    if "#" in lines[lineno - 1]:
        return True
    i = lineno - 2
    while i >= 0 and lines[i].strip().startswith(("import ", "from ")):
        i -= 1
    return i >= 0 and lines[i].strip().startswith("#")


@pytest.mark.parametrize("package", sorted(TOP_LEVEL_MODULES_ALLOWED))
def test_imports_inside_functions_are_only_of_optional_dependencies_with_a_reason(package: str) -> None:
    offending = []
    for name, path in _sources(package).items():
        lines = path.read_text(encoding="utf-8").splitlines()
        for lineno, module in _function_level_imports(path):
            root = module.split(".")[0]
            explained = _explained(lines, lineno)
            optional = root in OPTIONAL_DEPENDENCIES or module.startswith(OPTIONAL_MODULES)
            if not optional or not explained:
                offending.append(f"{name}:{lineno}: {module}")
    assert offending == []


# The layers of harness/ (docs/architecture.md, "Layers"), lowest first: a package imports only
# from its own layer's foundations and the layers below it, never from one above, and the
# packages of one layer do not import each other.
HARNESS_LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "model", "install"),
    ("images",),
    ("backends",),
    ("run",),
    ("corpus",),
    ("report",),
    ("properties", "fuzz", "importers", "scaffold", "mutants"),
    ("releases",),  # sweeps releases with the runner, the baselines and the fuzzer
    ("cli",),
    ("pytest_plugin",),  # pytest's entry point reads the project config as the CLI does
)
FOUNDATIONS = ("errors", "model", "install")  # the bottom layer: usable from every other


def _layer(module: str) -> tuple[int, str]:
    package = module.split(".")[1] if module.count(".") else ""
    for rank, layer in enumerate(HARNESS_LAYERS):
        if package in layer:
            return rank, package
    return -1, package


def test_no_import_in_harness_runs_up_the_layers() -> None:
    modules = _sources("harness")
    upward = []
    for name, path in modules.items():
        rank, package = _layer(name)
        for target in _top_level_imports(path, modules):
            t_rank, t_package = _layer(target)
            if t_package == package or rank < 0 or t_rank < 0:
                continue
            if t_rank > rank or (t_rank == rank and package not in FOUNDATIONS):
                upward.append(f"{name} -> {target}")
    assert upward == []
    assert {p.name.removesuffix(".py") for p in (REPO / "harness").iterdir()
            if (p.is_dir() and (p / "__init__.py").exists()) or p.suffix == ".py"} - {"__init__"} == {
        package for layer in HARNESS_LAYERS for package in layer}


def test_every_command_family_lives_in_cli() -> None:
    """One CLI convention: ``harness/cli/*_commands.py``; no package keeps a ``cli.py`` of its own."""
    assert sorted(str(p.relative_to(REPO)) for p in (REPO / "harness").rglob("cli.py")) == []


@pytest.mark.parametrize("package", ["images", "scaffold", "install"])
def test_package_init_holds_no_logic(package: str) -> None:
    tree = ast.parse((REPO / "harness" / package / "__init__.py").read_text(encoding="utf-8"))
    assert [type(node).__name__ for node in tree.body if not (
        isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))] == []
