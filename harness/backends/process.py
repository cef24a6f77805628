"""Shared machinery of the host-process backends (``local`` and ``cmd:``): one implementation
subprocess per backend instance, reused across scenarios, driven through ``ProtocolClient``;
workspaces are temp dirs on the host, and final file states are read from the host file system.
Each scenario also gets a fresh, empty ``HOME`` and ``TMPDIR`` of its own (``_fresh_private_dirs``).
"""

from __future__ import annotations

import base64
import os
import shutil
import signal
import subprocess
import tarfile
import tempfile
from typing import Any

from harness.backends.base import TOOLS_TMPDIR_PARENT, TOOLS_TMPDIR_PREFIX, Backend, HelloInfo
from harness.backends.client import ProtocolClient, Response
from harness.errors import InfrastructureError
from harness.model.file_state import FileState, describe_path, list_tree
from tools_impl.server.workspace_delivery import extract_tar

JsonObj = dict[str, Any]
HELLO_DEADLINE_S = 30.0
WORKSPACE_DEADLINE_S = 60.0
DROP_DEADLINE_S = 15.0
SHUTDOWN_GRACE_S = 3.0
KILL_WAIT_S = 5.0
WORKSPACE_PREFIX = "toolproof-ws-"
PRIVATE_PREFIX = "toolproof-private-"


def wipe(path: str) -> None:
    """Remove ``path`` entirely, ``chmod 000`` parts included (the owner may always chmod)."""
    def unlock(func: Any, failed: str, _exc: Any) -> None:
        parent = os.path.dirname(failed)
        for target in (parent, failed):
            try:
                os.chmod(target, 0o700)
            except OSError:
                pass
        try:
            func(failed)
        except OSError:
            pass

    for _ in range(3):
        if not os.path.lexists(path):
            return
        shutil.rmtree(path, onerror=unlock)


def empty(path: str) -> None:
    """Make ``path`` an empty directory of mode 0700 that stays in place (its name is never free
    for another user of a shared temp dir to take): every entry goes, ``chmod 000`` ones included."""
    try:
        os.chmod(path, 0o700)
        entries = os.listdir(path)
    except FileNotFoundError:
        os.makedirs(path, mode=0o700)
        return
    for name in entries:
        entry = os.path.join(path, name)
        if os.path.isdir(entry) and not os.path.islink(entry):
            wipe(entry)
        else:
            try:
                os.unlink(entry)
            except FileNotFoundError:
                pass


def extract_on_host(root: str, archive: bytes) -> None:
    """Extract a harness-built (trusted) tar into ``root``, keeping modes, links, FIFOs and mtimes."""
    extract_tar(root, archive)


