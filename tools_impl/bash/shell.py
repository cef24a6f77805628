"""Shell selection of the bash engine (spec bash.4) and the engine's PATH base (spec bash.5 step 1).

Selection is the ``bash.shell`` seam (``core/patches.py``): pi's (``select_shell_pi``) runs a
custom shell path as bash, takes Git Bash on Windows and ``/bin/bash``, ``bash`` on PATH or
``sh`` elsewhere; patch ``shell.windows-powershell`` (``bash/patches.py``) puts PowerShell first
on Windows and infers a custom shell's type.

Everything that touches the machine — platform, environment, file existence, ``which``/``where``
— is injectable, so the Windows branches are testable on any OS.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from tools_impl.core.errors import ToolError
from tools_impl.core.patches import SURFACE_ENGINE, Seam
from tools_impl.core.profile import Profile

SHELL_TYPE_BASH = "bash"
SHELL_TYPE_PWSH = "pwsh"
SHELL_TYPE_POWERSHELL = "powershell"

BASH_ARGS: tuple[str, ...] = ("-c",)
POWERSHELL_ARGS: tuple[str, ...] = ("-NoProfile", "-NonInteractive", "-Command")

UNIX_BASH_PATH = "/bin/bash"
UNIX_FALLBACK_SHELL = "sh"
WINDOWS_PWSH7_PATH = "C:\\Program Files\\PowerShell\\7\\pwsh.exe"
WINDOWS_POWERSHELL51_PATH = "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe"
GIT_BASH_SUFFIX = "\\Git\\bin\\bash.exe"
GIT_BASH_ENV_VARS: tuple[str, ...] = ("ProgramFiles", "ProgramFiles(x86)")
WHICH_TIMEOUT_MS = 5000

AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"
DEFAULT_AGENT_SUBDIR: tuple[str, ...] = (".pi", "agent")
ENGINE_BIN_SUBDIR = "bin"

NO_BASH_SHELL_FOUND = (
    "No bash shell found. Options:\n"
    "  1. Install Git for Windows: https://git-scm.com/download/win\n"
    "  2. Add your bash to PATH (Cygwin, MSYS2, etc.)\n"
    "  3. Set shellPath in settings.json\n"
    "\n"
    "Searched Git Bash in:\n"
)


@dataclass(frozen=True)
class ShellConfig:
    """The shell executable, the arguments before the command, and its type."""

    shell: str
    args: tuple[str, ...]
    type: str


def default_which(platform: str = sys.platform) -> Callable[[str], str | None]:
    """``which NAME`` (``where NAME`` on win32): first output line, or None; 5000 ms limit."""
    finder = "where" if platform == "win32" else "which"

    def which(name: str) -> str | None:
        try:
            proc = subprocess.run(
                [finder, name],
                capture_output=True,
                text=True,
                timeout=WHICH_TIMEOUT_MS / 1000,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        if proc.returncode != 0 or not proc.stdout:
            return None
        first = proc.stdout.strip().splitlines()[0] if proc.stdout.strip() else ""
        return first.strip() or None

    return which


def config_for(path: str, kind: str) -> ShellConfig:
    args = BASH_ARGS if kind == SHELL_TYPE_BASH else POWERSHELL_ARGS
    return ShellConfig(path, args, kind)


def git_bash_candidates(env: Mapping[str, str]) -> list[str]:
    """``%ProgramFiles%\\Git\\bin\\bash.exe`` then the ``(x86)`` one, for the variables that are set."""
    return [env[v] + GIT_BASH_SUFFIX for v in GIT_BASH_ENV_VARS if env.get(v)]


def custom_shell_path(path: str | None, exists: Callable[[str], bool]) -> str | None:
    """``Profile.shell_path`` when set; ``Custom shell path not found: <path>`` when it does not exist."""
    if path and not exists(path):
        raise ToolError(f"Custom shell path not found: {path}")
    return path or None


def windows_bash(git_paths: list[str], exists: Callable[[str], bool],
                 found: Callable[[str], str | None]) -> ShellConfig | None:
    """Git Bash at the first candidate that exists, else ``bash.exe`` on PATH."""
    for path in git_paths:
        if exists(path):
            return config_for(path, SHELL_TYPE_BASH)
    bash = found("bash.exe")
    return config_for(bash, SHELL_TYPE_BASH) if bash else None


def posix_shell(exists: Callable[[str], bool], found: Callable[[str], str | None]) -> ShellConfig:
    """``/bin/bash``, else ``bash`` on PATH, else ``sh``."""
    if exists(UNIX_BASH_PATH):
        return config_for(UNIX_BASH_PATH, SHELL_TYPE_BASH)
    bash = found("bash")
    if bash:
        return config_for(bash, SHELL_TYPE_BASH)
    return config_for(UNIX_FALLBACK_SHELL, SHELL_TYPE_BASH)


class ShellSelector(Protocol):
    def __call__(self, custom: str | None, env: Mapping[str, str], platform: str, exists: Callable[[str], bool],
                 found: Callable[[str], str | None]) -> ShellConfig: ...


def select_shell_pi(custom: str | None, env: Mapping[str, str], platform: str, exists: Callable[[str], bool],
                    found: Callable[[str], str | None]) -> ShellConfig:
    """pi's selection: ``custom`` (already checked to exist) as bash; on Windows Git Bash, then
    ``bash.exe`` on PATH, else ``No bash shell found``; elsewhere ``posix_shell``."""
    if custom:
        return ShellConfig(custom, BASH_ARGS, SHELL_TYPE_BASH)
    if platform == "win32":
        git_paths = git_bash_candidates(env)
        bash = windows_bash(git_paths, exists, found)
        if bash is None:
            raise ToolError(NO_BASH_SHELL_FOUND + "\n".join(f"  {p}" for p in git_paths))
        return bash
    return posix_shell(exists, found)


SHELL: Seam[ShellSelector] = Seam("bash.shell", SURFACE_ENGINE, select_shell_pi,
                                  "which shell runs the command, and its type (spec bash.4)")


def get_shell_config(
    profile: Profile,
    env: Mapping[str, str],
    *,
    platform: str = sys.platform,
    exists: Callable[[str], bool] = os.path.exists,
    which: Callable[[str], str | None] | None = None,
) -> ShellConfig:
    """spec bash.4 shell selection (seam ``bash.shell``); evaluated afresh on every call (no caching).

    Raises ``ToolError``: ``Custom shell path not found: <path>``, or the selector's error when no
    shell is found (pi: ``No bash shell found. Options:…``).
    """
    find = which if which is not None else default_which(platform)

    def found(name: str) -> str | None:
        hit = find(name)
        return hit if hit and exists(hit) else None

    custom = custom_shell_path(profile.shell_path, exists)
    return SHELL.of(profile)(custom, env, platform, exists, found)


def agent_dir(env: Mapping[str, str], home: str) -> str:
    """``$PI_CODING_AGENT_DIR`` (with ``~`` expanded) or ``~/.pi/agent``."""
    configured = env.get(AGENT_DIR_ENV)
    if configured:
        if configured == "~":
            return home
        if configured.startswith("~/"):
            return home + configured[1:]
        return configured
    return os.path.join(home, *DEFAULT_AGENT_SUBDIR)


def engine_bin_dir(env: Mapping[str, str], home: str) -> str:
    """``<agentDir>/bin``, put in front of PATH by the engine (spec bash.5 step 1)."""
    return os.path.join(agent_dir(env, home), ENGINE_BIN_SUBDIR)


def prepend_engine_bin(env: dict[str, str], bin_dir: str, platform: str = sys.platform) -> dict[str, str]:
    """A copy of ``env`` whose PATH (key found case-insensitively, else ``PATH``) starts with
    ``bin_dir``, unless that directory is already one of its entries."""
    delim = ";" if platform == "win32" else ":"
    key = next((k for k in env if k.lower() == "path"), "PATH")
    current = env.get(key) or ""
    entries = [p for p in current.split(delim) if p]
    out = dict(env)
    if bin_dir not in entries:
        out[key] = delim.join(p for p in (bin_dir, current) if p)
    else:
        out[key] = current
    return out
