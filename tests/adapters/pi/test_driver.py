"""The pi driver (adapters/pi/driver.mjs) over its JSON-lines protocol.

Two layers:
- protocol plumbing against a stand-in package written into tmp_path (same layout and entry
  points as the npm package: ``create<Name>Tool`` factories, pi-ai's ``validateToolArguments``),
  so prepareArguments order, error kinds, sequencing and cancellation are checked wherever Node
  runs;
- behaviour against a real installed pi: set ``TOOLPROOF_PI_DIR`` to an install made by
  ``ci/pi-setup.sh`` (``--print env`` prints the exports). Without it those tests skip; with
  ``TOOLPROOF_REQUIRE_PI=1`` they fail instead of skipping.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.repo import REPO

DRIVER = REPO / "adapters" / "pi" / "driver.mjs"
INFO_FILE = "toolproof-pi.json"  # written by adapters/pi/pi_setup.py beside node_modules
PI_DIR = os.environ.get("TOOLPROOF_PI_DIR") or None
REQUIRE_PI = os.environ.get("TOOLPROOF_REQUIRE_PI") == "1"
CANCEL_DEADLINE_S = 10.0

JsonObj = dict[str, Any]


def node_for(pi_dir: str | None) -> str | None:
    """The Node binary for ``pi_dir``: $TOOLPROOF_PI_NODE, the one the installer recorded, or PATH's."""
    explicit = os.environ.get("TOOLPROOF_PI_NODE")
    if explicit:
        return explicit
    if pi_dir:
        try:
            recorded = json.loads((Path(pi_dir) / INFO_FILE).read_text(encoding="utf-8")).get("node")
        except (OSError, ValueError):
            recorded = None
        if isinstance(recorded, str) and os.path.exists(recorded):
            return recorded
    return shutil.which("node")


