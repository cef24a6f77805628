"""Recoverable deletion (spec bash.trash): the rm shim, the mavis-trash program, the agent policy and
preflight, and the Windows host-trash decisions."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tools_impl.bash.env_sanitize import sanitize_bash_subprocess_env
from tools_impl.bash.trash import (
    ensure_rm_shim,
    ensure_trash_program,
    host_trash_decision,
    host_trash_result,
    resolve_agent_bash_env_policy,
    shim_path,
    shim_preflight,
    shim_script,
    target_rejected,
    trash_program_path,
)
from tools_impl.core.context import ToolContext, WorkspaceState, make_context
from tools_impl.core.errors import ToolError
from tools_impl.core.profile import REFERENCE
from tools_impl.core.result import ToolResult

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX rm shim is never installed on win32")


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    d = tmp_path / "data"
    ensure_rm_shim(str(d), REFERENCE)
    ensure_trash_program(str(d), REFERENCE)
    return d


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    return w


def run(cmd: str, cwd: Path, data: Path, *, extra_path: str | None = None) -> subprocess.CompletedProcess[str]:
    shims = str(data / "shims") if extra_path is None else extra_path
    env = {"PATH": shims + ":" + os.environ["PATH"], "HOME": str(cwd), "LANG": "C.UTF-8"}
    return subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=30)


def entries(data: Path) -> list[dict[str, object]]:
    root = data / "trash"
    if not root.exists():
        return []
    out = []
    for e in sorted(root.iterdir()):
        out.append(json.loads((e / "metadata.json").read_text()))
    return out


# ------------------------------------------------------------------ shim installation


def test_shim_installed_with_mode_0755_and_managed_header(data_dir: Path) -> None:
    shim = data_dir / "shims" / "rm"
    assert stat.S_IMODE(shim.stat().st_mode) == 0o755
    text = shim.read_text()
    assert text.startswith("#!/usr/bin/env bash\n# MANAGED FILE - DO NOT EDIT.")
    assert "mavis-trash" in text


def test_shim_rewritten_only_when_content_differs_and_chmod_reapplied(data_dir: Path) -> None:
    shim = data_dir / "shims" / "rm"
    os.chmod(shim, 0o600)
    before = shim.stat().st_ino, shim.stat().st_mtime_ns
    ensure_rm_shim(str(data_dir), REFERENCE)
    assert (shim.stat().st_ino, shim.stat().st_mtime_ns) == before
    assert stat.S_IMODE(shim.stat().st_mode) == 0o755
    shim.write_text("#!/bin/sh\n/bin/rm \"$@\"\n")
    ensure_rm_shim(str(data_dir), REFERENCE)
    assert shim.read_text() == shim_script(REFERENCE)


def test_shim_never_installed_on_win32(tmp_path: Path) -> None:
    assert ensure_rm_shim(str(tmp_path / "d"), REFERENCE, "win32") is None
    assert not (tmp_path / "d").exists()


def test_rm_shim_is_never_installed_on_windows(ws: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    # A pinned environment: nothing of the caller's (CI, a sanitiser mode) reaches the policy.
    ctx = ToolContext(WorkspaceState(root=str(ws), env={"PATH": "/usr/bin:/bin"},
                                     profile=REFERENCE.replace(data_dir=str(data))))
    assert ensure_rm_shim(str(data), ctx.profile, "win32") is None
    policy = resolve_agent_bash_env_policy(ctx, "win32")
    assert policy.prepend_path is None and policy.spawn_preflight is None
    assert not (data / "shims").exists()
    posix = resolve_agent_bash_env_policy(ctx, "linux")
    assert posix.prepend_path == (f"{data}/shims",) and posix.spawn_preflight is not None


# ------------------------------------------------------------------ rm through the shim


def test_rm_through_path_moves_file_into_trash_with_metadata(data_dir: Path, ws: Path) -> None:
    (ws / "a.txt").write_text("hello")
    proc = run("rm a.txt", ws, data_dir)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert not (ws / "a.txt").exists()
    [meta] = entries(data_dir)
    assert meta["original_path"] == str(ws / "a.txt")
    assert meta["cwd"] == str(ws)
    assert meta["kind"] == "file"
    assert meta["format"] == "mavis-trash/1"
    assert isinstance(meta["deleted_at"], str) and isinstance(meta["deleted_at_ms"], int)
    payload = data_dir / "trash" / str(meta["id"]) / "payload" / "a.txt"
    assert payload.read_text() == "hello"


def test_rm_after_xargs_goes_to_trash(data_dir: Path, ws: Path) -> None:
    for n in ("x1", "x2"):
        (ws / n).write_text(n)
    proc = run("printf 'x1\\nx2\\n' | xargs rm", ws, data_dir)
    assert proc.returncode == 0, proc.stderr
    assert not (ws / "x1").exists() and not (ws / "x2").exists()
    assert sorted(str(m["original_path"]) for m in entries(data_dir)) == [str(ws / "x1"), str(ws / "x2")]


def test_rm_in_generated_script_goes_to_trash(data_dir: Path, ws: Path) -> None:
    (ws / "g.txt").write_text("g")
    (ws / "s.sh").write_text("#!/bin/sh\nrm g.txt\n")
    proc = run("sh s.sh", ws, data_dir)
    assert proc.returncode == 0, proc.stderr
    assert [m["original_path"] for m in entries(data_dir)] == [str(ws / "g.txt")]


def test_absolute_bin_rm_bypasses_the_shim(data_dir: Path, ws: Path) -> None:
    (ws / "b.txt").write_text("b")
    proc = run("/bin/rm b.txt", ws, data_dir)
    assert proc.returncode == 0
    assert not (ws / "b.txt").exists()
    assert entries(data_dir) == []


def test_shim_with_missing_trash_program_refuses_and_keeps_file(data_dir: Path, ws: Path) -> None:
    os.unlink(trash_program_path(str(data_dir), REFERENCE))
    (ws / "keep.txt").write_text("k")
    proc = run("rm -f keep.txt", ws, data_dir)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr == (
        f"rm: recoverable-delete runtime is missing at {data_dir}/bin/mavis-trash\n"
        "rm: refusing to fall back to an unrecoverable delete\n"
    )
    assert (ws / "keep.txt").read_text() == "k"


def test_shim_with_non_executable_trash_program_refuses(data_dir: Path, ws: Path) -> None:
    os.chmod(trash_program_path(str(data_dir), REFERENCE), 0o644)
    (ws / "keep.txt").write_text("k")
    proc = run("rm keep.txt", ws, data_dir)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[1] == "rm: refusing to fall back to an unrecoverable delete"
    assert (ws / "keep.txt").exists()


# ------------------------------------------------------------------ rm emulation


def test_missing_target_error_and_silence_with_f(data_dir: Path, ws: Path) -> None:
    proc = run("rm nope", ws, data_dir)
    assert (proc.returncode, proc.stderr) == (1, "rm: cannot remove 'nope': No such file or directory\n")
    proc = run("rm -f nope", ws, data_dir)
    assert (proc.returncode, proc.stderr) == (0, "")


def test_directory_needs_r(data_dir: Path, ws: Path) -> None:
    (ws / "d").mkdir()
    (ws / "d" / "f").write_text("f")
    proc = run("rm d", ws, data_dir)
    assert (proc.returncode, proc.stderr) == (1, "rm: cannot remove 'd': Is a directory\n")
    assert (ws / "d" / "f").exists()
    proc = run("rm -rf d", ws, data_dir)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert not (ws / "d").exists()
    [meta] = entries(data_dir)
    assert meta["kind"] == "directory"
    assert (data_dir / "trash" / str(meta["id"]) / "payload" / "d" / "f").read_text() == "f"


def test_dir_flag_moves_only_empty_directories(data_dir: Path, ws: Path) -> None:
    (ws / "e").mkdir()
    (ws / "n").mkdir()
    (ws / "n" / "x").write_text("")
    proc = run("rm -d e n", ws, data_dir)
    assert (proc.returncode, proc.stderr) == (1, "rm: cannot remove 'n': Directory not empty\n")
    assert not (ws / "e").exists() and (ws / "n").exists()


def test_options_after_operands_double_dash_and_partial_failure(data_dir: Path, ws: Path) -> None:
    (ws / "-odd").write_text("o")
    (ws / "ok").write_text("o")
    proc = run("rm ok missing -v -- -odd", ws, data_dir)
    assert proc.returncode == 1
    assert proc.stdout == "removed 'ok'\nremoved '-odd'\n"
    assert proc.stderr == "rm: cannot remove 'missing': No such file or directory\n"
    assert not (ws / "-odd").exists()


def test_invalid_option_and_missing_operand(data_dir: Path, ws: Path) -> None:
    proc = run("rm -z x", ws, data_dir)
    assert (proc.returncode, proc.stderr) == (
        1,
        "rm: invalid option -- 'z'\nTry 'rm --help' for more information.\n",
    )
    proc = run("rm", ws, data_dir)
    assert (proc.returncode, proc.stderr) == (1, "rm: missing operand\nTry 'rm --help' for more information.\n")
    assert run("rm -f", ws, data_dir).returncode == 0


def test_interactive_never_prompts_and_cancels_an_earlier_force(data_dir: Path, ws: Path) -> None:
    (ws / "i.txt").write_text("i")
    proc = run("rm -i i.txt </dev/null", ws, data_dir)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert not (ws / "i.txt").exists()
    proc = run("rm -f -i gone", ws, data_dir)
    assert (proc.returncode, proc.stderr) == (1, "rm: cannot remove 'gone': No such file or directory\n")


def test_symlink_is_moved_not_its_target(data_dir: Path, ws: Path) -> None:
    (ws / "real").write_text("r")
    (ws / "link").symlink_to("real")
    assert run("rm link", ws, data_dir).returncode == 0
    assert (ws / "real").read_text() == "r"
    assert [m["kind"] for m in entries(data_dir)] == ["symlink"]


def test_restore_puts_the_file_back_and_refuses_to_overwrite(data_dir: Path, ws: Path) -> None:
    (ws / "r.txt").write_text("first")
    run("rm r.txt", ws, data_dir)
    [meta] = entries(data_dir)
    prog = trash_program_path(str(data_dir), REFERENCE)
    (ws / "r.txt").write_text("new")
    proc = subprocess.run([prog, "--restore", str(meta["id"])], capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stderr == f"mavis-trash: cannot restore '{meta['id']}': '{ws / 'r.txt'}' already exists\n"
    os.unlink(ws / "r.txt")
    proc = subprocess.run([prog, "--restore", str(meta["id"])], capture_output=True, text=True)
    assert (proc.returncode, proc.stdout) == (0, f"restored '{ws / 'r.txt'}'\n")
    assert (ws / "r.txt").read_text() == "first"
    assert entries(data_dir) == []


def test_list_prints_metadata_lines(data_dir: Path, ws: Path) -> None:
    (ws / "l.txt").write_text("l")
    run("rm l.txt", ws, data_dir)
    proc = subprocess.run([trash_program_path(str(data_dir), REFERENCE), "--list"], capture_output=True, text=True)
    [line] = proc.stdout.splitlines()
    assert json.loads(line)["original_path"] == str(ws / "l.txt")


# ------------------------------------------------------------------ agent policy and preflight


def test_agent_policy_prepends_shims_and_preflight_passes(tmp_path: Path, ws: Path) -> None:
    data = tmp_path / "data2"
    ctx = make_context(str(ws), env={"PATH": "/usr/bin:/bin"}, profile=REFERENCE.replace(data_dir=str(data)))
    policy = resolve_agent_bash_env_policy(ctx, "linux")
    assert policy.prepend_path == (str(data / "shims"),)
    res = sanitize_bash_subprocess_env({"PATH": "/usr/bin"}, policy, ctx.profile, "linux")
    assert res.env["PATH"] == f"{data}/shims:/usr/bin"
    assert os.access(shim_path(str(data)), os.X_OK)
    assert os.access(trash_program_path(str(data), REFERENCE), os.X_OK)


def test_agent_policy_on_win32_is_plain(tmp_path: Path, ws: Path) -> None:
    ctx = make_context(str(ws), env={}, profile=REFERENCE.replace(data_dir=str(tmp_path / "d")))
    policy = resolve_agent_bash_env_policy(ctx, "win32")
    assert policy.prepend_path is None and policy.spawn_preflight is None


def test_preflight_reseeds_a_deleted_shim(data_dir: Path) -> None:
    os.unlink(shim_path(str(data_dir)))
    shim_preflight(str(data_dir), REFERENCE)
    assert os.access(shim_path(str(data_dir)), os.X_OK)


def test_preflight_raises_exact_message_when_reseed_fails(data_dir: Path) -> None:
    # A regular file where the shims directory should be makes re-seeding fail, even for root.
    shims = data_dir / "shims"
    os.unlink(shims / "rm")
    shims.rmdir()
    shims.write_text("not a directory")
    with pytest.raises(ToolError) as exc:
        shim_preflight(str(data_dir), REFERENCE)
    assert str(exc.value) == (
        f"The recoverable-delete rm shim at {shims}/rm is missing or not executable and could not be "
        "re-seeded. Refusing to start bash, because deletes would bypass the trash and become "
        "unrecoverable. Check that the MiniMax Code data directory is writable, then restart the app "
        "to re-seed the shim."
    )


# ------------------------------------------------------------------ Windows host trash (pure)

WS = "C:\\Users\\me\\proj"
RUNTIME = {"platform": "win32", "script_path": "C:\\App\\resources\\mavis-trash.js", "node_path": "C:\\App\\node.exe"}


def decide(args: dict[str, object], state: dict[str, object] | None) -> object:
    return host_trash_decision(args, state, WS, REFERENCE)


def err(res: object) -> tuple[str, dict[str, object] | None]:
    assert isinstance(res, ToolResult) and res.is_error
    return res.text, res.details


def test_no_recorded_execution_sentinel_never_reaches_a_shell() -> None:
    sentinel = {"command": "mavis-trash --"}
    assert err(decide(sentinel, {"runtime": RUNTIME})) == (
        "Windows trash runtime is unavailable.",
        {"status": "windows_trash_unavailable", "execution": "windows-trash"},
    )
    assert err(decide(sentinel, None))[0] == "Host trash runtime is unavailable."
    assert err(decide(sentinel, {"runtime": {"platform": "darwin"}}))[0] == (
        "Host trash runtime is unavailable on platform darwin."
    )
    assert decide({"command": "mavis-trash -- x"}, {"runtime": RUNTIME}) is None
    assert decide({"command": "ls"}, None) is None


def test_recorded_execution_decisions() -> None:
    rec = {"targets": ["a.txt"]}
    ok = {"command": "mavis-trash --"}
    assert err(decide(ok, {"execution": rec})) == (
        "Host trash runtime is unavailable.",
        {"status": "host_trash_unavailable", "execution": "host-trash"},
    )
    assert err(decide(ok, {"execution": rec, "runtime": {**RUNTIME, "platform": "linux"}}))[0] == (
        "Host trash runtime is unavailable on platform linux."
    )
    for script in ("mavis-trash.js", "C:\\App\\other.js"):
        assert err(decide(ok, {"execution": rec, "runtime": {**RUNTIME, "script_path": script}})) == (
            "Windows trash runtime is unavailable.",
            {"status": "windows_trash_unavailable", "execution": "windows-trash"},
        )
    for args in ({"command": "rm a.txt"}, {"command": "mavis-trash --", "run_in_background": True}):
        assert err(decide(args, {"execution": rec, "runtime": RUNTIME})) == (
            "Windows trash execution rejected an invalid effective input.",
            {"status": "windows_trash_input_rejected", "execution": "windows-trash"},
        )
    for target in ("..\\other\\x", "D:\\x", "C:\\Windows\\x"):
        assert err(decide(ok, {"execution": {"targets": ["a", target]}, "runtime": RUNTIME})) == (
            "Windows trash execution rejected a target outside the workspace.",
            {"status": "windows_trash_target_rejected", "execution": "windows-trash"},
        )
    plan = decide(ok, {"execution": {"targets": ["a.txt", "C:\\USERS\\ME\\PROJ\\sub\\b"]}, "runtime": RUNTIME})
    assert plan == {
        "node_path": "C:\\App\\node.exe",
        "argv": ["C:\\App\\resources\\mavis-trash.js", "--", "a.txt", "C:\\USERS\\ME\\PROJ\\sub\\b"],
        "cwd": WS,
    }


def test_target_rejection_rules() -> None:
    assert not target_rejected("a\\b", WS)
    assert target_rejected("C:\\Users\\me\\projX\\a", WS)
    assert target_rejected("x", "C:\\Program Files (x86)\\ws")
    assert target_rejected("e:\\PROGRAM FILES\\x", "E:\\")
    assert not target_rejected("e:\\data\\x", "E:\\")


def test_host_trash_rejects_targets_under_windows_system_directories() -> None:
    assert target_rejected("C:\\Windows\\x.dll", "C:\\") is True
    assert target_rejected("c:\\program files (x86)\\app", "C:\\") is True
    assert target_rejected("C:\\Program Files\\app", "C:\\") is True
    assert target_rejected("C:\\work\\a.txt", "C:\\") is False
    assert target_rejected("sub\\a.txt", "C:\\work") is False
    assert target_rejected("D:\\other\\a.txt", "C:\\work") is True


def test_host_trash_result_runs_the_node_executable_with_sanitised_env(tmp_path: Path) -> None:
    # A stand-in "node" that echoes its argv and ELECTRON_RUN_AS_NODE; the decision is forced to
    # the launch branch through a win32 runtime whose script path is absolute.
    node = tmp_path / "node"
    node.write_text(
        '#!/bin/sh\nprintf "args:%s\\n" "$*"\nprintf "ern:%s token:%s\\n" "$ELECTRON_RUN_AS_NODE" "${OPENAI_API_KEY-unset}" >&2\n'
    )
    node.chmod(0o755)
    ctx = make_context(str(tmp_path), env={"CI": "true", "OPENAI_API_KEY": "k", "PATH": os.environ["PATH"]})
    ctx.workspace.state["host_trash"] = {
        "runtime": {"platform": "win32", "script_path": "\\app\\mavis-trash.js", "node_path": str(node)},
        "execution": {"targets": ["a.txt"]},
    }
    res = host_trash_result({"command": "mavis-trash --"}, ctx)
    assert res is not None and not res.is_error
    # stdout and stderr joined with "\n", then end-trimmed
    assert res.text == "args:\\app\\mavis-trash.js -- a.txt\n\nern:1 token:unset"
    assert res.details == {"status": "exited", "execution": "windows-trash"}


def test_host_trash_timeout_message_uses_resolved_foreground_timeout(tmp_path: Path) -> None:
    node = tmp_path / "node"
    node.write_text("#!/bin/sh\nexec sleep 5\n")
    node.chmod(0o755)
    ctx = make_context(str(tmp_path), env={"PATH": os.environ["PATH"]})
    ctx.workspace.state["host_trash"] = {
        "runtime": {"platform": "win32", "script_path": "C:\\a\\mavis-trash.js", "node_path": str(node)},
        "execution": {"targets": ["x"]},
    }
    res = host_trash_result({"command": "mavis-trash --", "timeout": 0.3}, ctx)
    assert res is not None and res.is_error
    assert (res.text, res.details) == (
        "Command timed out after 0.3 seconds",
        {"status": "timed_out", "execution": "windows-trash"},
    )
