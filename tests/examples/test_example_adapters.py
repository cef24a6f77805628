"""The example adapters a user copies: each answers the protocol as its schema says and passes the
corpus scenarios of the tools it offers that a small adapter can pass; scenarios for tools it
lacks are skipped with the reason."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import jsonschema
import pytest

from harness.backends.registry import backend_factory
from harness.corpus.loader import load_corpus
from harness.model.results import PASS, SKIP
from harness.run.runner import Runner
from tests.support.repo import REPO

SCHEMA = json.loads((REPO / "tools_impl" / "protocol" / "protocol.schema.json").read_text(encoding="utf-8"))
PYTHON = [sys.executable, str(REPO / "examples" / "python-adapter" / "adapter.py")]
NODE = ["node", str(REPO / "examples" / "node-adapter" / "adapter.mjs")]
PASSING = ("read/numbered-lines", "read/missing-file",
           "read/empty-file-reminder", "read/offset-limit-notice", "write/new-file", "write/nested-parents",
           "bash/exit-codes", "bash/cwd-and-files")


def adapters() -> list[list[str]]:
    found = [PYTHON]
    if shutil.which("node"):
        found.append(NODE)
    return found


def validator(ref: str) -> jsonschema.protocols.Validator:
    return jsonschema.Draft202012Validator({**SCHEMA, "$ref": f"#/$defs/{ref}"})


@pytest.mark.parametrize("argv", adapters(), ids=lambda a: a[-1].rsplit("/", 2)[-2])
def test_the_adapter_speaks_the_protocol(argv: list[str], tmp_path: object) -> None:
    requests = [{"id": 1, "op": "hello"}, {"id": 2, "op": "workspace", "root": str(tmp_path)},
                {"id": 3, "op": "call", "tool": "write", "args": {"path": "a.txt", "content": "hi\n"}},
                {"id": 4, "op": "call", "tool": "read", "args": {"path": "a.txt"}},
                {"id": 5, "op": "call", "tool": "grep", "args": {"pattern": "x"}},
                {"id": 6, "op": "frobnicate"}, {"id": 7, "op": "shutdown"}]
    done = subprocess.run(argv, input="".join(json.dumps(r) + "\n" for r in requests), capture_output=True,
                          text=True, timeout=30)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0 and [a["id"] for a in answers] == [1, 2, 3, 4, 5, 6, 7], done.stderr
    for a in answers:
        validator("response").validate(a)
    hello = answers[0]["result"]
    assert (hello["protocol"], hello["tools"], hello["ops"]) == (1, ["bash", "read", "write"],
                                                                 ["hello", "workspace", "call", "shutdown"])
    validator("toolResult").validate(answers[3]["result"])
    assert answers[3]["result"]["content"] == [{"type": "text", "text": "     1→hi\n"}]
    assert answers[4]["error"]["kind"] == "protocol" and answers[5]["error"]["kind"] == "protocol"


@pytest.mark.parametrize("argv", adapters(), ids=lambda a: a[-1].rsplit("/", 2)[-2])
def test_the_adapter_passes_what_it_can_and_skips_tools_it_lacks(argv: list[str]) -> None:
    import shlex

    factory, label = backend_factory("cmd:" + shlex.join(argv))
    corpus = {s.id: s for s in load_corpus([REPO / "scenarios"])}
    chosen = [corpus[i] for i in (*PASSING, "edit/exact-replace", "grep/count-mode")]
    run = Runner(factory, jobs=1, backend_label=label).run(chosen)
    status = {r.id: r for r in run.scenarios}
    assert {i: status[i].status for i in PASSING} == dict.fromkeys(PASSING, PASS), \
        {i: status[i].failure_text for i in PASSING if status[i].status != PASS}
    assert (status["edit/exact-replace"].status, status["edit/exact-replace"].reason) == (
        SKIP, "requires tools edit; the implementation offers bash, read, write")
    assert status["grep/count-mode"].status == SKIP


@pytest.mark.parametrize("argv", adapters(), ids=lambda a: a[-1].rsplit("/", 2)[-2])
def test_the_adapter_reports_running_as_root_so_permission_scenarios_skip_there(argv: list[str]) -> None:
    """Issue 21 item 11: a hard-coded ``"root": false`` made ``edit/cases/readonly-file`` run (and
    fail) under root, as most CI containers are, where the reference skips it."""
    import os

    done = subprocess.run(argv, input=json.dumps({"id": 1, "op": "hello"}) + "\n", capture_output=True, text=True,
                          timeout=30)
    hello = json.loads(done.stdout.splitlines()[0])["result"]
    assert hello["capabilities"]["root"] is (hasattr(os, "geteuid") and os.geteuid() == 0)


def test_the_python_adapter_imports_the_users_own_package(tmp_path: object) -> None:
    """Issue 21 item 8: run as ``python toolproof/adapter.py``, the adapter could not import the
    repository's own package (``sys.path[0]`` is toolproof/); a src layout works too."""
    from pathlib import Path

    repo = Path(str(tmp_path))
    (repo / "toolproof").mkdir()
    adapter = (REPO / "examples" / "python-adapter" / "adapter.py").read_text(encoding="utf-8")
    for layout, package in (("flat", repo / "flatpkg"), ("src", repo / "src" / "srcpkg")):
        package.mkdir(parents=True)
        (package / "__init__.py").write_text(f"WHO = {layout!r}\n", encoding="utf-8")
    (repo / "toolproof" / "adapter.py").write_text(
        adapter.replace('\nTOOLS = {"read": tool_read', '\nimport flatpkg, srcpkg\nWHO = (flatpkg.WHO, srcpkg.WHO)\n'
                        'TOOLS = {"read": tool_read'), encoding="utf-8")
    done = subprocess.run([sys.executable, "toolproof/adapter.py"], cwd=repo, input='{"id": 1, "op": "hello"}\n',
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and json.loads(done.stdout)["ok"] is True, done.stderr