class DriverProcess:
    """One driver process; ``request`` sends a request and returns the response with its id
    (responses to other ids that arrive meanwhile are kept for later ``wait`` calls)."""

    def __init__(self, node: str, pi_dir: str | Path, *extra: str) -> None:
        self.proc = subprocess.Popen(
            [node, str(DRIVER), "--pi-dir", str(pi_dir), *extra],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, encoding="utf-8", start_new_session=True,
        )
        self._next_id = 0
        self._pending: dict[Any, JsonObj] = {}

    def send(self, op: str, **fields: Any) -> int:
        self._next_id += 1
        self.send_raw(json.dumps({"id": self._next_id, "op": op, **fields}))
        return self._next_id

    def send_raw(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def read_response(self) -> JsonObj:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            err = self.proc.stderr.read() if self.proc.stderr else ""
            raise AssertionError(f"driver closed its output; stderr: {err}")
        resp: JsonObj = json.loads(line)
        return resp

    def wait(self, rid: Any) -> JsonObj:
        while rid not in self._pending:
            resp = self.read_response()
            self._pending[resp.get("id")] = resp
        return self._pending.pop(rid)

    def request(self, op: str, **fields: Any) -> JsonObj:
        return self.wait(self.send(op, **fields))

    def call(self, tool: str, args: Any) -> JsonObj:
        return self.request("call", tool=tool, args=args)

    def close(self) -> int:
        if self.proc.poll() is None:
            try:
                self.request("shutdown")
            except (AssertionError, OSError, ValueError):
                pass
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream:
                stream.close()
        return self.proc.returncode


# -- a stand-in package with the npm package's layout -------------------------------------------

FAKE_AGENT_JS = r"""import { writeFileSync } from "node:fs";
import { join } from "node:path";
const log = [];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export function createReadTool(cwd) {
  return { name: "read", parameters: { required: ["path"] },
    async execute(_id, params) {
      return { content: [{ type: "text", text: `read ${params.path} in ${cwd}; log=${log.join(",")}` }] };
    } };
}
export function createWriteTool(_cwd) {
  return { name: "write", parameters: { required: ["path", "content"] },
    async execute() {
      log.push("write-start");
      await sleep(150);
      log.push("write-end");
      return { content: [{ type: "text", text: "wrote" }], details: { n: 1 } };
    } };
}
export function createEditTool(_cwd) {
  return { name: "edit", parameters: { required: ["path", "edits"] },
    prepareArguments(input) {
      if (input && typeof input.oldText === "string") {
        const { oldText, newText, ...rest } = input;
        return { ...rest, edits: [{ oldText, newText }] };
      }
      return input;
    },
    async execute(_id, params) {
      return { content: [{ type: "text", text: JSON.stringify(params) }], isError: params.edits[0].oldText === "flag" };
    } };
}
export function createBashTool(_cwd) {
  return { name: "bash", parameters: { required: ["command"] },
    async execute(_id, params, signal) {
      if (params.command === "env") return { content: [{ type: "text", text: `FOO=${process.env.FOO ?? "<unset>"}` }] };
      if (params.command === "hang") {
        writeFileSync(join(_cwd, "hang-started"), "");
        await new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(new Error("Command aborted"))));
      }
      throw new Error(`boom: ${params.command}`);
    } };
}
export function createGrepTool(_cwd) {
  return { name: "grep", parameters: { required: ["pattern"] },
    async execute(_id, params) { return { content: [{ type: "text", text: `grep ${params.pattern}` }] }; } };
}
"""

FAKE_AI_BASE_JS = r"""
export function validateToolArguments(tool, toolCall) {
  const args = toolCall.arguments;
  const missing = (tool.parameters.required ?? []).filter((k) => !(args && k in args));
  if (missing.length) {
    throw new Error(`Validation failed for tool "${toolCall.name}":\n  - ${missing[0]}: must have required properties ${missing.join(", ")}\n\nReceived arguments:\n${JSON.stringify(args, null, 2)}`);
  }
  return structuredClone(args);
}
"""

FAKE_VERSION = "9.9.9"


def _write_package(root: Path, name: str, exports: dict[str, str], files: dict[str, str]) -> None:
    pkg = root / "node_modules" / Path(*name.split("/"))
    (pkg / "dist").mkdir(parents=True)
    manifest = {"name": name, "version": FAKE_VERSION, "type": "module",
                "exports": {k: {"import": v} for k, v in exports.items()}}
    (pkg / "package.json").write_text(json.dumps(manifest), encoding="utf-8")
    for rel, text in files.items():
        (pkg / rel).write_text(textwrap.dedent(text), encoding="utf-8")


@pytest.fixture
def node() -> str:
    found = shutil.which("node")
    if found is None:
        pytest.skip("requires node on PATH (the pi driver is a Node program)")
    return found


@pytest.fixture
def fake_pi(tmp_path: Path) -> Path:
    pi_dir = tmp_path / "pi"
    _write_package(pi_dir, "@earendil-works/pi-coding-agent", {".": "./dist/index.js"},
                   {"dist/index.js": FAKE_AGENT_JS})
    # the root entry throws: the driver must take validateToolArguments from "./base"
    _write_package(pi_dir, "@earendil-works/pi-ai", {".": "./dist/index.js", "./base": "./dist/base.js"},
                   {"dist/index.js": 'throw new Error("root entry loaded");\n', "dist/base.js": FAKE_AI_BASE_JS})
    return pi_dir


@pytest.fixture
def fake_driver(node: str, fake_pi: Path, tmp_path: Path):
    proc = DriverProcess(node, fake_pi)
    ws = tmp_path / "ws"
    resp = proc.request("workspace", root=str(ws), env={})
    assert resp["ok"], resp
    yield proc
    proc.close()


def test_hello_reports_package_version_surface_and_default_tools(fake_driver: DriverProcess) -> None:
    result = fake_driver.request("hello")["result"]
    assert result["implementation"] == "pi-coding-agent"
    assert result["version"] == FAKE_VERSION
    assert result["package"] == "@earendil-works/pi-coding-agent"
    assert result["surface"] == "pi"
    assert result["surfaces"] == ["pi"]
    assert result["tools"] == ["read", "write", "edit", "bash"]
    assert result["pi_tools"] == ["read", "write", "edit", "bash", "grep"]
    assert result["validation"] == "pi-ai validateToolArguments"
    assert result["ops"] == ["hello", "workspace", "call", "cancel", "fs_read", "drop", "shutdown"]
    caps = result["capabilities"]
    assert caps["shell"] == "bash"
    assert caps["os"] == {"linux": "linux", "darwin": "macos", "win32": "windows"}.get(sys.platform, caps["os"])
    assert set(caps) >= {"os", "shell", "symlinks", "fifo", "case_sensitive_fs", "root"}


def test_tools_and_surfaces_options_select_what_hello_advertises(node: str, fake_pi: Path) -> None:
    proc = DriverProcess(node, fake_pi, "--tools", "read,grep", "--surfaces", "pi,minimax")
    try:
        result = proc.request("hello")["result"]
        assert result["tools"] == ["read", "grep"]
        assert result["surfaces"] == ["pi", "minimax"]
        assert proc.call("grep", {"pattern": "x"})["result"]["content"] == [{"type": "text", "text": "grep x"}]
        assert proc.call("write", {"path": "a", "content": ""})["error"] == {
            "message": "Tool write not found", "kind": "validation"}
    finally:
        proc.close()


def test_unknown_or_unadvertised_tool_is_not_found(fake_driver: DriverProcess) -> None:
    assert fake_driver.call("grep", {"pattern": "x"}) == {
        "id": 2, "ok": False, "error": {"message": "Tool grep not found", "kind": "validation"}}
    assert fake_driver.call("glob", {})["error"] == {"message": "Tool glob not found", "kind": "validation"}


def test_prepare_arguments_runs_before_validation(fake_driver: DriverProcess) -> None:
    resp = fake_driver.call("edit", {"path": "a.txt", "oldText": "x", "newText": "y"})
    assert resp["ok"], resp
    assert json.loads(resp["result"]["content"][0]["text"]) == {"path": "a.txt", "edits": [{"oldText": "x", "newText": "y"}]}


def test_validation_failure_is_kind_validation_with_the_hosts_message(fake_driver: DriverProcess) -> None:
    resp = fake_driver.call("read", {})
    assert resp["error"] == {
        "message": 'Validation failed for tool "read":\n  - path: must have required properties path\n\nReceived arguments:\n{}',
        "kind": "validation"}


def test_returned_is_error_and_absent_details_pass_through(fake_driver: DriverProcess) -> None:
    resp = fake_driver.call("edit", {"path": "a", "edits": [{"oldText": "flag", "newText": ""}]})
    assert resp["ok"]
    assert resp["result"]["is_error"] is True
    assert resp["result"]["details"] is None
    plain = fake_driver.call("write", {"path": "a", "content": ""})["result"]
    assert plain == {"content": [{"type": "text", "text": "wrote"}], "details": {"n": 1}, "is_error": False}


def test_thrown_error_is_kind_tool_with_its_message(fake_driver: DriverProcess) -> None:
    assert fake_driver.call("bash", {"command": "x y"})["error"] == {"message": "boom: x y", "kind": "tool"}


def _wait_for(path: Path, timeout_s: float = 30.0) -> None:
    """Wait until ``path`` exists: the call has really started executing."""
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def test_cancel_aborts_a_running_call_as_kind_aborted(fake_driver: DriverProcess, tmp_path: Path) -> None:
    rid = fake_driver.send("call", tool="bash", args={"command": "hang"})
    _wait_for(tmp_path / "ws" / "hang-started")  # a cancel read before the call starts gives "Operation aborted"
    t0 = time.monotonic()
    assert fake_driver.request("cancel", target=rid)["result"] == {"cancelled": True}
    assert fake_driver.wait(rid)["error"] == {"message": "Command aborted", "kind": "aborted"}
    assert time.monotonic() - t0 < CANCEL_DEADLINE_S
    assert fake_driver.request("cancel", target=rid)["result"] == {"cancelled": False}


def test_pipelined_read_waits_for_an_earlier_sequential_write(fake_driver: DriverProcess) -> None:
    write_id = fake_driver.send("call", tool="write", args={"path": "a", "content": ""})
    read_id = fake_driver.send("call", tool="read", args={"path": "a"})
    read = fake_driver.wait(read_id)
    assert read["result"]["content"][0]["text"].endswith("; log=write-start,write-end")
    assert fake_driver.wait(write_id)["ok"]


def test_workspace_env_overlay_applies_and_resets_and_root_is_the_tools_cwd(
        fake_driver: DriverProcess, tmp_path: Path) -> None:
    ws1, ws2 = tmp_path / "one", tmp_path / "two" / "nested"
    assert fake_driver.request("workspace", root=str(ws1), env={"FOO": "bar"})["ok"]
    assert ws1.is_dir()
    assert fake_driver.call("bash", {"command": "env"})["result"]["content"][0]["text"] == "FOO=bar"
    assert fake_driver.call("read", {"path": "p"})["result"]["content"][0]["text"] == f"read p in {ws1}; log="
    resp = fake_driver.request("workspace", root=str(ws2), env={"PATH": os.environ.get("PATH", "")})
    assert resp["result"] == {"root": str(ws2), "members": 0, "patches": [], "wrapper": False, "profile_ignored": False}
    assert fake_driver.call("bash", {"command": "env"})["result"]["content"][0]["text"] == "FOO=<unset>"


def test_workspace_archive_and_malformed_fields_are_protocol_errors(fake_driver: DriverProcess, tmp_path: Path) -> None:
    resp = fake_driver.request("workspace", root=str(tmp_path / "w"), archive="AAAA")
    assert resp["error"] == {
        "message": "workspace: 'archive' is not supported by the pi driver; use the cmd: backend, "
                   "which extracts the workspace on the host",
        "kind": "protocol"}
    assert fake_driver.request("workspace", root="")["error"]["kind"] == "protocol"
    assert fake_driver.request("workspace", root=str(tmp_path), env={"A": 1})["error"] == {
        "message": "workspace: field 'env' must be an object of string (or null) values", "kind": "protocol"}
    assert fake_driver.request("call", tool=5)["error"] == {"message": "call: field 'tool' must be a string",
                                                            "kind": "protocol"}


def test_bad_lines_get_protocol_errors_and_the_driver_keeps_serving(fake_driver: DriverProcess) -> None:
    fake_driver.send_raw("garbage")
    first = fake_driver.read_response()
    assert first["id"] is None and first["error"]["kind"] == "protocol"
    assert first["error"]["message"].startswith("request is not valid JSON: ")
    fake_driver.send_raw("[1]")
    assert fake_driver.read_response()["error"] == {"message": "request must be a JSON object", "kind": "protocol"}
    fake_driver.send_raw('{"id": "x"}')
    missing = fake_driver.read_response()
    assert missing["id"] == "x"
    assert missing["error"]["message"] == (
        "missing field 'op'; expected one of: hello, workspace, call, cancel, fs_read, drop, shutdown")
    assert fake_driver.request("task_output")["error"]["message"].startswith('unknown op "task_output"; ')
    assert fake_driver.request("hello")["ok"]


def test_fs_read_describes_paths_and_drop_removes_the_root(fake_driver: DriverProcess, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "a.txt").write_bytes(b"hi\n")
    os.chmod(ws / "a.txt", 0o640)
    files = fake_driver.request("fs_read", paths=["a.txt", "nope"])["result"]["files"]
    assert files == {"a.txt": {"kind": "file", "mode": 0o640, "data": "aGkK"}, "nope": {"kind": "absent"}}
    assert fake_driver.request("drop", root=str(ws))["result"] == {"dropped": str(ws)}
    assert not ws.exists()


def test_shutdown_lets_admitted_calls_finish_then_exits(node: str, fake_pi: Path, tmp_path: Path) -> None:
    proc = DriverProcess(node, fake_pi)
    proc.request("workspace", root=str(tmp_path / "w"))
    write_id = proc.send("call", tool="write", args={"path": "a", "content": ""})
    bye = proc.request("shutdown")
    assert bye["result"] == {"bye": True}
    assert proc.wait(write_id)["ok"]
    assert proc.proc.wait(10) == 0
    proc.close()


def test_missing_package_exits_2_with_a_message(node: str, tmp_path: Path) -> None:
    proc = subprocess.run([node, str(DRIVER), "--pi-dir", str(tmp_path)], input="", capture_output=True,
                          text=True, timeout=30, check=False)
    assert proc.returncode == 2
    assert proc.stderr == (f"pi driver: no @earendil-works/pi-coding-agent or @mariozechner/pi-coding-agent "
                           f"under {tmp_path / 'node_modules'}\n")
    assert proc.stdout == ""


# -- the real package ----------------------------------------------------------------------------

RESULT_ISERROR_VERSION = (1, 6, 0)  # spec versions: isError results, new write text and validation wording


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("-")[0].split("."))


