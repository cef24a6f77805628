"""``toolproof properties`` against the reference, its upstream emulation, a deliberately broken
reference and (when installed) pi 0.79.1 — all through the protocol."""

from __future__ import annotations

import io
import re
import shlex
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.cli.properties_commands import run_properties
from harness.corpus.loader import load_corpus
from harness.install.shipped import resolve
from harness.model.file_state import FileState
from harness.properties.baseline import load_properties_baseline
from harness.properties.runner import FAIL, NOT_APPLICABLE, PASS, PATCH_ABSENT, Mismatch, _check_full_output
from tests.support.docker import docker_engine, docker_image  # noqa: F401  (fixtures)
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


def test_the_command_passes_for_the_reference_and_upstream() -> None:
    for impl in ("reference", "upstream"):
        out = io.StringIO()
        assert main(["properties", "--impl", impl, "--examples", "3"], out) == 0, out.getvalue()
    assert out.getvalue().endswith("toolproof properties [upstream]: 6 pass, 2 xfail, 1 n/a "
                                   "(seed 0, up to 3 examples each)\n")


def test_a_baseline_entry_that_holds_again_is_stale_and_fails_the_run(tmp_path: Path) -> None:
    baseline = tmp_path / "b.yaml"
    baseline.write_text("implementation: toolproof-reference\nentries:\n"
                        "- id: edit.fuzzy-span-only\n  reason: was broken once\n", encoding="utf-8")
    out = io.StringIO()
    assert main(["properties", "--impl", "reference", "--examples", "3", "--only", "edit.fuzzy-span-only",
                 "--only", "read.pages-continue", "--baseline", str(baseline)], out) == 1
    text = out.getvalue()
    assert ("STALE edit.fuzzy-span-only (spec edit.7; 3 examples" in text
            and f"— stale baseline entry: edit.fuzzy-span-only now holds; remove it from {baseline} "
                "(reason was: was broken once)\n" in text)
    assert text.endswith("toolproof properties [reference]: 1 pass, 1 stale (seed 0, up to 3 examples each)\n")


def test_a_listed_failure_is_xfail_with_the_reason(tmp_path: Path) -> None:
    baseline = tmp_path / "b.yaml"
    baseline.write_text("implementation: toolproof-reference\nentries:\n"
                        "- id: edit.replace-all-split-join\n  reason: replace_all goes through re.sub\n", encoding="utf-8")
    out = io.StringIO()
    assert main(["properties", "--impl", BROKEN_IMPL, "--only", "edit.replace-all-split-join", "--examples", "40",
                 "--baseline", str(baseline)], out) == 0, out.getvalue()
    assert "XFAIL edit.replace-all-split-join (spec edit.4; " in out.getvalue()
    assert "— baseline: replace_all goes through re.sub\n" in out.getvalue()


def test_baseline_mistakes_are_reported_with_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("implementation: pi-coding-agent\nentries:\n- id: edit.fuzzy-span\n  reason: x\n"
                   "- id: read.pages-continue\n  step: step-1\n  reason: y\n", encoding="utf-8")
    assert main(["properties", "--impl", "reference", "--baseline", str(bad)], io.StringIO()) == 2
    err = capsys.readouterr().err
    assert f"{bad}:3: entries[1].id: unknown invariant 'edit.fuzzy-span'; expected one of edit.replace-all-split-join" in err
    assert f"{bad}:5: entries[2].step: an invariant has no steps; remove it" in err


def test_the_shipped_pi_baseline_lists_exactly_the_patch_invariants_with_reasons() -> None:
    baseline = load_properties_baseline(resolve("toolproof:baselines/properties/pi-0.79.1.yaml"))
    assert baseline.implementation == "pi-coding-agent"
    assert {e.id: e.step for e in baseline.entries} == dict.fromkeys(PATCH_INVARIANTS)
    for e in baseline.entries:
        assert f"lacks patch {PATCH_INVARIANTS[e.id]} (spec patch.{PATCH_INVARIANTS[e.id]})" in e.reason


