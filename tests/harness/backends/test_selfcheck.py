"""The backend self-check suite on the local backend (and its known-failure bookkeeping)."""

from __future__ import annotations

import shlex
import sys

import pytest

from harness.backends.client import Response
from harness.backends.cmd import CmdBackend
from harness.backends.local import LocalBackend
from harness.cli import main
from harness.run import selfcheck
from tests.support.repo import FIXTURES

FAKE = FIXTURES / "fake_server.py"
FAST_CHECKS = ("utf8_round_trip", "crlf_preserved", "binary_files", "cwd_is_workspace", "symlinks", "fifo_guard",
               "early_term_exit_is_not_timeout", "large_outputs")


def fake_backend() -> CmdBackend:
    return CmdBackend(shlex.join([sys.executable, str(FAKE)]), hello_deadline_s=5)


def test_fast_selfchecks_pass_on_the_local_backend() -> None:
    report = selfcheck.run_selfcheck(LocalBackend, "local", only=FAST_CHECKS)
    expected = [(n, "pass", "") for n in selfcheck.CHECKS if n in FAST_CHECKS]
    assert [(r.name, r.status, r.message) for r in report.results] == expected
    assert report.exit_code == 0


@pytest.mark.slow
def test_every_selfcheck_passes_on_the_local_backend() -> None:
    report = selfcheck.run_selfcheck(LocalBackend, "local")
    assert [(r.name, r.status) for r in report.results] == [(n, "pass") for n in selfcheck.CHECKS]


def test_a_backend_that_does_not_run_commands_fails_cwd_check() -> None:
    report = selfcheck.run_selfcheck(fake_backend, "fake", only=("cwd_is_workspace", "utf8_round_trip"))
    # the fake server has write but echoes bash commands instead of running them
    assert [(r.name, r.status) for r in report.results] == [("utf8_round_trip", "pass"), ("cwd_is_workspace", "fail")]
    assert report.results[1].message.startswith("bash did not run in the workspace ")
    assert report.results[1].message.endswith(": 'pwd; ls'")


def test_known_failure_is_xfail_and_a_passing_known_failure_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(selfcheck.KNOWN_FAILURES, "cmd", {"cwd_is_workspace": "fake server echoes commands",
                                                          "binary_files": "not really broken"})
    report = selfcheck.run_selfcheck(fake_backend, "fake", only=("binary_files", "cwd_is_workspace"))
    statuses = {r.name: (r.status, r.message.split(" (")[0]) for r in report.results}
    assert statuses == {
        "binary_files": ("fail", "listed as a known failure on cmd but passes; remove it"),
        "cwd_is_workspace": ("xfail", "known failure on cmd: fake server echoes commands"),
    }
    assert report.exit_code == 1


def test_unknown_check_name_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["selfcheck", "--check", "nope"]) == 2
    assert capsys.readouterr().err.startswith("toolproof: error: unknown self-check 'nope'; known: utf8_round_trip,")


def test_protocol_schema_check_passes_on_local_and_names_what_a_bad_answer_breaks() -> None:
    report = selfcheck.run_selfcheck(LocalBackend, "local", only=("protocol_schema",))
    assert [(r.name, r.status, r.message) for r in report.results] == [("protocol_schema", "pass", "")]
    bad = Response(1, True, {"content": [], "details": None, "is_error": "no"})
    with pytest.raises(selfcheck.CheckFailed) as info:
        selfcheck.validate_response("call", bad, "toolResult")
    assert str(info.value) == ("the answer to 'call' does not match the protocol schema (toolResult) at is_error: "
                               "'no' is not of type 'boolean'")
    with pytest.raises(selfcheck.CheckFailed) as info:
        selfcheck.validate_response("call", Response(1, False, error={"message": "m", "kind": "oops"}), None)
    assert str(info.value).startswith("the answer to 'call' does not match the protocol schema (response) at error/kind: ")
