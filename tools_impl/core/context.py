"""``ToolContext``: what one tool call runs against — workspace root, environment, profile,
abort signal — and ``WorkspaceState``, the per-workspace state of the tool instances (e.g. whether bash
has already reported ``envSanitized``, the background task registry).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Any

from tools_impl.core.errors import ToolAborted
from tools_impl.core.profile import REFERENCE, Profile


@dataclass
class WorkspaceState:
    """State owned by the tool instances of one workspace; replaced by each ``workspace`` op."""

    root: str
    env: dict[str, str]
    profile: Profile = REFERENCE
    bash_env_reported: bool = False
    state: dict[str, Any] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def home(self) -> str:
        return self.env.get("HOME") or os.path.expanduser("~")


@dataclass
class ToolContext:
    """One call's view of its workspace plus its own abort signal."""

    workspace: WorkspaceState
    abort: threading.Event = field(default_factory=threading.Event)
    call_id: str | None = None
    # Process facts the bash engine reported for this call (patch ``bash.process-events``, spec
    # bash.16); model-invisible, sent beside the result by the server.
    process_events: list[dict[str, Any]] = field(default_factory=list)
    _events_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def root(self) -> str:
        return self.workspace.root

    @property
    def env(self) -> dict[str, str]:
        return self.workspace.env

    @property
    def profile(self) -> Profile:
        return self.workspace.profile

    @property
    def home(self) -> str:
        return self.workspace.home

    def observe_process(self, event: dict[str, Any]) -> None:
        """The call's process observer (spec bash.16): keep one process fact."""
        with self._events_lock:
            self.process_events.append(dict(event))

    def observed_process_events(self) -> list[dict[str, Any]]:
        with self._events_lock:
            return [dict(e) for e in self.process_events]

    def check_abort(self) -> None:
        """Raise ``ToolAborted('Operation aborted')`` if the signal is set."""
        if self.abort.is_set():
            raise ToolAborted()


def make_env(overlay: dict[str, str | None] | None, base: dict[str, str] | None = None) -> dict[str, str]:
    """The tools' process environment: ``base`` (default: this process's) with ``overlay`` applied;
    a ``None`` value in the overlay removes the variable."""
    env = dict(os.environ if base is None else base)
    for k, v in (overlay or {}).items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = str(v)
    return env


def make_context(root: str, env: dict[str, str | None] | None = None, profile: Profile = REFERENCE) -> ToolContext:
    """Convenience for tests and direct callers."""
    return ToolContext(WorkspaceState(root=root, env=make_env(env), profile=profile))
