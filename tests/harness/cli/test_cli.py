"""The ``toolproof`` CLI end to end: reports, exit codes, baselines, shards, merge, record, diff."""

from __future__ import annotations

import io
import json
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.backends.registry import backend_factory
from harness.cli import main
from harness.errors import InfrastructureError, UsageError
from tests.support.repo import FIXTURES, REPO

FAKE = FIXTURES / "fake_server.py"

FAKE_BACKEND = "cmd:" + shlex.join([sys.executable, str(FAKE)])

GOOD = """\
id: cli/good
tags: [demo]
steps:
  - tool: bash
    args: {command: "hello"}
    expect: {text: "hello"}
"""
WRONG = """\
id: cli/wrong
tags: [demo]
steps:
  - id: echo
    tool: bash
    args: {command: "hello"}
    expect: {text: "hullo"}
"""
HANG = """\
id: cli/hang
steps:
  - tool: bash
    args: {command: "hang"}
    timeout: 0.5
"""


def write(dir_: Path, name: str, text: str) -> Path:
    p = dir_ / name
    p.write_text(text, encoding="utf-8")
    return p


def toolproof(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


def test_run_writes_junit_json_and_markdown_reports(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    write(corpus, "good.yaml", GOOD)
    write(corpus, "wrong.yaml", WRONG)
    code, out = toolproof("run", str(corpus), "--backend", FAKE_BACKEND, "--junit", str(tmp_path / "r.xml"),
                          "--json", str(tmp_path / "r.json"), "--markdown", str(tmp_path / "r.md"))
    assert code == 1
    assert "PASS  cli/good\nFAIL  cli/wrong\n" in out
    suite = ET.parse(tmp_path / "r.xml").getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "1", "0")
    failure = suite.find("testcase[@name='cli/wrong']/failure")
    assert failure is not None and failure.get("message") == "[echo] text: not equal to the expected text"
    assert "-hullo  ⟵ no newline at end\n+hello  ⟵ no newline at end" in (failure.text or "")
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["counts"]["pass"] == 1 and data["counts"]["fail"] == 1 and data["exit_code"] == 1
    assert data["run"]["implementation"] == "fake"
    wrong = next(s for s in data["scenarios"] if s["id"] == "cli/wrong")
    assert wrong["steps"][0]["status"] == "fail" and wrong["steps"][0]["observation"]["text"] == "hello"
    md = (tmp_path / "r.md").read_text()
    assert md.startswith("## toolproof: FAILED (behaviour)\n")
    assert "| ✅ pass | 1 |" in md and "| ❌ fail | 1 |" in md
    assert "<code>cli/wrong</code>" in md


def test_exit_code_0_when_everything_passes(tmp_path: Path) -> None:
    write(tmp_path, "good.yaml", GOOD)
    assert toolproof("run", str(tmp_path), "--backend", FAKE_BACKEND)[0] == 0


def test_exit_code_2_for_infrastructure_errors_and_run_finishes(tmp_path: Path) -> None:
    write(tmp_path, "a-hang.yaml", HANG)
    write(tmp_path, "b-good.yaml", GOOD)
    code, out = toolproof("run", str(tmp_path), "--backend", FAKE_BACKEND)
    assert code == 2
    assert "PASS  cli/good\nERROR cli/hang\n" in out
    assert "infrastructure: implementation did not answer the bash call within its deadline of 0.5 s (the step's timeout)" in out


def test_call_timeout_must_be_a_positive_number_of_seconds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "b-good.yaml", GOOD)
    for bad, said in (("0", "expected a number of seconds > 0, got 0"), ("soon", "expected a number of seconds, got 'soon'")):
        code, _ = toolproof("run", str(tmp_path), "--backend", FAKE_BACKEND, "--call-timeout", bad)
        assert code == 2 and said in capsys.readouterr().err
    assert toolproof("run", str(tmp_path), "--backend", FAKE_BACKEND, "--call-timeout", "2.5")[0] == 0


def test_unknown_backend_is_a_one_line_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "good.yaml", GOOD)
    assert toolproof("run", str(tmp_path), "--backend", "dockr")[0] == 2
    assert capsys.readouterr().err == (
        "toolproof: error: unknown backend 'dockr'; expected local, docker or docker:IMAGE "
        "(or cmd:COMMAND, an alias of --impl cmd:COMMAND)\n")


