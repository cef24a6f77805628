"""MiniMax's patches to pi's bash engine and wrapper, one ``Patch`` object per toggle (spec
patches), each registered at the seams it changes (``bash/engine.py``, ``bash/shell.py``,
``bash/env_sanitize.py``; ``core/patches.py`` explains seams and hooks).

What each does at its seams is defined here; the larger pieces it uses live in their own modules:
the guardian (``guardian.py``) and the PowerShell launchers and probe (``powershell.py``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any

from tools_impl.bash.engine import (
    CWD_MISSING,
    DECODE,
    ENGINE_SEAMS,
    EXEC_FACTS,
    KILL,
    LAUNCH,
    OBSERVE,
    PROCESSES,
    ROLE_GUARDIAN_LAUNCHER,
    SPAWN_SETTLE_TIMEOUT_S,
    TASKKILL,
    TRANSPORT,
    Invocation,
    Launch,
    Launcher,
    ProcessObserver,
    TaskkillPolicy,
    Transport,
    group_exists,
    kill_tree_now,
    kills_with_taskkill,
    signal_group,
    system_taskkill,
    terminate_with_taskkill,
)
from tools_impl.bash.env_sanitize import SCRUB_LIST
from tools_impl.bash.guardian import GUARDIAN, guarded_argv, release
from tools_impl.bash.output import OutputAccumulator, per_stream_decoders
from tools_impl.bash.powershell import (
    CONSTRAINED_LANGUAGE,
    LANGUAGE_MODE_PROBES,
    constrained_language_launcher,
    constrained_source_var,
    full_language_launcher,
    new_nonce,
)
from tools_impl.bash.shell import (
    SHELL,
    SHELL_TYPE_BASH,
    SHELL_TYPE_POWERSHELL,
    SHELL_TYPE_PWSH,
    WINDOWS_POWERSHELL51_PATH,
    WINDOWS_PWSH7_PATH,
    ShellConfig,
    config_for,
    git_bash_candidates,
    posix_shell,
    windows_bash,
)
from tools_impl.core.errors import ToolError
from tools_impl.core.patches import PATCHES, Patch, replace, wrap
from tools_impl.core.profile import (
    PATCH_BASH_GRACEFUL_KILL,
    PATCH_BASH_PARENT_DEATH_GUARD,
    PATCH_BASH_PROCESS_EVENTS,
    PATCH_BASH_PS51_STDIN_LAUNCHER,
    PATCH_BASH_PS_CONSTRAINED,
    PATCH_BASH_WIN_TASKKILL,
    PATCH_ENGINE_EXEC_FACTS,
    PATCH_SHELL_WINDOWS_POWERSHELL,
    PATCH_WRAP_SCRUB_PROVIDER_KEY,
    Profile,
)

# -- bash.graceful-kill (seam bash.kill) --------------------------------------------------------


def graceful_kill(pid: int, profile: Profile, env: Mapping[str, str]) -> threading.Timer | None:
    """SIGTERM to the group now (``taskkill /T`` on Windows), SIGKILL (``/F /T``) after
    ``Profile.bash_term_grace_ms`` unless the group is gone; the group stays tracked until then."""
    if kills_with_taskkill(profile):
        terminate_with_taskkill(pid, False, env, profile)

        def escalate() -> None:
            try:
                terminate_with_taskkill(pid, True, env, profile)
            finally:
                PROCESSES.untrack(pid)
    else:
        signal_group(pid, signal.SIGTERM)

        def escalate() -> None:
            try:
                if group_exists(pid):
                    signal_group(pid, signal.SIGKILL)
            finally:
                PROCESSES.untrack(pid)

    PROCESSES.track(pid)  # stays tracked until the escalation has run
    timer = threading.Timer(profile.bash_term_grace_ms / 1000, escalate)
    timer.daemon = True
    timer.start()
    return timer


# -- bash.win-taskkill (seam bash.taskkill) -----------------------------------------------------


def kill_root_process(pid: int, force: bool) -> None:
    """When taskkill cannot be spawned: signal the root process alone."""
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGTERM if not force else getattr(signal, "SIGKILL", signal.SIGTERM))


HARDENED_TASKKILL = TaskkillPolicy(system_taskkill, kill_root_process)


# -- bash.parent-death-guard (seams bash.spawn, bash.decode) --------------------------------------


class GuardedLaunch(Launch):
    """The command under the parent-death guardian (spec bash.15): the launcher waits on its stdin
    until the guardian is armed for its group."""

    role = ROLE_GUARDIAN_LAUNCHER
    held = True

    def __init__(self, argv: list[str], profile: Profile) -> None:
        super().__init__(guarded_argv(argv, profile.guardian_shell_name))
        self._lease: str | None = None

    def release(self, proc: subprocess.Popen[bytes], abort: threading.Event) -> None:
        try:
            self._lease = GUARDIAN.arm(proc.pid)
        except ToolError:
            release(proc.stdin, ready=False)  # the launcher exits 125; the command never starts
            kill_tree_now(proc.pid)
            with contextlib.suppress(subprocess.SubprocessError):
                proc.wait(SPAWN_SETTLE_TIMEOUT_S)
            raise
        release(proc.stdin, ready=not abort.is_set())

    def close(self) -> None:
        if self._lease is not None:
            GUARDIAN.disarm(self._lease)
            self._lease = None


def guarded(below: Launcher) -> Launcher:
    """Managed and background runs on POSIX go under the guardian, unless their transport feeds
    the child's stdin (the launcher needs it)."""
    def launch(argv: list[str], *, managed: bool, stdin_fed: bool, profile: Profile) -> Launch:
        if managed and sys.platform != "win32" and not stdin_fed:
            return GuardedLaunch(argv, profile)
        return below(argv, managed=managed, stdin_fed=stdin_fed, profile=profile)

    return launch


