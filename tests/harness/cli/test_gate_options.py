"""What a CI gate relies on: an empty selection is not a pass (exit 5), ``--version``, ``-j auto``,
``--fail-on-skip``, ``--no-baseline``, defaults from ``[tool.toolproof]``, help on every option."""

from __future__ import annotations

import argparse
import io
import os
import shlex
import sys
from pathlib import Path

import pytest

from harness.cli import build_parser, main
from tests.support.repo import FIXTURES

FAKE_BACKEND = "cmd:" + shlex.join([sys.executable, str(FIXTURES / "fake_server.py")])
GOOD = "id: g/good\ntags: [demo]\nsteps:\n  - {tool: bash, args: {command: hello}, expect: {text: hello}}\n"
WIN = "id: g/win\nrequires: {os: windows}\nsteps:\n  - {tool: bash, args: {command: hello}}\n"


def toolproof(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), out), out.getvalue()


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "good.yaml").write_text(GOOD, encoding="utf-8")
    return tmp_path / "c"


@pytest.mark.parametrize(("extra", "said"), [(["-k", "typo"], "-k 'typo'"), (["--tag", "nope"], "--tag 'nope'"),
                                             (["-k", "good", "--tag", "nope"], "-k 'good' --tag 'nope'")])
def test_a_selection_of_nothing_exits_5_naming_the_filter(corpus: Path, extra: list[str], said: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = toolproof("run", str(corpus), "--backend", FAKE_BACKEND, *extra)
    assert code == 5
    hint = "; no scenario has the tag 'nope'" if "--tag" in extra else ""
    assert capsys.readouterr().err == f"toolproof: nothing to run: {said} selected none of the 1 scenarios in {corpus}{hint}\n"


def test_a_mistyped_tag_is_named_with_the_closest_tag_of_the_corpus(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (corpus / "other.yaml").write_text(GOOD.replace("id: ", "id: other-").replace("tags: [", "tags: [pwsh, "), encoding="utf-8")
    code, _ = toolproof("run", str(corpus), "--backend", FAKE_BACKEND, "--tag", "pwshh")
    assert code == 5
    assert capsys.readouterr().err.endswith("; no scenario has the tag 'pwshh' (did you mean 'pwsh'?)\n")


def test_an_empty_shard_exits_5(corpus: Path) -> None:
    # one scenario: one shard of two holds it, the other is empty
    assert sorted(toolproof("run", str(corpus), "--backend", FAKE_BACKEND, "--shard", s)[0] for s in ("1/2", "2/2")) == [0, 5]


def test_an_empty_directory_exits_5_and_so_does_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    assert toolproof("run", str(tmp_path / "empty"))[0] == 5
    assert capsys.readouterr().err == f"toolproof: nothing to run: no scenarios in {tmp_path / 'empty'} (0 scenario files)\n"
    assert toolproof("list", str(tmp_path / "empty"))[0] == 5


def test_exit_codes_are_in_the_help() -> None:
    text = build_parser().format_help()
    assert "exit codes:\n  0  the gate passes" in text
    assert "  5  the selection is empty (no scenario matched the paths, -k, --tag or --shard)" in text


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from harness import __version__

    assert toolproof("--version")[0] == 0
    assert capsys.readouterr().out == f"toolproof {__version__}\n"


def test_every_option_of_every_command_has_help() -> None:
    missing: list[str] = []

    def walk(parser: argparse.ArgumentParser, where: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, f"{where} {name}")
            elif not isinstance(action, argparse._HelpAction) and not action.help:
                missing.append(f"{where} {'/'.join(action.option_strings) or action.dest}")

    walk(build_parser(), "toolproof")
    assert missing == []


def test_jobs_auto_is_one_worker_per_cpu_and_nonsense_is_a_usage_error(corpus: Path, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    import json

    code, _ = toolproof("run", str(corpus), "--backend", FAKE_BACKEND, "-j", "auto", "--json", str(tmp_path / "r.json"))
    assert code == 0
    assert json.loads((tmp_path / "r.json").read_text())["run"]["jobs"] == max(1, os.cpu_count() or 1)
    assert toolproof("run", str(corpus), "-j", "many")[0] == 2
    assert "argument --jobs/-j: expected a positive integer or 'auto', got 'many'" in capsys.readouterr().err
    assert toolproof("run", str(corpus), "-j", "0")[0] == 2


def test_fail_on_skip_turns_a_skip_into_a_failing_gate(corpus: Path) -> None:
    (corpus / "win.yaml").write_text(WIN, encoding="utf-8")
    assert toolproof("run", str(corpus), "--backend", FAKE_BACKEND)[0] == 0
    code, out = toolproof("run", str(corpus), "--backend", FAKE_BACKEND, "--fail-on-skip")
    assert code == 1
    assert out.endswith("SKIP  g/win: requires os=windows; the backend has os=linux\n"
                        "toolproof: 1 scenario(s) skipped; --fail-on-skip makes that a failure\n")


def test_plain_run_uses_tool_toolproof_and_options_override_it(corpus: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "base.yaml").write_text("implementation: fake\nentries:\n  - {id: g/good, scope: scenario, reason: listed}\n")
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.toolproof]\nimpl = "{FAKE_BACKEND}"\npaths = ["c"]\nbaseline = "base.yaml"\njobs = 2\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out = toolproof("run")
    assert code == 1  # the configured baseline lists a passing scenario: stale
    assert out.startswith("STALE g/good\n") and f"[local --impl {FAKE_BACKEND} fake]" in out
    assert toolproof("run", "--no-baseline")[0] == 0
    assert toolproof("run", "--baseline", "base.yaml", "-k", "good")[0] == 1
    assert toolproof("run", "--no-baseline", "-k", "typo")[0] == 5


@pytest.mark.parametrize(("table", "message"), [
    ('impl = "cmd:x"\npath = ["c"]\n', "[tool.toolproof] unknown key 'path' (did you mean 'paths'?)"),
    ("jobs = 0\n", "[tool.toolproof] jobs: must be at least 1, got 0"),
    ("paths = 3\n", "[tool.toolproof] paths: expected a list of strings, got 3"),
    ('impl = "ruby"\n', "unknown implementation 'ruby'; expected reference | upstream | pi@VERSION | cmd:COMMAND"),
    ('features = ["fuzy-edit"]\n', "[tool.toolproof] features: unknown name 'fuzy-edit' (did you mean 'fuzzy-edit'?)"),
    ('dialects = "pi"\n', "[tool.toolproof] dialects: expected a list of strings, got 'pi'"),
    ("impl = [\n", "not valid TOML"),
])
def test_a_bad_tool_toolproof_table_is_one_line_naming_the_file_and_key(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], table: str, message: str) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.toolproof]\n" + table, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert toolproof("run")[0] == 2
    err = capsys.readouterr().err
    assert err.startswith("toolproof: error: ") and message in err and err.count("\n") == 1, err
    if "unknown implementation" not in message:
        assert str(tmp_path / "pyproject.toml") in err


