"""Baselines as a gate, end to end through the CLI: a planted regression inside a baselined
scenario fails the gate (in another step, or with another mismatch in the listed step), a fix
is stale and names the check, ``baseline update`` keeps reviewed reasons and refuses results of
another implementation, and ``toolproof run --impl X`` with no paths runs the shipped corpus
with the shipped baseline of what X's hello says."""

from __future__ import annotations

import io
import json
import os
import shlex
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.cli import main
from tests.adapters.pi.test_driver import DRIVER, PI_DIR, _installed_manifest, node_for
from tests.support.repo import REPO

# A tool layer with one known deviation (it shouts: "loud" comes back as "loud!") and a switch
# that plants a regression: PLANTED_BUG=calm breaks another step, =loud changes the known
# failure, =fixed removes the deviation.
ADAPTER = r'''
import json, os, sys
BUG = os.environ.get("PLANTED_BUG", "")
NAME, VERSION = os.environ.get("PLANTED_NAME", "planted"), os.environ.get("PLANTED_VERSION", "1")
for line in sys.stdin:
    req = json.loads(line)
    def ok(result):
        sys.stdout.write(json.dumps({"id": req["id"], "ok": True, "result": result}) + "\n")
        sys.stdout.flush()
    if req["op"] == "hello":
        ok({"protocol": 1, "implementation": NAME, "version": VERSION, "surface": "minimax", "tools": ["bash"],
            "ops": ["hello", "workspace", "call", "shutdown"],
            "capabilities": {"os": "linux", "shell": "bash", "symlinks": True, "fifo": True,
                             "case_sensitive_fs": True, "root": False}})
    elif req["op"] == "workspace":
        ok({"root": req["root"]})
    elif req["op"] == "call":
        text = req["args"]["command"]
        if text == "loud" and BUG != "fixed":
            text = "loud!!" if BUG == "loud" else "loud!"
        if text == "calm" and BUG == "calm":
            text = "calm?"
        ok({"content": [{"type": "text", "text": text}], "details": None, "is_error": False})
    else:  # drop, shutdown, …
        ok({})
        if req["op"] == "shutdown":
            break
'''

SCENARIO = """\
id: planted/two-steps
steps:
  - id: loud
    tool: bash
    args: {command: loud}
    expect: {text: loud}
  - id: calm
    tool: bash
    args: {command: calm}
    expect: {text: calm}
"""


def toolproof(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """(a corpus of one scenario, the adapter's --impl), run from a directory with no config."""
    (tmp_path / "adapter.py").write_text(ADAPTER, encoding="utf-8")
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "two.yaml").write_text(SCENARIO, encoding="utf-8")
    (tmp_path / ".git").mkdir()  # no pyproject.toml above this directory is read
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PLANTED_BUG", raising=False)
    return tmp_path / "corpus", "cmd:" + shlex.join([sys.executable, str(tmp_path / "adapter.py")])


def baselined(corpus: Path, impl: str) -> Path:
    """The baseline ``baseline update`` writes for the adapter's known deviation."""
    assert toolproof("run", str(corpus), "--impl", impl, "--json", "r.json")[0] == 1
    code, out = toolproof("baseline", "update", "--results", "r.json", "--baseline", "base.yaml", "--write")
    assert code == 0, out
    text = Path("base.yaml").read_text(encoding="utf-8")
    assert text == (
        "implementation: planted\nversion: '1'\nentries:\n"
        "- id: planted/two-steps\n  step: loud\n  mismatch: |-\n"
        "    text: not equal to the expected text\n    --- expected\n    +++ actual\n    @@ -1 +1 @@\n"
        "    -loud  ⟵ no newline at end\n    +loud!  ⟵ no newline at end\n"
        "  reason: 'TODO: review: say why this step fails (a spec rule, an upstream difference)'\n")
    Path("base.yaml").write_text(text.replace("'TODO: review: say why this step fails (a spec rule, an upstream "
                                              "difference)'", "it shouts"), encoding="utf-8")
    return Path("base.yaml")