# -- PowerShell 5.1 transports (seam bash.transport) -------------------------------------------


def stdin_launcher(below: Transport) -> Transport:
    """``bash.ps51-stdin-launcher``: under Windows PowerShell 5.1 the FullLanguage launcher is the
    ``-Command`` argument and the command goes to its stdin (spec bash.14)."""
    def transport(shell: ShellConfig, command: str, *, cwd: str, env: Mapping[str, str], profile: Profile,
                  abort: threading.Event | None, nonce: str | None) -> Invocation:
        if shell.type != SHELL_TYPE_POWERSHELL:
            return below(shell, command, cwd=cwd, env=env, profile=profile, abort=abort, nonce=nonce)
        launcher = full_language_launcher(nonce if nonce is not None else new_nonce(),
                                          profile.powershell_launcher_var_prefix)
        return Invocation((shell.shell, *shell.args, launcher), command, {})

    return transport


def constrained_language(below: Transport) -> Transport:
    """``bash.ps-constrained``: probe the executable's language mode (cached); under
    ConstrainedLanguage the command goes in a one-shot environment variable that the launcher
    reads; otherwise what is below decides (spec bash.14)."""
    def transport(shell: ShellConfig, command: str, *, cwd: str, env: Mapping[str, str], profile: Profile,
                  abort: threading.Event | None, nonce: str | None) -> Invocation:
        if shell.type != SHELL_TYPE_POWERSHELL:
            return below(shell, command, cwd=cwd, env=env, profile=profile, abort=abort, nonce=nonce)
        mode = LANGUAGE_MODE_PROBES.get(shell.shell, cwd=cwd, env=env, abort=abort)
        if mode != CONSTRAINED_LANGUAGE:
            return below(shell, command, cwd=cwd, env=env, profile=profile, abort=abort, nonce=nonce)
        n = nonce if nonce is not None else new_nonce()
        var = constrained_source_var(n, profile.powershell_source_var_prefix)
        launcher = constrained_language_launcher(
            n, profile.powershell_launcher_var_prefix, profile.powershell_source_var_prefix)
        return Invocation((shell.shell, *shell.args, launcher), None, {var: command})

    return transport


# -- engine.exec-facts (seam bash.exec-facts) ---------------------------------------------------


def process_output(acc: OutputAccumulator, exit_code: int | None, raw_path: str | None) -> dict[str, Any] | None:
    """``details.processOutput``: each stream's last ``max_bytes``, the exit code and the raw file."""
    facts = acc.stream_facts()
    return {"processOutput": {
        "stdout": facts.stdout,
        "stderr": facts.stderr,
        "exitCode": exit_code,
        "interrupted": exit_code is None,
        "stdoutTruncated": facts.stdout_truncated,
        "stderrTruncated": facts.stderr_truncated,
        "rawOutputPath": raw_path,
    }}


# -- bash.process-events (seam bash.observe) ---------------------------------------------------


def pass_observer(observer: ProcessObserver | None) -> ProcessObserver | None:
    return observer


# -- shell.windows-powershell (seams bash.shell, bash.cwd-missing) -------------------------------

