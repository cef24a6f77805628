"""Recoverable deletion (spec bash.trash): the POSIX rm shim and its preflight, installation of the
``mavis-trash`` program, the agent's bash environment policy, and the Windows host-trash
decision logic.

Host-trash session state (set by the harness; stands in for the permission layer and the host
runtime): ``ctx.workspace.state["host_trash"]`` is a dict with

- ``"runtime"``: ``{"platform": str, "script_path": str, "node_path": str}`` or absent/None
  (no host trash runtime);
- ``"execution"``: ``{"targets": [str, ...]}`` or absent/None — the deletion the permission
  layer recorded for the current call (literal targets, resolved against the workspace with
  win32 path rules).
"""

from __future__ import annotations

import ntpath
import os
import re
import stat
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from tools_impl.bash.env_sanitize import BashEnvPolicy, resolve_bash_env_policy, sanitize_bash_subprocess_env
from tools_impl.bash.timeouts import resolve_foreground_timeout
from tools_impl.core.context import ToolContext
from tools_impl.core.errors import ToolError
from tools_impl.core.profile import Profile
from tools_impl.core.result import ToolResult, text_result
from tools_impl.js.text import js_number, js_trim_end

TOOL_NAME = "bash"
SHIMS_SUBDIR = "shims"
BIN_SUBDIR = "bin"
SHIM_NAME = "rm"
SHIM_MODE = 0o755
TRASH_PROGRAM_SOURCE = Path(__file__).parent / "data" / "mavis_trash.py"
SESSION_TRASH_INSTALLED_KEY = "trash_program_installed"
SESSION_HOST_TRASH_KEY = "host_trash"

SHIM_PREFLIGHT_FAILED = (
    "The recoverable-delete rm shim at {shim_path} is missing or not executable and could not be "
    "re-seeded. Refusing to start bash, because deletes would bypass the trash and become "
    "unrecoverable. Check that the MiniMax Code data directory is writable, then restart the app "
    "to re-seed the shim."
)

SHIM_TEMPLATE = """#!/usr/bin/env bash
# MANAGED FILE - DO NOT EDIT. Recoverable-delete rm shim, rewritten automatically whenever its
# content differs; local changes are lost.
# Every rm resolved through PATH lands here and is handed, arguments unchanged, to the trash
# program. There is deliberately no fallback to a real, unrecoverable delete.
__shim_dir=$(cd -- "$(dirname -- "${{BASH_SOURCE[0]}}")" && pwd)
__trash_program="$(cd -- "$__shim_dir/.." && pwd)/{bin_subdir}/{trash_binary}"
if [ ! -f "$__trash_program" ] || [ ! -x "$__trash_program" ]; then
  printf 'rm: recoverable-delete runtime is missing at %s\\n' "$__trash_program" >&2
  printf 'rm: refusing to fall back to an unrecoverable delete\\n' >&2
  exit 1
fi
exec "$__trash_program" "$@"
"""

# spec bash.trash.2 messages and statuses
WINDOWS_TRASH_UNAVAILABLE = "Windows trash runtime is unavailable."
HOST_TRASH_UNAVAILABLE = "Host trash runtime is unavailable."
HOST_TRASH_UNAVAILABLE_ON = "Host trash runtime is unavailable on platform {platform}."
INPUT_REJECTED = "Windows trash execution rejected an invalid effective input."
TARGET_REJECTED = "Windows trash execution rejected a target outside the workspace."
TIMED_OUT = "Command timed out after {seconds} seconds"
FAILED_NO_OUTPUT = "Windows trash execution failed with exit code {code}."
STATUS_HOST_UNAVAILABLE = "host_trash_unavailable"
STATUS_WINDOWS_UNAVAILABLE = "windows_trash_unavailable"
STATUS_INPUT_REJECTED = "windows_trash_input_rejected"
STATUS_TARGET_REJECTED = "windows_trash_target_rejected"
STATUS_EXITED = "exited"
STATUS_TIMED_OUT = "timed_out"
STATUS_FAILED = "windows_trash_failed"
EXECUTION_WINDOWS = "windows-trash"
EXECUTION_HOST = "host-trash"
ELECTRON_RUN_AS_NODE = "ELECTRON_RUN_AS_NODE"
PROTECTED_WINDOWS_DIRS: tuple[str, ...] = ("windows", "program files", "program files (x86)")


# ---------------------------------------------------------------- POSIX rm shim (spec bash.trash.1)


def shim_dir(data_dir: str) -> str:
    return os.path.join(data_dir, SHIMS_SUBDIR)


