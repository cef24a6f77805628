"""Windows PowerShell 5.1 command transport (spec bash.14): the language-mode probe and its cache,
the FullLanguage stdin launcher and the ConstrainedLanguage environment-variable launcher, which
the patches ``bash.ps51-stdin-launcher`` and ``bash.ps-constrained`` (``bash/patches.py``) use at
the engine's ``bash.transport`` seam; ``prepare_invocation`` is what that seam gives for a profile.

The launcher texts are pure functions of a nonce (and the profile's name prefixes), so they can
be asserted exactly; the probe is the only I/O here.
"""

from __future__ import annotations

import io
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Mapping
from typing import cast

from tools_impl.bash.engine import TRANSPORT, Invocation
from tools_impl.bash.shell import ShellConfig
from tools_impl.core.errors import ToolAborted
from tools_impl.core.profile import Profile
from tools_impl.js.text import js_trim

FULL_LANGUAGE = "FullLanguage"
CONSTRAINED_LANGUAGE = "ConstrainedLanguage"
LANGUAGE_MODES: frozenset[str] = frozenset({FULL_LANGUAGE, CONSTRAINED_LANGUAGE})
PROBE_COMMAND = "$ExecutionContext.SessionState.LanguageMode"
PROBE_ARGS: tuple[str, ...] = ("-NoProfile", "-NonInteractive", "-Command")
PROBE_TIMEOUT_MS = 5000
PROBE_MAX_STDOUT_CHARS = 128
PROBE_POLL_S = 0.02
PROBE_ABORTED = "Command aborted"
STATEMENT_SEPARATOR = "; "
UTF8_NO_BOM = "[System.Text.UTF8Encoding]::new($false)"

# Format strings the FullLanguage launcher throws with (PowerShell `-f` syntax).
REQUIRES_VERSION_ERROR = "'PowerShell {0} is required'"
REQUIRES_EDITION_ERROR = "'PowerShell edition {0} is required'"
REQUIRES_SHELLID_ERROR = "'PowerShell ShellId {0} is required'"
REQUIRES_SNAPIN_ERROR = "'PowerShell snap-in {0} version {1} is required'"
REQUIRES_ELEVATION_ERROR = "'Administrator privileges are required'"

_NO_WINDOW = 0x08000000  # CREATE_NO_WINDOW; only meaningful on win32


# ---------------------------------------------------------------- launcher texts (pure)


def new_nonce() -> str:
    """32 lowercase hex digits (a random UUID without dashes)."""
    return uuid.uuid4().hex


def full_language_launcher(nonce: str, var_prefix: str = "$__mavis") -> str:
    """The ``-Command`` argument that reads the real command from stdin, parses it, enforces its
    ``#requires`` declarations and runs it as an in-memory ScriptBlock (spec bash.14)."""
    v = f"{var_prefix}{nonce}"
    src, tokens, errors, ast, req = (f"{v}Source", f"{v}Tokens", f"{v}Errors", f"{v}Ast", f"{v}Requirements")
    edition, module, snapin, loaded, principal = (
        f"{v}Edition", f"{v}Module", f"{v}SnapIn", f"{v}SnapInLoaded", f"{v}Principal",
    )

    def block(*statements: str) -> str:
        return "{ " + STATEMENT_SEPARATOR.join(statements) + " }"

    requirement_checks = [
        f"if ($null -ne {req}.RequiredPSVersion -and $PSVersionTable.PSVersion -lt {req}.RequiredPSVersion) "
        + block(f"throw ({REQUIRES_VERSION_ERROR} -f {req}.RequiredPSVersion)"),
        f"if ($null -ne {req}.RequiredPSEditions -and {req}.RequiredPSEditions.Count -gt 0) "
        + block(
            f"{edition} = if ($PSVersionTable.PSEdition) {{ $PSVersionTable.PSEdition }} else {{ 'Desktop' }}",
            f"if ({req}.RequiredPSEditions -notcontains {edition}) "
            + block(f"throw ({REQUIRES_EDITION_ERROR} -f ({req}.RequiredPSEditions -join ', '))"),
        ),
        f"if ({req}.RequiredApplicationId -and {req}.RequiredApplicationId -ne $ShellId) "
        + block(f"throw ({REQUIRES_SHELLID_ERROR} -f {req}.RequiredApplicationId)"),
        f"foreach ({module} in {req}.RequiredModules) "
        + block(f"Import-Module -FullyQualifiedName {module} -ErrorAction Stop"),
        f"foreach ({snapin} in {req}.RequiresPSSnapIns) "
        + block(
            f"{loaded} = Get-PSSnapin -Name {snapin}.Name -ErrorAction SilentlyContinue",
            f"if ($null -eq {loaded}) " + block(f"{loaded} = Add-PSSnapin -Name {snapin}.Name -PassThru -ErrorAction Stop"),
            f"if ($null -ne {snapin}.Version -and {loaded}.Version -lt {snapin}.Version) "
            + block(f"throw ({REQUIRES_SNAPIN_ERROR} -f {snapin}.Name, {snapin}.Version)"),
        ),
        f"if ({req}.IsElevationRequired) "
        + block(
            f"{principal} = New-Object System.Security.Principal.WindowsPrincipal"
            "([System.Security.Principal.WindowsIdentity]::GetCurrent())",
            f"if (-not {principal}.IsInRole([System.Security.Principal.WindowsBuiltInRole]::Administrator)) "
            + block(f"throw {REQUIRES_ELEVATION_ERROR}"),
        ),
    ]
    statements = [
        f"[Console]::InputEncoding = {UTF8_NO_BOM}",
        f"[Console]::OutputEncoding = {UTF8_NO_BOM}",
        f"$OutputEncoding = {UTF8_NO_BOM}",
        f"{src} = [Console]::In.ReadToEnd()",
        f"{tokens} = $null",
        f"{errors} = $null",
        f"{ast} = [System.Management.Automation.Language.Parser]::ParseInput({src}, [ref]{tokens}, [ref]{errors})",
        f"if ({errors}.Count -gt 0) " + block(f"throw {errors}[0]"),
        f"{req} = {ast}.ScriptRequirements",
        f"if ($null -ne {req}) " + block(*requirement_checks),
        f"& ([ScriptBlock]::Create({src}))",
    ]
    return STATEMENT_SEPARATOR.join(statements)


