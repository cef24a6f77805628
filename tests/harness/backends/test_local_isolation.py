"""The local backend gives every scenario a fresh, empty HOME and TMPDIR of its own: a replayed
session that runs ``rm ~/x`` or ``mkdir -p ~/.x`` never touches the real home directory, nothing
one scenario leaves in its HOME or TMPDIR reaches the next (``chmod 000`` parts included), and the
TMPDIR has the docker backend's length (``/tmp/toolproof-tmp-XXXXXXXX``), so tool output that
names or counts paths under it is the same on both."""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path

import pytest

from harness.backends.base import container_tools_tmpdir
from harness.backends.docker.hardening import Hardening
from harness.backends.docker.runtime import supervisor_config
from harness.backends.impl import parse_impl
from harness.backends.local import LocalBackend
from harness.cli import main
from harness.corpus.loader import load_corpus, parse_scenario_text
from harness.model.file_state import TREE_HASH_END_BYTES, TREE_HASH_WHOLE_BYTES, list_tree
from harness.model.results import PASS
from harness.run.runner import Runner, run_scenario

SESSION_CWD = "/home/someone/project"


def claude_code_session(commands: list[str]) -> str:
    """A Claude Code session JSONL whose assistant ran ``commands`` with the Bash tool."""
    lines: list[dict[str, object]] = [
        {"type": "user", "sessionId": "home-test", "cwd": SESSION_CWD, "uuid": "u0",
         "message": {"role": "user", "content": "tidy up my home directory"}}]
    for i, command in enumerate(commands, 1):
        lines.append({"type": "assistant", "sessionId": "home-test", "cwd": SESSION_CWD, "uuid": f"a{i}",
                      "message": {"role": "assistant", "content": [
                          {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": command}}]}})
        lines.append({"type": "user", "sessionId": "home-test", "cwd": SESSION_CWD, "uuid": f"r{i}",
                      "message": {"role": "user", "content": [
                          {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "", "is_error": False}]}})
    return "".join(json.dumps(line) + "\n" for line in lines)


def test_an_imported_rm_of_a_home_file_replayed_on_local_leaves_the_real_home_untouched(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_home = tmp_path / "real-home"
    real_home.mkdir()
    (real_home / "x").write_text("precious\n")
    monkeypatch.setenv("HOME", str(real_home))
    trace = tmp_path / "session.jsonl"
    trace.write_text(claude_code_session(["rm ~/x; echo rm=$?", "mkdir -p ~/.x && touch ~/.x/made; ls -A ~"]))
    start = tmp_path / "start"
    start.mkdir()
    (start / "README.md").write_text("project\n")
    out_dir = tmp_path / "imported"
    code = main(["import", str(trace), "--workspace-dir", str(start), "--out", str(out_dir), "--expect", "status"],
                out=io.StringIO())
    assert code == 0
    scenarios = load_corpus([out_dir])
    assert [s.args["command"] for s in scenarios[0].steps] == [
        "rm ~/x; echo rm=$?", "mkdir -p ~/.x && touch ~/.x/made; ls -A ~"]
    # the import contains them (issue 21 item 5): they run only in a container and skip here
    assert [s.when for s in scenarios[0].steps] == [{"isolation": "container"}] * 2
    run = Runner(LocalBackend, backend_label="local").run(scenarios)
    assert [s.reason for s in run.scenarios[0].steps] == [
        "when: requires isolation=container; the backend has isolation=none"] * 2
    assert (real_home / "x").read_text() == "precious\n"
    # and were they run on the host anyway, the scenario's fresh HOME would take them
    bare = parse_scenario_text("id: local/bare\nsteps:\n" + "".join(
        f"  - tool: bash\n    args: {{command: {json.dumps(s.args['command'])}}}\n" for s in scenarios[0].steps),
        str(tmp_path / "bare.yaml"))
    run = Runner(LocalBackend, backend_label="local").run([bare])
    assert run.scenarios[0].status == PASS, run.scenarios[0].failure_text
    assert (real_home / "x").read_text() == "precious\n"
    assert sorted(p.name for p in real_home.iterdir()) == ["x"]


PLANT = """\
id: local/plant
steps:
  - tool: bash
    args: {command: "echo $HOME; touch ~/planted; mkdir -p ~/locked/in && chmod 000 ~/locked/in ~/locked; echo ok"}
    expect: {text: {contains: "ok"}}
"""
CHECK = """\
id: local/check
steps:
  - tool: bash
    args: {command: "find ~ -mindepth 1 | wc -l"}
    expect: {text: "0\\n"}
"""


def test_each_scenario_gets_an_empty_home_and_the_backend_removes_it(tmp_path: Path) -> None:
    backend = LocalBackend()
    try:
        plant = run_scenario(backend, parse_scenario_text(PLANT, "<plant>"))
        assert plant.status == PASS, plant.failure_text
        home = backend.home_dir
        check = run_scenario(backend, parse_scenario_text(CHECK, "<check>"))
        assert check.status == PASS, check.failure_text
        hello = backend.start()
        assert hello.capabilities.get("home") == home
        assert Path.home() not in Path(home).parents
    finally:
        backend.close()
    assert not Path(home).exists()


TMP_PLANT = """\
id: local/tmp-plant
steps:
  - tool: bash
    args: {command: "echo $TMPDIR; touch $TMPDIR/planted; mkdir -p $TMPDIR/locked/in && chmod 000 $TMPDIR/locked/in $TMPDIR/locked; python3 -c 'import tempfile; print(tempfile.gettempdir())'"}
    expect: {text: {contains: "/tmp/toolproof-tmp-"}}
"""
TMP_CHECK = """\
id: local/tmp-check
steps:
  - tool: bash
    args: {command: "ls -A $TMPDIR | wc -l; echo ${#TMPDIR}"}
    expect: {text: "0\\n27\\n"}
"""
TMPDIR_RE = re.compile(r"/tmp/toolproof-tmp-[a-z0-9_]{8}")


def test_each_scenario_gets_an_empty_private_tmpdir_of_the_docker_length_and_it_is_removed(tmp_path: Path) -> None:
    backend = LocalBackend()
    try:
        plant = run_scenario(backend, parse_scenario_text(TMP_PLANT, "<plant>"))
        assert plant.status == PASS, plant.failure_text
        tmpdir = backend.tmp_dir
        assert TMPDIR_RE.fullmatch(tmpdir), tmpdir
        seen = plant.steps[0].observation
        assert seen is not None and seen["text"] == f"{tmpdir}\n{tmpdir}\n"
        assert os.listdir(tmpdir) == []  # emptied as soon as the scenario ended, chmod 000 parts too
        assert os.stat(tmpdir).st_mode & 0o777 == 0o700
        check = run_scenario(backend, parse_scenario_text(TMP_CHECK, "<check>"))
        assert check.status == PASS, check.failure_text
        assert backend.start().capabilities.get("tmpdir") == tmpdir
        assert backend.tmp_dir == tmpdir  # one name per backend: the normaliser's $TMP
    finally:
        backend.close()
    assert not Path(tmpdir).exists()


def test_the_container_tmpdir_name_has_the_local_shape_and_length() -> None:
    names = {container_tools_tmpdir() for _ in range(20)}
    assert len(names) == 20 and all(TMPDIR_RE.fullmatch(n) for n in names)
    cfg = supervisor_config(parse_impl("reference"), Hardening(cpus=1.0), tmpdir="/tmp/toolproof-tmp-abcd1234")
    assert (cfg["tmpdir"], cfg["env"]["TMPDIR"], cfg["capabilities"]["tmpdir"]) == (
        "/tmp/toolproof-tmp-abcd1234",) * 3


def test_tree_listing_hashes_a_huge_file_by_its_ends(tmp_path):
    """A file over TREE_HASH_WHOLE_BYTES is listed by size and the digest of its first and last
    MiB (``sha256_ends``), so a multi-GiB sparse file cannot stall ``list_tree``; a change at
    either end still shows, and a small file keeps its whole-content ``sha256``."""
    big = tmp_path / "sparse.bin"
    with open(big, "wb") as fh:
        fh.truncate(TREE_HASH_WHOLE_BYTES + 3 * TREE_HASH_END_BYTES)
    (tmp_path / "small.txt").write_bytes(b"x")
    first = list_tree(str(tmp_path))
    assert set(first["sparse.bin"]) == {"kind", "mode", "size", "sha256_ends"}
    assert first["sparse.bin"]["size"] == TREE_HASH_WHOLE_BYTES + 3 * TREE_HASH_END_BYTES
    assert "sha256" in first["small.txt"]
    with open(big, "r+b") as fh:
        fh.seek(-1, 2)
        fh.write(b"\x01")
    assert list_tree(str(tmp_path))["sparse.bin"]["sha256_ends"] != first["sparse.bin"]["sha256_ends"]