def test_unknown_implementation_and_a_doubled_implementation_are_usage_errors(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "good.yaml", GOOD)
    assert toolproof("run", str(tmp_path), "--impl", "pi@next")[0] == 2
    assert capsys.readouterr().err == (
        "toolproof: error: --impl 'pi@next': expected pi@MAJOR.MINOR.PATCH, e.g. pi@0.79.1\n")
    assert toolproof("run", str(tmp_path), "--impl", "upstream", "--backend", "cmd:x")[0] == 2
    assert capsys.readouterr().err.endswith(
        "toolproof: error: --backend 'cmd:x' already names the implementation; use --impl upstream "
        "with --backend local or docker instead\n")


def test_run_prints_its_run_id_and_records_it_in_the_json_results(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json
    import re

    write(tmp_path, "good.yaml", GOOD)
    results = tmp_path / "r.json"
    assert toolproof("run", str(tmp_path), "--backend", FAKE_BACKEND, "--json", str(results))[0] == 0
    err = capsys.readouterr().err
    m = re.match(r"toolproof: run ([0-9a-f]{12}): (.*) on local\n", err)
    assert m, err
    info = json.loads(results.read_text())["run"]
    assert info["run_id"] == m.group(1)
    assert m.group(2) == FAKE_BACKEND == info["backend"]


def test_missing_path_is_a_one_line_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert toolproof("run", str(tmp_path / "nope"))[0] == 2
    assert capsys.readouterr().err == f"toolproof: error: no such file or directory: {tmp_path / 'nope'}\n"


def test_missing_docker_backend_module_is_an_infrastructure_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "harness.backends.docker.backend", None)
    with pytest.raises(InfrastructureError, match=r"^the docker backend is not available: "):
        backend_factory("docker")
    with pytest.raises(UsageError):
        backend_factory("cmd:")


def test_invalid_scenario_exits_2_listing_problems_without_traceback(tmp_path: Path) -> None:
    bad = write(tmp_path, "bad.yaml", "id: x\nsteps:\n  - tool: reed\n    expect: {txt: 1}\n")
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "validate", str(tmp_path)], cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr == (
        f"{bad}:3: steps[1].tool: expected one of read, write, edit, grep, glob, bash; got 'reed' (did you mean 'read'?)\n"
        f"{bad}:4: steps[1].expect.txt: unknown key (did you mean 'text'?)\n"
        "toolproof: 2 problem(s) found\n")


def test_validate_accepts_the_example_corpus() -> None:
    code, out = toolproof("validate", str(REPO / "docs/examples/scenarios"))
    assert code == 0
    assert out.startswith("toolproof: ") and out.endswith(" are valid\n")


