"""PowerShell launchers and the language-mode probe (spec bash.14).

The probe runs against a fake ``powershell`` (a small bash script that prints a configured mode and
counts its invocations); live tests need a real PowerShell and skip without one.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.support.powershell import live_powershell
from tools_impl.bash.powershell import (
    LANGUAGE_MODE_PROBES,
    Invocation,
    constrained_language_launcher,
    constrained_source_var,
    full_language_launcher,
    parse_probe_output,
    prepare_invocation,
    probe_language_mode,
)
from tools_impl.bash.shell import POWERSHELL_ARGS, ShellConfig
from tools_impl.core.errors import ToolAborted
from tools_impl.core.profile import REFERENCE

NONCE = "0123456789abcdef0123456789abcdef"
PS_ARGS = ("-NoProfile", "-NonInteractive", "-Command")

FAKE = """#!/bin/bash
here=$(dirname "$0")
echo x >> "$here/count"
printf '%s' "$*" > "$here/last_args"
mode=$(cat "$here/mode")
case "$mode" in
  sleep) exec sleep 10 ;;
  fail) printf 'FullLanguage\\r\\n'; exit 3 ;;
  *) printf '%s\\r\\n' "$mode" ;;
esac
"""


class FakePowerShell:
    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.dir = directory
        self.path = directory / "powershell"
        self.path.write_text(FAKE)
        self.path.chmod(0o755)
        self.set_mode("FullLanguage")

    def set_mode(self, mode: str) -> None:
        (self.dir / "mode").write_text(mode)

    @property
    def calls(self) -> int:
        f = self.dir / "count"
        return len(f.read_text().splitlines()) if f.exists() else 0

    @property
    def config(self) -> ShellConfig:
        return ShellConfig(str(self.path), POWERSHELL_ARGS, "powershell")

    def prepare(self, command: str, profile=REFERENCE, **kw) -> Invocation:  # type: ignore[no-untyped-def]
        return prepare_invocation(
            self.config, command, cwd=str(self.dir), env=dict(os.environ), profile=profile, nonce=NONCE, **kw
        )


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    LANGUAGE_MODE_PROBES.clear()


@pytest.fixture
def fake(tmp_path: Path) -> FakePowerShell:
    if sys.platform == "win32":
        pytest.skip("the fake powershell is a bash script")
    return FakePowerShell(tmp_path / "ps")


# ------------------------------------------------------------------ launcher texts


def test_constrained_launcher_text_exact() -> None:
    assert constrained_language_launcher(NONCE) == (
        "$__mavis0123456789abcdef0123456789abcdefSource = "
        "$env:MAVIS_POWERSHELL_SOURCE_0123456789ABCDEF0123456789ABCDEF; "
        "Remove-Item -LiteralPath 'Env:MAVIS_POWERSHELL_SOURCE_0123456789ABCDEF0123456789ABCDEF'; "
        "Invoke-Expression $__mavis0123456789abcdef0123456789abcdefSource"
    )


def test_full_language_launcher_text_exact() -> None:
    v = "$__mavis" + NONCE
    r = v + "Requirements"
    expected = "; ".join(
        [
            "[Console]::InputEncoding = [System.Text.UTF8Encoding]::new($false)",
            "[Console]::OutputEncoding = [System.Text.UTF8Encoding]::new($false)",
            "$OutputEncoding = [System.Text.UTF8Encoding]::new($false)",
            f"{v}Source = [Console]::In.ReadToEnd()",
            f"{v}Tokens = $null",
            f"{v}Errors = $null",
            f"{v}Ast = [System.Management.Automation.Language.Parser]::ParseInput({v}Source, [ref]{v}Tokens, [ref]{v}Errors)",
            f"if ({v}Errors.Count -gt 0) {{ throw {v}Errors[0] }}",
            f"{r} = {v}Ast.ScriptRequirements",
            f"if ($null -ne {r}) {{ "
            f"if ($null -ne {r}.RequiredPSVersion -and $PSVersionTable.PSVersion -lt {r}.RequiredPSVersion) "
            f"{{ throw ('PowerShell {{0}} is required' -f {r}.RequiredPSVersion) }}; "
            f"if ($null -ne {r}.RequiredPSEditions -and {r}.RequiredPSEditions.Count -gt 0) "
            f"{{ {v}Edition = if ($PSVersionTable.PSEdition) {{ $PSVersionTable.PSEdition }} else {{ 'Desktop' }}; "
            f"if ({r}.RequiredPSEditions -notcontains {v}Edition) "
            f"{{ throw ('PowerShell edition {{0}} is required' -f ({r}.RequiredPSEditions -join ', ')) }} }}; "
            f"if ({r}.RequiredApplicationId -and {r}.RequiredApplicationId -ne $ShellId) "
            f"{{ throw ('PowerShell ShellId {{0}} is required' -f {r}.RequiredApplicationId) }}; "
            f"foreach ({v}Module in {r}.RequiredModules) "
            f"{{ Import-Module -FullyQualifiedName {v}Module -ErrorAction Stop }}; "
            f"foreach ({v}SnapIn in {r}.RequiresPSSnapIns) "
            f"{{ {v}SnapInLoaded = Get-PSSnapin -Name {v}SnapIn.Name -ErrorAction SilentlyContinue; "
            f"if ($null -eq {v}SnapInLoaded) "
            f"{{ {v}SnapInLoaded = Add-PSSnapin -Name {v}SnapIn.Name -PassThru -ErrorAction Stop }}; "
            f"if ($null -ne {v}SnapIn.Version -and {v}SnapInLoaded.Version -lt {v}SnapIn.Version) "
            f"{{ throw ('PowerShell snap-in {{0}} version {{1}} is required' -f {v}SnapIn.Name, {v}SnapIn.Version) }} }}; "
            f"if ({r}.IsElevationRequired) "
            f"{{ {v}Principal = New-Object System.Security.Principal.WindowsPrincipal"
            f"([System.Security.Principal.WindowsIdentity]::GetCurrent()); "
            f"if (-not {v}Principal.IsInRole([System.Security.Principal.WindowsBuiltInRole]::Administrator)) "
            f"{{ throw 'Administrator privileges are required' }} }} }}",
            f"& ([ScriptBlock]::Create({v}Source))",
        ]
    )
    assert full_language_launcher(NONCE) == expected


def test_launchers_use_profile_prefixes() -> None:
    text = constrained_language_launcher("ab" * 16, "$__x", "SRC_")
    assert text == "$__xababababababababababababababababSource = $env:SRC_ABABABABABABABABABABABABABABABAB; " \
        "Remove-Item -LiteralPath 'Env:SRC_ABABABABABABABABABABABABABABABAB'; Invoke-Expression $__xababababababababababababababababSource"
    assert full_language_launcher("cd" * 16, "$__y").count("$__ycdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdSource") == 3
    assert "$__mavis" not in full_language_launcher("cd" * 16, "$__y")


def test_constrained_language_launcher_text() -> None:
    nonce = "0123456789abcdef0123456789abcdef"
    var = "MAVIS_POWERSHELL_SOURCE_0123456789ABCDEF0123456789ABCDEF"
    assert constrained_source_var(nonce) == var
    assert constrained_language_launcher(nonce) == (
        f"$__mavis{nonce}Source = $env:{var}; Remove-Item -LiteralPath 'Env:{var}'; "
        f"Invoke-Expression $__mavis{nonce}Source")


def test_full_language_launcher_reads_stdin_parses_and_enforces_requires() -> None:
    nonce = "fedcba9876543210fedcba9876543210"
    text = full_language_launcher(nonce)
    for needle in ("[Console]::InputEncoding", "[Console]::OutputEncoding", "$OutputEncoding",
                   f"$__mavis{nonce}Source = [Console]::In.ReadToEnd()",
                   "[System.Management.Automation.Language.Parser]::ParseInput(", f"$__mavis{nonce}Tokens",
                   f"$__mavis{nonce}Errors", f"$__mavis{nonce}Ast", f"$__mavis{nonce}Requirements",
                   "RequiredPSVersion", "RequiredPSEditions", "RequiredApplicationId", "$ShellId", "RequiredModules",
                   "Import-Module -FullyQualifiedName", "RequiresPSSnapIns", "IsElevationRequired",
                   "WindowsPrincipal", "'PowerShell {0} is required'", "'PowerShell edition {0} is required'",
                   "'PowerShell ShellId {0} is required'", "'PowerShell snap-in {0} version {1} is required'",
                   "'Administrator privileges are required'", "[ScriptBlock]::Create("):
        assert needle in text, needle
    assert "; " in text and "\n" not in text


def test_parse_probe_output() -> None:
    assert parse_probe_output(0, "FullLanguage\r\n") == "FullLanguage"
    assert parse_probe_output(0, "  ConstrainedLanguage ") == "ConstrainedLanguage"
    assert parse_probe_output(1, "FullLanguage") is None
    assert parse_probe_output(None, "FullLanguage") is None
    assert parse_probe_output(0, "RestrictedLanguage") is None
    assert parse_probe_output(0, "FullLanguage\nextra") is None


@pytest.mark.parametrize(("code", "stdout", "mode"), [
    (0, "FullLanguage\r\n", "FullLanguage"), (0, "  ConstrainedLanguage ", "ConstrainedLanguage"),
    (1, "FullLanguage", None), (0, "RestrictedLanguage", None), (0, "", None)])
def test_language_mode_probe_result(code: int, stdout: str, mode: str | None) -> None:
    assert parse_probe_output(code, stdout) == mode


# ------------------------------------------------------------------ prepare_invocation


def test_bash_and_pwsh_run_the_command_unchanged(fake: FakePowerShell) -> None:
    for cfg in (ShellConfig("/bin/bash", ("-c",), "bash"), ShellConfig(str(fake.path), PS_ARGS, "pwsh")):
        inv = prepare_invocation(cfg, "echo hi", cwd=str(fake.dir), env={}, profile=REFERENCE)
        assert inv == Invocation((cfg.shell, *cfg.args, "echo hi"), None, {})
    assert fake.calls == 0


def test_full_language_uses_stdin_launcher_and_probe_is_cached(fake: FakePowerShell) -> None:
    inv = fake.prepare("Write-Output ü")
    assert inv == Invocation((str(fake.path), *PS_ARGS, full_language_launcher(NONCE)), "Write-Output ü", {})
    assert (fake.dir / "last_args").read_text() == (
        "-NoProfile -NonInteractive -Command $ExecutionContext.SessionState.LanguageMode"
    )
    fake.set_mode("ConstrainedLanguage")
    fake.prepare("x")
    assert fake.calls == 1


def test_constrained_language_uses_env_variable_launcher(fake: FakePowerShell) -> None:
    fake.set_mode("ConstrainedLanguage")
    inv = fake.prepare("Get-ChildItem")
    var = "MAVIS_POWERSHELL_SOURCE_0123456789ABCDEF0123456789ABCDEF"
    assert inv == Invocation((str(fake.path), *PS_ARGS, constrained_language_launcher(NONCE)), None, {var: "Get-ChildItem"})
    fake.prepare("again")
    assert fake.calls == 1


@pytest.mark.parametrize("mode", ["garbage", "fail"])
def test_undefined_probe_result_is_treated_as_full_language_and_evicted(fake: FakePowerShell, mode: str) -> None:
    fake.set_mode(mode)
    assert fake.prepare("a").stdin_text == "a"
    assert fake.prepare("b").stdin_text == "b"
    assert fake.calls == 2
    fake.set_mode("ConstrainedLanguage")
    assert fake.prepare("c").env_additions != {}
    assert fake.calls == 3


def test_cache_is_per_executable(fake: FakePowerShell, tmp_path: Path) -> None:
    other = FakePowerShell(tmp_path / "ps2")
    other.set_mode("ConstrainedLanguage")
    assert fake.prepare("x").stdin_text == "x"
    assert other.prepare("x").stdin_text is None
    assert (fake.calls, other.calls) == (1, 1)


def test_toggle_constrained_off_skips_probe(fake: FakePowerShell) -> None:
    fake.set_mode("ConstrainedLanguage")
    inv = fake.prepare("x", profile=REFERENCE.with_patches({"bash.ps-constrained": False}))
    assert inv.stdin_text == "x" and inv.argv[-1] == full_language_launcher(NONCE)
    assert fake.calls == 0


def test_toggle_stdin_launcher_off_passes_command_directly(fake: FakePowerShell) -> None:
    prof = REFERENCE.with_patches({"bash.ps51-stdin-launcher": False})
    assert fake.prepare("x", profile=prof) == Invocation((str(fake.path), *PS_ARGS, "x"), None, {})
    LANGUAGE_MODE_PROBES.clear()
    fake.set_mode("ConstrainedLanguage")
    assert fake.prepare("y", profile=prof).env_additions == {
        "MAVIS_POWERSHELL_SOURCE_0123456789ABCDEF0123456789ABCDEF": "y"
    }


def test_windows_powershell_toggle_off_means_no_launcher(fake: FakePowerShell) -> None:
    prof = REFERENCE.with_patches({"shell.windows-powershell": False})
    assert fake.prepare("x", profile=prof).argv[-1] == "x"
    assert fake.calls == 0


def test_random_nonce_is_32_hex(fake: FakePowerShell) -> None:
    fake.set_mode("ConstrainedLanguage")
    inv = prepare_invocation(fake.config, "x", cwd=str(fake.dir), env={}, profile=REFERENCE)
    [var] = inv.env_additions
    nonce = var.removeprefix("MAVIS_POWERSHELL_SOURCE_")
    assert len(nonce) == 32 and all(c in "0123456789ABCDEF" for c in nonce)
    assert inv.argv[-1] == constrained_language_launcher(nonce.lower())


@pytest.mark.skipif(sys.platform == "win32", reason="the stand-in powershell is a sh script")
def test_launcher_choice_for_windows_powershell_51(tmp_path: Path) -> None:
    probe = tmp_path / "powershell-stub"
    probe.write_text("#!/bin/sh\necho ConstrainedLanguage\n")
    probe.chmod(0o755)
    shell = ShellConfig(str(probe), PS_ARGS, "powershell")
    LANGUAGE_MODE_PROBES.clear()
    try:
        inv = prepare_invocation(shell, "Get-Date", cwd=str(tmp_path), env={}, profile=REFERENCE,
                                 nonce="a" * 32)
        var = "MAVIS_POWERSHELL_SOURCE_" + "A" * 32
        assert inv.stdin_text is None and inv.env_additions == {var: "Get-Date"}
        assert inv.argv[:4] == (str(probe), *PS_ARGS)
        full = prepare_invocation(shell, "Get-Date", cwd=str(tmp_path), env={},
                                  profile=REFERENCE.with_patches({"bash.ps-constrained": False}), nonce="b" * 32)
        assert full.stdin_text == "Get-Date" and full.env_additions == {}
        pwsh = prepare_invocation(ShellConfig("/x/pwsh", PS_ARGS, "pwsh"), "Get-Date", cwd=str(tmp_path), env={},
                                  profile=REFERENCE)
        assert pwsh.argv == ("/x/pwsh", *PS_ARGS, "Get-Date") and pwsh.stdin_text is None
    finally:
        LANGUAGE_MODE_PROBES.clear()


# ------------------------------------------------------------------ probe: timeout and abort


def test_probe_timeout_gives_undefined(fake: FakePowerShell) -> None:
    fake.set_mode("sleep")
    t0 = time.monotonic()
    assert probe_language_mode(str(fake.path), cwd=str(fake.dir), env=dict(os.environ), timeout_ms=300) is None
    assert time.monotonic() - t0 < 9  # killed at the probe timeout, not after the stub's 10 s sleep


def test_probe_abort_raises(fake: FakePowerShell) -> None:
    fake.set_mode("sleep")
    abort = threading.Event()
    threading.Timer(0.2, abort.set).start()
    t0 = time.monotonic()
    with pytest.raises(ToolAborted) as exc:
        fake.prepare("x", abort=abort)
    assert str(exc.value) == "Command aborted"
    assert time.monotonic() - t0 < 9  # the abort ended the probe before the stub's 10 s sleep


def test_probe_of_missing_executable_is_undefined(tmp_path: Path) -> None:
    assert probe_language_mode(str(tmp_path / "nope"), cwd=str(tmp_path), env={}) is None


# ------------------------------------------------------------------ live PowerShell

@pytest.fixture
def live_ps() -> str:
    """A real PowerShell (skips without one; fails under TOOLPROOF_REQUIRE_PWSH=1)."""
    return live_powershell()


@pytest.mark.pwsh
def test_live_probe_reports_a_language_mode(tmp_path: Path, live_ps: str) -> None:
    mode = probe_language_mode(live_ps, cwd=str(tmp_path), env=dict(os.environ))
    assert mode in ("FullLanguage", "ConstrainedLanguage")


@pytest.mark.pwsh
def test_live_full_language_launcher_round_trips_utf8_and_enforces_requires(tmp_path: Path, live_ps: str) -> None:

    def run(source: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [live_ps, *PS_ARGS, full_language_launcher(NONCE)],
            input=source.encode("utf-8"),
            capture_output=True,
            cwd=tmp_path,
            timeout=60,
        )

    ok = run("Write-Output 'héllo ✓'")
    assert ok.returncode == 0
    assert ok.stdout.decode("utf-8").strip() == "héllo ✓"
    bad = run("#requires -Version 99\nWrite-Output 'never'")
    assert bad.returncode != 0
    assert b"never" not in bad.stdout
    assert "PowerShell 99.0 is required" in (bad.stdout + bad.stderr).decode("utf-8", "replace")
