"""The tool servers under measurement and a synchronous protocol client for them.

One request is in flight at a time and a call is timed from writing its request line to reading
its response line, so the figure is the whole per-call cost a harness pays: JSON handling on both
sides, the server's dispatch and the tool itself.
"""

from __future__ import annotations

import atexit
import itertools
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, cast

REPO = Path(__file__).resolve().parents[1]
PI_SETUP = REPO / "ci" / "pi-setup.sh"
PI_STAMP = ".toolproof-installed.json"
STDERR_TAIL_CHARS = 2000
SHUTDOWN_WAIT_S = 5.0
CALL_TIMEOUT_S = 300.0  # a server that has not answered one call by then is stopped: the run fails


class BenchError(Exception):
    """A benchmark cannot go on (a server failed to start or a measured call failed)."""


@dataclass(frozen=True)
class ServerSpec:
    """How to start one tool server: ``argv`` run in the repository with ``env`` added."""

    label: str
    argv: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    # protocol tool name -> the server's own tool name (pi calls its glob-like tool "find")
    tool_names: dict[str, str] = field(default_factory=dict)


def reference_spec() -> ServerSpec:
    return ServerSpec("reference", (sys.executable, "-m", "tools_impl.server", "--upstream"))


def pi_cache_dir() -> Path:
    explicit = os.environ.get("TOOLPROOF_PI_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "toolproof" / "pi"


def pi_is_cached(version: str) -> bool:
    return (pi_cache_dir() / version / PI_STAMP).is_file()


def pi_driver_argv(version: str) -> tuple[str, ...]:
    """The pi driver's command line: from ``TOOLPROOF_PI_DIR``/``TOOLPROOF_PI_NODE`` when both are
    set, else from ``ci/pi-setup.sh VERSION`` (which installs the release when it is not cached)."""
    pi_dir, node = os.environ.get("TOOLPROOF_PI_DIR"), os.environ.get("TOOLPROOF_PI_NODE")
    if pi_dir and node:
        return (node, "adapters/pi/driver.mjs", "--pi-dir", pi_dir)
    proc = subprocess.run(["sh", str(PI_SETUP), version], cwd=REPO, capture_output=True, text=True, check=False)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("cmd:")]
    if proc.returncode != 0 or not lines:
        raise BenchError(f"ci/pi-setup.sh {version} failed: {proc.stderr.strip()[-STDERR_TAIL_CHARS:]}")
    return tuple(shlex.split(lines[-1][len("cmd:"):]))


def pi_spec(version: str, rg_binary: str | None, fd_binary: str | None) -> ServerSpec:
    """pi's driver with its grep and find tools enabled; they look ``rg`` and ``fd`` up on PATH,
    so a private directory holding links to the same binaries the reference uses goes first."""
    argv = (*pi_driver_argv(version), "--tools", "read,write,edit,bash,grep,find")
    bin_dir = Path(tempfile.mkdtemp(prefix="toolproof-bench-bin-"))
    atexit.register(shutil.rmtree, bin_dir, True)
    for name, target in (("rg", rg_binary), ("fd", fd_binary)):
        if target:
            (bin_dir / name).symlink_to(target)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    return ServerSpec(f"pi {version}", argv, env, {"glob": "find"})


FD_NEEDED_FLAG = "--no-require-git"


