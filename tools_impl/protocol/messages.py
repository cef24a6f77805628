"""The JSON-lines tool protocol as types: one dataclass per request op and per result, and the
response envelopes. The reference server parses requests with them and builds its answers from
them; the harness client encodes requests and decodes responses with them. ``protocol.schema.json``
(next to this module) describes the same messages; a test checks real instances against it.

A request line is ``{"id", "op", <fields>}``; a response line is ``{"id", "ok": true, "result"}``
or ``{"id", "ok": false, "error": {"message", "kind", "code"?, "traceback"?}}``. Parsing a request's
fields raises ``ProtocolError`` with the message the server answers (``kind: protocol``).
Standard library only: this module is copied into containers with the rest of ``tools_impl``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from tools_impl.core.errors import ProtocolError

JsonObj = dict[str, Any]
RequestId = int | str | None

PROTOCOL_VERSION = 1
SCHEMA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "protocol.schema.json")

ErrorKind = Literal["tool", "aborted", "validation", "protocol", "internal"]
KIND_TOOL: ErrorKind = "tool"  # the tool raised; the message is what the model sees
KIND_ABORTED: ErrorKind = "aborted"  # cancelled through the abort signal
KIND_VALIDATION: ErrorKind = "validation"  # host-side argument validation
KIND_PROTOCOL: ErrorKind = "protocol"  # a malformed request
KIND_INTERNAL: ErrorKind = "internal"  # a bug in the server
ERROR_KINDS: tuple[ErrorKind, ...] = (KIND_TOOL, KIND_ABORTED, KIND_VALIDATION, KIND_PROTOCOL, KIND_INTERNAL)

DEFAULT_BLOCK_TIMEOUT_MS = 30_000

# A call's process facts (patch ``bash.process-events``, spec bash.16): a list of ``ProcessEvent``
# objects beside ``content``/``details`` of a call result, or inside the ``error`` object of a call
# that raised. Model-invisible; sent only when the observer reported at least one fact.
PROCESS_EVENTS_FIELD = "process_events"
PROCESS_EVENT_KINDS: tuple[str, ...] = ("spawned", "spawn_failed", "timeout", "command_dispatched")
PROCESS_EVENT_ROLES: tuple[str, ...] = ("shell", "guardian_launcher")


def load_schema() -> JsonObj:
    """The protocol's JSON Schema (draft 2020-12)."""
    with open(SCHEMA_PATH, encoding="utf-8") as fh:
        schema: JsonObj = json.load(fh)
    return schema


def _non_empty_string(op: str, fields: Mapping[str, Any], name: str) -> str:
    value = fields.get(name)
    if not isinstance(value, str) or not value:
        raise ProtocolError(f"{op}: field {name!r} must be a non-empty string")
    return value


def _task_id(op: str, fields: Mapping[str, Any]) -> str:
    value = fields.get("task_id")
    if not isinstance(value, str):
        raise ProtocolError(f"{op}: field 'task_id' must be a string")
    return value


def _drop_none(obj: JsonObj) -> JsonObj:
    return {k: v for k, v in obj.items() if v is not None}


# -- requests ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HelloRequest:
    OP: ClassVar[str] = "hello"

    def to_fields(self) -> JsonObj:
        return {}

    @classmethod
    def from_fields(cls, fields: Mapping[str, Any]) -> HelloRequest:
        return cls()