def shim_path(data_dir: str) -> str:
    return os.path.join(data_dir, SHIMS_SUBDIR, SHIM_NAME)


def trash_program_path(data_dir: str, profile: Profile) -> str:
    return os.path.join(data_dir, BIN_SUBDIR, profile.trash_binary)


def shim_script(profile: Profile) -> str:
    """The shim's text (pure): a bash script that execs ``../bin/<trash_binary>``."""
    return SHIM_TEMPLATE.format(bin_subdir=BIN_SUBDIR, trash_binary=profile.trash_binary)


def _install_file(path: str, content: str, platform: str) -> None:
    """Write ``content`` only when it differs; re-apply mode 0755 every time."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            same = fh.read() == content
    except (OSError, UnicodeDecodeError):
        same = False
    if not same:
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            fh.write(content)
        os.replace(tmp, path)
    if platform != "win32":
        os.chmod(path, SHIM_MODE)


def ensure_rm_shim(data_dir: str, profile: Profile, platform: str = sys.platform) -> str | None:
    """Install ``<dataDir>/shims/rm``; returns its path, or None on win32 (never installed)."""
    if platform == "win32":
        return None
    path = shim_path(data_dir)
    _install_file(path, shim_script(profile), platform)
    return path


def ensure_trash_program(data_dir: str, profile: Profile, platform: str = sys.platform) -> str | None:
    """Install the ``mavis-trash`` program at ``<dataDir>/bin/<trash_binary>``."""
    if platform == "win32":
        return None
    path = trash_program_path(data_dir, profile)
    _install_file(path, TRASH_PROGRAM_SOURCE.read_text(encoding="utf-8"), platform)
    return path


def is_executable_file(path: str) -> bool:
    try:
        st = os.stat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and os.access(path, os.X_OK)


def shim_preflight(data_dir: str, profile: Profile, platform: str = sys.platform) -> None:
    """Check the shim is executable; re-seed it once if not; else raise ``ToolError``."""
    path = shim_path(data_dir)
    if is_executable_file(path):
        return
    try:
        ensure_rm_shim(data_dir, profile, platform)
    except OSError:
        pass
    if not is_executable_file(path):
        raise ToolError(SHIM_PREFLIGHT_FAILED.format(shim_path=path))


def resolve_agent_bash_env_policy(ctx: ToolContext, platform: str = sys.platform) -> BashEnvPolicy:
    """``resolveAgentBashEnvPolicy``: the plain policy without a data dir or on win32; otherwise
    the shim directory in front of PATH plus the shim preflight.

    Seeds the shim (and, once per session, the trash program) on the way; a failure to seed is
    left for the preflight to report.
    """
    profile = ctx.profile
    data_dir = profile.data_dir
    if not data_dir or platform == "win32":
        return resolve_bash_env_policy(None, ctx.env, profile)
    try:
        ensure_rm_shim(data_dir, profile, platform)
        if not ctx.workspace.state.get(SESSION_TRASH_INSTALLED_KEY):
            ensure_trash_program(data_dir, profile, platform)
            ctx.workspace.state[SESSION_TRASH_INSTALLED_KEY] = True
    except OSError:
        pass

    def preflight() -> None:
        shim_preflight(data_dir, profile, platform)

    return resolve_bash_env_policy(
        {"prepend_path": [shim_dir(data_dir)], "spawn_preflight": preflight}, ctx.env, profile
    )


# ---------------------------------------------------------------- Windows host trash (spec bash.trash.2)


def win_is_absolute(path: str) -> bool:
    """Node's ``path.win32.isAbsolute``: a leading separator, or a drive letter plus separator."""
    return path[:1] in ("/", "\\") or re.match(r"^[A-Za-z]:[\\/]", path) is not None


def _win_resolve(path: str, root: str) -> str:
    return ntpath.normpath(ntpath.join(root, path))


def target_rejected(target: str, workspace: str) -> bool:
    """A target outside the workspace or under ``X:\\windows`` / ``X:\\program files[ (x86)]``
    (win32 path semantics, case-insensitive)."""
    root = ntpath.normpath(workspace).rstrip("\\/")
    resolved = _win_resolve(target, workspace)
    lower_root = root.lower()
    lower = resolved.lower()
    inside = lower == lower_root or lower.startswith(lower_root + "\\")
    if not inside:
        return True
    m = re.match(r"^[a-z]:\\([^\\]+)(?:\\|$)", lower)
    return bool(m and m.group(1) in PROTECTED_WINDOWS_DIRS)


