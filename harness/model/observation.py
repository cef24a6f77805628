"""What one step produced (``Observation``), as the harness receives it from a backend's
response; the normalisers that remove what varies between runs live in harness/run/normalise.py."""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass, replace
from typing import Any, Protocol


class ProtocolResponse(Protocol):
    """What an observation is made from: one protocol response (``harness.backends.client.Response``
    has this shape; the model does not depend on the transport that produced it)."""

    @property
    def ok(self) -> bool: ...
    @property
    def result(self) -> Any: ...
    @property
    def error(self) -> dict[str, Any]: ...
    @property
    def error_message(self) -> str: ...
    @property
    def error_kind(self) -> str: ...


def _events(obj: dict[str, Any]) -> tuple[Any, ...]:
    events = obj.get("process_events")
    return tuple(events) if isinstance(events, list) else ()


def describe_bytes(data: bytes) -> str:
    """Bytes as an observation shows them: ``sha256:<hex> (<n> bytes)``."""
    return f"sha256:{hashlib.sha256(data).hexdigest()} ({len(data)} bytes)"


def _media(blocks: list[dict[str, Any]]) -> tuple[str, ...]:
    """Each non-text block (an image) as its MIME type and the digest of its decoded bytes."""
    out = []
    for b in blocks:
        if b.get("type", "text") == "text":
            continue
        data = b.get("data")
        try:
            raw = base64.b64decode(data, validate=True) if isinstance(data, str) else b""
        except (binascii.Error, ValueError):
            raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else b""
        out.append(f"{b.get('mimeType', b.get('type'))} {describe_bytes(raw)}")
    return tuple(out)


@dataclass(frozen=True)
class Observation:
    """What one step produced. ``status`` is ``result`` (returned) or ``error`` (raised);
    ``text`` is all text blocks joined with ``\\n`` (results) — ``error_message`` for errors."""

    status: str
    text: str = ""
    is_error: bool | None = None
    content_types: tuple[str, ...] = ()
    details: Any = None
    error_message: str = ""
    error_kind: str = ""
    result: Any = None
    duration_s: float = 0.0
    # process facts sent beside the result or inside the error (protocol ``process_events``)
    process_events: tuple[Any, ...] = ()
    # each image block: its MIME type and the digest of its bytes (``describe_bytes``)
    media: tuple[str, ...] = ()
    # bash: the bytes of the full-output file the details name, read where the implementation
    # runs (``describe_bytes``); set only when the run asked for it (``run_scenario(full_output=)``)
    full_output: str | None = None

    @classmethod
    def from_response(cls, resp: ProtocolResponse, duration_s: float) -> Observation:
        if not resp.ok:
            err = resp.error if isinstance(resp.error, dict) else {}
            return cls("error", error_message=resp.error_message, error_kind=resp.error_kind,
                       duration_s=duration_s, result=resp.error, process_events=_events(err))
        res = resp.result
        if isinstance(res, dict) and isinstance(res.get("content"), list):
            blocks = [b for b in res["content"] if isinstance(b, dict)]
            text = "\n".join(str(b.get("text", "")) for b in blocks if b.get("type", "text") == "text")
            return cls("result", text=text, is_error=bool(res.get("is_error", False)),
                       content_types=tuple(str(b.get("type", "text")) for b in blocks),
                       details=res.get("details"), result=res, duration_s=duration_s,
                       process_events=_events(res), media=_media(blocks))
        # a non-call op: the result object is the details; its ``output`` (or ``text``) string,
        # if any, is the text, so task_output can be matched like a tool result
        text = ""
        if isinstance(res, dict):
            field = res.get("output", res.get("text"))
            text = field if isinstance(field, str) else ""
        return cls("result", text=text, is_error=False, details=res, result=res, duration_s=duration_s)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status, "duration_s": round(self.duration_s, 4)}
        if self.process_events:
            out["process_events"] = list(self.process_events)
        if self.status == "result":
            out.update(text=self.text, is_error=self.is_error, content_types=list(self.content_types),
                       details=self.details)
        else:
            out.update(error=self.error_message, error_kind=self.error_kind)
        if self.media:
            out["media"] = list(self.media)
        if self.full_output is not None:
            out["full_output"] = self.full_output
        return out

    def with_full_output(self, data: bytes | None, kind: str = "file") -> Observation:
        """This observation with the full-output file's bytes, or its kind when it is no file
        (``absent``)."""
        return replace(self, full_output=describe_bytes(data) if data is not None else kind)

    def lookup(self, dotted: str) -> Any:
        """A value by dotted path: ``details.a.b``, ``text``, ``error``, ``result.x``."""
        head, _, rest = dotted.partition(".")
        value: Any = {"details": self.details, "text": self.text, "error": self.error_message,
                      "result": self.result}.get(head)
        for part in rest.split(".") if rest else []:
            if isinstance(value, dict):
                value = value.get(part)
            elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
                value = value[int(part)]
            else:
                return None
        return value