@dataclass(frozen=True)
class WorkspaceRequest:
    """Make ``root`` the workspace: optionally cleared (``clean``) or filled from a base64 tar
    (``archive``), with an environment overlay (``None`` removes a variable) and a profile overlay."""

    OP: ClassVar[str] = "workspace"
    root: str
    env: dict[str, str | None] | None = None
    profile: JsonObj | None = None
    archive: str | None = None
    clean: bool = False

    def to_fields(self) -> JsonObj:
        out: JsonObj = _drop_none({"root": self.root, "env": self.env, "profile": self.profile,
                                   "archive": self.archive})
        if self.clean:
            out["clean"] = True
        return out

    @classmethod
    def from_fields(cls, fields: Mapping[str, Any]) -> WorkspaceRequest:
        root = _non_empty_string(cls.OP, fields, "root")
        env = fields.get("env")
        if env is not None and (not isinstance(env, dict)
                                or not all(isinstance(v, (str, type(None))) for v in env.values())):
            raise ProtocolError("workspace: field 'env' must be an object of string (or null) values")
        profile = fields.get("profile")
        if profile is not None and not isinstance(profile, dict):
            raise ProtocolError("workspace: field 'profile' must be an object")
        archive = fields.get("archive")
        if archive is not None and not isinstance(archive, str):
            raise ProtocolError("workspace: field 'archive' must be a base64 string")
        return cls(root, env, profile, archive, bool(fields.get("clean")))


@dataclass(frozen=True)
class CallRequest:
    """Call ``tool`` with ``args`` (any JSON value: the tool's host validation judges it)."""

    OP: ClassVar[str] = "call"
    tool: str
    args: Any = field(default_factory=dict)
    call_id: str | None = None

    def to_fields(self) -> JsonObj:
        return _drop_none({"tool": self.tool, "args": self.args, "call_id": self.call_id})

    @classmethod
    def from_fields(cls, fields: Mapping[str, Any]) -> CallRequest:
        tool = fields.get("tool")
        if not isinstance(tool, str):
            raise ProtocolError("call: field 'tool' must be a string")
        call_id = fields.get("call_id")
        # "args": null is no arguments, as for the pi driver (``req.args ?? {}``)
        args = fields.get("args")
        return cls(tool, {} if args is None else args, str(call_id) if call_id else None)


@dataclass(frozen=True)
class CancelRequest:
    """Set the abort signal of the in-flight call whose request id is ``target``."""

    OP: ClassVar[str] = "cancel"
    target: RequestId

    def to_fields(self) -> JsonObj:
        return {"target": self.target}

    @classmethod
    def from_fields(cls, fields: Mapping[str, Any]) -> CancelRequest:
        return cls(fields.get("target"))


@dataclass(frozen=True)
class TaskOutputRequest:
    """A background task's output from offset ``since``; with ``block``, wait up to ``timeout_ms``
    for the task to finish first."""

    OP: ClassVar[str] = "task_output"
    task_id: str
    block: bool = False
    timeout_ms: float = DEFAULT_BLOCK_TIMEOUT_MS
    since: int = 0

    def to_fields(self) -> JsonObj:
        return {"task_id": self.task_id, "block": self.block, "timeout_ms": self.timeout_ms, "since": self.since}

    @classmethod
    def from_fields(cls, fields: Mapping[str, Any]) -> TaskOutputRequest:
        task_id = _task_id(cls.OP, fields)
        block = fields.get("block", False)
        if not isinstance(block, bool):
            raise ProtocolError("task_output: field 'block' must be a boolean")
        timeout_ms = fields.get("timeout_ms", DEFAULT_BLOCK_TIMEOUT_MS)
        if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, (int, float)) or timeout_ms < 0:
            raise ProtocolError("task_output: field 'timeout_ms' must be a non-negative number")
        since = fields.get("since", 0)
        if isinstance(since, bool) or not isinstance(since, int) or since < 0:
            raise ProtocolError("task_output: field 'since' must be a non-negative integer")
        return cls(task_id, block, timeout_ms, since)


@dataclass(frozen=True)
class TaskStopRequest:
    OP: ClassVar[str] = "task_stop"
    task_id: str

    def to_fields(self) -> JsonObj:
        return {"task_id": self.task_id}

    @classmethod
    def from_fields(cls, fields: Mapping[str, Any]) -> TaskStopRequest:
        return cls(_task_id(cls.OP, fields))


@dataclass(frozen=True)
class TaskQueryRequest:
    """One task's state, or every task's without ``task_id``."""

    OP: ClassVar[str] = "task_query"
    task_id: str | None = None

    def to_fields(self) -> JsonObj:
        return _drop_none({"task_id": self.task_id})

    @classmethod
    def from_fields(cls, fields: Mapping[str, Any]) -> TaskQueryRequest:
        return cls(None if fields.get("task_id") is None else _task_id(cls.OP, fields))


