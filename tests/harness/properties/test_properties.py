"""``toolproof properties`` against the reference, its upstream emulation, a deliberately broken
reference and (when installed) pi 0.79.1 — all through the protocol."""

from __future__ import annotations

import io
import shlex
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.corpus.loader import load_corpus
from harness.properties.cli import run_properties
from harness.properties.runner import FAIL, NOT_APPLICABLE, PASS, PATCH_ABSENT
from tests.support.pi import pi_impl

EXAMPLES = 5
BROKEN = Path(__file__).with_name("broken_reference.py")
BROKEN_IMPL = "cmd:" + shlex.join([sys.executable, str(BROKEN)])
PATCH_INVARIANTS = {"edit.fuzzy-span-only": "edit.fuzzy-span", "edit.fidelity-guard": "edit.fidelity-guard"}


def statuses(impl: str, **kw: object) -> dict[str, tuple[str, str]]:
    _, results = run_properties(impl, examples=EXAMPLES, **kw)  # type: ignore[arg-type]
    return {r.invariant.name: (r.status, r.reason) for r in results}


def test_every_invariant_holds_for_the_reference() -> None:
    got = statuses("reference")
    assert {name: s for name, (s, _) in got.items()} == dict.fromkeys(got, PASS)
    assert len(got) == 9


def test_upstream_passes_and_lacks_exactly_the_two_patch_invariants() -> None:
    got = statuses("upstream")
    assert got.pop("edit.replace-all-split-join") == (
        NOT_APPLICABLE, "surface pi has no such call (needs minimax)")
    for name, patch in PATCH_INVARIANTS.items():
        assert got.pop(name) == (PATCH_ABSENT, f"patch absent: upstream does not declare {patch}")
    assert {s for s, _ in got.values()} == {PASS}


def test_a_broken_replace_all_fails_and_its_scenario_fails_there_and_passes_on_the_reference(tmp_path: Path) -> None:
    out = io.StringIO()
    code = main(["properties", "--impl", BROKEN_IMPL, "--only", "edit.replace-all-split-join",
                 "--examples", "40", "--save", str(tmp_path)], out)
    text = out.getvalue()
    assert code == 1
    assert "FAIL  edit.replace-all-split-join" in text
    assert "shrunk counterexample as a scenario:" in text and "\nid: properties/edit-replace-all-split-join-" in text
    saved = sorted(tmp_path.glob("*.yaml"))
    assert len(saved) == 1 and saved[0].read_text(encoding="utf-8") in text
    scenarios = load_corpus([str(tmp_path)])
    assert [s.id for s in scenarios] == [f"properties/{saved[0].stem}"]
    assert main(["run", str(tmp_path), "--backend", BROKEN_IMPL], io.StringIO()) == 1
    assert main(["run", str(tmp_path), "--backend", "local"], io.StringIO()) == 0


def test_save_never_overwrites_without_force(tmp_path: Path) -> None:
    args = ["properties", "--impl", BROKEN_IMPL, "--only", "edit.replace-all-split-join", "--examples", "40",
            "--save", str(tmp_path)]
    assert main(args, io.StringIO()) == 1
    first = {p.name: p.read_text(encoding="utf-8") for p in tmp_path.iterdir()}
    out = io.StringIO()
    assert main(args, out) == 1
    assert "exists; not overwritten (pass --force)" in out.getvalue()
    assert {p.name: p.read_text(encoding="utf-8") for p in tmp_path.iterdir()} == first


def test_unknown_invariant_and_implementation_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["properties", "--impl", "reference", "--only", "nope"], io.StringIO()) == 2
    assert "--only 'nope': unknown invariant" in capsys.readouterr().err
    assert main(["properties", "--impl", "pie"], io.StringIO()) == 2
    assert "unknown implementation 'pie'" in capsys.readouterr().err


@pytest.mark.slow
def test_pi_0_79_1_fails_only_the_minimax_patch_invariants_as_patch_absent() -> None:
    impl = pi_impl("0.79.1")
    got = statuses(impl)
    assert got.pop("edit.replace-all-split-join")[0] == NOT_APPLICABLE
    for name, patch in PATCH_INVARIANTS.items():
        assert got.pop(name) == (PATCH_ABSENT, f"patch absent: {impl} does not declare {patch}")
    assert {s for s, _ in got.values()} == {PASS}
    assert FAIL not in {s for s, _ in got.values()}
