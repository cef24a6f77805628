"""The parent-death guardian (patch ``bash.parent-death-guard``, spec bash.15), POSIX half.

At most one detached guardian process per host process (``GUARDIAN``) holds the process groups of
the managed and background commands that are running. The host talks to it over a pipe pair: it
writes ``arm <lease> <pgid>`` and waits for ``ack <lease>`` (``REGISTRATION_TIMEOUT_MS``), and
``disarm <lease>`` once the command is over. When the host dies, the guardian reads end-of-file:
it sends SIGTERM to every armed group that still exists and SIGKILL ``KILL_GRACE_MS`` later.
When the last lease is disarmed the host closes the channel itself, so the guardian (with nothing
armed) exits at once and no process outlives the commands it guards; the next registration
starts a new one. Because of that a guarded command pays for one guardian start, so the guardian
is a POSIX shell script (``GUARDIAN_SCRIPT`` run by ``/bin/sh``: a couple of milliseconds), not an
interpreter of the host's language (about a hundred on a loaded machine).

A guarded command is spawned through ``/bin/sh -c GUARD_SCRIPT <name> <shell> <args…> <command>``:
the launcher waits for one ``ready`` line on its stdin, which the host writes only after the
guardian acknowledged the group, then execs the shell with stdin from ``/dev/null``. Closing the
launcher's stdin without ``ready`` (an abort, a failed registration) makes it exit 125, so the
command never starts.

Interpretation notes: the Windows launcher of the spec is not implemented (the guard is skipped on
win32), and a command whose transport needs the child's stdin (the PowerShell stdin launcher,
spec bash.14) is not guarded, because the guarded launcher gives the shell ``/dev/null``.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import uuid
from typing import IO

from tools_impl.core.errors import ToolError

GUARD_SCRIPT = 'IFS= read -r __mavis_guardian_ready || exit 125\nexec "$@" </dev/null'
GUARD_SHELL = "/bin/sh"
READY_LINE = b"ready\n"
REGISTRATION_TIMEOUT_MS = 1000
KILL_GRACE_MS = 3000
IDLE_EXIT_WAIT_S = 2.0
REGISTRATION_TIMED_OUT = "Parent-death guardian target registration timed out"
START_FAILED = "Failed to start parent-death guardian"
GUARDIAN_ARGV0_TAG = "mavis-parent-death-guardian"
# A minimal environment: nothing of a workspace or a command (PATH only, for sleep).
GUARDIAN_ENV: dict[str, str] = {"PATH": os.defpath}
KILL_POLL_MS = 100

# The guardian's program, a POSIX shell script (starting a shell costs a few milliseconds; an
# interpreter of the host's language costs a hundred on a busy machine, paid by every guarded
# command since the guardian exits with its last lease). The host is its only writer: leases are
# hex ids, groups decimal; any other line is ignored.
GUARDIAN_SCRIPT = f"""set -f
armed=
while read -r op lease pgid rest; do
  case $op in
    arm)
      case $lease in ''|*[!0-9a-f]*) continue ;; esac
      case $pgid in ''|*[!0-9]*) continue ;; esac
      [ -z "$rest" ] || continue
      armed="$armed $lease:$pgid"
      printf 'ack %s\\n' "$lease" ;;
    disarm)
      [ -z "$pgid" ] || continue
      kept=
      for entry in $armed; do
        [ "${{entry%%:*}}" = "$lease" ] || kept="$kept $entry"
      done
      armed=$kept ;;
  esac
done
alive() {{ kill -s 0 -- "-$1" 2>/dev/null; }}
groups=
for entry in $armed; do
  if alive "${{entry#*:}}"; then groups="$groups ${{entry#*:}}"; fi
done
for group in $groups; do kill -s TERM -- "-$group" 2>/dev/null; done
waited=0
while [ -n "$groups" ] && [ "$waited" -lt {KILL_GRACE_MS} ]; do
  sleep {KILL_POLL_MS / 1000}
  waited=$((waited + {KILL_POLL_MS}))
  left=
  for group in $groups; do
    if alive "$group"; then left="$left $group"; fi
  done
  groups=$left