@dataclass(frozen=True)
class ClassifyRequest:
    """Classify a bash command under the Claude Code permission profile (spec classify.*)."""

    OP: ClassVar[str] = "classify"
    command: str
    rules: list[str] = field(default_factory=list)
    options: JsonObj = field(default_factory=dict)

    def to_fields(self) -> JsonObj:
        return {"command": self.command, "rules": list(self.rules), "options": dict(self.options)}

    @classmethod
    def from_fields(cls, fields: Mapping[str, Any]) -> ClassifyRequest:
        command = fields.get("command")
        if not isinstance(command, str):
            raise ProtocolError("classify: field 'command' must be a string")
        rules = fields.get("rules", [])
        if not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
            raise ProtocolError("classify: field 'rules' must be a list of strings")
        options = fields.get("options", {})
        if not isinstance(options, dict):
            raise ProtocolError("classify: field 'options' must be an object")
        return cls(command, rules, options)


@dataclass(frozen=True)
class FsReadRequest:
    """The states of ``paths`` (relative to the workspace root), after every earlier call."""

    OP: ClassVar[str] = "fs_read"
    paths: list[str]

    def to_fields(self) -> JsonObj:
        return {"paths": list(self.paths)}

    @classmethod
    def from_fields(cls, fields: Mapping[str, Any]) -> FsReadRequest:
        paths = fields.get("paths")
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            raise ProtocolError("fs_read: field 'paths' must be a list of strings")
        return cls(paths)


@dataclass(frozen=True)
class DropRequest:
    """Stop the workspace's background tasks and remove ``root``."""

    OP: ClassVar[str] = "drop"
    root: str

    def to_fields(self) -> JsonObj:
        return {"root": self.root}

    @classmethod
    def from_fields(cls, fields: Mapping[str, Any]) -> DropRequest:
        return cls(_non_empty_string(cls.OP, fields, "root"))


@dataclass(frozen=True)
class ShutdownRequest:
    OP: ClassVar[str] = "shutdown"

    def to_fields(self) -> JsonObj:
        return {}

    @classmethod
    def from_fields(cls, fields: Mapping[str, Any]) -> ShutdownRequest:
        return cls()


RequestMessage = (HelloRequest | WorkspaceRequest | CallRequest | CancelRequest | TaskOutputRequest
                  | TaskStopRequest | TaskQueryRequest | ClassifyRequest | FsReadRequest | DropRequest
                  | ShutdownRequest)
REQUEST_TYPES: tuple[type[RequestMessage], ...] = (
    HelloRequest, WorkspaceRequest, CallRequest, CancelRequest, TaskOutputRequest, TaskStopRequest,
    TaskQueryRequest, ClassifyRequest, FsReadRequest, DropRequest, ShutdownRequest,
)
REQUESTS_BY_OP: dict[str, type[RequestMessage]] = {t.OP: t for t in REQUEST_TYPES}
OPS: tuple[str, ...] = tuple(REQUESTS_BY_OP)


def encode_request(rid: RequestId, op: str, fields: Mapping[str, Any]) -> JsonObj:
    """The wire object of one request (``id`` and ``op`` first)."""
    return {"id": rid, "op": op, **fields}


def request_object(rid: RequestId, message: RequestMessage) -> JsonObj:
    return encode_request(rid, message.OP, message.to_fields())


