"""The bash engine, pi's (spec bash.4–9): spawn the shell in its own session and process group,
read stdout and stderr concurrently into the output accumulator, enforce the timeout and the
abort signal with the kill sequence, decide completion, and turn the outcome into a result or an
error. No patch is woven in: where a MiniMax patch changes what pi does, the engine asks a named
seam (``core/patches.py``), whose default is pi's behaviour; the patches that register there are
in ``bash/patches.py``.

Seams (each ``Seam.of(profile)``; default = pi v0.79.1):
- ``bash.shell`` (``shell.py``) which shell runs the command (spec bash.4);
- ``bash.transport`` how the command reaches it: ``(shell, *args, command)`` (spec bash.14);
- ``bash.spawn`` what is spawned and what must happen before the command may start — pi spawns
  the shell itself (spec bash.15);
- ``bash.decode`` the UTF-8 decoders of the two streams — one shared (spec bash.8);
- ``bash.kill`` how a timed-out or aborted run's tree is ended — SIGKILL now (spec bash.6);
- ``bash.taskkill`` which ``taskkill`` that uses on Windows, and what a failed spawn of it does —
  a bare ``taskkill``, nothing;
- ``bash.observe`` who receives the call's process facts — nobody (spec bash.16);
- ``bash.exec-facts`` what a success adds to ``details`` — nothing (spec bash.9);
- ``bash.cwd-missing`` the missing-cwd message (spec bash.5).

Contract of ``run_command``:
- returns ``EngineResult(text, details)`` on a normal exit with code 0 or ``None`` (killed by a
  signal without timeout/abort); ``details`` is ``{truncation, fullOutputPath}`` only when the
  output was truncated, plus what the ``bash.exec-facts`` seam adds;
- raises ``ToolAborted`` (message ends with ``Command aborted``) when ``abort`` was set;
- raises ``ToolError`` ``… Command timed out after N seconds`` on timeout and
  ``… Command exited with code N`` on a non-zero exit;
- re-raises the spawn-hook error, the shell-selection error, the missing-cwd error and spawn
  failures (``spawn <shell> ENOENT``) unchanged; collected output is then discarded.

Process handling: the kill sequence (seam ``bash.kill``; patch ``bash.graceful-kill`` makes it
SIGTERM to the group, SIGKILL after ``Profile.bash_term_grace_ms`` unless the group is gone) runs
on a timer independent of the call, so a TERM-ignoring descendant is killed even after the shell
exited and the call returned. The call completes when the shell has exited and both pipes reached EOF, or
``Profile.bash_exit_stdio_grace_ms`` after the exit; then what is already waiting in the pipes is
taken (bounded), the pipes are closed, and descendants that still hold them are neither waited
for nor killed. Every spawned group is tracked until its
call (and any pending escalation) is over; ``PROCESSES.kill_all`` — also registered with ``atexit``
— SIGKILLs the tracked groups (emergency cleanup at server shutdown).

Windows branches (taskkill, thread-based pipe reading) are present but only their pure parts are
tested here.
"""

from __future__ import annotations

import atexit
import contextlib
import math
import os
import queue
import select
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

from tools_impl.bash.env_sanitize import sanitize_bash_subprocess_env
from tools_impl.bash.output import (
    OutputAccumulator,
    StreamDecoders,
    append_status,
    format_output,
    shared_decoder,
)
from tools_impl.bash.shell import ShellConfig, engine_bin_dir, get_shell_config, prepend_engine_bin
from tools_impl.core.errors import ToolAborted, ToolError
from tools_impl.core.patches import SURFACE_ENGINE, Seam
from tools_impl.core.profile import Profile
from tools_impl.js.node_errors import error_code
from tools_impl.js.text import js_number

READ_CHUNK_BYTES = 64 * 1024
POLL_INTERVAL_S = 0.02  # how often the read loop re-checks the abort signal and the exit status
# When the exit grace ends with a pipe still open, output that had already arrived is still taken
# (Node reads pipes eagerly, so it has it by then; a starved reader thread here might not), bounded
# so that a grandchild that keeps writing cannot hold the call.
FINAL_DRAIN_MAX_BYTES = 1024 * 1024
MAX_TIMER_DELAY_MS = 2_147_483_647  # Node's setTimeout limit; larger delays fire after 1 ms
OVERFLOW_TIMER_DELAY_MS = 1

