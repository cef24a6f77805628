"""The protocol's message types against ``protocol.schema.json``, both directions, with real
instances: every request type as the harness client writes it, and every answer (each result type
and each error kind) as the reference server writes it in reply."""

from __future__ import annotations

import base64
import io
import json
import os
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from harness.backends.client import ProtocolClient
from tools_impl.core.errors import ProtocolError
from tools_impl.protocol import messages as m
from tools_impl.server.dispatch import Server

SCHEMA = m.load_schema()
RESULT_DEFS = {
    "hello": "helloResult", "workspace": "workspaceResult", "call": "toolResult", "cancel": "cancelResult",
    "task_output": "taskOutputResult", "task_stop": "taskStopResult", "task_query": "taskQueryResult",
    "classify": "classifyResult", "fs_read": "fsReadResult", "drop": "dropResult", "shutdown": "shutdownResult",
}


def validator(defn: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{defn}", "$defs": SCHEMA["$defs"]})


REQUEST = validator("request")
RESPONSE = validator("response")


class _Capture(io.RawIOBase):
    """The client's stdin: keeps every line written."""

    def __init__(self) -> None:
        self.data = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        self.data.extend(b)
        return len(b)


def client_lines(requests: list[m.RequestMessage]) -> list[dict[str, Any]]:
    """What ``ProtocolClient.send_message`` writes for each request."""
    capture = _Capture()
    read_fd, write_fd = os.pipe()
    with os.fdopen(read_fd, "rb") as stdout:
        client = ProtocolClient(capture, stdout)  # type: ignore[arg-type]
        for req in requests:
            client.send_message(req)
        os.close(write_fd)
    return [json.loads(line) for line in capture.data.decode().splitlines()]


class InProcess:
    """A reference ``Server`` on an in-memory stream: lines in, parsed answers out."""

    def __init__(self) -> None:
        self.out = io.StringIO()
        self.server = Server(self.out)
        self._seen = 0

    def ask(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.server.handle_line(json.dumps(obj))
        return self.answer(obj["id"])

    def post(self, obj: dict[str, Any]) -> None:
        self.server.handle_line(json.dumps(obj))

    def answer(self, rid: Any, timeout_s: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for line in self.out.getvalue().splitlines():
                resp = json.loads(line)
                if resp["id"] == rid:
                    return resp
            time.sleep(0.01)
        raise AssertionError(f"no answer to {rid!r}: {self.out.getvalue()!r}")


def check_answer(op: str, resp: dict[str, Any]) -> dict[str, Any]:
    RESPONSE.validate(resp)
    assert resp["ok"] is True, resp
    validator(RESULT_DEFS[op]).validate(resp["result"])
    result: dict[str, Any] = resp["result"]
    return result


def test_every_op_has_a_request_type_and_a_result_definition() -> None:
    assert m.OPS == ("hello", "workspace", "call", "cancel", "task_output", "task_stop", "task_query",
                     "classify", "fs_read", "drop", "shutdown")
    assert set(RESULT_DEFS) == set(m.OPS)
    assert all(defn in SCHEMA["$defs"] for defn in RESULT_DEFS.values())


def test_every_request_and_answer_validates_against_the_schema(tmp_path: Path) -> None:
    root = str(tmp_path / "ws")
    server = InProcess()
    sent = client_lines([
        m.HelloRequest(),
        m.WorkspaceRequest(root, env={"TOOLPROOF_X": "1", "UNSET_ME": None}, profile={"base": "reference"},
                           clean=True),
        m.CallRequest("write", {"path": "a.txt", "content": "hi\n"}, call_id="c-1"),
        m.CallRequest("bash", {"command": "echo started; sleep 30", "run_in_background": True}),
        m.CancelRequest(target="nothing-in-flight"),
        m.ClassifyRequest("ls -la && cd src", rules=["Bash(ls:*)"], options={}),
        m.FsReadRequest(["a.txt", ".", "missing"]),
    ])
    for obj in sent:
        REQUEST.validate(obj)
        parsed = m.REQUESTS_BY_OP[obj["op"]].from_fields(obj)
        assert m.request_object(obj["id"], parsed) == obj  # what the server parses is what was sent
    results = {obj["op"] + ("/bash" if obj.get("tool") == "bash" else ""): check_answer(obj["op"], server.ask(obj))
               for obj in sent}
    assert results["workspace"]["root"] == root
    # the reference sends every member the schema allows, beyond the required ones
    assert sorted(results["hello"]) == sorted(m.HelloResult.__dataclass_fields__)
    assert sorted(results["workspace"]) == ["members", "patches", "root", "wrapper"]
    assert results["fs_read"]["files"]["a.txt"] == {"kind": "file", "mode": results["fs_read"]["files"]["a.txt"]["mode"],
                                                    "data": base64.b64encode(b"hi\n").decode()}
    assert results["fs_read"]["files"]["missing"] == {"kind": "absent"}
    assert results["cancel"] == {"cancelled": False}
    task_id = results["call/bash"]["details"]["task_id"]
    later = client_lines([m.TaskQueryRequest(), m.TaskQueryRequest(task_id), m.TaskOutputRequest(task_id),
                          m.TaskStopRequest(task_id), m.TaskOutputRequest(task_id, block=True, timeout_ms=5000),
                          m.DropRequest(root), m.ShutdownRequest()])
    for i, obj in enumerate(later):
        obj["id"] = f"later-{i}"
        REQUEST.validate(obj)
        answer = check_answer(obj["op"], server.ask(obj))
        if obj["op"] == "task_stop":
            assert answer["stopped"] is True and answer["task_id"] == task_id
    assert not server.server.running


def test_every_error_kind_validates_against_the_schema(tmp_path: Path) -> None:
    server = InProcess()

    def boom(_msg: Any, _rid: m.RequestId) -> dict[str, Any]:
        raise RuntimeError("a bug")

    server.server.register("boom", lambda fields: None, boom)
    server.ask({"id": 0, "op": "workspace", "root": str(tmp_path)})
    server.post({"id": "slow", "op": "call", "tool": "bash", "args": {"command": "sleep 30"}})
    assert server.ask({"id": "cancel", "op": "cancel", "target": "slow"})["result"] == {"cancelled": True}
    answers = {
        "tool": server.ask({"id": 1, "op": "call", "tool": "read", "args": {"path": "missing.txt"}}),
        "validation": server.ask({"id": 2, "op": "call", "tool": "nope", "args": {}}),
        "protocol": server.ask({"id": 3, "op": "fs_read", "paths": "a.txt"}),
        "internal": server.ask({"id": 4, "op": "boom"}),
        "aborted": server.answer("slow"),
    }
    for kind, resp in answers.items():
        RESPONSE.validate(resp)
        assert resp["ok"] is False and resp["error"]["kind"] == kind, resp
    assert answers["validation"]["error"]["message"] == "Tool nope not found"
    assert answers["protocol"]["error"]["message"] == "fs_read: field 'paths' must be a list of strings"
    assert answers["internal"]["error"]["message"] == "internal error: RuntimeError: a bug"
    assert "traceback" in answers["internal"]["error"]
    assert set(answers) == set(m.ERROR_KINDS)
    server.ask({"id": "bye", "op": "shutdown"})


@pytest.mark.parametrize(("op", "fields", "message"), [
    ("workspace", {"root": ""}, "workspace: field 'root' must be a non-empty string"),
    ("workspace", {"root": "r", "env": {"A": 1}}, "workspace: field 'env' must be an object of string (or null) values"),
    ("workspace", {"root": "r", "profile": []}, "workspace: field 'profile' must be an object"),
    ("workspace", {"root": "r", "archive": 5}, "workspace: field 'archive' must be a base64 string"),
    ("call", {"tool": 3}, "call: field 'tool' must be a string"),
    ("task_output", {"task_id": 5}, "task_output: field 'task_id' must be a string"),
    ("task_output", {"task_id": "t", "block": "yes"}, "task_output: field 'block' must be a boolean"),
    ("task_output", {"task_id": "t", "timeout_ms": -1}, "task_output: field 'timeout_ms' must be a non-negative number"),
    ("task_output", {"task_id": "t", "since": 1.5}, "task_output: field 'since' must be a non-negative integer"),
    ("task_stop", {}, "task_stop: field 'task_id' must be a string"),
    ("task_query", {"task_id": 7}, "task_query: field 'task_id' must be a string"),
    ("classify", {"command": None}, "classify: field 'command' must be a string"),
    ("classify", {"command": "ls", "rules": [1]}, "classify: field 'rules' must be a list of strings"),
    ("classify", {"command": "ls", "options": []}, "classify: field 'options' must be an object"),
    ("fs_read", {"paths": [1]}, "fs_read: field 'paths' must be a list of strings"),
    ("drop", {"root": 1}, "drop: field 'root' must be a non-empty string"),
])
def test_parsing_raises_the_protocol_error_the_server_answers(op: str, fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ProtocolError) as info:
        m.REQUESTS_BY_OP[op].from_fields(fields)
    assert str(info.value) == message


def test_the_client_keeps_what_a_foreign_error_carries() -> None:
    resp = m.parse_response({"id": 1, "ok": False, "error": {"message": "m", "kind": "tool", "code": "X", "hint": 2}})
    assert isinstance(resp, m.ErrorResponse)
    assert resp.error.to_json() == {"hint": 2, "message": "m", "kind": "tool", "code": "X"}
    with pytest.raises(ProtocolError):
        m.parse_response({"id": 1, "result": {}})


def test_process_events_beside_a_result_and_inside_an_error_validate_against_the_schema(tmp_path: Path) -> None:
    srv = InProcess()
    check_answer("workspace", srv.ask({"id": 1, "op": "workspace", "root": str(tmp_path),
                                       "profile": {"patches": {"bash.parent-death-guard": False}}}))
    ok = check_answer("call", srv.ask({"id": 2, "op": "call", "tool": "bash", "args": {"command": "echo hi"}}))
    assert [(e["event"], e["role"], e.get("transport")) for e in ok["process_events"]] == [
        ("spawned", "shell", None), ("command_dispatched", "shell", "argv")]
    assert all(isinstance(e["pid"], int) for e in ok["process_events"])
    check_answer("workspace", srv.ask({"id": 3, "op": "workspace", "root": str(tmp_path),
                                       "profile": {"base": "upstream", "patches": {"bash.process-events": True}}}))
    raised = srv.ask({"id": 4, "op": "call", "tool": "bash", "args": {"command": "sleep 5", "timeout": 0.2}})
    RESPONSE.validate(raised)
    assert raised["error"]["message"] == "Command timed out after 0.2 seconds"
    assert [e["event"] for e in raised["error"]["process_events"]] == ["spawned", "command_dispatched", "timeout"]
    assert raised["error"]["process_events"][2]["timeout_s"] == 0.2
    check_answer("workspace", srv.ask({"id": 5, "op": "workspace", "root": str(tmp_path)}))
    (tmp_path / "a.txt").write_text("x\n")
    quiet = check_answer("call", srv.ask({"id": 6, "op": "call", "tool": "read", "args": {"path": "a.txt"}}))
    assert "process_events" not in quiet  # only bash reports facts, and only when there are some