def parse_request_line(line: str) -> tuple[RequestId, str | None, JsonObj]:
    """Split one request line into ``(id, op, object)``; ``ProtocolError`` (id unknown) for a line
    that is not a JSON object. ``op`` is ``None`` when missing or not a string."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ProtocolError(f"request is not valid JSON: {exc.msg} at column {exc.colno}") from exc
    if not isinstance(obj, dict):
        raise ProtocolError("request must be a JSON object")
    op = obj.get("op")
    return obj.get("id"), op if isinstance(op, str) else None, obj


def unknown_op_message(op: object, known: tuple[str, ...] | list[str]) -> str:
    what = "missing field 'op'" if op is None else f"unknown op {op!r}"
    return f"{what}; expected one of: {', '.join(known)}"


# -- results ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HelloResult:
    """Who answers: protocol version, implementation identity, surface, tools, ops, patches on,
    every patch toggle it knows, the dialects and features it declares, the toggles it does not
    have, and the host's capabilities."""

    protocol: int
    implementation: str
    version: str
    surface: str
    surfaces: list[str]
    tools: list[str]
    ops: list[str]
    patches: list[str]
    all_patches: list[str]
    capabilities: JsonObj
    dialects: list[str]
    features: list[str]
    absent_patches: list[str]

    def to_json(self) -> JsonObj:
        return {"protocol": self.protocol, "implementation": self.implementation, "version": self.version,
                "surface": self.surface, "surfaces": list(self.surfaces), "tools": list(self.tools),
                "ops": list(self.ops), "patches": list(self.patches), "all_patches": list(self.all_patches),
                "dialects": list(self.dialects), "features": list(self.features),
                "absent_patches": list(self.absent_patches), "capabilities": dict(self.capabilities)}


@dataclass(frozen=True)
class WorkspaceResult:
    root: str
    members: int
    patches: list[str]
    wrapper: bool

    def to_json(self) -> JsonObj:
        return {"root": self.root, "members": self.members, "patches": list(self.patches), "wrapper": self.wrapper}


@dataclass(frozen=True)
class CancelResult:
    cancelled: bool

    def to_json(self) -> JsonObj:
        return {"cancelled": self.cancelled}


@dataclass(frozen=True)
class TaskErrorInfo:
    message: str
    code: str

    def to_json(self) -> JsonObj:
        return {"message": self.message, "code": self.code}


@dataclass(frozen=True)
class TaskOutputResult:
    """``exit_code`` is sent only once the command exited (``exited``); ``error`` and ``text`` only
    once the task is done; ``skipped`` only when characters before ``since`` were dropped."""

    task_id: str
    status: str
    output: str
    since: int
    next_since: int
    done: bool
    exited: bool = False
    exit_code: int | None = None
    error: TaskErrorInfo | None = None
    text: str | None = None
    skipped: int = 0

    def to_json(self) -> JsonObj:
        out: JsonObj = {"task_id": self.task_id, "status": self.status, "output": self.output,
                        "since": self.since, "next_since": self.next_since, "done": self.done}
        if self.skipped:
            out["skipped"] = self.skipped
        if self.done:
            if self.exited:
                out["exit_code"] = self.exit_code
            if self.error is not None:
                out["error"] = self.error.to_json()
            out["text"] = self.text
        return out


@dataclass(frozen=True)
class TaskState:
    """One background task as ``task_query`` shows it (``task_stop`` adds ``stopped``)."""

    task_id: str
    kind: str
    status: str
    description: str
    command: str
    metadata: JsonObj
    pid: int | None
    created_at: float
    started_at: float | None
    ended_at: float | None
    exit_code: int | None
    error: TaskErrorInfo | None
    output_chars: int
    done: bool
    stopped: bool | None = None  # set in a task_stop answer: false when it had already finished

    def to_json(self) -> JsonObj:
        out: JsonObj = {
            "task_id": self.task_id, "kind": self.kind, "status": self.status,
            "description": self.description, "command": self.command, "metadata": dict(self.metadata),
            "pid": self.pid, "created_at": self.created_at, "started_at": self.started_at,
            "ended_at": self.ended_at, "exit_code": self.exit_code,
            "error": self.error.to_json() if self.error else None,
            "output_chars": self.output_chars, "done": self.done,
        }
        if self.stopped is not None:
            out["stopped"] = self.stopped
        return out


@dataclass(frozen=True)
class TaskList:
    tasks: list[TaskState]

    def to_json(self) -> JsonObj:
        return {"tasks": [t.to_json() for t in self.tasks]}


@dataclass(frozen=True)
class ClassifyResult:
    """The classifier's verdict object (see ``classify.claude_code.classify``)."""

    verdict: JsonObj

    def to_json(self) -> JsonObj:
        return dict(self.verdict)


