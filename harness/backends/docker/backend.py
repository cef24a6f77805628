"""The docker backend: one long-lived, hardened container per worker, and inside it a fresh
sandbox per scenario, with toolproof's supervisor owning the protocol channel and the
implementation under test (any ``--impl``) running as the unprivileged tool uid.

Why a fresh sandbox per scenario: it is a reset that is complete by construction — each scenario
gets new mount, PID, IPC, UTS and network namespaces with fresh /tmp, /work, $HOME, /dev/shm,
/dev/mqueue and /dev/pts, a fresh /proc, and a fresh implementation process; ending the sandbox
kills its PID namespace, so every process however it was started dies, and its files go with
its mounts. No result depends on which scenario ran before it on the same worker. The supervisor
prepares the next sandbox (up to the implementation's ``hello``) while the current scenario runs,
so a scenario waits milliseconds for its sandbox, where starting a container costs the worker
most of a second; ``benchmarks/docker_bench.py`` measures both. docs/docker.md has the reasoning.

Lifeline: the container is ``docker run -i --rm`` of the supervisor, attached to a pipe this
process holds. Closing the pipe (``close``) or this process dying in any way, SIGKILL included,
ends the supervisor's input; it kills everything in the container and exits, and the engine
removes the container. A hung call ends its sandbox at once (the container stays for the next
scenario); a supervisor that does not answer that either gets its container killed.

Layout of this package: ``engine`` (which Docker engine, one connection for SDK and CLI),
``hardening`` (limits, capabilities, seccomp, labels, the ``docker run`` arguments), ``runtime``
(which image and command each implementation runs with), ``supervisor`` (the in-container
program), ``cleanup`` (leftovers of dead runs) and this module (lifecycle and the protocol).
"""

from __future__ import annotations

import base64
import posixpath
import subprocess
import sys
import threading
import time
import uuid
import weakref
from dataclasses import dataclass
from typing import Any

from harness.backends.base import Backend, Capabilities, HelloInfo, JsonObj
from harness.backends.client import ProtocolClient, Response
from harness.backends.docker.cleanup import cleanup
from harness.backends.docker.hardening import (
    DEFAULT_HARDENING,
    LABEL_BACKEND,
    LABEL_ROLE,
    LABEL_RUN_ID,
    WORKSPACE_PARENT,
    ContainerSpec,
    Hardening,
    engine_security_opt,
    label_filters,
    run_arguments,
    seccomp_profile_file,
)
from harness.backends.docker.runtime import runtime_payload, supervisor_config
from harness.backends.docker.supervisor import FATAL_PREFIX, SANDBOX_ERROR_KIND
from harness.backends.impl import REFERENCE, Implementation
from harness.errors import InfrastructureError
from harness.images.engine import Engine, shared_engine
from harness.images.recipes import (
    LABEL_IMAGE_NAME,
    PWSH_SKIP_REASON,
    RECIPES,
    ImageBuildError,
    get_recipe,
    image_tag,
)
from harness.images.runtime import ensure_runtime_image
from harness.model.file_state import FileState

DEFAULT_IMAGE = "linux-bash"
START_DEADLINE_S = 60.0
WORKSPACE_DEADLINE_S = 60.0
HOUSEKEEPING_DEADLINE_S = 15.0
# fs_tree hashes every file of the workspace (each up to 64 MiB whole, the ends of larger ones):
# a large workspace is seconds of CPU, more on a loaded machine.
TREE_DEADLINE_S = 120.0
EXIT_WAIT_S = 15.0
CAUSE_WAIT_S = 2.0

_live: weakref.WeakSet[DockerBackend] = weakref.WeakSet()
_live_lock = threading.Lock()


def _warn(message: str) -> None:
    sys.stderr.write(f"toolproof: warning: {message}\n")


def resolve_image(image: str | None) -> str:
    """A recipe name (``linux-bash``) → its content-hashed tag; anything else is an image ref."""
    name = image or DEFAULT_IMAGE
    return image_tag(name) if name in RECIPES else name


class ImageUnavailable(InfrastructureError):
    """The backend's image is not present; ``skip_reason`` is set for images scenarios may skip on."""

    def __init__(self, message: str, skip_reason: str | None = None) -> None:
        super().__init__(message)
        self.skip_reason = skip_reason