@pytest.fixture(scope="module")
def real_pi() -> tuple[str, str]:
    """(node, pi_dir) of an installed pi, or a skip (a failure under TOOLPROOF_REQUIRE_PI=1)."""
    def unavailable(reason: str) -> None:
        if REQUIRE_PI:
            pytest.fail(f"TOOLPROOF_REQUIRE_PI=1 but {reason}")
        pytest.skip(reason)

    if PI_DIR is None:
        unavailable("set TOOLPROOF_PI_DIR to a pi install (e.g. eval \"$(ci/pi-setup.sh --print env 0.79.1)\")")
    assert PI_DIR is not None
    node = node_for(PI_DIR)
    if node is None:
        unavailable(f"no Node binary for the pi install in {PI_DIR}")
    assert node is not None
    return node, PI_DIR


@pytest.fixture
def pi(real_pi: tuple[str, str], tmp_path: Path):
    proc = DriverProcess(*real_pi)
    resp = proc.request("workspace", root=str(tmp_path / "ws"),
                        env={"HOME": str(tmp_path / "home"), "TMPDIR": str(tmp_path)})
    assert resp["ok"], resp
    yield proc
    proc.close()


def _installed_manifest(pi_dir: str) -> JsonObj:
    for name in ("@earendil-works/pi-coding-agent", "@mariozechner/pi-coding-agent"):
        manifest = Path(pi_dir) / "node_modules" / Path(*name.split("/")) / "package.json"
        if manifest.exists():
            data: JsonObj = json.loads(manifest.read_text(encoding="utf-8"))
            return data
    raise AssertionError(f"no pi package under {pi_dir}")


