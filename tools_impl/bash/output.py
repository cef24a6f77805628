"""The bash engine's output accumulator (spec bash.8) and result formatting (spec bash.9).

``OutputAccumulator`` receives raw chunks from stdout and stderr in arrival order and keeps:
streaming UTF-8 decoding (Node's ``TextDecoder``, ``js/text_decoder.py``: non-fatal, a BOM at the
start of a decoder's stream dropped, an incomplete last sequence flushed as U+FFFD; one shared
decoder as in pi, or one per stream: the engine's ``bash.decode`` seam chooses), whole-stream totals (raw bytes, decoded UTF-8 bytes, lines), a
rolling decoded tail, and the lazily opened full-output file that receives every raw chunk once
the output outgrows the engine limits. ``snapshot()`` applies ``limits.truncate_tail`` to the tail;
``format_output`` renders the model text with exactly one truncation notice.

The accumulator does no process I/O; the only side effect is the full-output file, whose opener is
injectable (``open_sink``) so the logic can be tested without touching the temp directory.
"""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import IO, Any

from tools_impl.js.text import format_size, utf8_len, utf8_safe_suffix
from tools_impl.js.text_decoder import TextDecoder
from tools_impl.shared.truncation import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    TruncatedBy,
    TruncationResult,
    truncate_tail,
)

ROLLING_FACTOR = 2  # maxRollingBytes = max(2 * maxBytes, 1)
TOKEN_BYTES = 8  # randomBytes(8) → 16 hex characters in the file name
STREAMS = ("stdout", "stderr")

SinkOpener = Callable[[str], IO[bytes]]


def node_tmpdir(env: Mapping[str, str], platform: str = sys.platform) -> str:
    """Node's ``os.tmpdir()`` computed from ``env`` (the tools' environment, not this process's).

    POSIX: ``TMPDIR`` → ``TMP`` → ``TEMP`` → ``/tmp``; Windows: ``TEMP`` → ``TMP`` →
    ``%SystemRoot%\\temp``. A trailing separator is removed (except for a root).
    """
    if platform == "win32":
        path = env.get("TEMP") or env.get("TMP") or (env.get("SystemRoot") or env.get("windir") or "") + "\\temp"
        if len(path) > 1 and path.endswith("\\") and not path.endswith(":\\"):
            path = path[:-1]
        return path
    path = env.get("TMPDIR") or env.get("TMP") or env.get("TEMP") or "/tmp"
    if len(path) > 1 and path.endswith("/"):
        path = path[:-1]
    return path


def full_output_path(env: Mapping[str, str], prefix: str, platform: str = sys.platform) -> str:
    """``join(os.tmpdir(), `${prefix}-${randomBytes(8).toString("hex")}.log`)`` (spec bash.8)."""
    name = f"{prefix}-{secrets.token_hex(TOKEN_BYTES)}.log"
    directory = node_tmpdir(env, platform)
    sep = "\\" if platform == "win32" else "/"
    return directory + name if directory.endswith(sep) else directory + sep + name


def _open_file_sink(path: str) -> IO[bytes]:
    return open(path, "wb")


@dataclass(frozen=True)
class OutputSnapshot:
    """The state of the output at one moment (pi's truncation result with stream totals).

    Its first fields repeat ``shared.truncation.TruncationResult`` on purpose: pi's bash output
    snapshot is its own flat record (with ``last_line_bytes`` and the full-output path in the
    middle of it), and the engine reads and copies it field by field."""

    content: str
    truncated: bool
    truncated_by: TruncatedBy
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool
    first_line_exceeds_limit: bool
    last_line_bytes: int
    max_lines: int
    max_bytes: int
    full_output_path: str | None

    def truncation_json(self) -> dict[str, Any]:
        """The camel-cased object placed in ``details.truncation`` (pi's ``TruncationResult``)."""
        return TruncationResult(
            self.content, self.truncated, self.truncated_by, self.total_lines, self.total_bytes,
            self.output_lines, self.output_bytes, self.last_line_partial, self.first_line_exceeds_limit,
            self.max_lines, self.max_bytes,
        ).to_json()


@dataclass(frozen=True)
class StreamFacts:
    """Per-stream text for the ``engine.exec-facts`` patch: the last ``max_bytes`` of each stream."""

    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool


@dataclass(frozen=True)
class FormattedOutput:
    """``formatOutput`` result: the text, and ``details`` only when the output was truncated."""

    text: str
    details: dict[str, Any] | None