def test_baseline_turns_failure_into_xfail_and_fixed_mistake_into_stale(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    scenario = write(corpus, "wrong.yaml", WRONG)
    baseline = write(tmp_path, "fake.yaml", "implementation: fake\nentries:\n  - id: cli/wrong\n    step: echo\n"
                                            "    reason: demo\n")
    assert toolproof("run", str(corpus), "--backend", FAKE_BACKEND)[0] == 1
    code, out = toolproof("run", str(corpus), "--backend", FAKE_BACKEND, "--baseline", str(baseline))
    assert code == 0
    assert "XFAIL cli/wrong (demo)" in out
    scenario.write_text(WRONG.replace("hullo", "hello"))
    code, out = toolproof("run", str(corpus), "--backend", FAKE_BACKEND, "--baseline", str(baseline))
    assert code == 1
    assert (f"stale baseline entry: step 'echo' of 'cli/wrong' now passes: the entry names no mismatch, so which "
            f"check changed is not known; if that is a real fix, remove the entry from {baseline}:3 (reason was: demo)"
            in out)


def make_corpus(dir_: Path, n: int) -> None:
    for i in range(n):
        write(dir_, f"s{i:02d}.yaml", GOOD.replace("cli/good", f"shard/s{i:02d}"))


def test_shards_partition_the_corpus_deterministically(tmp_path: Path) -> None:
    make_corpus(tmp_path, 20)
    full = toolproof("list", str(tmp_path))[1]
    shards = [toolproof("list", str(tmp_path), "--shard", f"{i}/3")[1].splitlines() for i in (1, 2, 3)]
    again = [toolproof("list", str(tmp_path), "--shard", f"{i}/3")[1].splitlines() for i in (1, 2, 3)]
    assert shards == again
    assert sorted(x for s in shards for x in s) == sorted(full.splitlines())
    assert all(shards), "every shard gets some of 20 scenarios"
    # a scenario stays in its shard when others are removed
    for p in sorted(tmp_path.glob("*.yaml"))[10:]:
        p.unlink()
    smaller = [toolproof("list", str(tmp_path), "--shard", f"{i}/3")[1].splitlines() for i in (1, 2, 3)]
    remaining = {x for s in smaller for x in s}
    assert [[x for x in s if x in remaining] for s in shards] == smaller


def test_bad_shard_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_corpus(tmp_path, 1)
    assert toolproof("list", str(tmp_path), "--shard", "4/3")[0] == 2
    assert capsys.readouterr().err == "toolproof: error: --shard: expected i/n with 1 <= i <= n, got '4/3'\n"


def test_merge_of_shard_reports_equals_the_full_run(tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    corpus.mkdir()
    make_corpus(corpus, 6)
    for i in (1, 2):
        toolproof("run", str(corpus), "--backend", FAKE_BACKEND, "--shard", f"{i}/2", "--json", str(tmp_path / f"{i}.json"))
    code, _ = toolproof("merge", str(tmp_path / "1.json"), str(tmp_path / "2.json"), "--json", str(tmp_path / "m.json"),
                        "--junit", str(tmp_path / "m.xml"))
    merged = json.loads((tmp_path / "m.json").read_text())
    assert code == 0
    assert [s["id"] for s in merged["scenarios"]] == [f"shard/s{i:02d}" for i in range(6)]
    assert merged["counts"]["pass"] == 6
    assert toolproof("merge", str(tmp_path / "1.json"), str(tmp_path / "1.json"))[0] == 2


def test_keyword_and_tag_selection(tmp_path: Path) -> None:
    write(tmp_path, "good.yaml", GOOD)
    write(tmp_path, "wrong.yaml", WRONG.replace("[demo]", "[other]"))
    assert toolproof("list", str(tmp_path), "-k", "good or nothing")[1] == "cli/good  [demo]\n"
    assert toolproof("list", str(tmp_path), "-k", "cli and not good")[1] == "cli/wrong  [other]\n"
    assert toolproof("list", str(tmp_path), "--tag", "other")[1] == "cli/wrong  [other]\n"


def test_baseline_update_shows_a_diff_and_writes_only_with_write(tmp_path: Path) -> None:
    write(tmp_path, "wrong.yaml", WRONG)
    toolproof("run", str(tmp_path / "wrong.yaml"), "--backend", FAKE_BACKEND, "--json", str(tmp_path / "r.json"))
    target = tmp_path / "base.yaml"
    code, out = toolproof("baseline", "update", "--results", str(tmp_path / "r.json"), "--baseline", str(target))
    assert code == 0 and not target.exists()
    assert "+- id: cli/wrong\n" in out and out.endswith("toolproof: not written (pass --write to write it)\n")
    toolproof("baseline", "update", "--results", str(tmp_path / "r.json"), "--baseline", str(target), "--write")
    assert target.read_text().startswith("implementation: fake\nversion: '0'\nentries:\n- id: cli/wrong\n  step: echo\n")
    assert toolproof("baseline", "update", "--results", str(tmp_path / "r.json"), "--baseline", str(target))[1] == (
        f"toolproof: {target} is up to date\n"
        "toolproof: 1 entry is UNREVIEWED (reason still a TODO placeholder): they xfail, and every run and "
        "`toolproof validate --baseline` report them until their reasons are written\n")


def test_record_fills_expectations_keeping_the_rest_of_the_file(tmp_path: Path) -> None:
    scenario = write(tmp_path, "rec.yaml", (
        "# a comment that must survive\n"
        "id: rec/one\n"
        "steps:\n"
        "  - tool: bash   # inline comment\n"
        "    args: {command: \"two\\nlines\"}\n"
        "  - tool: bash\n"
        "    args: {command: \"raise nope\"}\n"
        "    expect:\n"
        "      text: old\n"
        "files: {}\n"))
    code, out = toolproof("record", str(scenario), "--backend", FAKE_BACKEND)
    assert code == 0 and "+    expect:\n" in out
    assert scenario.read_text().count("expect") == 1
    toolproof("record", str(scenario), "--backend", FAKE_BACKEND, "--write")
    assert scenario.read_text() == (
        "# a comment that must survive\n"
        "id: rec/one\n"
        "steps:\n"
        "  - tool: bash   # inline comment\n"
        "    args: {command: \"two\\nlines\"}\n"
        "    expect:\n"
        "      text: |-\n"
        "        two\n"
        "        lines\n"
        "  - tool: bash\n"
        "    args: {command: \"raise nope\"}\n"
        "    expect:\n"
        "      status: error\n"
        "      error: nope\n"
        "      error_kind: tool\n"
        "files: {}\n")
    assert toolproof("run", str(scenario), "--backend", FAKE_BACKEND)[0] == 0
    assert toolproof("record", str(scenario), "--backend", FAKE_BACKEND)[1] == (
        "toolproof: every expectation already matches\n")


def test_diff_lists_steps_whose_observations_differ(tmp_path: Path) -> None:
    write(tmp_path, "w.yaml", "id: d/w\nsteps:\n  - {id: w, tool: write, args: {path: a.txt, content: x}}\n"
                              "  - {id: r, tool: bash, args: {command: same}}\n")
    other = "cmd:" + shlex.join(["env", "FAKE_OS=linux", sys.executable, str(FAKE)])
    code, out = toolproof("diff", str(tmp_path), "--backend-a", FAKE_BACKEND, "--backend-b", other)
    # progress first: each side announced, then one line per scenario as it finishes
    assert (code, out) == (0, f"toolproof diff: 1 scenarios on {FAKE_BACKEND}\nPASS  d/w\n"
                              f"toolproof diff: 1 scenarios on {other}\nPASS  d/w\n"
                              f"toolproof: 0 differing steps between {FAKE_BACKEND} and {other}\n")
    code, out = toolproof("diff", str(tmp_path), "--backend-a", FAKE_BACKEND, "--backend-b", "local",
                          "--json", str(tmp_path / "d.json"), "--markdown", str(tmp_path / "d.md"))
    assert code == 1
    assert "PASS  d/w\nd/w w: details, text differ\n" in out
    assert f"--- {FAKE_BACKEND}\n+++ local\n" in out
    assert '- "text": "Wrote a.txt"\n+ "text": "Successfully wrote 1 bytes to a.txt"\n' in out
    assert out.endswith(f"toolproof: 2 differing steps between {FAKE_BACKEND} and local\n")
    report = json.loads((tmp_path / "d.json").read_text(encoding="utf-8"))
    assert (report["a"], report["b"], report["scenarios"]) == (FAKE_BACKEND, "local", 1)
    assert [(d["scenario"], d["step"], d["fields"]) for d in report["differences"]] == [
        ("d/w", "w", ["details", "text"]), ("d/w", "r", ["details", "is_error", "process_events", "text"])]
    md = (tmp_path / "d.md").read_text(encoding="utf-8")
    assert md.startswith("## toolproof diff: 2 differing step(s)\n")
    assert "<details><summary><code>d/w</code> step <code>w</code>: details, text differ</summary>" in md


def test_diff_compares_any_implementation_on_any_backend(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "w.yaml", "id: d/w\nsteps:\n  - {id: w, tool: write, args: {path: a.txt, content: x}}\n")
    fake = FAKE_BACKEND  # the fake implementation as --impl cmd:…
    code, out = toolproof("diff", str(tmp_path), "--impl-a", fake, "--impl-b", "reference")
    assert code == 1
    assert out.startswith(f"toolproof diff: 1 scenarios on local --impl {fake}\nPASS  d/w\n"
                          "toolproof diff: 1 scenarios on local\nPASS  d/w\n")
    assert f"--- local --impl {fake}\n+++ local\n" in out
    assert out.endswith(f"toolproof: 1 differing steps between local --impl {fake} and local\n")
    # --impl-b defaults to --impl-a's, --backend-b to --backend-a's
    code, out = toolproof("diff", str(tmp_path), "--impl-a", "upstream", "--backend-b", fake)
    assert code == 1 and out.endswith(f"toolproof: 1 differing steps between local --impl upstream and {fake}\n")
    capsys.readouterr()
    # [tool.toolproof] impl is side a's implementation
    (tmp_path / "pyproject.toml").write_text(f"[tool.toolproof]\nimpl = {json.dumps(fake)}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out = toolproof("diff", str(tmp_path), "--impl-b", "reference")
    assert code == 1 and out.endswith(f"toolproof: 1 differing steps between local --impl {fake} and local\n")
    for argv, message in [
        (["--impl-a", "upstream", "--impl-b", "upstream"],
         "both sides of the diff are local --impl upstream: pass a different --backend-b or --impl-b"),
        (["--impl-a", "reference", "--impl-b", "pi@latest"], "--impl 'pi@latest': expected pi@MAJOR.MINOR.PATCH"),
        (["--impl-a", "reference", "--backend-b", fake, "--impl-b", "upstream"],
         f"--backend-b '{fake}' already names the implementation; use --impl-b upstream with --backend-b local "
         "or docker instead"),
    ]:
        assert toolproof("diff", str(tmp_path), *argv)[0] == 2, argv
        assert message in capsys.readouterr().err, argv


def test_serve_execs_the_reference_server() -> None:
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "serve"], cwd=REPO, capture_output=True, text=True,
                          input='{"id": 1, "op": "hello"}\n{"id": 2, "op": "shutdown"}\n', timeout=60)
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert proc.returncode == 0
    assert lines[0]["result"]["implementation"] == "toolproof-reference"
    assert lines[1] == {"id": 2, "ok": True, "result": {"bye": True}}
