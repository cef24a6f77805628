"""Shell selection (spec bash.4) with injected platform / exists / which, and the engine PATH base
(spec bash.5 step 1)."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from tools_impl.bash.shell import (
    POWERSHELL_ARGS,
    ShellConfig,
    engine_bin_dir,
    get_shell_config,
    prepend_engine_bin,
)
from tools_impl.core.errors import ToolError
from tools_impl.core.profile import REFERENCE, UPSTREAM_PI, Profile

PWSH7 = "C:\\Program Files\\PowerShell\\7\\pwsh.exe"
PS51 = "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe"
GIT64 = "C:\\Program Files\\Git\\bin\\bash.exe"
GIT86 = "C:\\Program Files (x86)\\Git\\bin\\bash.exe"
WIN_ENV = {"ProgramFiles": "C:\\Program Files", "ProgramFiles(x86)": "C:\\Program Files (x86)"}
# The spec's PowerShell arguments, literally (not the implementation's POWERSHELL_ARGS).
PS_ARGS = ("-NoProfile", "-NonInteractive", "-Command")


def fs(*paths: str) -> Callable[[str], bool]:
    present = set(paths)
    return lambda p: p in present


def which_map(mapping: dict[str, str], calls: list[str] | None = None) -> Callable[[str], str | None]:
    def which(name: str) -> str | None:
        if calls is not None:
            calls.append(name)
        return mapping.get(name)

    return which


def win(profile=REFERENCE, *, exists: Callable[[str], bool], which=None, env=WIN_ENV) -> ShellConfig:  # type: ignore[no-untyped-def]
    return get_shell_config(profile, env, platform="win32", exists=exists, which=which or which_map({}))


# ------------------------------------------------------------------ unix


def test_unix_prefers_bin_bash() -> None:
    calls: list[str] = []
    cfg = get_shell_config(REFERENCE, {}, platform="linux", exists=fs("/bin/bash"), which=which_map({}, calls))
    assert cfg == ShellConfig("/bin/bash", ("-c",), "bash")
    assert calls == []


def test_unix_falls_back_to_which_bash_then_sh() -> None:
    cfg = get_shell_config(
        REFERENCE, {}, platform="darwin", exists=fs("/opt/bin/bash"), which=which_map({"bash": "/opt/bin/bash"})
    )
    assert cfg == ShellConfig("/opt/bin/bash", ("-c",), "bash")
    cfg = get_shell_config(REFERENCE, {}, platform="linux", exists=fs(), which=which_map({}))
    assert cfg == ShellConfig("sh", ("-c",), "bash")


def test_unix_real_machine_selects_an_existing_bash() -> None:
    cfg = get_shell_config(REFERENCE, dict(os.environ))
    assert cfg.args == ("-c",) and cfg.type == "bash"
    assert os.path.exists(cfg.shell)


# ------------------------------------------------------------------ custom shell path


@pytest.mark.parametrize(
    ("path", "kind", "args"),
    [
        ("/usr/bin/zsh", "bash", ("-c",)),
        (PWSH7, "pwsh", POWERSHELL_ARGS),
        (PS51, "powershell", POWERSHELL_ARGS),
        ("/opt/microsoft/powershell/7/pwsh", "pwsh", POWERSHELL_ARGS),
    ],
)
def test_custom_shell_path_type_by_substring(path: str, kind: str, args: tuple[str, ...]) -> None:
    prof = REFERENCE.replace(shell_path=path)
    assert get_shell_config(prof, {}, platform="linux", exists=fs(path)) == ShellConfig(path, args, kind)


def test_custom_shell_path_upstream_always_uses_dash_c() -> None:
    prof = UPSTREAM_PI.replace(shell_path=PWSH7)
    assert get_shell_config(prof, {}, platform="win32", exists=fs(PWSH7)) == ShellConfig(PWSH7, ("-c",), "bash")


def test_custom_shell_path_missing_raises_and_is_checked_every_time() -> None:
    prof = REFERENCE.replace(shell_path="/nope/bash")
    present: set[str] = set()
    with pytest.raises(ToolError) as exc:
        get_shell_config(prof, {}, platform="linux", exists=lambda p: p in present)
    assert str(exc.value) == "Custom shell path not found: /nope/bash"
    present.add("/nope/bash")
    assert get_shell_config(prof, {}, platform="linux", exists=lambda p: p in present).shell == "/nope/bash"


# ------------------------------------------------------------------ windows, reference


def test_windows_prefers_pwsh_on_path() -> None:
    cfg = win(exists=fs("D:\\pwsh\\pwsh.exe", PWSH7, PS51), which=which_map({"pwsh.exe": "D:\\pwsh\\pwsh.exe"}))
    assert cfg == ShellConfig("D:\\pwsh\\pwsh.exe", POWERSHELL_ARGS, "pwsh")


def test_windows_order_pwsh7_then_powershell51_then_git_bash_then_where_bash() -> None:
    assert win(exists=fs(PWSH7, PS51, GIT64)) == ShellConfig(PWSH7, POWERSHELL_ARGS, "pwsh")
    assert win(exists=fs(PS51, GIT64)) == ShellConfig(PS51, POWERSHELL_ARGS, "powershell")
    assert win(exists=fs(GIT64, GIT86)) == ShellConfig(GIT64, ("-c",), "bash")
    assert win(exists=fs(GIT86)) == ShellConfig(GIT86, ("-c",), "bash")
    cfg = win(exists=fs("C:\\msys\\bash.exe"), which=which_map({"bash.exe": "C:\\msys\\bash.exe"}))
    assert cfg == ShellConfig("C:\\msys\\bash.exe", ("-c",), "bash")


def test_windows_where_hit_that_does_not_exist_is_ignored() -> None:
    cfg = win(exists=fs(PS51), which=which_map({"pwsh.exe": "C:\\gone\\pwsh.exe"}))
    assert cfg.type == "powershell"


def test_windows_no_shell_found_message_prefix() -> None:
    with pytest.raises(ToolError) as exc:
        win(exists=fs())
    assert str(exc.value).startswith("No shell found. Options:")


# ------------------------------------------------------------------ windows, upstream


def test_windows_upstream_tries_only_git_bash_and_where_bash() -> None:
    calls: list[str] = []
    cfg = win(UPSTREAM_PI, exists=fs(PWSH7, PS51, GIT86), which=which_map({}, calls))
    assert cfg == ShellConfig(GIT86, ("-c",), "bash")
    assert calls == []


def test_windows_upstream_error_text_exact() -> None:
    with pytest.raises(ToolError) as exc:
        win(UPSTREAM_PI, exists=fs(PWSH7))
    assert str(exc.value) == (
        "No bash shell found. Options:\n"
        "  1. Install Git for Windows: https://git-scm.com/download/win\n"
        "  2. Add your bash to PATH (Cygwin, MSYS2, etc.)\n"
        "  3. Set shellPath in settings.json\n"
        "\n"
        "Searched Git Bash in:\n"
        "  C:\\Program Files\\Git\\bin\\bash.exe\n"
        "  C:\\Program Files (x86)\\Git\\bin\\bash.exe"
    )


def test_windows_upstream_error_lists_only_set_program_files_vars() -> None:
    with pytest.raises(ToolError) as exc:
        win(UPSTREAM_PI, exists=fs(), env={"ProgramFiles": "E:\\PF"})
    assert str(exc.value).endswith("Searched Git Bash in:\n  E:\\PF\\Git\\bin\\bash.exe")


# ------------------------------------------------------------------ the spec's selection tables


def shell_choice(platform: str, present: set[str], which: dict[str, str], env: dict[str, str] | None = None,
                 profile: Profile = REFERENCE) -> tuple[str, tuple[str, ...], str]:
    """(shell, args, type) chosen on ``platform`` when exactly ``present`` exist and ``which`` resolves names."""
    cfg = get_shell_config(profile, env or {}, platform=platform, exists=lambda p: p in present,
                           which=lambda name: which.get(name))
    return cfg.shell, tuple(cfg.args), cfg.type


def test_unix_shell_selection_order() -> None:
    assert shell_choice("linux", {"/bin/bash", "/usr/local/bin/bash"}, {"bash": "/usr/local/bin/bash"}) == (
        "/bin/bash", ("-c",), "bash")
    assert shell_choice("linux", {"/usr/local/bin/bash"}, {"bash": "/usr/local/bin/bash"}) == (
        "/usr/local/bin/bash", ("-c",), "bash")
    assert shell_choice("darwin", set(), {}) == ("sh", ("-c",), "bash")


def test_windows_shell_selection_order_reference() -> None:
    every = {"D:\\ps\\pwsh.exe", PWSH7, PS51, GIT64, GIT86, "D:\\bin\\bash.exe"}
    which = {"pwsh.exe": "D:\\ps\\pwsh.exe", "bash.exe": "D:\\bin\\bash.exe"}
    assert shell_choice("win32", every, which, WIN_ENV) == ("D:\\ps\\pwsh.exe", PS_ARGS, "pwsh")
    assert shell_choice("win32", every - {"D:\\ps\\pwsh.exe"}, {"bash.exe": "D:\\bin\\bash.exe"}, WIN_ENV) == (
        PWSH7, PS_ARGS, "pwsh")
    assert shell_choice("win32", {PS51, GIT64}, {}, WIN_ENV) == (PS51, PS_ARGS, "powershell")
    assert shell_choice("win32", {GIT64, GIT86}, {}, WIN_ENV) == (GIT64, ("-c",), "bash")
    assert shell_choice("win32", {GIT86}, {}, WIN_ENV) == (GIT86, ("-c",), "bash")
    assert shell_choice("win32", {"D:\\bin\\bash.exe"}, {"bash.exe": "D:\\bin\\bash.exe"}, WIN_ENV) == (
        "D:\\bin\\bash.exe", ("-c",), "bash")
    with pytest.raises(ToolError) as exc:
        shell_choice("win32", set(), {}, WIN_ENV)
    assert str(exc.value).startswith("No shell found. Options:")


def test_windows_shell_selection_upstream_and_its_error_text() -> None:
    up = REFERENCE.with_patches({"shell.windows-powershell": False})
    assert shell_choice("win32", {PWSH7, PS51, GIT86}, {"pwsh.exe": PWSH7}, WIN_ENV, up) == (GIT86, ("-c",), "bash")
    with pytest.raises(ToolError) as exc:
        shell_choice("win32", {PWSH7}, {}, WIN_ENV, up)
    assert str(exc.value) == (
        "No bash shell found. Options:\n"
        "  1. Install Git for Windows: https://git-scm.com/download/win\n"
        "  2. Add your bash to PATH (Cygwin, MSYS2, etc.)\n"
        "  3. Set shellPath in settings.json\n"
        "\n"
        "Searched Git Bash in:\n"
        f"  {GIT64}\n"
        f"  {GIT86}")


def test_custom_shell_type_inference_and_upstream_dash_c() -> None:
    for path, expected in [("/opt/pwsh/7/pwsh", ("pwsh", PS_ARGS)), (PS51, ("powershell", PS_ARGS)),
                           ("/usr/bin/zsh", ("bash", ("-c",)))]:
        prof = REFERENCE.replace(shell_path=path)
        got = shell_choice("linux", {path}, {}, None, prof)
        assert (got[2], got[1]) == expected
        upstream = prof.with_patches({"shell.windows-powershell": False})
        assert shell_choice("linux", {path}, {}, None, upstream)[1] == ("-c",)
    with pytest.raises(ToolError) as exc:
        shell_choice("linux", set(), {}, None, REFERENCE.replace(shell_path="/x/pwsh"))
    assert str(exc.value) == "Custom shell path not found: /x/pwsh"


# ------------------------------------------------------------------ engine bin dir / PATH base


def test_engine_bin_dir_default_and_override() -> None:
    assert engine_bin_dir({}, "/home/u") == "/home/u/.pi/agent/bin"
    assert engine_bin_dir({"PI_CODING_AGENT_DIR": "/x/agent"}, "/home/u") == "/x/agent/bin"
    assert engine_bin_dir({"PI_CODING_AGENT_DIR": "~/a"}, "/home/u") == "/home/u/a/bin"


def test_prepend_engine_bin_once_with_case_insensitive_key() -> None:
    env = {"PATH": "/usr/bin:/bin"}
    out = prepend_engine_bin(env, "/h/.pi/agent/bin", "linux")
    assert out == {"PATH": "/h/.pi/agent/bin:/usr/bin:/bin"}
    assert env == {"PATH": "/usr/bin:/bin"}
    assert prepend_engine_bin(out, "/h/.pi/agent/bin", "linux") == out
    assert prepend_engine_bin({"Path": "C:\\W"}, "C:\\b", "win32") == {"Path": "C:\\b;C:\\W"}
    assert prepend_engine_bin({}, "/b", "linux") == {"PATH": "/b"}