CWD_MISSING_TEMPLATE = "Working directory does not exist: {cwd}\nCannot execute bash commands."
STATUS_ABORTED = "Command aborted"
STATUS_TIMEOUT = "Command timed out after {seconds} seconds"
STATUS_EXIT = "Command exited with code {code}"
EMPTY_OUTPUT = "(no output)"

# spec bash.16 process facts and the roles they name: "shell" when the shell is spawned directly,
# "guardian_launcher" when the parent-death guardian's launcher is (spec bash.15).
EVENT_SPAWNED = "spawned"
EVENT_SPAWN_FAILED = "spawn_failed"
EVENT_TIMEOUT = "timeout"
EVENT_COMMAND_DISPATCHED = "command_dispatched"
ROLE_SHELL = "shell"
ROLE_GUARDIAN_LAUNCHER = "guardian_launcher"


@dataclass(frozen=True)
class SpawnInputs:
    """What the spawn hook may rewrite (pi's ``spawnHook({command, cwd, env})``)."""

    command: str
    cwd: str
    env: dict[str, str]


SpawnHook = Callable[[SpawnInputs], SpawnInputs]
# The optional process observer (spec bash.16; seam ``bash.observe``): receives one fact per call
# as a JSON-ready mapping ``{"event", "role", ...}``.
ProcessObserver = Callable[[dict[str, Any]], None]
DataCallback = Callable[[str], None]
UpdateCallback = Callable[["EngineResult"], None]


@dataclass(frozen=True)
class Invocation:
    """What the engine spawns: the full argv, text for the child's stdin (None = no stdin pipe)
    and variables to add to the child's environment."""

    argv: tuple[str, ...]
    stdin_text: str | None = None
    env_additions: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class EngineResult:
    """A successful engine run: the model text and the optional details."""

    text: str
    details: dict[str, Any] | None
    exit_code: int | None = 0


class CommandExitError(ToolError):
    """``… Command exited with code N``; ``exit_code`` carries N for the task layer."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass
class _RunState:
    timed_out: bool = False
    kill_started: bool = False
    exit_code: int | None = None
    exited: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


# -- tracking and emergency cleanup ---------------------------------------------------------

SPAWN_SETTLE_TIMEOUT_S = 2.0


class ProcessRegistry:
    """The process groups of running commands, for the emergency cleanup: a command's group is
    tracked from its spawn until its call (and any pending kill escalation) is over. One registry
    per process (``PROCESSES``), because the cleanup is the process's ``atexit`` hook."""

    def __init__(self) -> None:
        self._pids: set[int] = set()
        self._cond = threading.Condition(threading.Lock())
        self._spawning = 0  # spawns between Popen and tracking; cleanup waits for them
        self._closed = False  # set by the exit-time cleanup: later spawns are killed at once

    def track(self, pid: int) -> None:
        with self._cond:
            self._pids.add(pid)

    def untrack(self, pid: int) -> None:
        with self._cond:
            self._pids.discard(pid)

    def pids(self) -> frozenset[int]:
        with self._cond:
            return frozenset(self._pids)

    def begin_spawn(self) -> None:
        with self._cond:
            if self._closed:
                raise ToolAborted(STATUS_ABORTED)
            self._spawning += 1

    def end_spawn(self, pid: int | None) -> bool:
        """Register a spawned pid; False (and the group SIGKILLed) when cleanup already ran."""
        with self._cond:
            self._spawning -= 1
            self._cond.notify_all()
            if pid is None:
                return True
            if not self._closed:
                self._pids.add(pid)
                return True
        kill_tree_now(pid)
        return False

    def kill_all(self, *, final: bool = False) -> None:
        """SIGKILL every tracked process group at once (emergency cleanup; no grace period).

        Spawns in progress are waited for (bounded), so a command whose process exists but is not
        yet registered is not missed. ``final`` (the ``atexit`` run) also kills any later spawn at once.
        """
        with self._cond:
            if final:
                self._closed = True
            self._cond.wait_for(lambda: self._spawning == 0, SPAWN_SETTLE_TIMEOUT_S)
            pids = list(self._pids)
            self._pids.clear()
        for pid in pids:
            kill_tree_now(pid)

    def close_at_exit(self) -> None:
        self.kill_all(final=True)


PROCESSES = ProcessRegistry()
atexit.register(PROCESSES.close_at_exit)


# -- pure helpers ---------------------------------------------------------------------------