CWD_MISSING_MESSAGE = "Working directory does not exist: {cwd}\nCannot execute commands."
NO_SHELL_FOUND = (
    "No shell found. Options:\n"
    "  1. Install PowerShell 7: https://aka.ms/powershell\n"
    "  2. Install Git for Windows: https://git-scm.com/download/win\n"
    "  3. Add your bash to PATH (Cygwin, MSYS2, etc.)\n"
    "  4. Set shellPath in settings.json\n"
    "\n"
    "Searched:\n"
)


def custom_shell_type(path: str) -> str:
    """Type of an explicit ``shellPath``: ``pwsh`` / ``powershell`` by (case-sensitive) substring,
    else ``bash`` (the literal "contains" of spec bash.4)."""
    if "pwsh" in path:
        return SHELL_TYPE_PWSH
    if "powershell" in path:
        return SHELL_TYPE_POWERSHELL
    return SHELL_TYPE_BASH


def select_shell_powershell_first(custom: str | None, env: Mapping[str, str], platform: str,
                                  exists: Callable[[str], bool], found: Callable[[str], str | None]) -> ShellConfig:
    """spec bash.4: a custom shell by its inferred type; on Windows ``pwsh.exe`` on PATH,
    PowerShell 7, Windows PowerShell 5.1, then Git Bash and ``bash.exe``, else ``No shell found``
    (its remainder is unverified and modelled on pi's message); elsewhere as pi."""
    if custom:
        return config_for(custom, custom_shell_type(custom))
    if platform != "win32":
        return posix_shell(exists, found)
    pwsh = found("pwsh.exe")
    if pwsh:
        return config_for(pwsh, SHELL_TYPE_PWSH)
    if exists(WINDOWS_PWSH7_PATH):
        return config_for(WINDOWS_PWSH7_PATH, SHELL_TYPE_PWSH)
    if exists(WINDOWS_POWERSHELL51_PATH):
        return config_for(WINDOWS_POWERSHELL51_PATH, SHELL_TYPE_POWERSHELL)
    git_paths = git_bash_candidates(env)
    bash = windows_bash(git_paths, exists, found)
    if bash is not None:
        return bash
    searched = ["where pwsh.exe", WINDOWS_PWSH7_PATH, WINDOWS_POWERSHELL51_PATH, *git_paths, "where bash.exe"]
    raise ToolError(NO_SHELL_FOUND + "\n".join(f"  {p}" for p in searched))


# -- wrap.scrub-provider-key (seam bash.env-scrub) ----------------------------------------------


def full_scrub_list(profile: Profile) -> tuple[str, ...]:
    return tuple(profile.scrub_list)


# -- the objects ---------------------------------------------------------------------------------

BASH_PATCHES: tuple[Patch, ...] = (
    Patch(PATCH_BASH_GRACEFUL_KILL, "SIGTERM, 3 s grace, then SIGKILL", (replace(KILL, graceful_kill),)),
    Patch(PATCH_BASH_WIN_TASKKILL, "Harden Windows taskkill", (replace(TASKKILL, HARDENED_TASKKILL),)),
    Patch(PATCH_BASH_PARENT_DEATH_GUARD, "Parent-death guardian",
          (wrap(LAUNCH, guarded), replace(DECODE, per_stream_decoders))),
    Patch(PATCH_BASH_PS51_STDIN_LAUNCHER, "PowerShell 5.1 command via stdin", (wrap(TRANSPORT, stdin_launcher),),
          requires=(PATCH_SHELL_WINDOWS_POWERSHELL,)),
    Patch(PATCH_ENGINE_EXEC_FACTS, "Retain Bash and Read execution facts", (replace(EXEC_FACTS, process_output),)),
    Patch(PATCH_BASH_PS_CONSTRAINED, "ConstrainedLanguage PowerShell", (wrap(TRANSPORT, constrained_language),),
          requires=(PATCH_SHELL_WINDOWS_POWERSHELL,)),
    Patch(PATCH_BASH_PROCESS_EVENTS, "Process-fact observation", (replace(OBSERVE, pass_observer),)),
    Patch(PATCH_SHELL_WINDOWS_POWERSHELL, "PowerShell-first shells on Windows",
          (replace(SHELL, select_shell_powershell_first), replace(CWD_MISSING, CWD_MISSING_MESSAGE))),
    Patch(PATCH_WRAP_SCRUB_PROVIDER_KEY, "scrub removes the provider key", (replace(SCRUB_LIST, full_scrub_list),)),
)

PATCHES.register((*ENGINE_SEAMS, SHELL, SCRUB_LIST), BASH_PATCHES)
