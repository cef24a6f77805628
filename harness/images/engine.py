"""One way to reach the Docker engine, for every engine call toolproof makes (the docker SDK and
the ``docker`` command line alike).

The engine is chosen the way the ``docker`` CLI chooses it: ``DOCKER_HOST`` (with its
``DOCKER_TLS_VERIFY``/``DOCKER_CERT_PATH``) when set; else the context named by ``DOCKER_CONTEXT``;
else the ``currentContext`` of the CLI's config file; else the local socket. The SDK alone ignores
``DOCKER_CONTEXT``, which used to create containers on one engine and ``docker exec`` into them
on another; here both sides are given the same endpoint: the SDK client is built from the resolved
host and TLS settings, and CLI subprocesses get an environment naming the same context or host.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.errors import InfrastructureError

ENGINE_TIMEOUT_S = 60
DEFAULT_CONTEXT = "default"


@dataclass(frozen=True)
class Endpoint:
    """Where the engine is: ``host`` (``unix://…``, ``tcp://…``, ``ssh://…``) and how it was
    chosen (``source`` is ``DOCKER_HOST``, ``DOCKER_CONTEXT``, ``config`` or ``default``)."""

    host: str
    context: str
    source: str
    tls: Any = None

    def describe(self) -> str:
        if self.source == "DOCKER_HOST":
            return f"DOCKER_HOST={self.host}"
        if self.context == DEFAULT_CONTEXT:
            return self.host
        return f"context {self.context} ({self.host})"


def resolve_endpoint(environ: Mapping[str, str] | None = None) -> Endpoint:
    """The engine endpoint for ``environ`` (default ``os.environ``), by the CLI's precedence."""
    env = os.environ if environ is None else environ
    if env.get("DOCKER_HOST"):
        return Endpoint(env["DOCKER_HOST"], DEFAULT_CONTEXT, "DOCKER_HOST")
    try:
        from docker.context import ContextAPI  # optional: the docker SDK
        from docker.context.config import get_current_context_name  # optional: the docker SDK
    except ImportError as exc:  # optional dependency
        raise InfrastructureError("the 'docker' Python package is not installed (pip install docker)") from exc
    name, source = env.get("DOCKER_CONTEXT", ""), "DOCKER_CONTEXT"
    if not name:
        name, source = get_current_context_name(), "config"
    if name == DEFAULT_CONTEXT:
        return Endpoint("unix:///var/run/docker.sock", DEFAULT_CONTEXT, "default")
    try:
        ctx = ContextAPI.get_context(name)
    except Exception as exc:
        raise InfrastructureError(f"cannot read Docker context {name!r} ({source}): {exc}") from exc
    if ctx is None:
        raise InfrastructureError(f"Docker context {name!r} ({source}) does not exist; see `docker context ls`")
    return Endpoint(str(ctx.Host), name, source, ctx.TLSConfig or None)


class Engine:
    """An SDK client and the matching CLI environment for one endpoint."""

    def __init__(self, endpoint: Endpoint, timeout: int = ENGINE_TIMEOUT_S) -> None:
        self.endpoint = endpoint
        self.timeout = timeout
        self._client: Any = None
        self._lock = threading.Lock()

    @property
    def client(self) -> Any:
        """The docker SDK client (connected and pinged on first use)."""
        with self._lock:
            if self._client is None:
                self._client = self._connect()
            return self._client

    def _connect(self) -> Any:
        try:
            import docker  # optional: the docker SDK
        except ImportError as exc:  # optional dependency
            raise InfrastructureError("the 'docker' Python package is not installed (pip install docker)") from exc
        try:
            if self.endpoint.source == "DOCKER_HOST":
                client = docker.from_env(timeout=self.timeout)
            else:
                client = docker.DockerClient(base_url=self.endpoint.host, tls=self.endpoint.tls or False,
                                             timeout=self.timeout)
            client.ping()
        except Exception as exc:
            raise InfrastructureError(f"no Docker engine reachable at {self.endpoint.describe()} ({exc}); "
                                      "start dockerd, or set DOCKER_HOST or DOCKER_CONTEXT") from exc
        return client

    def cli(self) -> str:
        """The ``docker`` command-line client (``InfrastructureError`` if missing)."""
        path = shutil.which("docker")
        if path is None:
            raise InfrastructureError("the docker command-line client is not installed (toolproof runs each "
                                      "container with `docker run -i`, whose attach stream is its lifeline)")
        return path

    def cli_env(self) -> dict[str, str]:
        """The environment for a ``docker`` subprocess that talks to this same endpoint."""
        env = dict(os.environ)
        if self.endpoint.source != "DOCKER_HOST":
            env.pop("DOCKER_HOST", None)
            env["DOCKER_CONTEXT"] = self.endpoint.context
        return env

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except Exception:
                pass


_shared: Engine | None = None
_shared_lock = threading.Lock()


def shared_engine() -> Engine:
    """The process-wide engine (resolved once; connected on first SDK use)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Engine(resolve_endpoint())
        return _shared


def engine_client() -> Any:
    """The shared engine's SDK client (raises ``InfrastructureError`` when none answers)."""
    return shared_engine().client


__all__ = ["Endpoint", "Engine", "engine_client", "resolve_endpoint", "shared_engine"]
