"""One executor: a ``Session`` is one fresh workspace on a backend — made from an archive with an
environment and profile overlay, then calls, observations, the tree and files read back, then
dropped. The scenario runner, ``toolproof properties`` and the fuzzer's executions go through it,
so every one of them sees a backend the same way (on docker, files are read and trees listed by the
in-container supervisor; on process backends, on the host)."""

from __future__ import annotations

from types import TracebackType
from typing import Any

from harness.backends.base import Backend, JsonObj
from harness.backends.client import Response
from harness.model.file_state import FileState


class Session:
    """A fresh workspace of ``backend``; use as a context manager, or call ``close()``. ``root`` is
    the workspace as the implementation sees it."""

    def __init__(self, backend: Backend, archive: bytes, env: dict[str, str | None] | None = None,
                 profile: JsonObj | None = None) -> None:
        self.backend = backend
        self.root = backend.new_workspace(archive, dict(env or {}), profile)
        self._open = True

    def request(self, op: str, fields: JsonObj, *, deadline_s: float) -> Response:
        """One protocol request (``call``, ``cancel``, ``task_output``, …) against this workspace."""
        return self.backend.request(op, fields, deadline_s=deadline_s)

    def call(self, tool: str, args: Any, *, deadline_s: float) -> Response:
        return self.request("call", {"tool": tool, "args": args}, deadline_s=deadline_s)

    def read_files(self, paths: list[str]) -> dict[str, FileState]:
        """The state of each path: relative ones inside the workspace; an absolute one as it is
        where the implementation runs (its full-output file in its temp dir, say)."""
        return self.backend.read_files(self.root, paths)

    def tree(self) -> dict[str, dict[str, Any]] | None:
        """Every path of the workspace (``Backend.list_tree``); ``None`` where the backend cannot
        list trees."""
        return self.backend.list_tree(self.root)

    def close(self) -> None:
        if self._open:
            self._open = False
            self.backend.drop_workspace(self.root)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