def _unavailable(runtime: Mapping[str, object] | None) -> ToolResult:
    if not runtime:
        return _error(HOST_TRASH_UNAVAILABLE, STATUS_HOST_UNAVAILABLE, EXECUTION_HOST)
    platform = str(runtime.get("platform"))
    if platform == "win32":
        return _error(WINDOWS_TRASH_UNAVAILABLE, STATUS_WINDOWS_UNAVAILABLE, EXECUTION_WINDOWS)
    return _error(HOST_TRASH_UNAVAILABLE_ON.format(platform=platform), STATUS_HOST_UNAVAILABLE, EXECUTION_HOST)


def _error(text: str, status: str, execution: str) -> ToolResult:
    return text_result(TOOL_NAME, text, {"status": status, "execution": execution}, is_error=True)


def host_trash_decision(
    args: Mapping[str, object],
    state: Mapping[str, object] | None,
    workspace: str,
    profile: Profile,
) -> ToolResult | dict[str, object] | None:
    """The pure part of spec bash.trash.2. Returns None (not a trash call), a finished ``ToolResult``, or
    a launch plan ``{"node_path", "argv", "cwd"}`` for the host's Node executable."""
    state = state or {}
    runtime = state.get("runtime")
    execution = state.get("execution")
    command = args.get("command")
    if not isinstance(runtime, Mapping):
        runtime = None
    if not isinstance(execution, Mapping):
        if command == profile.trash_sentinel:
            return _unavailable(runtime)
        return None
    if runtime is None:
        return _error(HOST_TRASH_UNAVAILABLE, STATUS_HOST_UNAVAILABLE, EXECUTION_HOST)
    platform = str(runtime.get("platform"))
    if platform != "win32":
        return _error(HOST_TRASH_UNAVAILABLE_ON.format(platform=platform), STATUS_HOST_UNAVAILABLE, EXECUTION_HOST)
    script = runtime.get("script_path")
    if not isinstance(script, str) or not win_is_absolute(script) or ntpath.basename(script) != profile.trash_script:
        return _error(WINDOWS_TRASH_UNAVAILABLE, STATUS_WINDOWS_UNAVAILABLE, EXECUTION_WINDOWS)
    if command != profile.trash_sentinel or args.get("run_in_background") is True:
        return _error(INPUT_REJECTED, STATUS_INPUT_REJECTED, EXECUTION_WINDOWS)
    raw_targets = execution.get("targets")
    # No usable target list is treated as an invalid effective input (inferred).
    if not isinstance(raw_targets, list) or not raw_targets or not all(isinstance(t, str) for t in raw_targets):
        return _error(INPUT_REJECTED, STATUS_INPUT_REJECTED, EXECUTION_WINDOWS)
    targets = [str(t) for t in raw_targets]
    if any(target_rejected(t, workspace) for t in targets):
        return _error(TARGET_REJECTED, STATUS_TARGET_REJECTED, EXECUTION_WINDOWS)
    return {"node_path": str(runtime.get("node_path") or ""), "argv": [script, "--", *targets], "cwd": workspace}


def host_trash_result(args: Mapping[str, object], ctx: ToolContext) -> ToolResult | None:
    """spec bash.trash.2 for the bash wrapper (dispatch step 3). None = not a trash call."""
    profile = ctx.profile
    state = ctx.workspace.state.get(SESSION_HOST_TRASH_KEY)
    decision = host_trash_decision(args, state if isinstance(state, Mapping) else None, ctx.root, profile)
    if decision is None or isinstance(decision, ToolResult):
        return decision
    seconds = resolve_foreground_timeout(args.get("timeout"), profile)
    policy = resolve_bash_env_policy(None, ctx.env, profile)
    env = sanitize_bash_subprocess_env(ctx.env, policy, profile, "win32").env
    env[ELECTRON_RUN_AS_NODE] = "1"
    argv = [str(decision["node_path"]), *[str(a) for a in decision["argv"]]]  # type: ignore[attr-defined]
    try:
        proc = subprocess.run(
            argv, cwd=str(decision["cwd"]), env=env, capture_output=True, text=True,
            timeout=seconds, stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return _error(TIMED_OUT.format(seconds=js_number(seconds)), STATUS_TIMED_OUT, EXECUTION_WINDOWS)
    except OSError as exc:
        return _error(str(exc), STATUS_FAILED, EXECUTION_WINDOWS)
    output = js_trim_end("\n".join([proc.stdout or "", proc.stderr or ""]))
    if proc.returncode == 0:
        return text_result(TOOL_NAME, output, {"status": STATUS_EXITED, "execution": EXECUTION_WINDOWS})
    return _error(output or FAILED_NO_OUTPUT.format(code=proc.returncode), STATUS_FAILED, EXECUTION_WINDOWS)