def test_the_listed_failure_passes_the_gate_and_a_planted_regression_in_another_step_fails_it(
        planted: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    corpus, impl = planted
    base = baselined(corpus, impl)
    code, out = toolproof("run", str(corpus), "--impl", impl, "--baseline", str(base))
    assert code == 0, out
    assert "XFAIL planted/two-steps (it shouts)" in out
    monkeypatch.setenv("PLANTED_BUG", "calm")
    code, out = toolproof("run", str(corpus), "--impl", impl, "--baseline", str(base), "--junit", "r.xml",
                          "--markdown", "r.md")
    assert code == 1, out
    assert ("[calm] xfail (different failure): this scenario is baselined (base.yaml:4) for step(s) 'loud', not "
            "for step 'calm'") in out
    assert "[calm] text: not equal to the expected text" in out
    assert "toolproof: baseline: 1 entry matched (xfail), 1 different failure(s)" in out
    failure = ET.parse("r.xml").getroot().find("testsuite/testcase/failure")
    assert failure is not None and failure.get("type") == "baseline-different-failure"
    assert "— fail (xfail: different failure)</summary>" in Path("r.md").read_text(encoding="utf-8")


def test_a_different_mismatch_in_the_listed_step_fails_the_gate_showing_both(
        planted: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    corpus, impl = planted
    base = baselined(corpus, impl)
    monkeypatch.setenv("PLANTED_BUG", "loud")
    code, out = toolproof("run", str(corpus), "--impl", impl, "--baseline", str(base))
    assert code == 1, out
    assert ("    [loud] xfail (different failure): not the failure listed in base.yaml:4\n"
            "    [loud]   expected mismatch, not seen:\n"
            "    [loud]     text: not equal to the expected text\n") in out
    assert "    [loud]     +loud!  ⟵ no newline at end\n" in out  # what was expected
    assert "+loud!!  ⟵ no newline at end" in out  # what came
    assert "    [loud] baseline: it shouts\n" in out


def test_a_fix_is_stale_and_names_the_check_that_changed(planted: tuple[Path, str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    corpus, impl = planted
    base = baselined(corpus, impl)
    monkeypatch.setenv("PLANTED_BUG", "fixed")
    code, out = toolproof("run", str(corpus), "--impl", impl, "--baseline", str(base), "--json", "fixed.json")
    assert code == 1, out
    assert ("[loud] stale baseline entry: step 'loud' of 'planted/two-steps' now passes: check `text` no longer "
            "fails as listed (expected mismatch: text: not equal to the expected text); if that is a real fix, "
            "remove the entry from base.yaml:4 (reason was: it shouts)") in out
    step = json.loads(Path("fixed.json").read_text(encoding="utf-8"))["scenarios"][0]["steps"][0]
    assert step["status"] == "stale" and step["expected_mismatch"][0].startswith("text: not equal")
    code, out = toolproof("baseline", "update", "--results", "fixed.json", "--baseline", str(base), "--write")
    assert code == 0 and base.read_text(encoding="utf-8") == "implementation: planted\nversion: '1'\nentries: []\n"


def test_baseline_update_refuses_results_of_another_implementation_unless_retarget(
        planted: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    corpus, impl = planted
    base = baselined(corpus, impl)
    monkeypatch.setenv("PLANTED_NAME", "my-tools")
    assert toolproof("run", str(corpus), "--impl", impl, "--json", "mine.json")[0] == 1
    code, _ = toolproof("baseline", "update", "--results", "mine.json", "--baseline", str(base))
    assert code == 2
    code, out = toolproof("baseline", "update", "--results", "mine.json", "--baseline", str(base), "--retarget",
                          "--write")
    assert code == 0, out
    assert ("toolproof: warning: base.yaml is the baseline of planted 1, but the results are of my-tools 1; "
            "--retarget: rewriting it for my-tools 1") in out
    text = base.read_text(encoding="utf-8")
    assert text.startswith("implementation: my-tools\nversion: '1'\n") and "reason: it shouts" in text
    code, out = toolproof("run", str(corpus), "--impl", impl, "--baseline", str(base))
    assert code == 0 and "warning: baseline" not in out


def test_the_refusal_names_both_implementations(planted: tuple[Path, str], monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    corpus, impl = planted
    base = baselined(corpus, impl)
    monkeypatch.setenv("PLANTED_VERSION", "2")
    assert toolproof("run", str(corpus), "--impl", impl, "--json", "v2.json")[0] == 1
    assert toolproof("baseline", "update", "--results", "v2.json", "--baseline", str(base))[0] == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "toolproof: error: base.yaml is the baseline of planted 1, but the results are of planted 2; pass "
        "--retarget to rewrite it for planted 2 (or --baseline to name that implementation's own baseline)")


def test_unreviewed_entries_are_reported_by_update_run_and_validate(planted: tuple[Path, str]) -> None:
    corpus, impl = planted
    assert toolproof("run", str(corpus), "--impl", impl, "--json", "r.json")[0] == 1
    code, out = toolproof("baseline", "update", "--results", "r.json", "--baseline", "new.yaml", "--write")
    assert "toolproof: 1 entry is UNREVIEWED (reason still a TODO placeholder)" in out
    code, out = toolproof("run", str(corpus), "--impl", impl, "--baseline", "new.yaml", "--junit", "r.xml")
    assert code == 0
    assert ("toolproof: warning: 1 expected failure(s) from UNREVIEWED baseline entries (reason still a TODO "
            "placeholder): planted/two-steps loud") in out
    skipped = ET.parse("r.xml").getroot().find("testsuite/testcase/skipped")
    assert skipped is not None and skipped.get("type") == "xfail-unreviewed"
    code, out = toolproof("validate", str(corpus), "--baseline", "new.yaml")
    assert code == 0
    assert out.splitlines()[1:] == [
        "new.yaml:4: entries[1].reason: unreviewed: still a TODO placeholder; write why step 'loud' of "
        "'planted/two-steps' fails (it xfails meanwhile, and every run reports it)",
        "toolproof: baseline new.yaml (planted 1) is valid: 1 entry; 1 UNREVIEWED"]
    assert toolproof("validate", "--baseline", "new.yaml")[1].splitlines() == out.splitlines()[1:]


def test_a_whole_scenario_entry_without_scope_is_a_usage_error_of_the_run(planted: tuple[Path, str],
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    corpus, impl = planted
    Path("old.yaml").write_text("implementation: planted\nentries:\n  - id: planted/two-steps\n    reason: r\n",
                                encoding="utf-8")
    assert toolproof("run", str(corpus), "--impl", impl, "--baseline", "old.yaml")[0] == 2
    assert "old.yaml:3: entries[1].step: required: name the step that fails" in capsys.readouterr().err
    # baseline update reads it and rewrites it per step, keeping the reason
    assert toolproof("run", str(corpus), "--impl", impl, "--json", "r.json")[0] == 1
    assert toolproof("baseline", "update", "--results", "r.json", "--baseline", "old.yaml", "--write")[0] == 0
    text = Path("old.yaml").read_text(encoding="utf-8")
    assert "  - id: planted/two-steps\n    step: loud\n    mismatch: |-\n" in text and "    reason: r\n" in text
    assert toolproof("run", str(corpus), "--impl", impl, "--baseline", "old.yaml")[0] == 0


# -- the one-command gate ------------------------------------------------------------------------

def test_run_without_paths_runs_the_shipped_corpus_with_the_shipped_baseline_of_the_hello(
        planted: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    _, impl = planted
    code, out = toolproof("run", "-k", "read/missing-file", "--json", "ref.json")
    assert code == 0, out
    assert "PASS  read/missing-file" in out
    assert "toolproof: baseline toolproof:baselines/toolproof-reference.yaml (the shipped baseline for " \
           "toolproof-reference" in out
    info = json.loads(Path("ref.json").read_text(encoding="utf-8"))["run"]
    assert info["baseline"] == "toolproof:baselines/toolproof-reference.yaml"
    assert "as the implementation's hello says" in info["baseline_choice"]
    # an implementation whose hello says pi-coding-agent 0.79.1 gets pi 0.79.1's baseline
    monkeypatch.setenv("PLANTED_NAME", "pi-coding-agent")
    monkeypatch.setenv("PLANTED_VERSION", "0.79.1")
    code, out = toolproof("run", "--impl", impl, "-k", "bash/cases/exit-bare")
    assert "toolproof: baseline toolproof:baselines/pi-0.79.1.yaml (the shipped baseline for pi-coding-agent " \
           "0.79.1, as the implementation's hello says; matched on implementation and version)" in out
    assert "toolproof: baseline: 0 entries matched (xfail)\n" in out  # pi 0.79.1 has no known deviation
    assert "FAIL  bash/cases/exit-bare" in out and code == 1
    # one nobody ships a baseline for runs with none, and says so
    monkeypatch.setenv("PLANTED_VERSION", "0.80.0")
    code, out = toolproof("run", "--impl", impl, "-k", "bash/cases/exit-bare")
    assert "toolproof: no baseline: no shipped baseline is for pi-coding-agent 0.80.0 (shipped: " in out


def test_a_named_or_configured_baseline_wins_over_the_shipped_one(planted: tuple[Path, str]) -> None:
    corpus, impl = planted
    Path("mine.yaml").write_text("implementation: toolproof-reference\nentries: []\n", encoding="utf-8")
    code, out = toolproof("run", "-k", "read/missing-file", "--baseline", "mine.yaml")
    assert code == 0 and "toolproof: baseline mine.yaml (--baseline)" in out
    code, out = toolproof("run", "-k", "read/missing-file", "--no-baseline")
    assert code == 0 and "toolproof: no baseline: --no-baseline" in out
    Path("pyproject.toml").write_text('[tool.toolproof]\nbaseline = "mine.yaml"\n', encoding="utf-8")
    code, out = toolproof("run", "-k", "read/missing-file")
    assert code == 0 and "toolproof: baseline mine.yaml (baseline of [tool.toolproof] in " in out
    # with paths of its own and no baseline named, a run applies none and says nothing about it
    Path("pyproject.toml").unlink()
    code, out = toolproof("run", str(corpus), "--impl", impl)
    assert code == 1 and "toolproof: baseline" not in out and "toolproof: no baseline" not in out


@pytest.mark.skipif(PI_DIR is None or node_for(PI_DIR) is None, reason="set TOOLPROOF_PI_DIR to a pi install")
def test_the_pi_driver_on_an_install_picks_that_release_s_baseline(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    assert PI_DIR is not None
    node = node_for(PI_DIR)
    assert node is not None
    version = _installed_manifest(PI_DIR)["version"]
    if not (REPO / "baselines" / f"pi-{version}.yaml").exists():
        pytest.skip(f"no baselines/pi-{version}.yaml")
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    env_impl = "cmd:" + shlex.join([node, str(DRIVER), "--pi-dir", PI_DIR])
    code, out = toolproof("run", "--impl", env_impl, "-k", "pi/")
    assert code == 0, out
    assert (f"toolproof: baseline toolproof:baselines/pi-{version}.yaml (the shipped baseline for pi-coding-agent "
            f"{version}, as the implementation's hello says; matched on implementation and version)") in out


# A proxy in front of the pi driver that says it is pi 1.6.0 and answers writes the way 1.6.0 does
# (`Successfully wrote to PATH`, a deviation pi-1.6.0's shipped baseline lists); PLANTED_BUG=bytes
# plants a regression inside that baselined scenario: the file gets other bytes.
PI_PROXY = r'''
import json, os, subprocess, sys, threading
BUG = os.environ.get("PLANTED_BUG", "")
driver = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
writes = {}
def pump():
    for line in driver.stdout:
        resp = json.loads(line)
        if resp.get("ok") and isinstance(resp.get("result"), dict) and resp["result"].get("implementation"):
            resp["result"]["version"] = "1.6.0"
        if resp.get("id") in writes and resp.get("ok"):
            resp["result"]["content"] = [{"type": "text", "text": "Successfully wrote to " + writes.pop(resp["id"])}]
        sys.stdout.write(json.dumps(resp) + "\n")
        sys.stdout.flush()
threading.Thread(target=pump, daemon=True).start()
for line in sys.stdin:
    req = json.loads(line)
    if req.get("op") == "call" and req.get("tool") == "write":
        writes[req["id"]] = req["args"]["path"]
        if BUG == "bytes":
            req["args"]["content"] += "!"
    driver.stdin.write(json.dumps(req) + "\n")
    driver.stdin.flush()
    if req.get("op") == "shutdown":
        break
driver.stdin.close()
driver.wait()
'''


def test_a_regression_planted_inside_a_scenario_of_a_shipped_pi_baseline_fails_the_one_command_gate(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """pi-1.6.0's shipped baseline lists write/new-file for its wording (`Successfully wrote to`):
    that failure passes the gate; the same scenario writing other bytes fails it, as a different
    failure of the listed scenario."""
    if PI_DIR is None or node_for(PI_DIR) is None:
        if os.environ.get("TOOLPROOF_REQUIRE_PI") == "1":
            pytest.fail("TOOLPROOF_REQUIRE_PI=1 but TOOLPROOF_PI_DIR is not set")
        pytest.skip("set TOOLPROOF_PI_DIR to a pi install")
    assert PI_DIR is not None
    node = node_for(PI_DIR)
    assert node is not None
    (tmp_path / "proxy.py").write_text(PI_PROXY, encoding="utf-8")
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PLANTED_BUG", raising=False)
    impl = "cmd:" + shlex.join([sys.executable, str(tmp_path / "proxy.py"), node, str(DRIVER), "--pi-dir", PI_DIR])
    code, out = toolproof("run", "--impl", impl, "-k", "write/new-file")
    assert ("toolproof: baseline toolproof:baselines/pi-1.6.0.yaml (the shipped baseline for pi-coding-agent "
            "1.6.0, as the implementation's hello says") in out
    assert code == 0, out
    assert "XFAIL write/new-file (1.6.0's write says `Successfully wrote to ${path}`" in out
    monkeypatch.setenv("PLANTED_BUG", "bytes")
    code, out = toolproof("run", "--impl", impl, "-k", "write/new-file")
    assert code == 1, out
    assert "[step-1] xfail (different failure): not the failure listed in " in out
    assert "[step-1]   actual mismatch, not listed:\n    [step-1]     files.hello.txt: content differs" in out
    assert "toolproof: baseline: 0 entries matched (xfail), 1 different failure(s)" in out