def _text(resp: JsonObj) -> str:
    assert resp["ok"], resp
    return "\n".join(b["text"] for b in resp["result"]["content"] if b["type"] == "text")


def test_real_pi_hello_reports_the_installed_version(pi: DriverProcess, real_pi: tuple[str, str]) -> None:
    manifest = _installed_manifest(real_pi[1])
    result = pi.request("hello")["result"]
    assert (result["implementation"], result["version"], result["package"]) == (
        "pi-coding-agent", manifest["version"], manifest["name"])
    assert result["tools"] == ["read", "write", "edit", "bash"]
    assert result["validation"] == "pi-ai validateToolArguments"


def test_real_pi_write_then_read_round_trips(pi: DriverProcess, tmp_path: Path) -> None:
    version = _version_tuple(pi.request("hello")["result"]["version"])
    expected = ("Successfully wrote to a.txt" if version >= RESULT_ISERROR_VERSION
                else "Successfully wrote 3 bytes to a.txt")
    assert _text(pi.call("write", {"path": "a.txt", "content": "hé\n"})) == expected
    assert (tmp_path / "ws" / "a.txt").read_bytes() == "hé\n".encode()
    assert _text(pi.call("read", {"path": "a.txt"})) == "hé\n"
    # the host coerces "2" to a number before the tool runs; line 2 is the empty one after "\n"
    assert _text(pi.call("read", {"path": "a.txt", "offset": "2"})) == ""