def constrained_source_var(nonce: str, source_prefix: str = "MAVIS_POWERSHELL_SOURCE_") -> str:
    """The one-shot environment variable that carries the command: ``<prefix><NONCE>``."""
    return f"{source_prefix}{nonce.upper()}"


def constrained_language_launcher(
    nonce: str, var_prefix: str = "$__mavis", source_prefix: str = "MAVIS_POWERSHELL_SOURCE_"
) -> str:
    """The ``-Command`` argument for ConstrainedLanguage hosts: read the command from the
    one-shot variable, delete the variable, ``Invoke-Expression`` it (no .NET calls)."""
    var = constrained_source_var(nonce, source_prefix)
    v = f"{var_prefix}{nonce}Source"
    return f"{v} = $env:{var}; Remove-Item -LiteralPath 'Env:{var}'; Invoke-Expression {v}"


# ---------------------------------------------------------------- language-mode probe


def parse_probe_output(returncode: int | None, stdout: str) -> str | None:
    """``FullLanguage`` / ``ConstrainedLanguage`` when the exit code is 0 and the trimmed stdout
    is exactly one of them; otherwise None (undefined)."""
    if returncode != 0:
        return None
    mode = js_trim(stdout)
    return mode if mode in LANGUAGE_MODES else None


def probe_language_mode(
    shell: str,
    *,
    cwd: str,
    env: Mapping[str, str],
    abort: threading.Event | None = None,
    timeout_ms: int = PROBE_TIMEOUT_MS,
) -> str | None:
    """Run ``shell -NoProfile -NonInteractive -Command $ExecutionContext.SessionState.LanguageMode``
    once. Killed after ``timeout_ms`` (→ None); a spawn failure is None; an abort kills the probe
    and raises ``ToolAborted('Command aborted')``."""
    if abort is not None and abort.is_set():
        raise ToolAborted(PROBE_ABORTED)
    try:
        proc = subprocess.Popen(
            [shell, *PROBE_ARGS, PROBE_COMMAND],
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            creationflags=_NO_WINDOW if sys.platform == "win32" else 0,
        )
    except (OSError, ValueError):
        return None
    captured: list[str] = []

    def read() -> None:
        stream = cast(io.BufferedReader, proc.stdout)
        buf = b""
        while True:
            chunk = stream.read1(4096)
            if not chunk:
                break
            if len(buf) < PROBE_MAX_STDOUT_CHARS * 4:
                buf += chunk
        captured.append(buf.decode("utf-8", "replace")[:PROBE_MAX_STDOUT_CHARS])

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + timeout_ms / 1000
    try:
        while True:
            if abort is not None and abort.is_set():
                proc.kill()
                raise ToolAborted(PROBE_ABORTED)
            if proc.poll() is not None:
                break
            if time.monotonic() >= deadline:
                proc.kill()
                proc.wait()
                return None
            time.sleep(PROBE_POLL_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(1.0)
    return parse_probe_output(proc.returncode, captured[0] if captured else "")


class LanguageModeCache:
    """Probe results per PowerShell executable path; an undefined result is not kept, so the
    next command probes again."""

    def __init__(self) -> None:
        self._modes: dict[str, str] = {}
        self._lock = threading.Lock()

    def get(self, shell: str, *, cwd: str, env: Mapping[str, str],
            abort: threading.Event | None = None) -> str | None:
        with self._lock:
            hit = self._modes.get(shell)
        if hit is not None:
            return hit
        mode = probe_language_mode(shell, cwd=cwd, env=env, abort=abort)
        if mode is not None:
            with self._lock:
                self._modes[shell] = mode
        return mode

    def clear(self) -> None:
        with self._lock:
            self._modes.clear()


# One per process: an executable's language mode does not change while it runs.
LANGUAGE_MODE_PROBES = LanguageModeCache()


# ---------------------------------------------------------------- engine entry point


def prepare_invocation(
    shell: ShellConfig,
    command: str,
    *,
    cwd: str,
    env: Mapping[str, str],
    profile: Profile,
    abort: threading.Event | None = None,
    nonce: str | None = None,
) -> Invocation:
    """The spawn inputs for ``command`` under ``shell`` with ``profile``'s patches (seam
    ``bash.transport``; pi: ``(shell, *args, command)``). ``nonce`` fixes the launcher nonce
    (tests); default a fresh UUID hex. Raises ``ToolAborted`` when aborted during a probe.
    """
    return TRANSPORT.of(profile)(shell, command, cwd=cwd, env=env, profile=profile, abort=abort, nonce=nonce)
