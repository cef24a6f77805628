"""What a worker container may do: limits, capabilities, the seccomp profile, mounts and labels,
as pure data plus the ``docker run`` argument list built from it (everything shows up in
``docker inspect``).

Who runs as whom inside (docs/docker.md has the table): the container's main command is
toolproof's supervisor, uid 0. The container may hold CAP_SETUID and CAP_SETGID (to start the
implementation as the tool uid), CAP_KILL (to take processes down), and CAP_SYS_ADMIN,
CAP_SYS_CHROOT, CAP_NET_ADMIN and CAP_SETPCAP, which only the sandbox maker and each sandbox's init
use: to enter fresh namespaces and return from them, mount the sandbox's file systems, bring up
its loopback and empty the implementation's bounding set; the supervisor keeps CAP_KILL alone, each init drops all but
SETUID, SETGID and KILL once its sandbox is built. The implementation and every command it runs
are uid 1000 with no capability at all, bounding set included (``no-new-privileges``: no setuid
or file-capability gain either). The root file system is read-only, the implementation lives in
``/opt/toolproof`` (read-only image content), and the only writable places are each sandbox's
fresh /tmp, /work, $HOME, /dev/shm, /dev/mqueue and /dev/pts — gone with the sandbox after one
scenario.

The seccomp profile allows everything except what would let a command reach another process's
memory or file descriptors (``ptrace``, ``process_vm_readv``/``writev``, ``pidfd_getfd``,
``kcmp``) or make namespaces of its own without privilege (user and cgroup namespaces by
``clone`` or ``unshare``, any namespace flag of ``clone``; ``clone3`` answers ENOSYS so the C
library falls back to ``clone``), plus unmounting, ``chroot``, ``pivot_root``, the new mount API,
kernel-module, keyring, BPF and perf calls that no tool needs. ``unshare`` of the other
namespaces, ``setns`` and ``mount`` are left to the kernel, which refuses them to a process
without CAP_SYS_ADMIN — every process a scenario runs.

Where the engine confines containers with AppArmor, they run unconfined: its ``docker-default``
profile forbids every mount, and each scenario's sandbox is made of mounts
(``ContainerSpec.security_opt``; docs/docker.md says what that layer would have added).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path

from harness.images.recipes import cache_dir

LABEL_RUN_ID = "org.toolproof.run-id"
LABEL_ROLE = "org.toolproof.role"
LABEL_OWNER = "org.toolproof.owner"
LABEL_SESSION = "org.toolproof.session"
LABEL_BACKEND = "org.toolproof.backend"  # one backend instance: close/abort sweep by it
ROLE_WORKER = "worker"
SESSION_ENV = "TOOLPROOF_SESSION"
CPUS_ENV = "TOOLPROOF_DOCKER_CPUS"
TOOL_UID = 1000
TOOL_GID = 1000
CONTAINER_HOME = "/home/toolproof"
WORKSPACE_PARENT = "/work"
INSTALL_DIR = "/opt/toolproof"
SUPERVISOR_PATH = f"{INSTALL_DIR}/supervisor.py"

DENIED_SYSCALLS = (
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    "umount", "umount2", "pivot_root", "chroot", "move_mount",
    "open_tree", "fsopen", "fsmount", "fsconfig", "fspick", "mount_setattr",
    "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "open_by_handle_at", "name_to_handle_at", "acct", "swapon", "swapoff", "reboot", "syslog",
    "quotactl", "lookup_dcookie", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "iopl", "ioperm", "uselib",
)
CLONE_NAMESPACE_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
CLONE_NEWUSER = 0x10000000
CLONE_NEWCGROUP = 0x02000000
UNPRIVILEGED_NAMESPACE_FLAGS = (CLONE_NEWCGROUP, CLONE_NEWUSER)  # the kernel lets anyone make these
EPERM = 1
ENOSYS = 38
APPARMOR_UNCONFINED = "apparmor=unconfined"


def engine_security_opt(info: dict[str, object]) -> tuple[str, ...]:
    """Extra ``--security-opt`` values for an engine whose ``docker info`` is ``info``: AppArmor's
    ``docker-default`` profile forbids the mounts each scenario's sandbox is made of."""
    options = info.get("SecurityOptions") or []
    apparmor = isinstance(options, list) and any("name=apparmor" in str(o) for o in options)
    return (APPARMOR_UNCONFINED,) if apparmor else ()