def notify(observer: ProcessObserver | None, event: str, role: str = ROLE_SHELL, **facts: Any) -> None:
    """Report one process fact; whatever the observer raises is swallowed (spec bash.16: observer
    failures never affect the command)."""
    if observer is None:
        return
    try:
        observer({"event": event, "role": role, **facts})
    except Exception:  # an observer must not be able to break a command
        pass


def timer_delay_ms(timeout_s: float) -> float:
    """``timeout * 1000`` with Node's overflow rule (a delay above 2^31-1 ms fires after 1 ms)."""
    delay = timeout_s * 1000
    return OVERFLOW_TIMER_DELAY_MS if delay > MAX_TIMER_DELAY_MS else delay


def timeout_armed(timeout: float | None) -> bool:
    """The engine timer is armed only when ``timeout`` is defined and ``> 0``."""
    return timeout is not None and not math.isnan(timeout) and timeout > 0


def cwd_missing_message(cwd: str, profile: Profile) -> str:
    return CWD_MISSING.of(profile).format(cwd=cwd)


def spawn_error_message(argv0: str, exc: OSError) -> str:
    """Node's ``spawn <file> <CODE>``."""
    return f"spawn {argv0} {error_code(exc) or 'UNKNOWN'}"


def taskkill_argv(pid: int, *, force: bool, exe: str = "taskkill") -> list[str]:
    """``taskkill [/F] /T /PID <pid>``."""
    return [exe, *(["/F"] if force else []), "/T", "/PID", str(pid)]


def system_taskkill(env: Mapping[str, str]) -> str:
    """``<SystemRoot or windir>\\System32\\taskkill.exe``, or a bare ``taskkill`` when neither is set."""
    root = env.get("SystemRoot") or env.get("SYSTEMROOT") or env.get("windir") or env.get("WINDIR")
    return root.rstrip("\\/") + "\\System32\\taskkill.exe" if root else "taskkill"


def standin_path(exe: str, root: str) -> str:
    """Where a POSIX host finds the stand-in for the Windows executable ``exe`` (profile
    ``taskkill_standin_root``): a Windows path maps under ``root`` with the drive's colon dropped
    (``C:\\Windows\\System32\\taskkill.exe`` → ``<root>/C/Windows/System32/taskkill.exe``); a bare
    name is left to the PATH lookup."""
    if "\\" not in exe and "/" not in exe:
        return exe
    parts = [p for p in exe.replace("\\", "/").split("/") if p]
    if parts and len(parts[0]) == 2 and parts[0][1] == ":":
        parts[0] = parts[0][0]
    return os.path.join(root, *parts)


def _taskkill_standin(profile: Profile) -> bool:
    """The Windows taskkill kill path on a POSIX host, with stand-ins (spec patch.bash.win-taskkill)."""
    return bool(profile.taskkill_standin_root) and sys.platform != "win32"


def kills_with_taskkill(profile: Profile) -> bool:
    """Whether a run's tree is ended through ``taskkill`` (Windows, or its POSIX stand-in)."""
    return sys.platform == "win32" or _taskkill_standin(profile)


def exit_code_of(returncode: int | None) -> int | None:
    """Python's negative return code (killed by a signal) is Node's ``null`` exit code."""
    if returncode is None or returncode < 0:
        return None
    return returncode


# -- killing --------------------------------------------------------------------------------

def signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except OSError:
        with contextlib.suppress(OSError):
            os.kill(pid, sig)


