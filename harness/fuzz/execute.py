"""One generated tool call, run in a fresh workspace of a backend, observed the way the model and
the disk see it: raised or returned, error kind and message, every content block, ``is_error``,
``details``, the files left in the workspace and the bytes of a bash full-output file. Only what
must differ between two runs is normalised: the workspace root (``$WORKSPACE``) and the random
name of a bash full-output file (``$TMP/pi-bash-XXXX.log``).

Shared by ``toolproof fuzz`` (two implementations, compared) and ``toolproof properties`` (one
implementation, checked against an oracle).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

from harness.backends.base import Backend
from harness.errors import InfrastructureError
from harness.model.scenario import Workspace, WorkspaceEntry
from harness.run.normalise import TMPFILE_RE, TMPFILE_TOKEN
from harness.run.workspace_archive import build_plain_archive

JsonObj = dict[str, Any]
ROOT_TOKEN = "${WORKSPACE}"  # in generated arguments: replaced by the workspace root before sending
BASE_TIME = 1_767_225_600.0  # 2026-01-01T00:00:00Z: every generated file gets this mtime
CALL_DEADLINE_S = 60.0
FULL_OUTPUT_KEYS = ("fullOutputPath", "full_output_path")
MAX_TREE_FILES = 200


@dataclass(frozen=True)
class Case:
    """A generated call: ``tool`` with ``args`` (JSON; ``${WORKSPACE}`` inside strings is replaced
    by the root), in a workspace holding ``files`` (path → bytes) and ``dirs``. ``tag`` names the
    input class the generator drew it from."""

    tool: str
    args: Any
    files: tuple[tuple[str, bytes], ...] = ()
    dirs: tuple[str, ...] = ()
    tag: str = ""
    index: int = -1

    def workspace(self) -> Workspace:
        entries = [WorkspaceEntry(d, "dir") for d in self.dirs]
        entries += [WorkspaceEntry(p, "file", data) for p, data in self.files]
        return Workspace(tuple(entries))

    def to_json(self) -> JsonObj:
        return {"tool": self.tool, "args": self.args, "tag": self.tag, "index": self.index,
                "dirs": list(self.dirs),
                "files": {p: _bytes_json(d) for p, d in self.files}}


def _bytes_json(data: bytes) -> Any:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:

        return {"base64": base64.b64encode(data).decode("ascii")}
    if len(text) > 300:
        return {"text_head": text[:120], "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()[:16]}
    return text


@dataclass(frozen=True)
class Outcome:
    """A normalised observation. ``status``: ``result``, ``error`` (the call raised or was
    refused) or ``infra`` (the implementation did not answer; never compared as agreement)."""

    status: str
    kind: str = ""
    message: str = ""
    content: tuple[Any, ...] = ()
    is_error: bool | None = None
    details: Any = None
    files: tuple[tuple[str, str], ...] = ()
    full_output: str | None = None
    raw_files: dict[str, bytes] = field(default_factory=dict, compare=False, hash=False)

    @property
    def text(self) -> str:
        return "\n".join(str(b.get("text", "")) for b in self.content
                         if isinstance(b, dict) and b.get("type", "text") == "text")

    def aspects(self) -> JsonObj:
        """What is compared, by name."""
        return {"status": self.status, "kind": self.kind, "message": self.message,
                "content": list(self.content), "is_error": self.is_error, "details": self.details,
                "files": dict(self.files), "full_output": self.full_output}

    def to_json(self) -> JsonObj:
        out = self.aspects()
        return {k: v for k, v in out.items() if v not in (None, "", [], {})}


def substitute_root(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return value.replace(ROOT_TOKEN, root)
    if isinstance(value, list):
        return [substitute_root(v, root) for v in value]
    if isinstance(value, dict):
        return {k: substitute_root(v, root) for k, v in value.items()}
    return value


class Normaliser:
    def __init__(self, root: str) -> None:
        roots = {root, os.path.realpath(root)}
        self._roots = sorted((r for r in roots if len(r) > 1), key=len, reverse=True)
        self._root_re = re.compile("|".join(re.escape(r) for r in self._roots))

    def text(self, s: str) -> str:
        s = TMPFILE_RE.sub(TMPFILE_TOKEN, s)
        return self._root_re.sub("$WORKSPACE", s) if self._roots else s

    def value(self, v: Any) -> Any:
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, bool) or v is None:
            return v
        if isinstance(v, float) and v.is_integer() and abs(v) < 1e21:
            return int(v)  # JavaScript prints 2, not 2.0
        if isinstance(v, dict):
            return {k: self.value(x) for k, x in v.items()}
        if isinstance(v, list):
            return [self.value(x) for x in v]
        return v


def describe_bytes(data: bytes) -> str:
    """Files are compared by content; short ones are kept readable in reports."""
    if len(data) <= 200:
        return "b64:" + _b64(data)
    return f"sha256:{hashlib.sha256(data).hexdigest()} ({len(data)} bytes)"


def _b64(data: bytes) -> str:

    return base64.b64encode(data).decode("ascii")


def _tree(root: str) -> dict[str, tuple[str, bytes | None]]:
    out: dict[str, tuple[str, bytes | None]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames) + sorted(filenames):
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            if len(out) >= MAX_TREE_FILES:
                return out
            if os.path.islink(full):
                out[rel] = ("symlink:" + os.readlink(full), None)
            elif os.path.isdir(full):
                out[rel] = ("dir", None)
            elif os.path.isfile(full):
                try:
                    with open(full, "rb") as fh:
                        out[rel] = ("file", fh.read())
                except OSError as exc:
                    out[rel] = (f"unreadable:{exc.errno}", None)
            else:
                out[rel] = ("other", None)
    return out


def _files_after(backend: Backend, root: str, case: Case) -> dict[str, tuple[str, bytes | None]]:
    if os.path.isdir(root):  # host backends (local, cmd:): see everything left behind
        return _tree(root)
    paths = {p for p, _ in case.files} | set(case.dirs)
    args = case.args if isinstance(case.args, dict) else {}
    for key in ("path", "file_path"):
        value = args.get(key)
        if isinstance(value, str) and value and not value.startswith(("/", "~", "file:", "@")):
            paths.add(value.rstrip("/"))
    states = backend.read_files(root, sorted(paths))
    return {p: (s.kind, s.data) for p, s in states.items() if s.exists}


def _full_output(details: Any) -> str | None:
    """The bytes of a bash full-output file named in ``details`` (host temp dir), then removed:
    implementations never delete them and a long fuzz run would fill the disk."""
    if not isinstance(details, dict):
        return None
    for key in FULL_OUTPUT_KEYS:
        path = details.get(key)
        if isinstance(path, str) and os.path.isfile(path):
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
                os.unlink(path)
            except OSError:
                return None
            return describe_bytes(data)
    return None


def execute(backend: Backend, case: Case, *, profile: JsonObj | None = None,
            deadline_s: float = CALL_DEADLINE_S) -> Outcome:
    """Run ``case`` in a fresh workspace of ``backend``; an unresponsive implementation gives an
    ``infra`` outcome and the backend is restarted."""
    try:
        backend.start()
        root = backend.new_workspace(build_plain_archive(case.workspace(), BASE_TIME), {}, profile)
    except InfrastructureError as exc:
        _restart(backend)
        return Outcome("infra", message=str(exc))
    norm = Normaliser(root)
    try:
        try:
            resp = backend.request("call", {"tool": case.tool, "args": substitute_root(case.args, root)},
                                   deadline_s=deadline_s)
        except InfrastructureError as exc:
            _restart(backend)
            return Outcome("infra", message=norm.text(str(exc)))
        raw_tree = _files_after(backend, root, case)
    finally:
        backend.drop_workspace(root)
    files = tuple(sorted((p, describe_bytes(data) if data is not None else kind)
                         for p, (kind, data) in raw_tree.items()))
    raw_files = {p: data for p, (kind, data) in raw_tree.items() if data is not None}
    if not resp.ok:
        return Outcome("error", kind=resp.error_kind, message=norm.text(resp.error_message),
                       files=files, raw_files=raw_files)
    res = resp.result if isinstance(resp.result, dict) else {}
    content = res.get("content")
    blocks = tuple(norm.value(b) for b in content) if isinstance(content, list) else ()
    details = res.get("details")
    full = _full_output(details)
    return Outcome("result", content=blocks, is_error=bool(res.get("is_error", False)),
                   details=norm.value(details) if details not in ({}, None) else None,
                   files=files, full_output=full, raw_files=raw_files)


def _restart(backend: Backend) -> None:
    try:
        backend.restart()
    except InfrastructureError:
        pass


def differences(a: Outcome, b: Outcome) -> list[str]:
    """The names of the aspects in which two outcomes differ (``files:<path>`` per file)."""
    out: list[str] = []
    aa, bb = a.aspects(), b.aspects()
    for key in aa:
        if key == "files":
            fa, fb = aa[key], bb[key]
            out += [f"files:{p}" for p in sorted(set(fa) | set(fb)) if fa.get(p) != fb.get(p)]
        elif _canon(aa[key]) != _canon(bb[key]):
            out.append(key)
    return out


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
