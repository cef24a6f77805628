"""Shell selection of the bash engine (spec bash.4) and the engine's PATH base (spec bash.5 step 1).

Everything that touches the machine — platform, environment, file existence, ``which``/``where``
— is injectable, so the Windows branches are testable on any OS.

Interpretation notes: the custom-shell type test (``pwsh`` / ``powershell`` substring) is the
literal, case-sensitive "contains" of the spec; the remainder of the reference ``No shell found. Options:`` text is unverified
and is modelled on the upstream message.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from tools_impl.core.errors import ToolError
from tools_impl.core.profile import PATCH_SHELL_WINDOWS_POWERSHELL, Profile

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
NO_SHELL_FOUND = (
    "No shell found. Options:\n"
    "  1. Install PowerShell 7: https://aka.ms/powershell\n"
    "  2. Install Git for Windows: https://git-scm.com/download/win\n"
    "  3. Add your bash to PATH (Cygwin, MSYS2, etc.)\n"
    "  4. Set shellPath in settings.json\n"
    "\n"
    "Searched:\n"
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


def _config_for(path: str, kind: str) -> ShellConfig:
    args = BASH_ARGS if kind == SHELL_TYPE_BASH else POWERSHELL_ARGS
    return ShellConfig(path, args, kind)


def custom_shell_type(path: str) -> str:
    """Type of an explicit ``shellPath``: ``pwsh`` / ``powershell`` by (case-sensitive) substring,
    else ``bash``."""
    if "pwsh" in path:
        return SHELL_TYPE_PWSH
    if "powershell" in path:
        return SHELL_TYPE_POWERSHELL
    return SHELL_TYPE_BASH


def git_bash_candidates(env: Mapping[str, str]) -> list[str]:
    """``%ProgramFiles%\\Git\\bin\\bash.exe`` then the ``(x86)`` one, for the variables that are set."""
    return [env[v] + GIT_BASH_SUFFIX for v in GIT_BASH_ENV_VARS if env.get(v)]


def get_shell_config(
    profile: Profile,
    env: Mapping[str, str],
    *,
    platform: str = sys.platform,
    exists: Callable[[str], bool] = os.path.exists,
    which: Callable[[str], str | None] | None = None,
) -> ShellConfig:
    """spec bash.4 shell selection; evaluated afresh on every call (no caching).

    Raises ``ToolError``: ``Custom shell path not found: <path>``, ``No shell found. Options:…``
    (reference, Windows) or the upstream ``No bash shell found. Options:…`` text.
    """
    find = which if which is not None else default_which(platform)
    powershell_first = profile.patch(PATCH_SHELL_WINDOWS_POWERSHELL)

    def found(name: str) -> str | None:
        hit = find(name)
        return hit if hit and exists(hit) else None

    custom = profile.shell_path
    if custom:
        if not exists(custom):
            raise ToolError(f"Custom shell path not found: {custom}")
        if not powershell_first:
            return ShellConfig(custom, BASH_ARGS, SHELL_TYPE_BASH)
        return _config_for(custom, custom_shell_type(custom))

    if platform == "win32":
        git_paths = git_bash_candidates(env)
        if powershell_first:
            pwsh = found("pwsh.exe")
            if pwsh:
                return _config_for(pwsh, SHELL_TYPE_PWSH)
            if exists(WINDOWS_PWSH7_PATH):
                return _config_for(WINDOWS_PWSH7_PATH, SHELL_TYPE_PWSH)
            if exists(WINDOWS_POWERSHELL51_PATH):
                return _config_for(WINDOWS_POWERSHELL51_PATH, SHELL_TYPE_POWERSHELL)
        for path in git_paths:
            if exists(path):
                return _config_for(path, SHELL_TYPE_BASH)
        bash = found("bash.exe")
        if bash:
            return _config_for(bash, SHELL_TYPE_BASH)
        if powershell_first:
            searched = ["where pwsh.exe", WINDOWS_PWSH7_PATH, WINDOWS_POWERSHELL51_PATH, *git_paths, "where bash.exe"]
            raise ToolError(NO_SHELL_FOUND + "\n".join(f"  {p}" for p in searched))
        raise ToolError(NO_BASH_SHELL_FOUND + "\n".join(f"  {p}" for p in git_paths))

    if exists(UNIX_BASH_PATH):
        return _config_for(UNIX_BASH_PATH, SHELL_TYPE_BASH)
    bash = found("bash")
    if bash:
        return _config_for(bash, SHELL_TYPE_BASH)
    return _config_for(UNIX_FALLBACK_SHELL, SHELL_TYPE_BASH)


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