def group_exists(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # EPERM: something with that pgid exists
    return True


def kill_tree_now(pid: int) -> None:
    """SIGKILL the group (on Windows ``taskkill /F /T`` from System32): the emergency cleanup."""
    if sys.platform == "win32":
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(taskkill_argv(pid, force=True, exe=system_taskkill(os.environ)),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        return
    signal_group(pid, signal.SIGKILL)


@dataclass(frozen=True)
class TaskkillPolicy:
    """Which ``taskkill`` ends a tree on Windows (``executable(env)``), and what happens when it
    cannot be spawned (``on_spawn_failure(pid, force)``)."""

    executable: Callable[[Mapping[str, str]], str]
    on_spawn_failure: Callable[[int, bool], None]


def _bare_taskkill(_env: Mapping[str, str]) -> str:
    return "taskkill"


def _give_up(_pid: int, _force: bool) -> None:
    return None


PI_TASKKILL = TaskkillPolicy(_bare_taskkill, _give_up)


def terminate_with_taskkill(pid: int, force: bool, env: Mapping[str, str], profile: Profile) -> None:
    """``taskkill [/F] /T /PID <pid>`` (seam ``bash.taskkill`` picks the executable)."""
    policy = TASKKILL.of(profile)
    argv = taskkill_argv(pid, force=force, exe=policy.executable(env))
    if _taskkill_standin(profile):
        argv[0] = standin_path(argv[0], str(profile.taskkill_standin_root))
    if not os.path.isabs(argv[0]):
        # a bare name is looked up on the tools' PATH (the host's process environment), as a
        # spawn of "taskkill" would; not found → the spawn fails
        path = next((v for k, v in env.items() if k.lower() == "path"), None)
        found = shutil.which(argv[0], path=path)
        argv[0] = found if found is not None else argv[0]
    try:
        if not os.path.isabs(argv[0]):
            raise FileNotFoundError(argv[0])
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.SubprocessError):
        policy.on_spawn_failure(pid, force)


class KillSequence(Protocol):
    def __call__(self, pid: int, profile: Profile, env: Mapping[str, str]) -> threading.Timer | None: ...


def kill_at_once(pid: int, profile: Profile, env: Mapping[str, str]) -> threading.Timer | None:
    """pi's kill sequence: SIGKILL to the group (on Windows ``taskkill /F /T``); no escalation."""
    if kills_with_taskkill(profile):
        terminate_with_taskkill(pid, True, env, profile)
    else:
        signal_group(pid, signal.SIGKILL)
    return None


def start_kill_sequence(pid: int, profile: Profile, env: Mapping[str, str]) -> threading.Timer | None:
    """Begin terminating the process tree of ``pid`` (spec bash.6; seam ``bash.kill``). Returns
    the escalation timer when one is pending; the group stays tracked until it has run."""
    return KILL.of(profile)(pid, profile, env)


# -- seams ----------------------------------------------------------------------------------
# Where a patch may change what pi does (core/patches.py); each default is pi's behaviour. The
# patches that register here are in bash/patches.py.

class Transport(Protocol):
    def __call__(self, shell: ShellConfig, command: str, *, cwd: str, env: Mapping[str, str], profile: Profile,
                 abort: threading.Event | None, nonce: str | None) -> Invocation: ...


def direct_invocation(shell: ShellConfig, command: str, *, cwd: str, env: Mapping[str, str], profile: Profile,
                      abort: threading.Event | None, nonce: str | None) -> Invocation:
    """pi: the command is the shell's last argument."""
    return Invocation((shell.shell, *shell.args, command))


class Launch:
    """What one run spawns (seam ``bash.spawn``). pi's: the shell itself, which starts the command
    at once. A launch that is ``held`` spawns a process that waits on its stdin pipe until
    ``release`` lets the command start."""

    role = ROLE_SHELL
    held = False

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv

    def release(self, proc: subprocess.Popen[bytes], abort: threading.Event) -> None:
        """Let a held command start (not when ``abort`` is set). Raises ``ToolError`` when it
        cannot, after ending the process."""

    def close(self) -> None:
        """The run is over (also after a failure)."""


class Launcher(Protocol):
    def __call__(self, argv: list[str], *, managed: bool, stdin_fed: bool, profile: Profile) -> Launch: ...


def direct_launch(argv: list[str], *, managed: bool, stdin_fed: bool, profile: Profile) -> Launch:
    return Launch(argv)


ObserverFilter = Callable[[ProcessObserver | None], ProcessObserver | None]
ExecFacts = Callable[[OutputAccumulator, int | None, str | None], dict[str, Any] | None]


def no_observer(_observer: ProcessObserver | None) -> ProcessObserver | None:
    return None


def no_exec_facts(_acc: OutputAccumulator, _exit_code: int | None, _raw_path: str | None) -> dict[str, Any] | None:
    return None


CWD_MISSING: Seam[str] = Seam(
    "bash.cwd-missing", SURFACE_ENGINE, CWD_MISSING_TEMPLATE,
    "the message for a working directory that does not exist, {cwd} filled in (spec bash.5)")
TRANSPORT: Seam[Transport] = Seam(
    "bash.transport", SURFACE_ENGINE, direct_invocation,
    "how the command reaches the shell: argv, stdin or an environment variable (spec bash.14)")
LAUNCH: Seam[Launcher] = Seam(
    "bash.spawn", SURFACE_ENGINE, direct_launch,
    "what a run spawns, and what happens before its command may start (spec bash.15)")
DECODE: Seam[Callable[[], StreamDecoders]] = Seam(
    "bash.decode", SURFACE_ENGINE, shared_decoder, "the UTF-8 decoders of stdout and stderr (spec bash.8)")
KILL: Seam[KillSequence] = Seam(
    "bash.kill", SURFACE_ENGINE, kill_at_once, "how the tree of a timed-out or aborted run is ended (spec bash.6)")
TASKKILL: Seam[TaskkillPolicy] = Seam(
    "bash.taskkill", SURFACE_ENGINE, PI_TASKKILL,
    "which taskkill ends a tree on Windows, and what a failed spawn of it does")
OBSERVE: Seam[ObserverFilter] = Seam(
    "bash.observe", SURFACE_ENGINE, no_observer, "whether the call's observer receives its process facts (spec bash.16)")
EXEC_FACTS: Seam[ExecFacts] = Seam(
    "bash.exec-facts", SURFACE_ENGINE, no_exec_facts, "what a successful run adds to its details (spec bash.9)")
ENGINE_SEAMS: tuple[Seam[Any], ...] = (CWD_MISSING, TRANSPORT, LAUNCH, DECODE, KILL, TASKKILL, OBSERVE, EXEC_FACTS)


# -- the run --------------------------------------------------------------------------------

OutputFds = tuple[int, int]  # the parent's read ends of the stdout and stderr pipes (POSIX)


def _spawn(argv: list[str], cwd: str, env: Mapping[str, str], stdin_text: str | None,
           stdin_pipe: bool = False) -> tuple[subprocess.Popen[bytes], OutputFds | None]:
    """Start the shell; on POSIX also the read ends of its output pipes (None on Windows, where
    the reader threads use ``proc.stdout``/``proc.stderr``)."""
    stdin = subprocess.PIPE if stdin_text is not None or stdin_pipe else subprocess.DEVNULL
    if sys.platform == "win32":
        flags = getattr(subprocess, "CREATE_NO_WINDOW", 0) | getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
        try:
            return subprocess.Popen(argv, cwd=cwd, env=env, stdin=stdin, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, bufsize=0, creationflags=flags), None
        except OSError as exc:
            raise ToolError(spawn_error_message(argv[0], exc)) from exc
    # POSIX: the pipes are made here (as Popen would: close-on-exec on the parent's side) so that
    # the read loop gets plain descriptors instead of file objects it would never use.
    opened: list[int] = []
    try:
        out_r, out_w = os.pipe()
        opened += (out_r, out_w)
        err_r, err_w = os.pipe()
        opened += (err_r, err_w)
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=stdin, stdout=out_w, stderr=err_w, bufsize=0,
                                start_new_session=True)
    except OSError as exc:
        for fd in opened:
            os.close(fd)
        raise ToolError(spawn_error_message(argv[0], exc)) from exc
    except BaseException:
        for fd in opened:
            os.close(fd)
        raise
    os.close(out_w)
    os.close(err_w)
    return proc, (out_r, err_r)