def seccomp_profile() -> dict[str, object]:
    """The worker containers' seccomp profile (Docker's JSON format)."""
    rules: list[dict[str, object]] = [
        {"names": sorted(DENIED_SYSCALLS), "action": "SCMP_ACT_ERRNO", "errnoRet": EPERM},
        {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": ENOSYS},
    ]
    for flag in CLONE_NAMESPACE_FLAGS:
        rules.append({"names": ["clone"], "action": "SCMP_ACT_ERRNO", "errnoRet": EPERM,
                      "args": [{"index": 0, "value": flag, "valueTwo": flag, "op": "SCMP_CMP_MASKED_EQ"}]})
    for flag in UNPRIVILEGED_NAMESPACE_FLAGS:
        rules.append({"names": ["unshare"], "action": "SCMP_ACT_ERRNO", "errnoRet": EPERM,
                      "args": [{"index": 0, "value": flag, "valueTwo": flag, "op": "SCMP_CMP_MASKED_EQ"}]})
    return {"defaultAction": "SCMP_ACT_ALLOW",
            "archMap": [{"architecture": "SCMP_ARCH_X86_64", "subArchitectures": ["SCMP_ARCH_X86", "SCMP_ARCH_X32"]},
                        {"architecture": "SCMP_ARCH_AARCH64", "subArchitectures": ["SCMP_ARCH_ARM"]}],
            "syscalls": rules}


def seccomp_profile_file() -> Path:
    """The profile written (once, content-addressed) where the ``docker`` CLI can read it."""
    text = json.dumps(seccomp_profile(), indent=1, sort_keys=True)
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    path = cache_dir() / "seccomp" / f"worker-{digest}.json"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    return path


def default_cpus() -> float:
    raw = os.environ.get(CPUS_ENV, "").strip()
    try:
        value = float(raw) if raw else 1.0
    except ValueError:
        value = 1.0
    return value if value > 0 else 1.0


@dataclass(frozen=True)
class Hardening:
    """The container's limits; ``cpus`` defaults to ``$TOOLPROOF_DOCKER_CPUS`` or 1 CPU."""

    network_mode: str = "none"
    pids_limit: int = 256
    mem_limit: str = "1g"
    cpus: float = field(default_factory=default_cpus)
    cap_drop: tuple[str, ...] = ("ALL",)
    cap_add: tuple[str, ...] = ("SETUID", "SETGID", "KILL", "SETPCAP", "SYS_ADMIN", "SYS_CHROOT", "NET_ADMIN")
    security_opt: tuple[str, ...] = ("no-new-privileges",)
    seccomp: bool = True
    user: str = "0:0"
    init: bool = True
    read_only: bool = True
    ipc_mode: str = "private"
    tmpfs: tuple[tuple[str, str], ...] = (
        ("/tmp", "rw,exec,nosuid,nodev,size=256m,mode=1777"),
        (WORKSPACE_PARENT, f"rw,exec,nosuid,nodev,size=512m,uid={TOOL_UID},gid={TOOL_GID},mode=0755"),
        (CONTAINER_HOME, f"rw,exec,nosuid,nodev,size=64m,uid={TOOL_UID},gid={TOOL_GID},mode=0755"),
    )


DEFAULT_HARDENING = Hardening()


def owner_label() -> str:
    """``host:pid:start`` of this process: ``cleanup`` tells live runs from dead ones by it."""
    return f"{socket.gethostname()}:{os.getpid()}:{process_start_ticks(os.getpid())}"


def process_start_ticks(pid: int) -> str:
    """The start time of ``pid`` in clock ticks since boot (``/proc``), or ``?``."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return fields[19].decode()
    except (OSError, IndexError):
        return "?"


@dataclass(frozen=True)
class ContainerSpec:
    """One worker container: image, labels and the supervisor's configuration."""

    image: str
    run_id: str
    name: str
    supervisor_config: dict[str, object]
    hardening: Hardening = DEFAULT_HARDENING
    labels: dict[str, str] = field(default_factory=dict)
    security_opt: tuple[str, ...] = ()  # the engine's, e.g. APPARMOR_UNCONFINED


def container_labels(spec: ContainerSpec) -> dict[str, str]:
    labels = {**spec.labels, LABEL_RUN_ID: spec.run_id, LABEL_ROLE: ROLE_WORKER, LABEL_OWNER: owner_label()}
    session = os.environ.get(SESSION_ENV, "").strip()
    if session:
        labels[LABEL_SESSION] = session
    return labels


def run_arguments(spec: ContainerSpec, seccomp_file: str | None) -> list[str]:
    """``docker run`` arguments (after ``docker``) for ``spec``: attached stdin as the lifeline,
    auto-remove, no signal proxying (the harness ends containers by closing stdin)."""
    h = spec.hardening
    args = ["run", "-i", "--rm", "--sig-proxy=false", "--log-driver", "none", "--name", spec.name]
    for key, value in sorted(container_labels(spec).items()):
        args += ["--label", f"{key}={value}"]
    args += ["--network", h.network_mode, "--pids-limit", str(h.pids_limit),
             "--memory", h.mem_limit, "--memory-swap", h.mem_limit, "--cpus", f"{h.cpus:g}",
             "--ipc", h.ipc_mode, "--user", h.user, "--workdir", WORKSPACE_PARENT]
    args += [a for cap in h.cap_drop for a in ("--cap-drop", cap)]
    args += [a for cap in h.cap_add for a in ("--cap-add", cap)]
    args += [a for opt in h.security_opt for a in ("--security-opt", opt)]
    if h.seccomp and seccomp_file:
        args += ["--security-opt", f"seccomp={seccomp_file}"]
    args += [a for opt in spec.security_opt for a in ("--security-opt", opt)]
    if h.init:
        args.append("--init")
    if h.read_only:
        args.append("--read-only")
    for path, opts in h.tmpfs:
        args += ["--tmpfs", f"{path}:{opts}"]
    args += [spec.image, "python3", "-I", "-B", SUPERVISOR_PATH,
             json.dumps(spec.supervisor_config, separators=(",", ":"))]
    return args


def label_filters(run_id: str | None) -> dict[str, list[str]]:
    labels = [f"{LABEL_ROLE}={ROLE_WORKER}"]
    if run_id is not None:
        labels.append(f"{LABEL_RUN_ID}={run_id}")
    return {"label": labels}


__all__ = [
    "APPARMOR_UNCONFINED",
    "CONTAINER_HOME",
    "DEFAULT_HARDENING",
    "INSTALL_DIR",
    "LABEL_OWNER",
    "LABEL_ROLE",
    "LABEL_RUN_ID",
    "LABEL_SESSION",
    "ROLE_WORKER",
    "TOOL_UID",
    "WORKSPACE_PARENT",
    "ContainerSpec",
    "Hardening",
    "container_labels",
    "engine_security_opt",
    "label_filters",
    "owner_label",
    "run_arguments",
    "seccomp_profile",
]
