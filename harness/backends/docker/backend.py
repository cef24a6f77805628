"""The docker backend: every scenario in a fresh, hardened container taken from a warm pool, with
toolproof's supervisor owning the protocol channel and the implementation under test (any
``--impl``) running inside as the unprivileged tool uid.

Why a fresh container per scenario: it is the one reset that is complete by construction —
``/tmp``, ``/dev/shm``, ``$HOME``, the workspace (``chmod 000`` parts included), SysV IPC and
message queues, and every process however it was started die with the container, so no result
depends on which scenario ran before it on the same worker. The pool starts the next container
(and its implementation, up to ``hello``) while the current scenario runs, so taking one is
cheap; ``benchmarks/docker_bench.py`` measures both the taking and the turnover.

Lifeline: each container is ``docker run -i --rm`` of the supervisor, attached to a pipe this
process holds. Closing the pipe (``drop_workspace``, ``close``) or this process dying in any way,
SIGKILL included, ends the supervisor's input; it kills everything in the container and exits,
and the engine removes the container. Hung calls kill their container at once.

Layout of this package: ``engine`` (which Docker engine, one connection for SDK and CLI),
``hardening`` (limits, capabilities, seccomp, labels, the ``docker run`` arguments), ``runtime``
(which image and command each implementation runs with), ``supervisor`` (the in-container
program), ``cleanup`` (leftovers of dead runs) and this module (lifecycle and the protocol).
"""

from __future__ import annotations

