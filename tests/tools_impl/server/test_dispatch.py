"""The tool server over real pipes: every op, malformed input, and the protocol JSON Schema."""

from __future__ import annotations

import base64
import io
import json
import os
import stat
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.support.repo import REPO

SCHEMA = json.loads((REPO / "tools_impl" / "protocol" / "protocol.schema.json").read_text())


def _validator(defn: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{defn}", "$defs": SCHEMA["$defs"]})


REQUEST = _validator("request")
RESPONSE = _validator("response")
TOOL_RESULT = _validator("toolResult")


class Served:
    """A real ``python -m tools_impl.server`` subprocess driven line by line."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tools_impl.server"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=REPO,
        )

    def raw(self, line: bytes) -> dict[str, Any]:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()
        resp = json.loads(self.proc.stdout.readline())
        RESPONSE.validate(resp)
        return resp

    def send(self, **req: Any) -> dict[str, Any]:
        if "id" in req and "op" in req:
            REQUEST.validate(req)
        return self.raw(json.dumps(req).encode())

    def close(self) -> int:
        if self.proc.poll() is None:
            self.send(id="bye", op="shutdown")
        return self.proc.wait(timeout=10)


@pytest.fixture
def server() -> Iterator[Served]:
    s = Served()
    yield s
    s.close()


def test_hello_reports_protocol_tools_and_capabilities(server: Served) -> None:
    resp = server.send(id=1, op="hello")
    assert resp["ok"] is True and resp["id"] == 1
    res = resp["result"]
    assert res["protocol"] == 1 and res["implementation"] == "toolproof-reference"
    assert res["tools"] == ["read", "write", "edit", "grep", "glob", "bash"]
    assert res["surface"] == "minimax"
    assert res["capabilities"]["shell"] == "bash"
    assert res["capabilities"]["profile_overlay"] is True  # scenarios with requires.profile_overlay run here
    # unicodedata2 is a dependency: the Unicode 17 data of the emulated Node runtime is there
    assert res["capabilities"]["unicode"] == "17.0.0"
    assert list(res["capabilities"]["packages"]) == ["unicodedata2", "stringzilla", "tree-sitter", "tree-sitter-bash",
                                                     "pypdf", "Pillow"]
    assert res["capabilities"]["packages"]["unicodedata2"] == "17.0.1"
    assert res["capabilities"]["packages"]["stringzilla"] == "5.3.2"
    assert res["patches"] == ["bash.graceful-kill", "bash.parent-death-guard", "bash.process-events",
                              "bash.ps-constrained", "bash.ps51-stdin-launcher",
                              "bash.win-taskkill", "edit.fidelity-guard", "edit.fuzzy-span", "engine.exec-facts",
                              "read.image-fallback", "shell.windows-powershell", "wrap.replace-all-literal",
                              "wrap.scrub-provider-key"]  # on and implemented: no diff-bounds (off by default)
    assert sorted(res["all_patches"]) == sorted([*res["patches"], "edit.diff-bounds"])


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"this is not json", "request is not valid JSON: Expecting value at column 1"),
        (b"[1, 2]", "request must be a JSON object"),
        (b'{"id": 5}', "missing field 'op'; expected one of: hello, workspace, call, cancel, task_output, "
                       "task_stop, task_query, classify, fs_read, drop, shutdown"),
        (b'{"id": 5, "op": "dance"}', "unknown op 'dance'; expected one of: hello, workspace, call, cancel, "
                                      "task_output, task_stop, task_query, classify, fs_read, drop, shutdown"),
        (b'{"id": 5, "op": "call", "tool": 7}', "call: field 'tool' must be a string"),
        (b'{"id": 5, "op": "workspace"}', "workspace: field 'root' must be a non-empty string"),
        (b'{"id": 5, "op": "workspace", "root": "/tmp", "env": {"A": 1}}',
         "workspace: field 'env' must be an object of string (or null) values"),
        (b'{"id": 5, "op": "workspace", "root": "/tmp", "profile": {"patches": {"nope": true}}}',
         "workspace: profile.patches: unknown patch toggle 'nope'"),
        (b'{"id": 5, "op": "fs_read", "paths": "a"}', "fs_read: field 'paths' must be a list of strings"),
        (b'{"id": 5, "op": "classify"}', "classify: field 'command' must be a string"),
    ],
)
def test_malformed_requests_get_protocol_errors_and_the_server_keeps_serving(
    server: Served, line: bytes, message: str
) -> None:
    resp = server.raw(line)
    assert resp["ok"] is False
    assert resp["error"] == {"message": message, "kind": "protocol"}
    assert server.send(id="after", op="hello")["ok"] is True


def test_unknown_tool_is_a_validation_error_in_pi_wording(server: Served) -> None:
    resp = server.send(id=2, op="call", tool="teleport", args={})
    assert resp["error"] == {"message": "Tool teleport not found", "kind": "validation"}


def test_cancel_of_nothing_reports_false(server: Served) -> None:
    assert server.send(id=3, op="cancel", target=999)["result"] == {"cancelled": False}


def _tar(entries: list[tuple[tarfile.TarInfo, bytes | None]]) -> str:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for info, data in entries:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return base64.b64encode(buf.getvalue()).decode()


def test_workspace_archive_keeps_modes_symlinks_fifos_and_mtimes(server: Served, tmp_path: Path) -> None:
    f = tarfile.TarInfo("bin/run.sh")
    f.size, f.mode, f.mtime = 3, 0o750, 1_000_000
    link = tarfile.TarInfo("link")
    link.type, link.linkname = tarfile.SYMTYPE, "bin/run.sh"
    fifo = tarfile.TarInfo("pipe")
    fifo.type = tarfile.FIFOTYPE
    root = tmp_path / "ws"
    (tmp_path / "ws").mkdir()
    (root / "stale.txt").write_text("old")
    resp = server.send(id=4, op="workspace", root=str(root), env={"CI": "true"},
                       archive=_tar([(f, b"hi\n"), (link, None), (fifo, None)]))
    assert resp["result"]["members"] == 3 and resp["result"]["root"] == str(root)
    assert not (root / "stale.txt").exists()
    st = os.stat(root / "bin/run.sh")
    assert stat.S_IMODE(st.st_mode) == 0o750 and int(st.st_mtime) == 1_000_000
    assert os.readlink(root / "link") == "bin/run.sh"
    assert stat.S_ISFIFO(os.lstat(root / "pipe").st_mode)

    files = server.send(id=5, op="fs_read", paths=["bin/run.sh", "link", "pipe", "missing", "bin"])["result"]["files"]
    assert files["bin/run.sh"] == {"kind": "file", "mode": 0o750, "data": base64.b64encode(b"hi\n").decode()}
    assert files["link"]["kind"] == "symlink" and files["link"]["target"] == "bin/run.sh"
    assert files["pipe"]["kind"] == "fifo"
    assert files["missing"] == {"kind": "absent"}
    assert files["bin"]["kind"] == "dir"

    assert server.send(id=6, op="drop", root=str(root))["ok"] is True
    assert not root.exists()


def test_bad_archive_is_a_protocol_error(server: Served, tmp_path: Path) -> None:
    resp = server.send(id=7, op="workspace", root=str(tmp_path / "w"), archive=base64.b64encode(b"junk").decode())
    assert resp["error"]["kind"] == "protocol"
    assert resp["error"]["message"].startswith("workspace: archive could not be extracted:")


def test_shutdown_ends_the_process_cleanly(server: Served) -> None:
    assert server.send(id=8, op="shutdown")["result"] == {"bye": True}
    assert server.proc.wait(timeout=10) == 0


def test_end_of_input_ends_the_process() -> None:
    proc = subprocess.run([sys.executable, "-m", "tools_impl.server"], input=b'{"id":1,"op":"hello"}\n',
                          capture_output=True, timeout=30, cwd=REPO)
    assert proc.returncode == 0
    assert json.loads(proc.stdout.splitlines()[0])["ok"] is True


def test_upstream_flag_serves_the_pi_surface() -> None:
    proc = subprocess.run([sys.executable, "-m", "tools_impl.server", "--upstream"], input=b'{"id":1,"op":"hello"}\n',
                          capture_output=True, timeout=30, cwd=REPO)
    res = json.loads(proc.stdout.splitlines()[0])["result"]
    assert res["surface"] == "pi" and res["patches"] == []
    assert res["implementation"] == "toolproof-reference-upstream"


def test_protocol_schema_rejects_a_response_with_both_result_and_error() -> None:
    with pytest.raises(jsonschema.ValidationError):
        RESPONSE.validate({"id": 1, "ok": True, "result": {}, "error": {"message": "x", "kind": "tool"}})
    with pytest.raises(jsonschema.ValidationError):
        RESPONSE.validate({"id": 1, "ok": False})
    TOOL_RESULT.validate({"content": [{"type": "text", "text": "x"}], "details": None, "is_error": False})


def _text(resp: dict[str, Any]) -> str:
    assert resp["ok"] is True, resp
    TOOL_RESULT.validate(resp["result"])
    return "\n".join(b["text"] for b in resp["result"]["content"] if b["type"] == "text")


def test_write_read_edit_over_the_protocol_with_the_spec_texts(server: Served, tmp_path: Path) -> None:
    server.send(id=1, op="workspace", root=str(tmp_path))
    assert _text(server.send(id=2, op="call", tool="write", args={"path": "a.txt", "content": "alpha\nbeta\n"})) == (
        "Successfully wrote 11 bytes to a.txt")
    assert _text(server.send(id=3, op="call", tool="read", args={"path": "a.txt"})) == "     1→alpha\n     2→beta\n"
    resp = server.send(id=4, op="call", tool="edit",
                       args={"file_path": "a.txt", "old_string": "beta", "new_string": "gamma"})
    assert _text(resp) == "Successfully replaced 1 block(s) in a.txt."
    assert resp["result"]["details"]["firstChangedLine"] == 2
    assert (tmp_path / "a.txt").read_text() == "alpha\ngamma\n"


def test_a_raised_tool_error_is_an_error_response_with_the_model_text(server: Served, tmp_path: Path) -> None:
    server.send(id=1, op="workspace", root=str(tmp_path))
    (tmp_path / "a.txt").write_text("x\n")
    resp = server.send(id=2, op="call", tool="edit", args={"file_path": "a.txt", "old_string": "y", "new_string": "z"})
    assert resp["error"] == {
        "kind": "tool",
        "message": "Could not find the exact text in a.txt. The old text must match exactly including all "
                   "whitespace and newlines. If oldText was written from memory or an earlier read, the file may "
                   "have changed since - use the read tool to reload it before retrying.",
    }
    resp = server.send(id=3, op="call", tool="read", args={"path": "a.txt", "offset": 9})
    assert resp["error"] == {"kind": "tool", "message": "Offset 9 is beyond end of file (2 lines total)"}


def test_missing_and_mistyped_arguments_get_validation_errors(server: Served, tmp_path: Path) -> None:
    server.send(id=1, op="workspace", root=str(tmp_path))
    resp = server.send(id=2, op="call", tool="read", args={})
    assert resp["error"]["kind"] == "validation"
    assert resp["error"]["message"] == (
        'Validation failed for tool "read":\n  - path: must have required properties path\n\n'
        "Received arguments:\n{}")
    resp = server.send(id=3, op="call", tool="write", args={"path": "x", "content": ["a"]})
    assert resp["error"]["kind"] == "validation"
    assert resp["error"]["message"].split("\n")[1] == "  - content: must be string"
    resp = server.send(id=4, op="call", tool="edit", args={"file_path": 1, "old_string": "a"})
    lines = resp["error"]["message"].split("\n")
    assert "  - new_string: must have required properties new_string" in lines
    assert server.send(id=5, op="hello")["ok"] is True


def test_pi_edit_forms_are_accepted_on_the_wrapper_surface(server: Served, tmp_path: Path) -> None:
    server.send(id=1, op="workspace", root=str(tmp_path))
    (tmp_path / "m.txt").write_text("one two\n")
    resp = server.send(id=2, op="call", tool="edit",
                       args={"path": "m.txt", "edits": [{"oldText": "one", "newText": "1"}]})
    assert _text(resp) == "Successfully replaced 1 block(s) in m.txt."
    # the legacy top-level pair, as pi's prepareArguments turns it into edits[]
    resp = server.send(id=3, op="call", tool="edit", args={"path": "m.txt", "oldText": "two", "newText": "2"})
    assert _text(resp) == "Successfully replaced 1 block(s) in m.txt."
    assert (tmp_path / "m.txt").read_text() == "1 2\n"