StreamDecoders = dict[str, TextDecoder]


def shared_decoder() -> StreamDecoders:
    """pi's decoding: one ``TextDecoder`` for stdout and stderr together."""
    one = TextDecoder()
    return dict.fromkeys(STREAMS, one)


def per_stream_decoders() -> StreamDecoders:
    """One ``TextDecoder`` per stream, so a character split by a write on the other stream
    still decodes whole."""
    return {s: TextDecoder() for s in STREAMS}


class _RollingText:
    """A decoded tail kept between ``keep`` and ``2 * keep`` UTF-8 bytes (chunks joined lazily)."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self._parts: list[str] = []
        self.nbytes = 0
        self.cut = False
        self.starts_mid_line = False

    @property
    def text(self) -> str:
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    def append(self, text: str, nbytes: int) -> None:
        self._parts.append(text)
        self.nbytes += nbytes
        if self.nbytes > ROLLING_FACTOR * self.keep:
            data = self.text.encode("utf-8", "surrogatepass")
            kept = utf8_safe_suffix(data, self.keep)
            start = len(data) - len(kept)
            self.starts_mid_line = start > 0 and data[start - 1] != 0x0A
            self._parts = [kept.decode("utf-8", "surrogatepass")]
            self.nbytes = len(kept)
            self.cut = True


class OutputAccumulator:
    """Accumulates one command's output (spec bash.8). Not thread-safe: callers serialise ``push``.

    ``env`` is the tools' environment (``TMPDIR`` decides where the full-output file goes);
    ``prefix`` is the file-name prefix (``Profile.full_output_prefix``); ``decoders`` maps each
    stream to its decoder (default pi's ``shared_decoder()``).
    """

    def __init__(
        self,
        *,
        env: Mapping[str, str] | None = None,
        prefix: str = "pi-bash",
        max_lines: int = DEFAULT_MAX_LINES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        decoders: StreamDecoders | None = None,
        open_sink: SinkOpener = _open_file_sink,
        platform: str = sys.platform,
    ) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self._env = dict(os.environ if env is None else env)
        self._prefix = prefix
        self._platform = platform
        self._open_sink = open_sink
        self._decoders = shared_decoder() if decoders is None else decoders
        self.raw_bytes = 0
        self.decoded_bytes = 0
        self._newlines = 0
        self._open_line_bytes = 0  # bytes after the last "\n" (the currently open line)
        self._tail = _RollingText(max(ROLLING_FACTOR * max_bytes, 1))
        self._per_stream = {s: _RollingText(max(max_bytes, 1)) for s in STREAMS}
        self._pending: list[bytes] | None = []  # raw chunks buffered until the sink opens
        self._sink: IO[bytes] | None = None
        self.full_output_path: str | None = None
        self._finished = False

    # -- feeding ------------------------------------------------------------------------
    @property
    def total_lines(self) -> int:
        """Newline characters plus one if text follows the last newline."""
        return self._newlines + (1 if self._open_line_bytes > 0 else 0)

    def push(self, data: bytes, stream: str = "stdout") -> str:
        """Feed one raw chunk from ``stream``; return the text it decoded to (may be empty)."""
        if not data:
            return ""
        self.raw_bytes += len(data)
        text = self._decoders[stream].decode(data)
        self._add_text(text, stream)
        self._write_raw(data)
        return text

    def finish(self) -> str:
        """Flush the decoders (an incomplete trailing sequence becomes U+FFFD) and close the file."""
        if self._finished:
            return ""
        self._finished = True
        out = []
        seen: set[int] = set()
        for stream in STREAMS:
            dec = self._decoders[stream]
            if id(dec) in seen:
                continue
            seen.add(id(dec))
            text = dec.decode(b"", stream=False)
            if text:
                self._add_text(text, stream)
                out.append(text)
        if self._pending is not None and self._over_limits():
            self._open_full_output()  # the flushed text crossed a limit (pi's finish() does the same)
        self.close()
        return "".join(out)

    def close(self) -> None:
        if self._sink is not None:
            try:
                self._sink.close()
            except OSError:
                pass
            self._sink = None

    def _add_text(self, text: str, stream: str) -> None:
        if not text:
            return
        nbytes = utf8_len(text)
        self.decoded_bytes += nbytes
        last_nl = text.rfind("\n")
        if last_nl < 0:
            self._open_line_bytes += nbytes
        else:
            self._newlines += text.count("\n")
            self._open_line_bytes = utf8_len(text[last_nl + 1:])
        self._tail.append(text, nbytes)
        self._per_stream[stream].append(text, nbytes)

    def _over_limits(self) -> bool:
        return (self.raw_bytes > self.max_bytes or self.decoded_bytes > self.max_bytes
                or self.total_lines > self.max_lines)

    def _write_raw(self, data: bytes) -> None:
        if self._pending is not None:
            self._pending.append(data)
            if self._over_limits():
                self._open_full_output()
            return
        if self._sink is not None:
            try:
                self._sink.write(data)
            except OSError:
                self._sink = None

    def _open_full_output(self) -> None:
        """Name the full-output file and write what was buffered into it."""
        self.full_output_path = full_output_path(self._env, self._prefix, self._platform)
        pending, self._pending = self._pending or [], None
        try:
            self._sink = self._open_sink(self.full_output_path)
            for chunk in pending:
                self._sink.write(chunk)
        except OSError:
            self._sink = None  # the path is still reported, as pi computes it before opening

    # -- reading ------------------------------------------------------------------------
    def tail_text(self) -> str:
        """The rolling tail as shown in snapshots (a partial first line after a cut is left out)."""
        text = self._tail.text
        if self._tail.starts_mid_line:
            nl = text.find("\n")
            if nl >= 0:
                text = text[nl + 1:]
        return text

    def snapshot(self) -> OutputSnapshot:
        tail = truncate_tail(self.tail_text(), self.max_lines, self.max_bytes)
        total_lines = self.total_lines
        truncated = total_lines > self.max_lines or self.decoded_bytes > self.max_bytes
        truncated_by: TruncatedBy = None
        if truncated:
            truncated_by = tail.truncated_by or ("bytes" if self.decoded_bytes > self.max_bytes else "lines")
        return OutputSnapshot(
            content=tail.content,
            truncated=truncated,
            truncated_by=truncated_by,
            total_lines=total_lines,
            total_bytes=self.decoded_bytes,
            output_lines=tail.output_lines,
            output_bytes=tail.output_bytes,
            last_line_partial=tail.last_line_partial,
            first_line_exceeds_limit=tail.first_line_exceeds_limit,
            last_line_bytes=self._open_line_bytes,
            max_lines=self.max_lines,
            max_bytes=self.max_bytes,
            full_output_path=self.full_output_path,
        )

    def stream_facts(self) -> StreamFacts:
        texts: dict[str, tuple[str, bool]] = {}
        for stream in STREAMS:
            r = self._per_stream[stream]
            data = r.text.encode("utf-8", "surrogatepass")
            kept = utf8_safe_suffix(data, self.max_bytes)
            texts[stream] = (kept.decode("utf-8", "surrogatepass"), r.cut or len(kept) < len(data))
        return StreamFacts(texts["stdout"][0], texts["stderr"][0], texts["stdout"][1], texts["stderr"][1])


def truncation_notice(s: OutputSnapshot) -> str:
    """The one notice ``formatOutput`` appends to truncated output (without the leading blank line)."""
    end = s.total_lines
    start = s.total_lines - s.output_lines + 1
    path = s.full_output_path if s.full_output_path is not None else "undefined"
    if s.last_line_partial:
        return (f"[Showing last {format_size(s.output_bytes)} of line {end} "
                f"(line is {format_size(s.last_line_bytes)}). Full output: {path}]")
    if s.truncated_by == "lines":
        return f"[Showing lines {start}-{end} of {s.total_lines}. Full output: {path}]"
    return (f"[Showing lines {start}-{end} of {s.total_lines} ({format_size(s.max_bytes)} limit). "
            f"Full output: {path}]")


def format_output(s: OutputSnapshot, empty_text: str) -> FormattedOutput:
    """pi's ``formatOutput`` (spec bash.9): content or ``empty_text``, plus one notice when truncated."""
    text = s.content or empty_text
    if not s.truncated:
        return FormattedOutput(text, None)
    text += "\n\n" + truncation_notice(s)
    return FormattedOutput(text, {"truncation": s.truncation_json(), "fullOutputPath": s.full_output_path})


def append_status(text: str, status: str) -> str:
    """``text ? text + "\\n\\n" + status : status``."""
    return f"{text}\n\n{status}" if text else status
