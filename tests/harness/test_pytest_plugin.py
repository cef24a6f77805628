"""The pytest plugin, tested the way users use it: through ``pytester``."""

from __future__ import annotations

import shlex
import sys

import pytest

from tests.support.repo import FIXTURES

pytest_plugins = ("pytester",)

FAKE = FIXTURES / "fake_server.py"
BACKEND = "--toolproof-backend=cmd:" + shlex.join([sys.executable, str(FAKE)])

GOOD = "id: p/good\ntags: [fast]\nsteps:\n  - {tool: bash, args: {command: hi}, expect: {text: hi}}\n"
WRONG = "id: p/wrong\nsteps:\n  - {id: say, tool: bash, args: {command: hi}, expect: {text: ho}}\n"
SKIPPED = "id: p/win\nrequires: {os: windows}\nsteps: [{tool: bash}]\n"
HANG = "id: p/hang\nsteps:\n  - {tool: bash, args: {command: hang}, timeout: 0.5}\n"
SNAP = "id: p/snap\nsteps:\n  - {tool: bash, args: {command: \"snap\\r\\nshot\"}, expect: {text: {snapshot: true}}}\n"


@pytest.fixture
def corpus(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini("[pytest]\n")
    pytester.mkdir("scenarios")
    for name, text in (("good", GOOD), ("wrong", WRONG), ("win", SKIPPED)):
        (pytester.path / "scenarios" / f"{name}.yaml").write_text(text)
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    return pytester


def test_without_the_option_yaml_files_are_not_collected(corpus: pytest.Pytester) -> None:
    result = corpus.runpytest("-q")
    result.assert_outcomes(passed=1)


def test_scenarios_run_as_tests_with_diffs_skips_and_keywords(corpus: pytest.Pytester) -> None:
    result = corpus.runpytest("--toolproof", BACKEND, "-rs", "scenarios")
    result.assert_outcomes(passed=1, failed=1, skipped=1)
    result.stdout.fnmatch_lines([
        "*scenario p/wrong (*wrong.yaml) fail:",
        "[[]say[]] text: not equal to the expected text",
        "-ho  ⟵ no newline at end",
        "+hi  ⟵ no newline at end",
        "SKIPPED [[]1[]] *win.yaml*: requires os=windows; the backend has os=linux",
    ])
    corpus.runpytest("--toolproof", BACKEND, "scenarios", "-k", "fast").assert_outcomes(passed=1, deselected=2)


def test_collection_order_is_deterministic(corpus: pytest.Pytester) -> None:
    first = corpus.runpytest("--toolproof", "--collect-only", "-q", "scenarios").stdout.lines
    second = corpus.runpytest("--toolproof", "--collect-only", "-q", "scenarios").stdout.lines
    ids = [ln for ln in first if "::" in ln]
    assert ids == ["scenarios/good.yaml::p/good", "scenarios/win.yaml::p/win", "scenarios/wrong.yaml::p/wrong"]
    assert first[: len(ids)] == second[: len(ids)]


def test_infrastructure_error_is_a_test_error_not_a_failure(corpus: pytest.Pytester) -> None:
    (corpus.path / "scenarios" / "hang.yaml").write_text(HANG)
    result = corpus.runpytest("--toolproof", BACKEND, "scenarios/hang.yaml", "scenarios/good.yaml")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*InfrastructureError*did not answer the bash call within its deadline of 0.5 s (the step's timeout)*"])


def test_baseline_makes_listed_failures_xfail_and_stale_entries_fail(corpus: pytest.Pytester) -> None:
    corpus.makefile(".yaml", base="implementation: fake\nentries:\n  - {id: p/wrong, scope: scenario, reason: demo}\n"
                                  "  - {id: p/good, scope: scenario, reason: stale one}\n")
    result = corpus.runpytest("--toolproof", BACKEND, "--toolproof-baseline=base.yaml", "scenarios")
    result.assert_outcomes(xfailed=1, failed=1, skipped=1)
    result.stdout.fnmatch_lines(["*stale baseline entry: 'p/good' (scope: scenario) now passes*remove the entry "
                                 "from base.yaml*"])


def test_invalid_scenario_is_a_collection_error_naming_file_line_and_field(corpus: pytest.Pytester) -> None:
    (corpus.path / "scenarios" / "bad.yaml").write_text("id: p/bad\nsteps:\n  - tool: reed\n")
    result = corpus.runpytest("--toolproof", BACKEND, "scenarios")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*bad.yaml:3: steps[[]1[]].tool: expected one of read, write, edit, grep, glob, bash;*"])


def test_snapshots_are_stored_in_top_level_snapshots_and_updated_on_request(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ntoolproof_paths = scenarios\n")
    pytester.mkdir("scenarios")
    (pytester.path / "scenarios" / "snap.yaml").write_text(SNAP)
    missing = pytester.runpytest(BACKEND, "scenarios")
    missing.assert_outcomes(failed=1)
    missing.stdout.fnmatch_lines(["*snapshots/p/snap/step-1.text.txt is missing; run pytest with --snapshot-update*"])
    pytester.runpytest(BACKEND, "scenarios", "--snapshot-update").assert_outcomes(passed=1)
    stored = pytester.path / "snapshots" / "p" / "snap" / "step-1.text.txt"
    assert stored.read_bytes() == b"snap\r\nshot"
    pytester.runpytest(BACKEND, "scenarios").assert_outcomes(passed=1)
    stored.write_bytes(b"snap\nshot")
    changed = pytester.runpytest(BACKEND, "scenarios")
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines(["*differs from snapshot*", "-snap", "+snap␍"])


@pytest.mark.slow
def test_scenarios_run_under_xdist(corpus: pytest.Pytester) -> None:
    result = corpus.runpytest_subprocess("--toolproof", BACKEND, "scenarios", "-n", "2", "-p", "xdist")
    result.assert_outcomes(passed=1, failed=1, skipped=1)


def test_a_directory_named_on_the_command_line_is_collected_outside_the_default_root(
        corpus: pytest.Pytester) -> None:
    corpus.mkdir("mine")
    (corpus.path / "mine" / "good.yaml").write_text(GOOD.replace("p/good", "m/good"))
    result = corpus.runpytest("--toolproof", BACKEND, "--collect-only", "-q", "mine")
    assert [ln for ln in result.stdout.lines if "::" in ln] == ["mine/good.yaml::m/good"]
    corpus.runpytest("--toolproof", BACKEND, "mine").assert_outcomes(passed=1)


def test_a_file_named_on_the_command_line_is_collected(corpus: pytest.Pytester) -> None:
    corpus.mkdir("mine")
    (corpus.path / "mine" / "wrong.yaml").write_text(WRONG.replace("p/wrong", "m/wrong"))
    corpus.runpytest("--toolproof", BACKEND, "mine/wrong.yaml").assert_outcomes(failed=1)


def test_tags_are_markers_for_dash_m_even_with_strict_markers(corpus: pytest.Pytester) -> None:
    (corpus.path / "scenarios" / "patched.yaml").write_text(
        GOOD.replace("p/good", "p/patched").replace("[fast]", "[slowish, \"patch:edit.fuzzy-span\"]"))
    selected = corpus.runpytest("--toolproof", BACKEND, "--strict-markers", "scenarios", "-m", "fast")
    selected.assert_outcomes(passed=1, deselected=3)
    patched = corpus.runpytest("--toolproof", BACKEND, "--strict-markers", "scenarios",
                               "-m", "patch_edit_fuzzy_span and not fast")
    patched.assert_outcomes(passed=1, deselected=3)


def test_marker_names_replace_what_dash_m_cannot_parse() -> None:
    from harness.pytest_plugin import marker_name

    assert marker_name("patch:edit.fuzzy-span") == "patch_edit_fuzzy_span"
    assert marker_name("edit") == "edit"
    assert marker_name("2024") == "tag_2024"


def test_the_shipped_corpus_is_named_toolproof_colon(corpus: pytest.Pytester) -> None:
    result = corpus.runpytest("--toolproof", "--collect-only", "-q", "toolproof:write")
    ids = [ln.rsplit("::", 1)[1] for ln in result.stdout.lines if "::" in ln]
    assert "write/new-file" in ids and all(i.startswith("write/") for i in ids), result.stdout.lines
    unknown = corpus.runpytest("--toolproof", "toolproof:nope")
    assert unknown.ret == pytest.ExitCode.USAGE_ERROR
    unknown.stderr.fnmatch_lines(["*toolproof:nope: no such shipped scenario file or directory*"])


def test_the_backend_and_paths_come_from_tool_toolproof_in_pyproject(corpus: pytest.Pytester) -> None:
    corpus.mkdir("gate")
    (corpus.path / "gate" / "good.yaml").write_text(GOOD.replace("p/good", "g/good"))
    impl = "cmd:{python} " + str(FAKE)
    corpus.makepyprojecttoml(f'[tool.toolproof]\nimpl = "{impl}"\npaths = ["gate"]\n')
    result = corpus.runpytest("--toolproof", "-v")
    result.assert_outcomes(passed=2)  # gate/good.yaml on the configured fake, and test_plain.py
    result.stdout.fnmatch_lines(["gate/good.yaml::g/good PASSED*"])
    result.stdout.no_fnmatch_line("*scenarios/*")


def _collected(result: pytest.RunResult) -> list[str]:
    return [ln.rsplit("::", 1)[1] for ln in result.stdout.lines if "::" in ln]


def test_toolproof_names_in_the_configured_paths_are_collected(corpus: pytest.Pytester) -> None:
    """Issue 21 item 7: ``paths = ["toolproof:"]`` was ignored: pytest never walks into the
    installed package holding the shipped corpus."""
    corpus.makepyprojecttoml('[tool.toolproof]\npaths = ["toolproof:read/missing-file.yaml", "scenarios"]\n')
    result = corpus.runpytest("--toolproof", "--collect-only", "-q")
    assert sorted(_collected(result)) == ["p/good", "p/win", "p/wrong", "read/missing-file", "test_plain"], \
        result.stdout.lines


def test_a_configured_root_inside_a_virtualenv_is_reached_and_nothing_beside_it(pytester: pytest.Pytester) -> None:
    """``pip install toolproof`` into a ``.venv`` inside the repository: pytest skips virtualenvs,
    so the shipped corpus there was never collected; the rest of the virtualenv stays skipped."""
    pytester.makeini("[pytest]\n")
    venv = pytester.mkdir(".venv")
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    corpus_dir = venv / "lib" / "site-packages" / "harness" / "_shipped" / "scenarios"
    corpus_dir.mkdir(parents=True)
    (corpus_dir / "good.yaml").write_text(GOOD)
    (venv / "lib" / "site-packages" / "test_other_package.py").write_text("def test_not_mine():\n    pass\n")
    (venv / "lib" / "site-packages" / "harness" / "test_beside.py").write_text("def test_not_mine():\n    pass\n")
    pytester.makepyprojecttoml(f'[tool.toolproof]\npaths = ["{corpus_dir.relative_to(pytester.path).as_posix()}"]\n')
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    result = pytester.runpytest("--toolproof", "--collect-only", "-q")
    assert sorted(_collected(result)) == ["p/good", "test_plain"], result.stdout.lines
    pytester.runpytest("--toolproof", BACKEND).assert_outcomes(passed=2)


def test_a_directory_named_by_absolute_path_is_collected_when_it_is_the_rootdir(pytester: pytest.Pytester) -> None:
    """Issue 21 item 7: ``pytest --toolproof /abs/dir`` collected nothing when pytest made that
    directory its rootdir. Under a named directory only scenario files count (not CI files)."""
    outside = pytester.mkdir("outside")
    (outside / "good.yaml").write_text(GOOD)
    (outside / "ci.yml").write_text("stages: [test]\njob:\n  script: [echo]\n")
    result = pytester.runpytest("--toolproof", BACKEND, "-v", str(outside))
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*good.yaml::p/good PASSED*"])


def test_snapshot_update_never_touches_the_snapshots_of_an_installed_corpus(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 21 item 7: ``--snapshot-update`` (which syrupy suggests) rewrote and deleted the
    shipped snapshots inside site-packages. There they are compared, never written."""
    import harness.corpus.shipped as shipped

    packaged = pytester.mkdir("site") / "harness" / shipped.PACKAGE_DATA_DIR
    (packaged / "scenarios").mkdir(parents=True)
    (packaged / "scenarios" / "snap.yaml").write_text(SNAP)
    store = packaged / "snapshots" / "p" / "snap"
    store.mkdir(parents=True)
    (store / "step-1.text.txt").write_bytes(b"the shipped text")
    (packaged / "snapshots" / "other").mkdir()
    (packaged / "snapshots" / "other" / "step-1.text.txt").write_bytes(b"unused here")
    monkeypatch.setattr(shipped, "shipped_root", lambda: packaged)
    pytester.makeini("[pytest]\n")
    before = {p: p.read_bytes() for p in (packaged / "snapshots").rglob("*.txt")}
    result = pytester.runpytest("--toolproof", BACKEND, str(packaged / "scenarios"), "--snapshot-update")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*differs from snapshot*", "*--snapshot-update does not change the shipped snapshots*"])
    assert {p: p.read_bytes() for p in (packaged / "snapshots").rglob("*.txt")} == before
    assert not (pytester.path / "snapshots").exists()
