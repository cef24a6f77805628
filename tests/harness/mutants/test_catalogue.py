"""The built-in mutants: enough of them, on every tool and both surfaces, each applying to the
current reference source as one realistic change; and they reach a process only through the
mutant server (the reference, the catalogue and the hook never import each other the wrong way)."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import Counter

import pytest

from harness.mutants.apply import MutantError, module_source, mutated_sources
from harness.mutants.catalogue import MUTANTS, SURFACES, TOOLS, Mutant, SourceEdit
from tests.support.repo import REPO


def test_at_least_sixty_mutants_with_unique_names() -> None:
    names = [m.name for m in MUTANTS]
    assert len(names) >= 60
    assert len(set(names)) == len(names), [n for n, c in Counter(names).items() if c > 1]


def test_every_tool_and_both_surfaces_have_mutants() -> None:
    assert {m.tool for m in MUTANTS} == set(TOOLS)
    assert {m.surface for m in MUTANTS} == set(SURFACES)
    for tool in ("read", "write", "edit", "bash", "truncation", "paths"):
        assert {m.surface for m in MUTANTS if m.tool == tool} & {"pi", "both"}, tool


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_mutant_applies_to_the_current_source(mutant: Mutant) -> None:
    assert mutant.name.split(".", 1)[0] in TOOLS
    assert mutant.description and "\n" not in mutant.description
    sources = mutated_sources(mutant)  # raises when an edit's text is gone or not unique, or does not compile
    for module, (mutated, _path) in sources.items():
        original, _ = module_source(module)
        assert mutated != original


def test_an_edit_whose_text_is_not_unique_is_refused() -> None:
    twice = Mutant("x.twice", "read", "both", "d", (SourceEdit("tools_impl.read.engine", "import", "import"),))
    with pytest.raises(MutantError, match="occurs"):
        mutated_sources(twice)
    gone = Mutant("x.gone", "read", "both", "d", (SourceEdit("tools_impl.read.engine", "no such text 1234", ""),))
    with pytest.raises(MutantError, match="does not occur"):
        mutated_sources(gone)


def _imports(path: str) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse((REPO / path).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_the_reference_never_imports_the_mutants_and_the_hook_never_imports_the_reference() -> None:
    for path in sorted((REPO / "tools_impl").rglob("*.py")):
        assert not any(i.startswith("harness") for i in _imports(str(path.relative_to(REPO)))), path
    for hook in ("harness/mutants/catalogue.py", "harness/mutants/apply.py", "harness/mutants/server.py"):
        assert not any(i.startswith("tools_impl") for i in _imports(hook)), hook


PROBE = "import tools_impl.shared.truncation as t, tools_impl.server.dispatch; print(t.HEAD_SHARE)"


def test_nothing_changes_without_the_mutant_and_the_mutant_changes_the_server_process() -> None:
    plain = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, cwd=REPO)
    assert plain.stdout.strip() == "0.45"
    mutated = subprocess.run(
        [sys.executable, "-c", "from harness.mutants.apply import install; from harness.mutants.catalogue import by_name;"
                               " install(by_name()['truncation.head-share-half']); " + PROBE],
        capture_output=True, text=True, check=True, cwd=REPO)
    assert mutated.stdout.strip() == "0.5"


def test_the_mutant_server_needs_a_known_mutant() -> None:
    bare = subprocess.run([sys.executable, "-m", "harness.mutants.server"], capture_output=True, text=True, cwd=REPO)
    assert bare.returncode == 2 and "usage" in bare.stderr
    unknown = subprocess.run([sys.executable, "-m", "harness.mutants.server", "no.such-mutant"],
                             capture_output=True, text=True, cwd=REPO, input="")
    assert unknown.returncode == 2 and "no mutant named" in unknown.stderr


def test_the_mutant_server_answers_hello_as_the_reference() -> None:
    out = subprocess.run([sys.executable, "-m", "harness.mutants.server", "edit.replace-all-first-only"],
                         input='{"op": "hello", "id": 1}\n', capture_output=True, text=True, cwd=REPO, timeout=60)
    assert '"implementation": "toolproof-reference"' in out.stdout