@dataclass
class Worker:
    """One running container: its ``docker run -i`` client process and protocol client."""

    name: str
    proc: subprocess.Popen[bytes]
    proto: ProtocolClient
    hello: HelloInfo | None = None
    used: bool = False

    def retire(self) -> None:
        """Close the lifeline: the supervisor ends everything and the container removes itself."""
        self.proto.close()

    def fatal_cause(self, wait_s: float = CAUSE_WAIT_S) -> str | None:
        """The supervisor's last word (``FATAL:`` line on stderr), waiting briefly for it."""
        deadline = time.monotonic() + wait_s
        while True:
            for line in reversed(self.proto.stderr_tail.splitlines()):
                if line.startswith(FATAL_PREFIX):
                    return line[len(FATAL_PREFIX):].strip()
            if time.monotonic() >= deadline:
                return None
            if self.proc.poll() is not None:
                deadline = min(deadline, time.monotonic() + 0.2)
            time.sleep(0.02)

    def impl_stderr(self, lines: int = 8) -> str:
        """The last ``lines`` lines the implementation wrote on stderr (the supervisor passes them
        through), `` | ``-joined: a failed start shows the adapter's traceback, as local does.
        The supervisor's own last words are left out: its ``FATAL:`` line and the tracebacks of
        its threads (``Exception in thread …`` up to the exception line) as the channel closes."""
        said: list[str] = []
        in_thread_traceback = False
        for ln in self.proto.stderr_tail.strip().splitlines():
            if ln.startswith("Exception in thread "):
                in_thread_traceback = True
                continue
            if in_thread_traceback:
                if not (ln.startswith((" ", "\t", "Traceback (", "During handling of", "The above exception"))
                        or not ln.strip()):
                    in_thread_traceback = False  # the exception line ends that traceback
                continue
            if ln.strip() and not ln.startswith(FATAL_PREFIX):
                said.append(ln)
        return " | ".join(said[-lines:])


