"""Client side of the JSON-lines tool protocol: send a request, wait for the response with the
same ``id`` under a host deadline. Transport-agnostic: it talks to any pair of binary streams (a
local subprocess, ``docker exec -i``, a socket). Requests and responses are encoded and decoded
with the protocol's message types (``tools_impl.protocol.messages``), shared with the reference
server; ``send_message`` takes a typed request, ``send`` an op name and its fields.

Contract: ``request`` returns a ``Response`` or raises ``InfrastructureError`` when the deadline
passes, the stream ends, or a line is not a protocol response. It never returns a partial object.
"""

from __future__ import annotations

import itertools
import json
import queue
import threading
from dataclasses import dataclass, field
from typing import IO, Any

from harness.errors import DeadlineExceeded, InfrastructureError
from tools_impl.core.errors import ProtocolError
from tools_impl.protocol import messages

JsonObj = dict[str, Any]
STDERR_TAIL_BYTES = 8192


@dataclass(frozen=True)
class Response:
    """One protocol response: ``ok`` with ``result``, or not ``ok`` with ``error``."""

    id: Any
    ok: bool
    result: Any = None
    error: JsonObj = field(default_factory=dict)

    @property
    def error_message(self) -> str:
        return str(self.error.get("message", ""))

    @property
    def error_kind(self) -> str:
        return str(self.error.get("kind", messages.KIND_TOOL))

    @classmethod
    def from_message(cls, message: messages.ResponseMessage) -> Response:
        if isinstance(message, messages.OkResponse):
            return cls(message.id, True, message.result)
        return cls(message.id, False, error=message.error.to_json())


class ProtocolClient:
    """Matches responses to requests by ``id`` over a pair of byte streams.

    A reader thread parses lines from ``stdout``; unsolicited or unparsable lines are kept in
    ``noise`` for diagnostics. ``stderr`` (optional) is drained into a bounded tail.
    """

    def __init__(self, stdin: IO[bytes], stdout: IO[bytes], stderr: IO[bytes] | None = None) -> None:
        self._stdin = stdin
        self._ids = itertools.count(1)
        self._waiting: dict[Any, queue.Queue[Response | None]] = {}
        self._lock = threading.Lock()
        self._closed = False
        self.noise: list[str] = []
        self._stderr_tail = bytearray()
        self._reader = threading.Thread(target=self._read_loop, args=(stdout,), daemon=True)
        self._reader.start()
        if stderr is not None:
            threading.Thread(target=self._drain, args=(stderr,), daemon=True).start()

    @property
    def stderr_tail(self) -> str:
        return self._stderr_tail.decode("utf-8", "replace")

    @property
    def closed(self) -> bool:
        return self._closed

    def _drain(self, stream: IO[bytes]) -> None:
        for chunk in iter(lambda: stream.read1(4096) if hasattr(stream, "read1") else stream.read(4096), b""):
            self._stderr_tail.extend(chunk)
            if len(self._stderr_tail) > STDERR_TAIL_BYTES:
                del self._stderr_tail[: len(self._stderr_tail) - STDERR_TAIL_BYTES]

    def _read_loop(self, stdout: IO[bytes]) -> None:
        try:
            for raw in stdout:
                line = raw.decode("utf-8", "surrogateescape").strip()
                if not line:
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError:
                    self.noise.append(line[:500])
                    continue
                try:
                    resp = Response.from_message(messages.parse_response(obj))
                except ProtocolError:
                    self.noise.append(line[:500])
                    continue
                with self._lock:
                    waiter = self._waiting.pop(resp.id, None)
                if waiter is not None:
                    waiter.put(resp)
                else:
                    self.noise.append(line[:500])
        except (OSError, ValueError):
            pass
        finally:
            self._closed = True
            with self._lock:
                waiters = list(self._waiting.values())
                self._waiting.clear()
            for w in waiters:
                w.put(None)

    def send(self, op: str, fields: JsonObj | None = None) -> tuple[Any, queue.Queue[Response | None]]:
        """Send a request without waiting; returns its id and the queue its response will arrive on."""
        rid = next(self._ids)
        box: queue.Queue[Response | None] = queue.Queue(maxsize=1)
        with self._lock:
            if self._closed:
                raise InfrastructureError(self._dead_message(op))
            self._waiting[rid] = box
        payload = messages.encode_request(rid, op, fields or {})
        try:
            self._stdin.write((json.dumps(payload, ensure_ascii=False) + "\n").encode("utf-8", "surrogateescape"))
            self._stdin.flush()
        except (OSError, ValueError) as exc:
            with self._lock:
                self._waiting.pop(rid, None)
            raise InfrastructureError(f"{self._dead_message(op)} ({exc})") from exc
        return rid, box

    def send_message(self, message: messages.RequestMessage) -> tuple[Any, queue.Queue[Response | None]]:
        """``send`` of a typed request."""
        return self.send(message.OP, message.to_fields())

    def wait(self, op: str, rid: Any, box: queue.Queue[Response | None], deadline_s: float) -> Response:
        try:
            resp = box.get(timeout=deadline_s)
        except queue.Empty:
            with self._lock:
                self._waiting.pop(rid, None)
            raise DeadlineExceeded(
                f"implementation did not answer {op!r} within the host deadline of {deadline_s:g} s", op, deadline_s
            ) from None
        if resp is None:
            raise InfrastructureError(self._dead_message(op))
        return resp

    def request(self, op: str, fields: JsonObj | None = None, *, deadline_s: float = 60.0) -> Response:
        rid, box = self.send(op, fields)
        return self.wait(op, rid, box, deadline_s)

    def _dead_message(self, op: str) -> str:
        tail = self.stderr_tail.strip().splitlines()[-5:]
        extra = ("; its stderr ends with: " + " | ".join(tail)) if tail else ""
        return f"implementation exited or closed its output while handling {op!r}{extra}"

    def close(self) -> None:
        try:
            self._stdin.close()
        except OSError:
            pass
