"""What the one executor (``run_scenario`` over a ``Session``) adds for programs that build
scenarios: ``${WORKSPACE}`` in args, SHA-256 file checks, the bash full-output bytes in the
observation, and call arguments that are not an object."""

from __future__ import annotations

import hashlib
from pathlib import Path

from harness.backends.local import LocalBackend
from harness.corpus.loader import load_corpus
from harness.model.results import FAIL, PASS
from harness.run.runner import run_scenario

SCENARIO = """
id: one-executor
surface: pi
profile: {base: upstream}
normalize: [workspace, tmpfiles]
workspace:
  files:
  - {path: a.txt, text: "alpha\\n"}
steps:
- tool: write
  args: {path: "${WORKSPACE}/b.txt", content: "beta\\n"}
  expect:
    text: Successfully wrote 5 bytes to $WORKSPACE/b.txt
    files:
      b.txt: {sha256: DIGEST}
- tool: bash
  args: {command: "seq 1 3000"}
  expect: {text: {contains: "Full output: $TMP/pi-bash-XXXX.log"}}
- tool: read
  args: [not, an, object]
  expect: {status: error, error: {contains: "Validation failed"}}
files:
  a.txt: {sha256: DIGEST_A}
"""


def _scenario(tmp_path: Path, digest: str, digest_a: str):
    path = tmp_path / "one-executor.yaml"
    path.write_text(SCENARIO.replace("DIGEST_A", digest_a).replace("DIGEST", digest), encoding="utf-8")
    (scenario,) = load_corpus([path])
    return scenario


def test_workspace_variable_sha256_checks_full_output_and_any_json_args(tmp_path: Path) -> None:
    good = _scenario(tmp_path, hashlib.sha256(b"beta\n").hexdigest(), hashlib.sha256(b"alpha\n").hexdigest())
    with LocalBackend(["--upstream"]) as backend:
        result = run_scenario(backend, good, full_output=True)
        assert result.status == PASS, [s.messages for s in result.steps]
        bash = result.steps[1].observation or {}
        whole = "".join(f"{i}\n" for i in range(1, 3001)).encode()
        assert bash["full_output"] == f"sha256:{hashlib.sha256(whole).hexdigest()} ({len(whole)} bytes)"
        assert "full_output" not in (run_scenario(backend, good).steps[1].observation or {})  # only when asked
        bad = _scenario(tmp_path, "f" * 64, hashlib.sha256(b"alpha\n").hexdigest())
        failed = run_scenario(backend, bad)
    assert failed.status == FAIL
    assert any(f"files.b.txt: bytes differ; expected SHA-256 {'f' * 64}, got "
               f"{hashlib.sha256(b'beta' + bytes([10])).hexdigest()} (5 bytes)" in m
               for m in failed.steps[0].messages), failed.steps[0].messages
