"""The ``Backend`` interface: one small contract that local, ``cmd:`` and docker backends
implement, checked by the same self-check suite against each of them.

Lifecycle: ``start()`` once (idempotent) → for each scenario ``new_workspace()``, any number of
``request()`` calls, ``read_files()`` for final checks, ``drop_workspace()`` → ``close()``.
A backend may serve several scenarios in sequence on one implementation process; it is not
required to be thread-safe (the runner gives each worker its own backend instance).
"""

from __future__ import annotations

import abc
import secrets
import string
from dataclasses import dataclass, field
from typing import Any

from harness.backends.client import Response
from harness.model.features import Declaration, patch_names
from harness.model.file_state import FileState

JsonObj = dict[str, Any]

# The tools' TMPDIR, private to each scenario, is ``/tmp/toolproof-tmp-XXXXXXXX`` on every backend
# (local: a directory of the host's /tmp made by mkdtemp; docker: one the supervisor makes in the
# container's fresh /tmp). Same length everywhere on purpose: tools print paths under TMPDIR
# (bash's full-output file) and count their bytes (the head+tail notice's original_bytes), so
# local and docker observations stay step-for-step identical only if the two have equal lengths.
TOOLS_TMPDIR_PARENT = "/tmp"
TOOLS_TMPDIR_PREFIX = "toolproof-tmp-"
TOOLS_TMPDIR_RANDOM_CHARS = 8  # what tempfile.mkdtemp appends
_TMPDIR_ALPHABET = string.ascii_lowercase + string.digits + "_"  # tempfile's own


def container_tools_tmpdir() -> str:
    """A fresh ``/tmp/toolproof-tmp-XXXXXXXX`` name (mkdtemp's alphabet and length)."""
    suffix = "".join(secrets.choice(_TMPDIR_ALPHABET) for _ in range(TOOLS_TMPDIR_RANDOM_CHARS))
    return f"{TOOLS_TMPDIR_PARENT}/{TOOLS_TMPDIR_PREFIX}{suffix}"


@dataclass(frozen=True)
class Capabilities:
    """What a backend + implementation can do; compared with a scenario's ``requires``."""

    os: str = "linux"
    shell: str = "bash"
    symlinks: bool = True
    fifo: bool = True
    case_sensitive_fs: bool = True
    root: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, obj: JsonObj | None) -> Capabilities:
        obj = dict(obj or {})
        known = {k: obj.pop(k) for k in ("os", "shell", "symlinks", "fifo", "case_sensitive_fs", "root") if k in obj}
        return cls(**known, extra=obj)

    def get(self, name: str) -> Any:
        if name in ("os", "shell", "symlinks", "fifo", "case_sensitive_fs", "root"):
            return getattr(self, name)
        return self.extra.get(name)


@dataclass(frozen=True)
class HelloInfo:
    """The implementation's answer to ``hello``."""

    implementation: str
    version: str
    protocol: int
    surface: str
    tools: tuple[str, ...]
    ops: tuple[str, ...]
    patches: tuple[str, ...]
    capabilities: Capabilities
    surfaces: tuple[str, ...] = ()
    # what it declares (docs/scenario-format.md, "Behaviour, wording and features"): the dialects
    # whose wording it speaks, its optional features, the patch toggles it does not have
    dialects: tuple[str, ...] = ()
    features: tuple[str, ...] = ()
    absent_patches: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, obj: JsonObj) -> HelloInfo:
        return cls(
            implementation=str(obj.get("implementation", "?")),
            version=str(obj.get("version", "?")),
            protocol=int(obj.get("protocol", 0)),
            surface=str(obj.get("surface", "minimax")),
            tools=tuple(obj.get("tools", ())),
            ops=tuple(obj.get("ops", ("hello", "workspace", "call", "shutdown"))),
            patches=tuple(obj.get("patches", ())),
            capabilities=Capabilities.from_json(obj.get("capabilities")),
            surfaces=tuple(obj.get("surfaces", ())),
            dialects=_names(obj.get("dialects")),
            features=_names(obj.get("features")),
            absent_patches=patch_names(obj.get("absent_patches")),
        )

    @property
    def declaration(self) -> Declaration:
        return Declaration(self.dialects, self.features, self.absent_patches, "hello")


def _names(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, (list, tuple)) else ()


class Backend(abc.ABC):
    """Where the workspace and the implementation live.

    Contract:
    - ``start()`` starts or connects to the implementation and returns its ``HelloInfo``; calling
      it again is a no-op. Raises ``InfrastructureError`` when the implementation cannot be reached.
    - ``new_workspace(archive, env, profile)`` creates a fresh, empty workspace, extracts the tar
      ``archive`` into it (modes, symlinks, FIFOs and mtimes kept), points the implementation at it
      with the ``env`` overlay and ``profile`` overlay, and returns the root path *as the
      implementation sees it* (normalisers replace it in observations).
    - ``request(op, fields, deadline_s)`` sends one protocol request and returns the ``Response``.
      A response that does not arrive within ``deadline_s`` or a dead implementation raises
      ``InfrastructureError``; the backend is then unusable until ``restart()``.
    - ``read_files(root, paths)`` returns the state of each workspace-relative path (``absent`` if
      missing); symlinks are not followed.
    - ``drop_workspace(root)`` removes the workspace; errors are swallowed.
    - ``restart()`` replaces a hung or dead implementation (and container) with a fresh one.
    - ``close()`` stops everything the backend started; afterwards nothing of it is left running.
    """

    name: str = "backend"

    @abc.abstractmethod
    def start(self) -> HelloInfo: ...

    @abc.abstractmethod
    def new_workspace(self, archive: bytes, env: dict[str, str | None], profile: JsonObj | None) -> str: ...

    @abc.abstractmethod
    def request(self, op: str, fields: JsonObj, *, deadline_s: float) -> Response: ...

    @abc.abstractmethod
    def read_files(self, root: str, paths: list[str]) -> dict[str, FileState]: ...

    @abc.abstractmethod
    def drop_workspace(self, root: str) -> None: ...

    @abc.abstractmethod
    def restart(self) -> None: ...

    @abc.abstractmethod
    def close(self) -> None: ...

    def list_tree(self, root: str) -> dict[str, dict[str, Any]] | None:
        """Every path of the workspace ``root`` with its kind, mode, size and SHA-256 (a symlink's
        target), as ``harness.model.file_state.list_tree`` lists it; ``None`` when the backend
        cannot list trees (a diff then says the trees were not compared). Optional."""
        return None

    def count_processes(self, marker: str) -> int | None:
        """How many live (non-zombie) processes have ``marker``, a ``NAME=value`` entry the runner
        adds to each scenario's ``env`` overlay, in their environment; ``None`` when the backend cannot tell (the check is then
        reported as skipped, never as passed). Optional; the default cannot tell."""
        return None

    def __enter__(self) -> Backend:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