class ProcessBackend(Backend):
    """A backend whose implementation is a subprocess on the host speaking the protocol.

    ``inband``: deliver the workspace tar inside the ``workspace`` op (the reference server
    extracts it) instead of extracting it on the host first.
    """

    name = "process"

    def __init__(self, argv: list[str], *, inband: bool, env: dict[str, str] | None = None,
                 label: str | None = None, hello_deadline_s: float = HELLO_DEADLINE_S) -> None:
        if not argv:
            raise InfrastructureError("empty implementation command line")
        self.argv = list(argv)
        self.inband = inband
        self.env = env
        self.label = label or " ".join(argv)
        self._proc: subprocess.Popen[bytes] | None = None
        self._client: ProtocolClient | None = None
        self._hello: HelloInfo | None = None
        self._roots: set[str] = set()
        self._private: str | None = None
        self._tmp: str | None = None
        self.hello_deadline_s = hello_deadline_s

    # -- lifecycle ------------------------------------------------------------------------
    @property
    def hello(self) -> HelloInfo | None:
        return self._hello

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def start(self) -> HelloInfo:
        if self._hello is not None and self._proc is not None and self._proc.poll() is None:
            return self._hello
        self._spawn()
        try:
            resp = self.request("hello", {}, deadline_s=self.hello_deadline_s)
        except InfrastructureError:
            self._kill()
            raise
        if not resp.ok or not isinstance(resp.result, dict):
            self._kill()
            raise InfrastructureError(f"{self.label}: hello failed: {resp.error_message or resp.result!r}")
        caps = resp.result.get("capabilities")
        caps = {**(caps if isinstance(caps, dict) else {}), "home": self.home_dir, "tmpdir": self.tmp_dir}
        self._hello = HelloInfo.from_json({**resp.result, "capabilities": caps})
        return self._hello

    # -- the per-scenario HOME and TMPDIR ---------------------------------------------------
    @property
    def private_dir(self) -> str:
        """This backend's directory for the scenarios' HOME (made on first use)."""
        if self._private is None:
            self._private = os.path.realpath(tempfile.mkdtemp(prefix=PRIVATE_PREFIX))
        return self._private

    @property
    def home_dir(self) -> str:
        return os.path.join(self.private_dir, "home")

    @property
    def tmp_dir(self) -> str:
        """The scenarios' TMPDIR: ``/tmp/toolproof-tmp-XXXXXXXX``, the docker backend's length
        (``harness.backends.base.TOOLS_TMPDIR_PREFIX``); under the host's temp dir where there is
        no writable ``/tmp`` (observations then differ from docker's by the length of the two)."""
        if self._tmp is None:
            parent = TOOLS_TMPDIR_PARENT
            if os.name != "posix" or not (os.path.isdir(parent) and os.access(parent, os.W_OK | os.X_OK)):
                parent = tempfile.gettempdir()
            self._tmp = tempfile.mkdtemp(prefix=TOOLS_TMPDIR_PREFIX, dir=parent)
        return self._tmp

    def _fresh_private_dirs(self) -> dict[str, str]:
        """An empty HOME and TMPDIR for the next scenario: a replayed ``rm ~/x`` or ``mkdir -p
        ~/.x`` touches these, never the user's real home; nothing one scenario leaves there
        reaches the next (``chmod 000`` parts included). (Other host paths are not isolated:
        scenarios that need that require ``isolation: container``.)"""
        if os.path.isdir(self.home_dir) and not os.path.islink(self.home_dir):
            empty(self.home_dir)  # emptied in place: no rmdir and mkdir for every scenario
        else:  # replaced by a file or a link (followed by nothing here): made anew
            wipe(self.home_dir)
            os.makedirs(self.home_dir, mode=0o700)
        empty(self.tmp_dir)
        return {"HOME": self.home_dir, "TMPDIR": self.tmp_dir}

    def _spawn(self) -> None:
        try:
            self._proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env=self.env, start_new_session=(os.name != "nt"),
            )
        except OSError as exc:
            raise InfrastructureError(f"cannot start implementation {self.label!r}: {exc}") from None
        assert self._proc.stdin and self._proc.stdout
        self._client = ProtocolClient(self._proc.stdin, self._proc.stdout, self._proc.stderr)

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        client, self._client = self._client, None
        self._hello = None
        if client is not None:
            client.close()
        if proc is None:
            return
        if proc.poll() is None:
            try:
                if os.name != "nt":
                    os.killpg(proc.pid, signal.SIGKILL)
                else:
                    proc.kill()
            except OSError:
                pass
        try:
            proc.wait(KILL_WAIT_S)
        except subprocess.TimeoutExpired:
            pass
        for stream in (proc.stdout, proc.stderr):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass

    def restart(self) -> None:
        self._kill()
        self.start()

    def close(self) -> None:
        if self._client is not None and self._proc is not None and self._proc.poll() is None:
            try:
                self._client.request("shutdown", {}, deadline_s=SHUTDOWN_GRACE_S)
                self._proc.wait(SHUTDOWN_GRACE_S)
            except (InfrastructureError, subprocess.TimeoutExpired):
                pass
        self._kill()
        for root in list(self._roots):
            wipe(root)
        self._roots.clear()
        if self._private is not None:
            wipe(self._private)
            self._private = None
        if self._tmp is not None:
            wipe(self._tmp)
            self._tmp = None

    # -- protocol -------------------------------------------------------------------------
    def request(self, op: str, fields: JsonObj, *, deadline_s: float) -> Response:
        if self._client is None:
            raise InfrastructureError(f"{self.label}: implementation is not running")
        return self._client.request(op, fields, deadline_s=deadline_s)

    def send(self, op: str, fields: JsonObj) -> tuple[Any, Any]:
        """Send without waiting (for ``cancel`` tests); pair with ``wait``."""
        if self._client is None:
            raise InfrastructureError(f"{self.label}: implementation is not running")
        return self._client.send(op, fields)

    def wait(self, op: str, rid: Any, box: Any, deadline_s: float) -> Response:
        if self._client is None:
            raise InfrastructureError(f"{self.label}: implementation is not running")
        return self._client.wait(op, rid, box, deadline_s)

    def count_processes(self, marker: str) -> int | None:
        """Live processes whose environment has the entry ``marker`` (``NAME=value``; Linux ``/proc`` only)."""
        if not os.path.isdir("/proc/self"):
            return None
        needle = marker.encode()
        count = 0
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/environ", "rb") as fh:
                    env = fh.read()
                with open(f"/proc/{pid}/stat", "rb") as fh:
                    state = fh.read().rsplit(b")", 1)[-1].split()[0]
            except OSError:
                continue
            if state != b"Z" and needle in env.split(b"\0"):
                count += 1
        return count

    # -- workspaces -----------------------------------------------------------------------
    def new_workspace(self, archive: bytes, env: dict[str, str | None], profile: JsonObj | None) -> str:
        root = os.path.realpath(tempfile.mkdtemp(prefix=WORKSPACE_PREFIX))
        self._roots.add(root)
        fields: JsonObj = {"root": root, "env": {**self._fresh_private_dirs(), **env}}
        if profile:
            fields["profile"] = profile
        if self.inband:
            fields["archive"] = base64.b64encode(archive).decode("ascii")
        else:
            try:
                extract_on_host(root, archive)
            except (OSError, tarfile.TarError) as exc:
                raise InfrastructureError(f"cannot extract the workspace into {root}: {exc}") from None
        resp = self.request("workspace", fields, deadline_s=WORKSPACE_DEADLINE_S)
        if not resp.ok:
            raise InfrastructureError(f"{self.label}: workspace op failed: {resp.error_message}")
        return root

    def read_files(self, root: str, paths: list[str]) -> dict[str, FileState]:
        out: dict[str, FileState] = {}
        for p in paths:
            out[p] = describe_path(os.path.join(root, p), p)
        return out

    def list_tree(self, root: str) -> dict[str, dict[str, Any]] | None:
        return list_tree(root)

    def drop_workspace(self, root: str) -> None:
        if self._client is not None and self._proc is not None and self._proc.poll() is None:
            try:
                self._client.request("drop", {"root": root}, deadline_s=DROP_DEADLINE_S)
            except InfrastructureError:
                pass
        wipe(root)
        self._roots.discard(root)
        if self._tmp is not None:  # nothing a scenario left in its TMPDIR outlives it
            empty(self._tmp)