def find_fd() -> tuple[str | None, str]:
    """(fd binary, why not) for pi's find tool, which passes ``--no-require-git`` (fd 8.7+);
    Debian installs fd as ``fdfind``."""
    fd = shutil.which("fd") or shutil.which("fdfind")
    if fd is None:
        return None, "fd not found"
    try:
        help_text = subprocess.run([fd, "--help"], capture_output=True, text=True, timeout=10, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None, f"{fd} does not run"
    if FD_NEEDED_FLAG not in help_text:
        return None, f"{fd} is too old (no {FD_NEEDED_FLAG})"
    return fd, ""


class ToolServer:
    """A started server with one workspace; ``call`` returns the round-trip time in ms."""

    def __init__(self, spec: ServerSpec) -> None:
        self.spec = spec
        self.label = spec.label
        self._stderr = tempfile.TemporaryFile()
        env = {**os.environ, **spec.env}
        try:
            self._proc = subprocess.Popen(
                list(spec.argv), cwd=REPO, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=self._stderr,
            )
        except OSError as exc:
            raise BenchError(f"{self.label}: cannot start {spec.argv[0]}: {exc}") from None
        self._stdin = cast(IO[bytes], self._proc.stdin)
        self._stdout = cast(IO[bytes], self._proc.stdout)
        self._ids = itertools.count(1)
        self._hung = ""  # what the server was doing when it was stopped for not answering
        self.last: dict[str, Any] = {}  # the response to the last call
        self.hello: dict[str, Any] = self._checked(self.request({"op": "hello"}), "hello")

    def _stderr_tail(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")[-STDERR_TAIL_CHARS:]

    def _send(self, req: dict[str, Any]) -> int:
        rid = next(self._ids)
        try:
            self._stdin.write(json.dumps({"id": rid, **req}).encode("utf-8") + b"\n")
            self._stdin.flush()
        except OSError as exc:
            raise BenchError(f"{self.label}: server input closed ({exc}); stderr: {self._stderr_tail()}") from None
        return rid

    def _receive(self, rid: int) -> bytes:
        while True:
            raw = self._stdout.readline()
            if not raw:
                if self._hung:
                    raise BenchError(f"{self.label}: no answer to {self._hung} within {CALL_TIMEOUT_S:.0f} s; "
                                     f"stopped; stderr: {self._stderr_tail()}")
                raise BenchError(f"{self.label}: server exited; stderr: {self._stderr_tail()}")
            if raw.startswith(b'{"id": %d,' % rid) or raw.startswith(b'{"id":%d,' % rid):
                return raw
            try:
                if json.loads(raw).get("id") == rid:
                    return raw
            except ValueError:
                continue

    def request(self, req: dict[str, Any]) -> dict[str, Any]:
        resp: dict[str, Any] = json.loads(self._receive(self._send(req)))
        return resp

    def _checked(self, resp: dict[str, Any], what: str) -> dict[str, Any]:
        if not resp.get("ok"):
            message = str((resp.get("error") or {}).get("message", resp))[:400]
            raise BenchError(f"{self.label}: {what} failed: {message}")
        result: dict[str, Any] = resp.get("result") or {}
        return result

    def workspace(self, root: Path) -> None:
        self._checked(self.request({"op": "workspace", "root": str(root)}), "workspace")

    def call(self, tool: str, args: dict[str, Any]) -> float:
        """Run one call; the time from request to response in milliseconds. A failed call raises:
        a benchmark must not time error paths by accident."""
        name = self.spec.tool_names.get(tool, tool)
        # as the harness's protocol client writes a request: UTF-8, non-ASCII text unescaped
        line = json.dumps({"id": 0, "op": "call", "tool": name, "args": args}, ensure_ascii=False)
        rid = next(self._ids)
        data = line.replace('{"id": 0,', f'{{"id": {rid},', 1).encode("utf-8", "surrogateescape") + b"\n"
        watchdog = threading.Timer(CALL_TIMEOUT_S, self._stop_hung, (f"a {tool} call (id {rid})",))
        watchdog.daemon = True
        watchdog.start()
        try:
            t0 = time.perf_counter()
            self._stdin.write(data)
            self._stdin.flush()
            raw = self._receive(rid)
            elapsed = (time.perf_counter() - t0) * 1000.0
        finally:
            watchdog.cancel()
        self.last = json.loads(raw)
        self._checked(self.last, f"{tool} call")
        return elapsed

    def _stop_hung(self, what: str) -> None:
        self._hung = what
        self._proc.kill()

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                self._send({"op": "shutdown"})
                self._stdin.close()
                self._proc.wait(SHUTDOWN_WAIT_S)
            except (BenchError, OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()
        self._stderr.close()