def test_the_shipped_corpus_is_named_toolproof_colon(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = toolproof("list", "toolproof:write", "toolproof:pi")
    assert code == 0
    ids = [line.split()[0] for line in out.splitlines()]
    assert "write/new-file" in ids and any(i.startswith("pi/") for i in ids)
    assert all(i.startswith(("write/", "pi/")) for i in ids)
    assert toolproof("list", "toolproof:nope")[0] == 2
    assert "toolproof:nope: no such shipped scenario file or directory (the shipped corpus has bash, classify, edit" in \
        capsys.readouterr().err


def test_markdown_is_appended_to_the_github_step_summary(corpus: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("## earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert toolproof("run", str(corpus), "--backend", FAKE_BACKEND, "--markdown", str(summary))[0] == 0
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("## earlier step\n\n## toolproof: passed\n")
    other = tmp_path / "other.md"
    other.write_text("old\n", encoding="utf-8")
    toolproof("run", str(corpus), "--backend", FAKE_BACKEND, "--markdown", str(other))
    assert other.read_text(encoding="utf-8").startswith("## toolproof: passed\n")  # replaced
    toolproof("run", str(corpus), "--backend", FAKE_BACKEND, "--markdown", str(other), "--markdown-append")
    assert other.read_text(encoding="utf-8").count("## toolproof: passed\n") == 2


def test_an_explicit_impl_reference_is_run_as_the_reference_inside_a_configured_repo(
        corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 21 item 4: ``--impl reference`` equal to the default was swapped for the configured impl."""
    import json

    (tmp_path / "pyproject.toml").write_text(f'[tool.toolproof]\nimpl = "{FAKE_BACKEND}"\npaths = ["c"]\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    toolproof("run", "--json", "configured.json")
    assert json.loads((tmp_path / "configured.json").read_text())["run"]["implementation"] == "fake"
    code, out = toolproof("run", "--impl", "reference", "--json", "ref.json")
    run = json.loads((tmp_path / "ref.json").read_text())["run"]
    assert run["implementation"] == "toolproof-reference" and run["backend"] == "local", (code, out)
    assert "[local toolproof-reference]" in out


def test_impl_help_names_the_configured_default() -> None:
    """Issue 21 item 12: ``--impl`` said "(default: reference)" where the config chooses another."""
    for command in ("run", "record"):
        sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
        impl = next(a for a in sub._actions if "--impl" in a.option_strings)
        assert impl.default is None
        assert "default: impl in [tool.toolproof] of pyproject.toml, else reference" in (impl.help or "")


def test_a_gate_runs_alike_from_a_subdirectory_of_the_configured_repo(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 21 item 12: from a subdirectory ``cmd:`` words resolved against the cwd but ``paths``
    and ``baseline`` against pyproject.toml, so every scenario errored."""
    import json
    import shutil

    (tmp_path / "tools").mkdir()
    shutil.copy(FIXTURES / "fake_server.py", tmp_path / "tools" / "server.py")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "good.yaml").write_text(GOOD, encoding="utf-8")
    (tmp_path / "base.yaml").write_text("implementation: fake\nentries: []\n", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.toolproof]\nimpl = "cmd:{python} tools/server.py"\npaths = ["c"]\nbaseline = "base.yaml"\n', encoding="utf-8")
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    for where in (tmp_path, tmp_path / "sub" / "deeper"):
        monkeypatch.chdir(where)
        code, out = toolproof("run", "--json", str(tmp_path / "r.json"))
        assert code == 0, out
        results = json.loads((tmp_path / "r.json").read_text())
        assert results["run"]["implementation"] == "fake"
        assert [s["status"] for s in results["scenarios"]] == ["pass"]


FUZZY = "id: g/fuzzy\nfeatures: [fuzzy-edit]\nsteps:\n  - {tool: bash, args: {command: hello}, expect: {output: hello}}\n"
WORDED = ("id: g/worded\nsteps:\n  - tool: bash\n    args: {command: hello}\n    expect: {output: hello}\n"
          "    wording: {pi: {text: HELLO}}\n")


def test_the_configured_dialects_and_features_say_what_the_configured_impl_is(
        corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``cmd:`` layer whose hello declares nothing: ``[tool.toolproof] features`` makes its feature
    scenarios run, ``dialects`` makes a dialect's wording apply (and the level full); neither applies
    to another implementation run in the same repository."""
    (corpus / "fuzzy.yaml").write_text(FUZZY, encoding="utf-8")
    (corpus / "worded.yaml").write_text(WORDED, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(f'[tool.toolproof]\nimpl = "{FAKE_BACKEND}"\npaths = ["c"]\n',
                                             encoding="utf-8")
    code, out = toolproof("run")
    assert code == 0, out
    assert ("SKIP  g/fuzzy (requires feature fuzzy-edit (edit finds old text after fuzzy normalisation (NFKC, "
            "trailing spaces, curly quotes, dashes, special spaces) when there is no exact match); the "
            "implementation declares features: none (its hello))") in out
    assert "PASS  g/worded" in out and "toolproof: level behaviour (the implementation declares no dialect)" in out
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.toolproof]\nimpl = "{FAKE_BACKEND}"\npaths = ["c"]\nfeatures = ["fuzzy-edit"]\ndialects = ["pi"]\n',
        encoding="utf-8")
    code, out = toolproof("run")
    assert code == 1, out
    assert "PASS  g/fuzzy" in out and "FAIL  g/worded" in out  # the pi wording (HELLO) now applies
    assert "wording.pi: text: not equal to the expected text" in out
    assert "toolproof: level full (dialect pi)" in out
    assert toolproof("run", "--level", "behaviour")[0] == 0
    code, out = toolproof("run", "--impl", FAKE_BACKEND + " ", "-k", "fuzzy")  # not the configured impl
    assert "SKIP  g/fuzzy (requires feature fuzzy-edit" in out