@pytest.mark.slow
def test_pi_0_79_1_fails_only_the_minimax_patch_invariants_as_patch_absent() -> None:
    impl = pi_impl("0.79.1")
    got = statuses(impl)
    assert got.pop("edit.replace-all-split-join")[0] == NOT_APPLICABLE
    for name, patch in PATCH_INVARIANTS.items():
        assert got.pop(name) == (PATCH_ABSENT, f"patch absent: {impl} does not declare {patch}")
    assert {s for s, _ in got.values()} == {PASS}
    assert FAIL not in {s for s, _ in got.values()}


@pytest.mark.slow
def test_the_command_against_pi_0_79_1_passes_with_its_baseline_and_names_each_reason() -> None:
    impl = pi_impl("0.79.1")
    out = io.StringIO()
    code = main(["properties", "--impl", impl, "--examples", "5",
                 "--baseline", "toolproof:baselines/properties/pi-0.79.1.yaml"], out)
    text = out.getvalue()
    assert code == 0, text
    for name, patch in PATCH_INVARIANTS.items():
        assert re.search(rf"^XFAIL {re.escape(name)} \(spec edit\.7; \d+ examples, [\d.]+ s\) — patch absent: "
                         rf"{re.escape(impl)} does not declare {re.escape(patch)}; baseline: pi 0\.79\.1 lacks patch "
                         rf"{re.escape(patch)} ", text, re.M), name
    assert text.endswith("toolproof properties [" + impl + "]: 6 pass, 2 xfail, 1 n/a (seed 0, up to 5 examples each)\n")


def test_a_bash_counterexample_shrinks_to_the_fewest_shortest_lines_and_is_printed_cut(tmp_path: Path) -> None:
    """Issue 21 item 12: ``properties`` printed a 2001-line "shrunk" counterexample, shrunk towards
    the lines' wording before their number (1995 lines of 30 characters, as a workspace file)."""
    adapter = "cmd:" + shlex.join([sys.executable, str(Path(__file__).parents[3] / "examples" / "python-adapter" / "adapter.py")])
    out = io.StringIO()
    code = main(["properties", "--impl", adapter, "--only", "bash.tail-and-full-output", "--examples", "20",
                 "--save", str(tmp_path)], out)
    text = out.getvalue()
    assert code == 1, text
    (saved,) = tmp_path.glob("*.yaml")
    scenario = saved.read_text(encoding="utf-8")
    # the output is made by the command: the smallest past the 2000-line limit, one-character lines
    assert "command: printf %s \"$(seq -f '%.0fa' 1 2001)\"\n" in scenario
    assert "\nworkspace:" not in scenario  # no files: the scenario starts from an empty workspace
    shown = text.split("shrunk counterexample as a scenario:\n", 1)[1].split("\ntoolproof: wrote", 1)[0]
    assert len(shown.splitlines()) <= 45, shown
    assert f"more lines not shown (the whole scenario is in {saved})" in shown
    assert main(["run", str(saved), "--impl", adapter], io.StringIO()) == 1
    assert main(["run", str(saved)], io.StringIO()) == 0  # the reference keeps the promised tail


class _FakeSession:
    """Stands in for a Session whose implementation wrote ``data`` to its full-output file."""

    def __init__(self, data: bytes | None) -> None:
        self.data = data

    def read_files(self, paths: list[str]) -> dict[str, FileState]:
        return {p: FileState(p, "file" if self.data is not None else "absent", 0o600, self.data) for p in paths}


def test_the_full_output_check_reads_the_file_where_the_implementation_runs_and_fails_on_wrong_bytes() -> None:
    details = {"fullOutputPath": "/tmp/toolproof-tmp-ab/pi-bash-0123456789abcdef.log"}
    _check_full_output(_FakeSession(b"abc"), "step 1", details, b"abc")  # type: ignore[arg-type]
    with pytest.raises(Mismatch, match="holds 2 bytes, expected the 3 bytes"):
        _check_full_output(_FakeSession(b"ab"), "step 1", details, b"abc")  # type: ignore[arg-type]
    with pytest.raises(Mismatch, match="is absent"):
        _check_full_output(_FakeSession(None), "step 1", details, b"abc")  # type: ignore[arg-type]


@pytest.mark.docker
def test_on_docker_the_bash_invariant_checks_the_full_output_bytes_in_the_container(docker_image: str) -> None:  # noqa: F811
    got = statuses("reference", backend="docker", only=["bash.tail-and-full-output"])
    assert got == {"bash.tail-and-full-output": (PASS, "")}