import base64
import collections
import concurrent.futures
import posixpath
import subprocess
import sys
import threading
import time
import uuid
import weakref
from dataclasses import dataclass

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
    label_filters,
    run_arguments,
    seccomp_profile_file,
)
from harness.backends.docker.runtime import runtime_payload, supervisor_config
from harness.backends.docker.supervisor import FATAL_PREFIX
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
SHUTDOWN_DEADLINE_S = 3.0
EXIT_WAIT_S = 15.0
CAUSE_WAIT_S = 2.0
DEFAULT_POOL_SIZE = 1

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
    """Runs ``impl`` (default the reference) in hardened containers, one per scenario.

    ``image``: a recipe name (default ``linux-bash``, resolved to its content-hashed tag) or any
    image reference with ``python3`` (the supervisor's interpreter). ``run_id`` labels the
    containers so that ``cleanup(run_id)`` finds them; a random one is made when omitted.
    ``pool_size``: containers kept started ahead of use.
    """

    name = "docker"

    def __init__(self, image: str | None = None, run_id: str | None = None, *,
                 impl: Implementation | None = None, hardening: Hardening = DEFAULT_HARDENING,
                 pool_size: int = DEFAULT_POOL_SIZE, engine: Engine | None = None) -> None:
        self.image_name = image or DEFAULT_IMAGE
        self.base_image = resolve_image(image)
        self.impl = impl or REFERENCE
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.hardening = hardening
        self.pool_size = max(1, pool_size)
        self._engine = engine
        self._runtime_image: str | None = None
        self._seccomp: str | None = None
        self._config: JsonObj | None = None
        self._current: Worker | None = None
        self._pool: collections.deque[concurrent.futures.Future[Worker]] = collections.deque()
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
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
        """The name of the current container (``docker inspect`` accepts it as an id)."""
        return None if self._current is None else self._current.name

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
        arch = str(client.info().get("Architecture", ""))
        name, payload = runtime_payload(self.impl, arch, client, self.base_image, warn=_warn)
        try:
            self._runtime_image = ensure_runtime_image(client, name, self.base_image, payload)
        except ImageBuildError as exc:
            raise InfrastructureError(f"cannot prepare the {self.impl.label} image: {exc}") from None
        self._seccomp = str(seccomp_profile_file()) if self.hardening.seccomp else None
        self._config = supervisor_config(self.impl, self.hardening)

    # -- containers -----------------------------------------------------------------------
    def _launch(self) -> Worker:
        """Start one container and its implementation, up to a successful ``hello``."""
        assert self._config is not None and self._runtime_image is not None
        name = f"toolproof-{self.run_id}-{uuid.uuid4().hex[:8]}"
        spec = ContainerSpec(image=self._runtime_image, run_id=self.run_id, name=name,
                             supervisor_config=self._config, hardening=self.hardening,
                             labels={LABEL_BACKEND: self.instance_id})
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
            # an implementation that exited on its own said why on stderr (a traceback, a missing
            # module); one that was killed did not, and the tail would be the supervisor's noise
            said = worker.impl_stderr() if fatal is None or "killed by" not in fatal else ""
            if said and "its stderr ends with" not in cause:
                cause += f"; its stderr ends with: {said}"
            self._kill(worker)
            raise InfrastructureError(f"the container from {self._runtime_image} did not start: {cause}") from None
        if not resp.ok:
            self._kill(worker)
            raise InfrastructureError(f"the implementation in the container refused hello: {resp.error_message}")
        result = dict(resp.result or {})
        worker.hello = HelloInfo.from_json(result)
        return worker

    def _submit(self) -> None:
        if self._executor is None:
            self._executor = concurrent.futures.ThreadPoolExecutor(self.pool_size, thread_name_prefix="toolproof-pool")
        self._pool.append(self._executor.submit(self._launch))

    def _take(self) -> Worker:
        """A started container from the pool (the pool is refilled at once)."""
        self._prepare()
        while len(self._pool) < self.pool_size:
            self._submit()
        future = self._pool.popleft()
        self._submit()
        return future.result()

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

    def _retire_current(self) -> None:
        worker, self._current = self._current, None
        if worker is not None:
            worker.retire()

    # -- Backend contract -----------------------------------------------------------------
    def start(self) -> HelloInfo:
        if self._current is None or self._broken:
            if self._broken:
                self._retire_current()
                self._broken = False
            self._current = self._take()
            self._hello = self._current.hello
        assert self._current.hello is not None
        return self._current.hello

    @property
    def hello(self) -> HelloInfo | None:
        """The current container's hello (``None`` before ``start`` or after a failure)."""
        return self._hello

    @property
    def capabilities(self) -> Capabilities:
        return self.start().capabilities

    def restart(self) -> None:
        if self._current is not None:
            self._kill(self._current)
            self._current = None
        self._broken = False
        self.start()

    def request(self, op: str, fields: JsonObj, *, deadline_s: float) -> Response:
        if self._broken:
            raise InfrastructureError("the docker backend's container was replaced after a failure; "
                                      "call restart() (or new_workspace) first")
        if self._current is None:  # between scenarios: the next container answers
            self.start()
        worker = self._current
        assert worker is not None
        try:
            return worker.proto.request(op, fields, deadline_s=deadline_s)
        except InfrastructureError:
            # Kill now rather than at restart: the hung call's processes must not keep running.
            self._broken = True
            cause = worker.fatal_cause()
            self._kill(worker)
            self._current = None
            self._hello = None
            if cause:
                raise InfrastructureError(f"{cause} (while handling {op!r})") from None
            raise

    def new_workspace(self, archive: bytes, env: dict[str, str | None], profile: JsonObj | None) -> str:
        if self._broken or (self._current is not None and self._current.used):
            self._retire_current()
            self._broken = False
        self.start()
        assert self._current is not None
        self._current.used = True
        self._counter += 1
        root = posixpath.join(WORKSPACE_PARENT, f"s-{self._counter}")
        fields: JsonObj = {"root": root, "env": env}
        if profile is not None:
            fields["profile"] = profile
        if archive:
            fields["archive"] = base64.b64encode(archive).decode("ascii")
        resp = self.request("workspace", fields, deadline_s=WORKSPACE_DEADLINE_S)
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
        resp = self.request("fs_tree", {"root": root}, deadline_s=HOUSEKEEPING_DEADLINE_S)
        if not resp.ok:
            raise InfrastructureError(f"fs_tree failed in the container: {resp.error_message}")
        tree = (resp.result or {}).get("tree", {})
        return dict(sorted(tree.items())) if isinstance(tree, dict) else {}

    def drop_workspace(self, root: str) -> None:
        """The scenario is over: its container goes (with every process and file it made)."""
        self._retire_current()

    def close(self) -> None:
        with self._lock:
            self._closed = True
        self._retire_current()
        pending = list(self._pool)
        self._pool.clear()
        for future in pending:
            future.cancel()
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
        with self._lock:
            workers, self._all = self._all, []
        for worker in workers:
            worker.retire()
        deadline = time.monotonic() + EXIT_WAIT_S
        for worker in workers:
            try:
                worker.proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self._kill(worker)
        self._current = None
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
        """Processes in the current container other than docker-init, the supervisor and the
        implementation (pid, uid, state, cmdline)."""
        resp = self.request("ps", {}, deadline_s=HOUSEKEEPING_DEADLINE_S)
        return list((resp.result or {}).get("processes", [])) if resp.ok else []

    def count_processes(self, marker: str) -> int | None:
        """Live processes the scenario left in its container, counted by the container's pid
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