class DockerBackend(Backend):
    """Runs ``impl`` (default the reference) in one hardened container, a fresh sandbox per scenario.

    ``image``: a recipe name (default ``linux-bash``, resolved to its content-hashed tag) or any
    image reference with ``python3`` (the supervisor's interpreter). ``run_id`` labels the
    container so that ``cleanup(run_id)`` finds it; a random one is made when omitted.
    """

    name = "docker"

    def __init__(self, image: str | None = None, run_id: str | None = None, *,
                 impl: Implementation | None = None, hardening: Hardening = DEFAULT_HARDENING,
                 engine: Engine | None = None) -> None:
        self.image_name = image or DEFAULT_IMAGE
        self.base_image = resolve_image(image)
        self.impl = impl or REFERENCE
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.hardening = hardening
        self._engine = engine
        self._runtime_image: str | None = None
        self._seccomp: str | None = None
        self._security_opt: tuple[str, ...] = ()
        self._config: JsonObj | None = None
        self._worker: Worker | None = None
        self._sandbox: int | None = None
        self._sandbox_used = False
        self._all: list[Worker] = []
        self._lock = threading.Lock()
        self._closed = False
        self._hello: HelloInfo | None = None
        self._counter = 0
        self._broken = False
        self.instance_id = uuid.uuid4().hex[:12]
        with _live_lock:
            _live.add(self)

    # -- preparation ----------------------------------------------------------------------
    @property
    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = shared_engine()
        return self._engine

    @property
    def container_id(self) -> str | None:
        """The name of the worker's container (``docker inspect`` accepts it as an id)."""
        return None if self._worker is None else self._worker.name

    @property
    def sandbox_id(self) -> int | None:
        """The number of the current scenario's sandbox in the container (``None`` between them)."""
        return self._sandbox

    @property
    def image(self) -> str:
        """The runtime image the containers run (built on first start)."""
        return self._runtime_image or self.base_image

    def _prepare(self) -> None:
        if self._config is not None:
            return
        import docker.errors  # optional dependency (the docker SDK)

        client = self.engine.client
        try:
            client.images.get(self.base_image)
        except docker.errors.ImageNotFound:
            skip = None
            hint = ""
            if self.image_name in RECIPES:
                hint = f"; build it with: python -m harness.images.build {self.image_name}"
                if get_recipe(self.image_name).needs_pwsh:
                    skip = PWSH_SKIP_REASON
            raise ImageUnavailable(f"image {self.base_image} is not present on the Docker engine{hint}",
                                   skip_reason=skip) from None
        except Exception as exc:
            raise InfrastructureError(f"could not look up image {self.base_image}: {exc}") from exc
        info = client.info()
        arch = str(info.get("Architecture", ""))
        name, payload = runtime_payload(self.impl, arch, client, self.base_image, warn=_warn)
        try:
            self._runtime_image = ensure_runtime_image(client, name, self.base_image, payload)
        except ImageBuildError as exc:
            raise InfrastructureError(f"cannot prepare the {self.impl.label} image: {exc}") from None
        self._seccomp = str(seccomp_profile_file()) if self.hardening.seccomp else None
        self._security_opt = engine_security_opt(info)
        self._config = supervisor_config(self.impl, self.hardening)

    # -- the container --------------------------------------------------------------------
    def _launch(self) -> Worker:
        """Start the container, up to the first sandbox's successful ``hello``."""
        assert self._config is not None and self._runtime_image is not None
        name = f"toolproof-{self.run_id}-{uuid.uuid4().hex[:8]}"
        spec = ContainerSpec(image=self._runtime_image, run_id=self.run_id, name=name,
                             supervisor_config=self._config, hardening=self.hardening,
                             labels={LABEL_BACKEND: self.instance_id}, security_opt=self._security_opt)
        argv = [self.engine.cli(), *run_arguments(spec, self._seccomp)]
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    env=self.engine.cli_env(), start_new_session=True)
        except OSError as exc:
            raise InfrastructureError(f"could not run `docker run` for {self._runtime_image}: {exc}") from exc
        assert proc.stdin is not None and proc.stdout is not None
        worker = Worker(name, proc, ProtocolClient(proc.stdin, proc.stdout, proc.stderr))
        with self._lock:
            self._all.append(worker)
            closed = self._closed
        if closed:
            self._kill(worker)
            raise InfrastructureError("the docker backend was closed")
        try:
            resp = worker.proto.request("hello", {}, deadline_s=START_DEADLINE_S)
        except InfrastructureError as exc:
            fatal = worker.fatal_cause()
            cause = fatal or str(exc)
            # a supervisor that exited on its own said why on stderr; one that was killed did not
            said = worker.impl_stderr() if fatal is None or "killed by" not in fatal else ""
            if said and "its stderr ends with" not in cause:
                cause += f"; its stderr ends with: {said}"
            self._kill(worker)
            raise InfrastructureError(f"the container from {self._runtime_image} did not start: {cause}") from None
        if not resp.ok:
            self._kill(worker)
            if resp.error_kind == SANDBOX_ERROR_KIND:
                raise InfrastructureError(f"the container from {self._runtime_image} did not start: "
                                          f"{resp.error_message}")
            raise InfrastructureError(f"the implementation in the container refused hello: {resp.error_message}")
        worker.hello = HelloInfo.from_json(dict(resp.result or {}))
        return worker

    def _container(self) -> Worker:
        """The running container, started (or replaced, when its supervisor is gone) as needed."""
        worker = self._worker
        if worker is not None and worker.proc.poll() is None and not worker.proto.closed:
            return worker
        if worker is not None:
            self._kill(worker)
            self._worker = None
        self._sandbox = None
        self._prepare()
        self._worker = self._launch()
        return self._worker

    def _kill(self, worker: Worker) -> None:
        """End ``worker`` now: remove the container and stop its client process."""
        worker.retire()
        try:
            self.engine.client.containers.get(worker.name).remove(force=True)
        except Exception:
            pass
        try:
            worker.proc.kill()
        except OSError:
            pass

    # -- sandboxes ------------------------------------------------------------------------
    def _begin_sandbox(self, then: tuple[str, JsonObj, float] | None = None) -> Response | None:
        """End the current sandbox (if any) and take the prepared one. ``then`` (op, fields,
        deadline): a request sent right behind, without waiting for the sandbox first (the
        supervisor runs it in the new sandbox); its response is returned."""
        worker = self._container()
        try:
            rid, box = worker.proto.send("sandbox_start", {})
            follow = None if then is None else worker.proto.send(then[0], then[1])
            resp = worker.proto.wait("sandbox_start", rid, box, START_DEADLINE_S + WORKSPACE_DEADLINE_S)
        except InfrastructureError as exc:
            cause = worker.fatal_cause() or str(exc)
            self._kill(worker)
            self._worker = None
            raise InfrastructureError(f"the container from {self._runtime_image} could not start a sandbox: "
                                      f"{cause}") from None
        if not resp.ok:
            raise InfrastructureError(f"the container from {self._runtime_image} could not start a sandbox: "
                                      f"{resp.error_message}")
        self._sandbox = int((resp.result or {}).get("sandbox", 0))
        self._sandbox_used = False
        if then is None or follow is None:
            return None
        return self._wait(worker, then[0], follow, then[2])

    def _end_sandbox(self, *, confirm: bool = False) -> None:
        """End the current sandbox now, with every process and file of its scenario. Sent without
        waiting (the next request is behind it on the same channel) unless ``confirm``: then a
        container whose supervisor does not answer goes instead."""
        worker, number, self._sandbox = self._worker, self._sandbox, None
        if worker is None or number is None:
            return
        try:
            rid, box = worker.proto.send("sandbox_end", {})
            if not confirm or worker.proto.wait("sandbox_end", rid, box, HOUSEKEEPING_DEADLINE_S).ok:
                return
        except InfrastructureError:
            pass
        self._kill(worker)
        self._worker = None

    # -- Backend contract -----------------------------------------------------------------
    def start(self) -> HelloInfo:
        if self._broken:
            self._end_sandbox()
            self._broken = False
        worker = self._container()
        assert worker.hello is not None
        self._hello = worker.hello
        return worker.hello

    @property
    def hello(self) -> HelloInfo | None:
        """The container's hello (``None`` before ``start`` or after a failure)."""
        return self._hello

    @property
    def capabilities(self) -> Capabilities:
        return self.start().capabilities

    def restart(self) -> None:
        self._end_sandbox()
        self._broken = False
        self.start()
        self._begin_sandbox()

    def request(self, op: str, fields: JsonObj, *, deadline_s: float) -> Response:
        if self._broken:
            raise InfrastructureError("the docker backend's sandbox was ended after a failure; "
                                      "call restart() (or new_workspace) first")
        if self._sandbox is None:  # between scenarios: the next sandbox answers
            self.start()
            resp = self._begin_sandbox((op, fields, deadline_s))
            assert resp is not None
            return resp
        worker = self._worker
        assert worker is not None
        try:
            sent = worker.proto.send(op, fields)
        except InfrastructureError as exc:
            raise self._failed(worker, op, exc) from None
        return self._wait(worker, op, sent, deadline_s)

    def _wait(self, worker: Worker, op: str, sent: tuple[Any, Any], deadline_s: float) -> Response:
        """The response to a request sent on ``worker``; a hung call, a dead container or a dead
        implementation end the sandbox and raise."""
        try:
            resp = worker.proto.wait(op, sent[0], sent[1], deadline_s)
        except InfrastructureError as exc:
            raise self._failed(worker, op, exc) from None
        if not resp.ok and resp.error_kind == SANDBOX_ERROR_KIND:
            self._broken = True
            self._end_sandbox()
            raise InfrastructureError(f"{resp.error_message} (while handling {op!r})")
        return resp

    def _failed(self, worker: Worker, op: str, exc: InfrastructureError) -> InfrastructureError:
        """End the sandbox now rather than at restart (a hung call's processes must not keep
        running); the error to raise names the container's last word when it is gone."""
        self._broken = True
        self._hello = None
        cause = worker.fatal_cause() if worker.proto.closed or worker.proc.poll() is not None else None
        self._end_sandbox(confirm=True)
        return InfrastructureError(f"{cause} (while handling {op!r})") if cause else exc

    def new_workspace(self, archive: bytes, env: dict[str, str | None], profile: JsonObj | None) -> str:
        if self._broken:
            self._end_sandbox()
            self._broken = False
        self._counter += 1
        root = posixpath.join(WORKSPACE_PARENT, f"s-{self._counter}")
        fields: JsonObj = {"root": root, "env": env}
        if profile is not None:
            fields["profile"] = profile
        if archive:
            fields["archive"] = base64.b64encode(archive).decode("ascii")
        if self._sandbox is None or self._sandbox_used:
            self.start()
            # One round trip: the workspace goes right behind the request for a fresh sandbox.
            resp = self._begin_sandbox(("workspace", fields, WORKSPACE_DEADLINE_S))
            assert resp is not None
        else:
            resp = self.request("workspace", fields, deadline_s=WORKSPACE_DEADLINE_S)
        self._sandbox_used = True
        if not resp.ok:
            raise InfrastructureError(f"the container could not create workspace {root}: {resp.error_message}")
        return str((resp.result or {}).get("root", root))

    def read_files(self, root: str, paths: list[str]) -> dict[str, FileState]:
        absolute = {p: posixpath.join(root, p) for p in paths}
        resp = self.request("fs_read", {"paths": list(absolute.values())}, deadline_s=HOUSEKEEPING_DEADLINE_S)
        if not resp.ok:
            raise InfrastructureError(f"fs_read failed in the container: {resp.error_message}")
        files = (resp.result or {}).get("files", {})
        return {p: FileState.from_json(p, files.get(a, {})) for p, a in absolute.items()}

    def list_tree(self, root: str) -> dict[str, JsonObj] | None:
        resp = self.request("fs_tree", {"root": root}, deadline_s=TREE_DEADLINE_S)
        if not resp.ok:
            raise InfrastructureError(f"fs_tree failed in the container: {resp.error_message}")
        tree = (resp.result or {}).get("tree", {})
        return dict(sorted(tree.items())) if isinstance(tree, dict) else {}

    def drop_workspace(self, root: str) -> None:
        """The scenario is over: its sandbox goes (with every process and file it made)."""
        self._end_sandbox()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            workers, self._all = self._all, []
        self._worker = None
        self._sandbox = None
        for worker in workers:
            worker.retire()
        deadline = time.monotonic() + EXIT_WAIT_S
        for worker in workers:
            try:
                worker.proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self._kill(worker)
        self._hello = None
        self._sweep()

    def _sweep(self) -> None:
        """Remove any container of this backend still present: one whose ``docker run`` client
        was killed while the engine was still creating it is never attached, so its lifeline
        cannot end it."""
        if self._engine is None:
            return
        try:
            client = self._engine.client
            for container in client.containers.list(all=True, filters={"label": f"{LABEL_BACKEND}={self.instance_id}"}):
                try:
                    container.remove(force=True)
                except Exception:
                    pass
        except Exception:
            pass

    def abort(self) -> None:
        """End every container of this backend immediately (signal handlers, interpreter exit)."""
        with self._lock:
            self._closed = True
            workers = list(self._all)
        for worker in workers:
            if worker.proc.poll() is None:
                self._kill(worker)
        deadline = time.monotonic() + CAUSE_WAIT_S
        for worker in workers:
            try:
                worker.proc.wait(max(0.05, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        self._sweep()

    # -- housekeeping ---------------------------------------------------------------------
    def stray_processes(self) -> list[JsonObj]:
        """Processes in the current sandbox other than its init and the implementation (pid, uid,
        state, cmdline)."""
        resp = self.request("ps", {}, deadline_s=HOUSEKEEPING_DEADLINE_S)
        return list((resp.result or {}).get("processes", [])) if resp.ok else []

    def count_processes(self, marker: str) -> int | None:
        """Live processes the scenario left in its sandbox, counted by the sandbox's PID
        namespace (which holds only this scenario); ``marker`` is not needed and not used, so
        ``env -i``, ``setsid`` or double-forked processes are counted too."""
        resp = self.request("ps", {}, deadline_s=HOUSEKEEPING_DEADLINE_S)
        return len((resp.result or {}).get("processes", [])) if resp.ok else None

    def reap(self) -> list[JsonObj]:
        """SIGKILL every stray process; return what was found (before killing)."""
        resp = self.request("reap", {}, deadline_s=HOUSEKEEPING_DEADLINE_S)
        return list((resp.result or {}).get("processes", [])) if resp.ok else []


def abort_all() -> int:
    """End the containers of every docker backend of this process; return how many backends."""
    with _live_lock:
        backends = list(_live)
    for backend in backends:
        backend.abort()
    return len(backends)


__all__ = [
    "DEFAULT_HARDENING",
    "LABEL_IMAGE_NAME",
    "LABEL_ROLE",
    "LABEL_RUN_ID",
    "DockerBackend",
    "Hardening",
    "ImageUnavailable",
    "abort_all",
    "cleanup",
    "label_filters",
    "resolve_image",
]