def test_real_pi_validation_failure_is_the_host_message(pi: DriverProcess) -> None:
    version = _version_tuple(pi.request("hello")["result"]["version"])
    error = pi.call("read", {})["error"]
    assert error["kind"] == "validation"
    if version >= RESULT_ISERROR_VERSION:
        assert "missing" in error["message"]
    else:
        assert error["message"] == (
            'Validation failed for tool "read":\n  - path: must have required properties path\n\n'
            "Received arguments:\n{}")


def test_real_pi_legacy_edit_pair_goes_through_prepare_arguments(pi: DriverProcess, tmp_path: Path) -> None:
    (tmp_path / "ws" / "e.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    resp = pi.call("edit", {"path": "e.txt", "oldText": "beta", "newText": "BETA"})
    assert _text(resp) == "Successfully replaced 1 block(s) in e.txt."
    assert resp["result"]["details"]["firstChangedLine"] == 2
    assert (tmp_path / "ws" / "e.txt").read_text(encoding="utf-8") == "alpha\nBETA\n"
    missing = pi.call("edit", {"path": "e.txt", "edits": [{"oldText": "zzz", "newText": "y"}]})
    assert missing["error"] == {
        "message": "Could not find the exact text in e.txt. The old text must match exactly including all "
                   "whitespace and newlines.",
        "kind": "tool"}


def test_real_pi_bash_exit_code_and_environment(pi: DriverProcess, tmp_path: Path) -> None:
    version = _version_tuple(pi.request("hello")["result"]["version"])
    resp = pi.call("bash", {"command": "exit 3"})
    if version >= RESULT_ISERROR_VERSION:
        assert resp["ok"] and resp["result"]["is_error"] is True
    else:
        assert resp["error"] == {"message": "(no output)\n\nCommand exited with code 3", "kind": "tool"}
    ws = tmp_path / "ws"
    assert pi.request("workspace", root=str(ws), env={"FOO": "bar", "HOME": str(tmp_path)})["ok"]
    out = _text(pi.call("bash", {"command": 'printf "%s|%s|" "$FOO" "$PWD"; echo "$PATH" | cut -d: -f1'}))
    assert out == f"bar|{ws}|{tmp_path}/.pi/agent/bin\n"


def test_real_pi_cancel_kills_a_running_command(pi: DriverProcess, tmp_path: Path) -> None:
    rid = pi.send("call", tool="bash", args={"command": "touch started && sleep 30"})
    _wait_for(tmp_path / "ws" / "started")
    t0 = time.monotonic()
    assert pi.request("cancel", target=rid)["result"] == {"cancelled": True}
    resp = pi.wait(rid)
    assert resp["error"]["kind"] == "aborted"
    assert resp["error"]["message"].endswith("Command aborted")
    assert time.monotonic() - t0 < CANCEL_DEADLINE_S


@pytest.mark.slow
def test_real_pi_passes_the_one_command_gate_with_its_baseline(real_pi: tuple[str, str]) -> None:
    """``toolproof run --impl DRIVER`` with no paths: every shipped scenario that applies to pi,
    minimax-surface calls mapped to pi's arguments, with the release's shipped baseline."""
    node, pi_dir = real_pi
    version = _installed_manifest(pi_dir)["version"]
    if not (REPO / "baselines" / f"pi-{version}.yaml").exists():
        pytest.skip(f"no baselines/pi-{version}.yaml for this pi version")
    impl = "cmd:" + " ".join([node, str(DRIVER), "--pi-dir", pi_dir])
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "run", "--impl", impl, "--jobs", "2"],
                          cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
                          env={**os.environ, "CI": "true"})
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert f"toolproof: baseline toolproof:baselines/pi-{version}.yaml (the shipped baseline" in proc.stdout
    assert "toolproof: level full (dialect pi)" in proc.stdout
    assert "PASS  edit/pi-surface-multi-edit" in proc.stdout
    assert "PASS  edit/crlf-roundtrip" in proc.stdout  # a minimax-surface edit, mapped to pi's edits[]
    assert "SKIP  grep/content-mode (requires tools grep" in proc.stdout
    assert "SKIP  read/binary-extension (requires feature read-binary-guard" in proc.stdout
    assert "SKIP  edit/fuzzy-span-reference (pins patch edit.fuzzy-span on; the implementation declares it " \
           "absent (its hello))" in proc.stdout
    counts = re.search(r"toolproof: (\d+) pass(?:, (\d+) skip)?(?:, (\d+) xfail)?", proc.stdout)
    assert counts is not None
    ran = int(counts.group(1)) + int(counts.group(3) or 0)
    assert ran >= 200, proc.stdout[-2000:]