def _feed_stdin(pipe: IO[bytes], text: str, dispatched: Callable[[], None]) -> None:
    try:
        pipe.write(text.encode("utf-8"))
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            pipe.close()
    dispatched()


def _open_pidfd(pid: int) -> int | None:
    """A pidfd for ``pid`` (Linux 5.3+), readable once the process has exited; None elsewhere."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return int(opener(pid))
    except OSError:  # ENOSYS (old kernel), EPERM/EMFILE: fall back to polling the exit status
        return None


class _ReadyWaiter:
    """Waits for descriptors to become readable and lists them in the order the kernel reports:
    epoll on Linux (readiness order, the order libuv's loop reads them in), the platform's default
    selector elsewhere."""

    def __init__(self) -> None:
        self._epoll = select.epoll() if hasattr(select, "epoll") else None
        self._sel = selectors.DefaultSelector() if self._epoll is None else None

    def add(self, fd: int) -> None:
        if self._epoll is not None:
            self._epoll.register(fd, select.EPOLLIN)
        else:
            assert self._sel is not None
            self._sel.register(fd, selectors.EVENT_READ)

    def remove(self, fd: int) -> None:
        if self._epoll is not None:
            self._epoll.unregister(fd)
        else:
            assert self._sel is not None
            self._sel.unregister(fd)

    def wait(self, timeout_s: float) -> list[int]:
        if self._epoll is not None:
            return [fd for fd, _ in self._epoll.poll(timeout_s)]
        assert self._sel is not None
        return [key.fd for key, _ in self._sel.select(timeout_s)]

    def close(self) -> None:
        if self._epoll is not None:
            self._epoll.close()
        else:
            assert self._sel is not None
            self._sel.close()


class _PosixReader:
    """Reads both pipes on the calling thread, so closing them is safe. Owns the two descriptors.

    Where the kernel offers pidfds the waiter also watches the process itself, so the exit wakes
    the read loop at once instead of on its next poll: a short command's call ends as soon as its
    shell is gone (no sleep-and-retry wait for the exit status after the pipes closed).
    """

    def __init__(self, proc: subprocess.Popen[bytes], fds: OutputFds) -> None:
        self._proc = proc
        self._waiter = _ReadyWaiter()
        self._streams: dict[int, str] = {}
        for fd, name in zip(fds, ("stdout", "stderr"), strict=True):
            self._streams[fd] = name
            self._waiter.add(fd)
        self._pidfd = _open_pidfd(proc.pid)
        if self._pidfd is not None:
            self._waiter.add(self._pidfd)
        self._exit_seen = self._pidfd is None

    @property
    def open_streams(self) -> int:
        return len(self._streams)

    @property
    def may_have_exited(self) -> bool:
        """False only while a pidfd is watching and has not reported the exit: polling the exit
        status before then would find nothing."""
        return self._exit_seen

    def read(self, wait_s: float) -> list[tuple[str, bytes]]:
        """What arrived within ``wait_s``; returns early on output, end of a pipe or (with a
        pidfd) the exit of the process."""
        if not self._streams and self._pidfd is None:
            # Both pipes are closed: what is left to wait for is the exit, so wait on the process
            # itself (the poll interval is only the longest wait, never a fixed delay per call).
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(max(0.0, wait_s))
            return []
        out: list[tuple[str, bytes]] = []
        for fd in self._waiter.wait(max(0.0, wait_s)):
            if fd == self._pidfd:
                self._close_pidfd()  # the process exited; the caller's next poll() collects it
                continue
            try:
                data = os.read(fd, READ_CHUNK_BYTES)
            except OSError:
                data = b""
            if data:
                out.append((self._streams[fd], data))
            else:
                self._close(fd)
        return out

    def _close(self, fd: int) -> None:
        del self._streams[fd]
        self._waiter.remove(fd)
        with contextlib.suppress(OSError):
            os.close(fd)

    def _close_pidfd(self) -> None:
        pidfd, self._pidfd = self._pidfd, None
        self._exit_seen = True
        if pidfd is not None:
            self._waiter.remove(pidfd)
            with contextlib.suppress(OSError):
                os.close(pidfd)

    def close(self) -> None:
        for fd in list(self._streams):
            self._close(fd)
        self._close_pidfd()
        self._waiter.close()


class _ThreadReader:
    """Windows: one thread per pipe feeding a queue (selectors do not support pipes there)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self._q: queue.Queue[tuple[str, bytes]] = queue.Queue()
        self._open = 2
        self._closed = threading.Event()
        for f, name in ((proc.stdout, "stdout"), (proc.stderr, "stderr")):
            assert f is not None
            threading.Thread(target=self._pump, args=(f, name), daemon=True).start()

    def _pump(self, f: IO[bytes], name: str) -> None:
        while not self._closed.is_set():
            try:
                data = f.read(READ_CHUNK_BYTES)
            except (OSError, ValueError):
                data = b""
            self._q.put((name, data))
            if not data:
                return

    @property
    def open_streams(self) -> int:
        return self._open

    @property
    def may_have_exited(self) -> bool:
        return True

    def read(self, wait_s: float) -> list[tuple[str, bytes]]:
        out: list[tuple[str, bytes]] = []
        try:
            item = self._q.get(timeout=max(0.0, wait_s))
        except queue.Empty:
            return out
        while True:
            name, data = item
            if data:
                out.append((name, data))
            else:
                self._open -= 1
            try:
                item = self._q.get_nowait()
            except queue.Empty:
                return out

    def close(self) -> None:
        self._closed.set()


def _build_argv(command: str, cwd: str, env: Mapping[str, str], profile: Profile,
                abort: threading.Event) -> tuple[list[str], str | None, dict[str, str]]:
    shell = get_shell_config(profile, env)
    inv = TRANSPORT.of(profile)(shell, command, cwd=cwd, env=env, profile=profile, abort=abort, nonce=None)
    return list(inv.argv), inv.stdin_text, dict(inv.env_additions)


def run_command(
    command: str,
    *,
    cwd: str,
    env: Mapping[str, str],
    profile: Profile,
    timeout: float | None,
    abort: threading.Event,
    spawn_hook: SpawnHook | None = None,
    on_data: DataCallback | None = None,
    on_spawn: Callable[[int], None] | None = None,
    on_update: UpdateCallback | None = None,
    observer: ProcessObserver | None = None,
    managed: bool = False,
) -> EngineResult:
    """Run ``command`` in a fresh shell (see the module docstring for the full contract).

    ``env`` is the engine's environment base (``engine_env``); ``spawn_hook`` may rewrite command,
    cwd and env before the spawn; ``on_data`` receives decoded output text in arrival order;
    ``on_spawn`` receives the pid (= pgid) once the process exists; ``on_update`` receives the
    streaming updates of spec bash.8 (one empty update at start, then ``formatOutput(snapshot, "")``
    at most once per ``Profile.bash_update_throttle_ms``). ``observer`` is offered the process
    facts of spec bash.16 (``spawned``, ``spawn_failed``, ``command_dispatched``, ``timeout``);
    the ``bash.observe`` seam decides whether it receives them (pi: never). ``managed`` marks the
    task layer's managed and background runs, for the ``bash.spawn`` seam (with patch
    ``bash.parent-death-guard`` they run under the guardian, spec bash.15).
    """
    observe = OBSERVE.of(profile)(observer)
    inputs = SpawnInputs(command, cwd, dict(env))
    if spawn_hook is not None:
        inputs = spawn_hook(inputs)
    argv, stdin_text, env_additions = _build_argv(inputs.command, inputs.cwd, inputs.env, profile, abort)
    if not os.path.exists(inputs.cwd):
        raise ToolError(cwd_missing_message(inputs.cwd, profile))
    if abort.is_set():
        raise ToolAborted(STATUS_ABORTED)
    spawn_env = {**inputs.env, **env_additions}
    launch = LAUNCH.of(profile)(argv, managed=managed, stdin_fed=stdin_text is not None, profile=profile)
    role = launch.role
    acc = OutputAccumulator(
        env=inputs.env,
        prefix=profile.full_output_prefix,
        max_lines=profile.engine_max_lines,
        max_bytes=profile.engine_max_bytes,
        decoders=DECODE.of(profile)(),
    )
    PROCESSES.begin_spawn()
    try:
        proc, fds = _spawn(launch.argv, inputs.cwd, spawn_env, stdin_text, stdin_pipe=launch.held)
    except BaseException as exc:
        PROCESSES.end_spawn(None)
        if isinstance(exc, ToolError):
            notify(observe, EVENT_SPAWN_FAILED, role, error=exc.message)
        raise
    pid = proc.pid
    PROCESSES.end_spawn(pid)
    notify(observe, EVENT_SPAWNED, role, pid=pid)
    escalation: threading.Timer | None = None
    state = _RunState()
    reader: _PosixReader | _ThreadReader | None = None
    try:
        reader = _PosixReader(proc, fds) if fds is not None else _ThreadReader(proc)
        if on_spawn is not None:
            on_spawn(pid)
        transport = "argv" if stdin_text is None else "stdin"
        if env_additions:
            transport = "env"

        def dispatched() -> None:
            notify(observe, EVENT_COMMAND_DISPATCHED, role, pid=pid, transport=transport)

        if launch.held:
            launch.release(proc, abort)
            if not abort.is_set():
                dispatched()
        elif stdin_text is not None and proc.stdin is not None:
            threading.Thread(target=_feed_stdin, args=(proc.stdin, stdin_text, dispatched), daemon=True).start()
        else:
            dispatched()
        if on_update is not None:
            on_update(EngineResult("", None, None))
        escalation = _read_until_complete(proc, reader, acc, state, profile, inputs.env, timeout, abort, on_data,
                                          on_update, observe, role)
    finally:
        if reader is not None:
            reader.close()
        elif fds is not None:
            for fd in fds:
                os.close(fd)
        acc.close()
        if escalation is None:
            PROCESSES.untrack(pid)
        launch.close()
    tail = acc.finish()
    if tail and on_data is not None:
        on_data(tail)
    snap = acc.snapshot()
    if abort.is_set():
        raise ToolAborted(append_status(format_output(snap, "").text, STATUS_ABORTED))
    if state.timed_out:
        assert timeout is not None
        status = STATUS_TIMEOUT.format(seconds=js_number(timeout))
        raise ToolError(append_status(format_output(snap, "").text, status))
    out = format_output(snap, EMPTY_OUTPUT)
    if state.exit_code is not None and state.exit_code != 0:
        raise CommandExitError(append_status(out.text, STATUS_EXIT.format(code=state.exit_code)), state.exit_code)
    details = dict(out.details) if out.details else None
    facts = EXEC_FACTS.of(profile)(acc, state.exit_code, snap.full_output_path)
    if facts:
        details = {**(details or {}), **facts}
    return EngineResult(out.text, details, state.exit_code)


def _read_until_complete(
    proc: subprocess.Popen[bytes],
    reader: _PosixReader | _ThreadReader,
    acc: OutputAccumulator,
    state: _RunState,
    profile: Profile,
    env: Mapping[str, str],
    timeout: float | None,
    abort: threading.Event,
    on_data: DataCallback | None,
    on_update: UpdateCallback | None = None,
    observe: ProcessObserver | None = None,
    role: str = ROLE_SHELL,
) -> threading.Timer | None:
    start = time.monotonic()
    deadline = start + timer_delay_ms(timeout) / 1000 if timeout is not None and timeout_armed(timeout) else None
    grace_s = profile.bash_exit_stdio_grace_ms / 1000
    exit_at: float | None = None
    escalation: threading.Timer | None = None
    throttle_s = profile.bash_update_throttle_ms / 1000
    last_update = start
    dirty = False
    while True:
        now = time.monotonic()
        if not state.kill_started:
            if abort.is_set():
                state.kill_started = True
            elif deadline is not None and now >= deadline:
                state.timed_out = True
                state.kill_started = True
                notify(observe, EVENT_TIMEOUT, role, pid=proc.pid, timeout_s=timeout)
            if state.kill_started:
                escalation = start_kill_sequence(proc.pid, profile, env)
        if exit_at is None and reader.may_have_exited and proc.poll() is not None:
            exit_at = now
            state.exited = True
            state.exit_code = exit_code_of(proc.returncode)
        if exit_at is not None and (reader.open_streams == 0 or now - exit_at >= grace_s):
            if reader.open_streams:
                _drain_available(reader, acc, on_data)
            return escalation
        wait = POLL_INTERVAL_S
        if deadline is not None and not state.kill_started:
            wait = min(wait, max(0.0, deadline - now))
        if exit_at is not None:
            wait = min(wait, max(0.0, exit_at + grace_s - now))
        for stream, data in reader.read(wait):
            dirty = True
            text = acc.push(data, stream)
            if text and on_data is not None:
                on_data(text)
        if on_update is not None and dirty and time.monotonic() - last_update >= throttle_s:
            last_update = time.monotonic()
            dirty = False
            out = format_output(acc.snapshot(), "")
            on_update(EngineResult(out.text, out.details, None))


def _drain_available(reader: _PosixReader | _ThreadReader, acc: OutputAccumulator,
                     on_data: DataCallback | None) -> None:
    """Take the output that is already waiting in the pipes, without waiting for more."""
    budget = FINAL_DRAIN_MAX_BYTES
    while budget > 0 and reader.open_streams:
        chunks = reader.read(0.0)
        if not chunks:
            return
        for stream, data in chunks:
            budget -= len(data)
            text = acc.push(data, stream)
            if text and on_data is not None:
                on_data(text)


# -- environment ----------------------------------------------------------------------------

def engine_env(env: Mapping[str, str], home: str, platform: str = sys.platform) -> dict[str, str]:
    """spec bash.5 step 1: a copy of the tools' environment with ``<agentDir>/bin`` in front of PATH."""
    return prepend_engine_bin(dict(env), engine_bin_dir(env, home), platform)


def sanitizing_hook(policy: Any, profile: Profile, removed_sink: list[str]) -> SpawnHook:
    """The wrapper's spawn hook (spec bash.env.3): sanitise the env and record the removed names."""
    def hook(inputs: SpawnInputs) -> SpawnInputs:
        res = sanitize_bash_subprocess_env(inputs.env, policy, profile)
        removed_sink[:] = list(res.removed)
        return SpawnInputs(inputs.command, inputs.cwd, dict(res.env))

    return hook