done
for group in $groups; do kill -s KILL -- "-$group" 2>/dev/null; done
"""


def guarded_argv(argv: list[str], shell_name: str) -> list[str]:
    """``/bin/sh -c GUARD_SCRIPT <shell_name> <argv…>``."""
    return [GUARD_SHELL, "-c", GUARD_SCRIPT, shell_name, *argv]


class ParentDeathGuardian:
    """The host side of the guardian: starts it on first use (again if it died), arms and
    disarms process groups."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._acks: dict[str, threading.Event] = {}
        self._leases: set[str] = set()

    def _running(self) -> subprocess.Popen[bytes]:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            return proc
        try:
            proc = subprocess.Popen(
                [GUARD_SHELL, "-c", GUARDIAN_SCRIPT, GUARDIAN_ARGV0_TAG],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                cwd="/", start_new_session=True, close_fds=True,
                env=GUARDIAN_ENV,
            )
        except OSError as exc:
            raise ToolError(START_FAILED) from exc
        self._proc = proc
        threading.Thread(target=self._read_acks, args=(proc,), daemon=True,
                         name="parent-death-guardian-acks").start()
        return proc

    def _read_acks(self, proc: subprocess.Popen[bytes]) -> None:
        stream = proc.stdout
        if stream is None:
            return
        for raw in stream:
            parts = raw.decode("ascii", "replace").split()
            if len(parts) == 2 and parts[0] == "ack":
                with self._lock:
                    event = self._acks.get(parts[1])
                if event is not None:
                    event.set()
        with contextlib.suppress(subprocess.SubprocessError):
            proc.wait()  # reap it once it closed its end

    def _send(self, proc: subprocess.Popen[bytes], line: str) -> bool:
        try:
            assert proc.stdin is not None
            proc.stdin.write(line.encode("ascii"))
            proc.stdin.flush()
        except (OSError, ValueError):
            return False
        return True

    def arm(self, pgid: int, timeout_ms: int = REGISTRATION_TIMEOUT_MS) -> str:
        """Register ``pgid``; the lease id once the guardian acknowledged it. Raises ``ToolError``
        (``START_FAILED``, ``REGISTRATION_TIMED_OUT``)."""
        lease = uuid.uuid4().hex
        acked = threading.Event()
        with self._lock:
            proc = self._running()
            self._acks[lease] = acked
            self._leases.add(lease)
            sent = self._send(proc, f"arm {lease} {pgid}\n")
        try:
            if not sent or not acked.wait(timeout_ms / 1000):
                self.disarm(lease)
                raise ToolError(REGISTRATION_TIMED_OUT)
        finally:
            with self._lock:
                self._acks.pop(lease, None)
        return lease

    def disarm(self, lease: str) -> None:
        with self._lock:
            self._leases.discard(lease)
            proc = self._proc
            if proc is None:
                return
            if proc.poll() is None:
                self._send(proc, f"disarm {lease}\n")
            if not self._leases:
                # nothing armed: close the channel; the guardian exits at once
                with contextlib.suppress(OSError, ValueError):
                    assert proc.stdin is not None
                    proc.stdin.close()
                self._proc = None
                # wait for it (it exits at once), so that no process outlives the command's call
                with contextlib.suppress(subprocess.SubprocessError):
                    proc.wait(IDLE_EXIT_WAIT_S)

    def pid(self) -> int | None:
        """The guardian's pid while it runs (tests)."""
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None


def release(pipe: IO[bytes] | None, ready: bool) -> None:
    """Let the guarded launcher go on (``ready``) or end it (stdin closed without the line)."""
    if pipe is None:
        return
    with contextlib.suppress(OSError, ValueError):
        if ready:
            pipe.write(READY_LINE)
            pipe.flush()
    with contextlib.suppress(OSError, ValueError):
        pipe.close()


# One per host process: it must outlive nothing but the host.
GUARDIAN = ParentDeathGuardian()