@dataclass(frozen=True)
class PathState:
    """One path for ``fs_read``: ``kind`` (file, dir, symlink, fifo, other, absent), permission
    bits, base64 ``data`` of a regular file (or the ``error`` reading it), a symlink's ``target``."""

    kind: str
    mode: int | None = None
    data: str | None = None
    target: str | None = None
    error: str | None = None

    def to_json(self) -> JsonObj:
        return _drop_none({"kind": self.kind, "mode": self.mode, "target": self.target, "data": self.data,
                           "error": self.error})


@dataclass(frozen=True)
class FsReadResult:
    files: dict[str, PathState]

    def to_json(self) -> JsonObj:
        return {"files": {p: s.to_json() for p, s in self.files.items()}}


@dataclass(frozen=True)
class DropResult:
    dropped: str

    def to_json(self) -> JsonObj:
        return {"dropped": self.dropped}


@dataclass(frozen=True)
class ShutdownResult:
    bye: bool = True

    def to_json(self) -> JsonObj:
        return {"bye": self.bye}


@dataclass(frozen=True)
class ProcessEvent:
    """One process fact (spec bash.16): ``event`` (``PROCESS_EVENT_KINDS``), ``role``
    (``PROCESS_EVENT_ROLES``) and the facts that go with it — ``pid`` (spawned, command_dispatched,
    timeout), ``transport`` (command_dispatched: ``argv``, ``stdin`` or ``env``), ``timeout_s``
    (timeout), ``error`` (spawn_failed)."""

    event: str
    role: str
    facts: JsonObj = field(default_factory=dict)

    def to_json(self) -> JsonObj:
        return {"event": self.event, "role": self.role, **self.facts}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> ProcessEvent:
        return cls(str(obj.get("event", "")), str(obj.get("role", "")),
                   {k: v for k, v in obj.items() if k not in ("event", "role")})


# -- responses ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ErrorInfo:
    message: str
    kind: str  # one of ERROR_KINDS from this server; a foreign implementation may send others
    code: str | None = None
    traceback: str | None = None
    extra: JsonObj = field(default_factory=dict)  # other members a foreign implementation sent

    def to_json(self) -> JsonObj:
        return {**self.extra, **_drop_none({"message": self.message, "kind": self.kind, "code": self.code,
                                            "traceback": self.traceback})}


@dataclass(frozen=True)
class OkResponse:
    id: RequestId
    result: Any

    ok: ClassVar[bool] = True

    def to_json(self) -> JsonObj:
        return {"id": self.id, "ok": True, "result": self.result}


@dataclass(frozen=True)
class ErrorResponse:
    id: RequestId
    error: ErrorInfo

    ok: ClassVar[bool] = False

    def to_json(self) -> JsonObj:
        return {"id": self.id, "ok": False, "error": self.error.to_json()}


ResponseMessage = OkResponse | ErrorResponse


def parse_response(obj: Any) -> ResponseMessage:
    """A decoded response line as an envelope. Lenient the way clients must be with foreign
    implementations: ``ok`` is read as a truth value and a missing or malformed ``error`` object
    becomes an empty message of kind ``tool``; only a non-object or a missing ``ok`` is refused
    (``ProtocolError``). Strict checking is the schema's job (``toolproof selfcheck``)."""
    if not isinstance(obj, dict) or "ok" not in obj:
        raise ProtocolError("a response must be a JSON object with an 'ok' field")
    rid = obj.get("id")
    if obj["ok"]:
        return OkResponse(rid, obj.get("result"))
    raw = obj.get("error")
    err: JsonObj = raw if isinstance(raw, dict) else {}
    code, tb = err.get("code"), err.get("traceback")
    extra = {k: v for k, v in err.items() if k not in ("message", "kind", "code", "traceback")}
    return ErrorResponse(rid, ErrorInfo(str(err.get("message", "")), str(err.get("kind", KIND_TOOL)),
                                        code if isinstance(code, str) else None,
                                        tb if isinstance(tb, str) else None, extra))
