"""toolproof's in-container supervisor: the harness-owned program that owns the protocol channel
and gives every scenario a sandbox of its own inside one long-lived container.

Processes (uids and capabilities are in docs/docker.md):

- the **supervisor** (this program's main process; the container's command under docker-init):
  reads protocol lines from its stdin (the harness's ``docker run -i`` attach stream), writes
  responses to its stdout, passes each line to the *active* sandbox — calls to its
  implementation, chores to its init — and keeps the next ones prepared. Nothing else in the
  container holds those streams.
- the **sandbox maker** (forked from the supervisor before any thread starts, single-threaded):
  for the reference and upstream it imports the reference server once (``cfg["preload"]``); on
  request it enters fresh mount, PID, IPC, UTS and network namespaces, mounts fresh instances of
  the container's writable file systems (``cfg["sandbox_mounts"]``: /tmp, /work, $HOME,
  /dev/shm, /dev/mqueue, /dev/pts, copied with their options from the container's own mount
  table), brings up a fresh loopback, forks the sandbox's init, and returns to the container's
  namespaces (``setns``).
- the sandbox's **init** (PID 1 of its PID namespace, root): mounts a fresh /proc carrying the
  container's masks, starts the implementation, hands its channel to the supervisor (a
  descriptor passed with the ``ready`` message) and answers the container chores. The implementation runs as the tool uid with no capability at all (bounding set
  included) and non-dumpable: the reference is forked from the maker's preloaded copy (named as
  the exec'd reference would be), pi and ``cmd:`` programs are exec'd afresh (a ``cmd:`` program
  through a private execute-only copy of its ELF loader, ``nondumpable_launch``).

Ending a sandbox is SIGKILL to its init: the kernel then kills every process of its PID
namespace, and its mounts (and what was written into them) go with the last of them — nothing of
a scenario reaches the next one, which gets a sandbox built the same way from scratch.

Ops the supervisor answers itself: ``hello`` (the prepared implementation's hello),
``sandbox_start`` (end the active sandbox, activate the prepared one, prepare the next),
``sandbox_end``, ``shutdown``. Ops the sandbox's init answers: ``workspace`` (extracts the base64
``archive`` as the tool uid's file-system identity into ``root``, then writes the op *without*
the archive to the implementation, so every implementation gets the same delivery), ``fs_read``,
``fs_tree``, ``ps`` / ``reap`` (processes of the sandbox other than its init and the
implementation). Everything else goes to the implementation. When the implementation dies, the requests it had not answered get
an error of kind ``sandbox`` naming the cause (the signal, and "out of memory (limit 1 GiB)" when
the memory cgroup's OOM counter rose) and so does every later one until the sandbox is ended.

End of stdin means the harness is gone (closed, crashed or SIGKILLed: the attach stream breaks):
the supervisor kills every process and exits, so the container removes itself.

Deliberately self-contained (standard library only, nothing from ``tools_impl`` but the optional
preload): it runs as root inside any image, including ones whose implementation is under test.
"""

from __future__ import annotations

import _thread
import atexit
import base64
import collections
import ctypes
import errno
import fcntl
import functools
import gc
import hashlib
import importlib
import io
import json
import os
import re
import shutil
import signal
import socket
import stat
import struct
import sys
import tarfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

FATAL_PREFIX = "toolproof-supervisor: FATAL: "
REAP_ROUNDS = 50
REAP_PAUSE_S = 0.02
OWN_OPS = ("workspace", "fs_read", "fs_tree", "ps", "reap")
SANDBOX_ERROR_KIND = "sandbox"  # an error response meaning: the scenario's sandbox is gone
START_DEADLINE_S = 60.0
STDERR_TAIL_BYTES = 8192
READ_CHUNK = 1 << 18
STDERR_TAIL_LINES = 8
OOM_FILES = ("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control")
LIMIT_FILES = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SHEBANG_DEPTH = 4  # the kernel's own limit on nested interpreters
PT_INTERP = 3
MFD_EXEC = 0x10  # Linux >= 6.3; older kernels reject the flag (EINVAL) and need none
LOADER_MODE = 0o711
MEMFD_NOEXEC_SYSCTL = "/proc/sys/vm/memfd_noexec"

JsonObj = dict[str, Any]


# -- facts about the container ------------------------------------------------------------------

def oom_kills() -> int | None:
    """The memory cgroup's OOM-kill counter (cgroup v2 ``memory.events`` or v1 ``oom_control``)."""
    for path in OOM_FILES:
        try:
            with open(path, encoding="ascii") as fh:
                for line in fh:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            continue
    return None


def memory_limit_text() -> str:
    """The container's memory limit in binary units (``1 GiB``), or ``unknown``."""
    for path in LIMIT_FILES:
        try:
            with open(path, encoding="ascii") as fh:
                raw = fh.read().strip()
        except OSError:
            continue
        if not raw.isdigit() or int(raw) >= 1 << 60:
            return "none"
        size = float(raw)
        for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
            if size < 1024 or unit == "TiB":
                return f"{size:g} {unit}"
            size /= 1024
    return "unknown"


def describe_signal(status: int) -> str:
    if status < 0:
        try:
            return f"killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"killed by signal {-status}"
    return f"exited with status {status}"


def live_pids() -> list[int]:
    return [int(n) for n in os.listdir("/proc") if n.isdigit()]


def describe_process(pid: int) -> JsonObj | None:
    """pid, uid, state and command line of a live (non-zombie) process; ``None`` if gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat_line = fh.read().decode("utf-8", "replace")
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = [a.decode("utf-8", "replace") for a in fh.read().split(b"\0") if a]
        uid = os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None
    state = stat_line[stat_line.rfind(")") + 2:].split(" ", 1)[0]
    if state in ("Z", "X"):
        return None
    return {"pid": pid, "uid": uid, "state": state, "cmdline": " ".join(argv)}


def impl_environment(cfg: JsonObj, base: dict[str, str]) -> dict[str, str]:
    """The implementation's environment: the image's (``base``), with the tool user's HOME and a
    PATH that starts with the read-only install directory and holds no directory a command may
    write (nor a relative or empty entry), then ``cfg["env"]``."""
    writable = tuple(cfg.get("writable", ()))

    def safe(entry: str) -> bool:
        norm = os.path.normpath(entry) if entry else ""
        return norm.startswith("/") and not any(norm == w or norm.startswith(w + "/") for w in writable)

    env = {k: v for k, v in base.items() if not k.startswith("TOOLPROOF_")}
    env["HOME"] = cfg["home"]
    env["USER"] = env["LOGNAME"] = "toolproof"
    env.setdefault("LANG", "C.UTF-8")
    entries = [cfg.get("path_prefix", ""), *env.get("PATH", DEFAULT_PATH).split(":")]
    env["PATH"] = ":".join(dict.fromkeys(e for e in entries if safe(e)))
    env.update(cfg.get("env", {}))
    return env


# -- starting a cmd: implementation non-dumpable -------------------------------------------------
#
# A process that execs a file its user cannot read is made non-dumpable by the kernel (fs.
# suid_dumpable applies; 0 and 2 both deny a same-uid process its /proc/<pid>/mem, environ, maps
# and fd entries). The supervisor cannot change the user's image, but it can load the loader: it
# copies the ELF interpreter the implementation's binary names (PT_INTERP, e.g.
# /lib64/ld-linux-x86-64.so.2) into a sealed, root-owned, mode 0711 memfd and starts
# ``<that loader> <program> ARGS``; the loader maps the program (readable as always) and the
# process is non-dumpable from its first instruction. Commands it starts exec ordinary readable
# binaries and are ordinary, dumpable processes.

def elf_interpreter(path: str) -> str | None:
    """The PT_INTERP of ELF file ``path``; ``None`` for a static ELF or anything else."""
    with open(path, "rb") as fh:
        head = fh.read(64)
        if len(head) < 52 or head[:4] != b"\x7fELF" or head[4] not in (1, 2) or head[5] not in (1, 2):
            return None
        end = "<" if head[5] == 1 else ">"
        if head[4] == 2:
            (phoff,) = struct.unpack_from(end + "Q", head, 32)
            entsize, count = struct.unpack_from(end + "HH", head, 54)
        else:
            (phoff,) = struct.unpack_from(end + "I", head, 28)
            entsize, count = struct.unpack_from(end + "HH", head, 42)
        for i in range(count):
            fh.seek(phoff + i * entsize)
            ph = fh.read(entsize)
            if len(ph) < 32 or struct.unpack_from(end + "I", ph, 0)[0] != PT_INTERP:
                continue
            if head[4] == 2:
                (offset,), (size,) = struct.unpack_from(end + "Q", ph, 8), struct.unpack_from(end + "Q", ph, 32)
            else:
                (offset,), (size,) = struct.unpack_from(end + "I", ph, 4), struct.unpack_from(end + "I", ph, 16)
            fh.seek(offset)
            return fh.read(min(size, 4096)).split(b"\0", 1)[0].decode("utf-8", "surrogateescape") or None
    return None


def resolve_program(argv: list[str], path: str) -> tuple[list[str], str | None]:
    """``argv`` as the kernel would run it — the program looked up on ``path``, ``#!`` lines
    (``/usr/bin/env NAME`` included) replaced by their interpreter — and that ELF program's
    PT_INTERP (``None`` when there is none or the chain cannot be followed)."""
    argv = list(argv)
    for _ in range(SHEBANG_DEPTH + 1):
        program = argv[0] if "/" in argv[0] else shutil.which(argv[0], path=path)
        if program is None or not os.path.isfile(program):
            return argv, None
        argv[0] = os.path.abspath(program)
        try:
            with open(argv[0], "rb") as fh:
                first = fh.readline(256)
        except OSError:
            return argv, None
        if not first.startswith(b"#!"):
            return argv, elf_interpreter(argv[0])
        words = first[2:].strip().decode("utf-8", "surrogateescape").split(None, 1)
        if not words:
            return argv, None
        if os.path.basename(words[0]) == "env" and len(words) == 2 and not words[1].startswith("-") \
                and " " not in words[1].strip():
            argv = [words[1].strip(), *argv]
        else:
            argv = [*words, *argv]
    return argv, None


def executable_loader(loader: str) -> int | None:
    """A sealed memfd holding a copy of ``loader``, root-owned and mode 0711; ``None`` where the
    kernel forbids executing memfds (``vm.memfd_noexec`` = 2) or cannot make one."""
    try:
        with open(MEMFD_NOEXEC_SYSCTL, encoding="ascii") as fh:
            if fh.read().strip() == "2":
                return None
    except OSError:
        pass
    try:
        with open(loader, "rb") as fh:
            data = fh.read()
        flags = os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING
        try:
            fd = os.memfd_create("toolproof-loader", flags | MFD_EXEC)
        except OSError:
            fd = os.memfd_create("toolproof-loader", flags)
        os.write(fd, data)
        os.fchmod(fd, LOADER_MODE)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS,
                    fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
    except (OSError, AttributeError):
        return None
    return fd


def readable_by(cfg: JsonObj, path: str) -> bool:
    def probe() -> bool:
        try:
            with open(path, "rb"):
                return True
        except OSError:
            return False
    return bool(as_tool_user(cfg, probe))


def nondumpable_launch(cfg: JsonObj, env: dict[str, str]) -> tuple[list[str], int | None, bool]:
    """(argv, loader fd, non-dumpable) for ``cfg["argv"]``: with a loader fd, exec
    ``/proc/self/fd/<fd>`` with that argv (the private copy of the program's loader); without
    one, the plain argv — non-dumpable only when the program is one the tool uid cannot read
    (exec makes it so), not for a static binary, a chain that cannot be followed or a kernel that
    forbids executing memfds."""
    argv = list(cfg["argv"])
    try:
        resolved, loader = as_tool_user(cfg, resolve_program, argv, env.get("PATH", DEFAULT_PATH))
    except (OSError, RuntimeError):
        return argv, None, False
    if not readable_by(cfg, resolved[0]):
        return argv, None, os.path.isfile(resolved[0])
    if loader is None:
        return argv, None, False
    fd = executable_loader(loader)
    if fd is None:
        return argv, None, False
    return [loader, *resolved], fd, True


# -- work done as the tool uid (forked child, result through a pipe) ------------------------------

_libc = ctypes.CDLL(None, use_errno=True)


def as_tool_user(cfg: JsonObj, fn: Any, *args: Any) -> Any:
    """Run ``fn(*args)`` with the file-system identity of the tool uid/gid: Linux's fsuid/fsgid
    are per thread, so the caller's thread acts on files exactly as the tool user would (same
    permission checks, files owned by it) with no fork; the root identity is restored after."""
    uid, gid = int(cfg["uid"]), int(cfg["gid"])
    _libc.setfsgid(gid)
    _libc.setfsuid(uid)
    try:
        if _libc.setfsuid(-1) != uid:  # setfsuid returns the previous value; -1 changes nothing
            raise RuntimeError("could not take the tool user's file-system identity")
        return fn(*args)
    finally:
        _libc.setfsuid(0)
        _libc.setfsgid(0)


def drop_privileges(cfg: JsonObj) -> None:
    """Become the tool uid for good: no supplementary groups, real = effective = saved ids (the
    kernel then clears every capability)."""
    uid, gid = int(cfg["uid"]), int(cfg["gid"])
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)


# Kept apart from tools_impl/server/workspace_delivery.py on purpose: the supervisor runs alone in
# images that carry no tools_impl (pi, a user's adapter), on the image's python3 and the standard
# library only, so it cannot import the reference's copy of extraction and path description.
def extract(root: str, data: bytes) -> int:
    """Extract a harness-built (trusted) tar into an emptied ``root``, keeping modes, links,
    FIFOs and mtimes (directory mtimes re-applied after their contents)."""
    os.makedirs(root, exist_ok=True)
    if not data:
        return 0
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
        tar.chown = lambda *_args, **_kw: None  # type: ignore[method-assign]  # files belong to the extractor
        members = tar.getmembers()
        if hasattr(tarfile, "fully_trusted_filter"):
            tar.extractall(root, members=members, filter="fully_trusted")
        else:
            tar.extractall(root, members=members)
        for m in members:
            if m.isdir():
                try:
                    os.utime(os.path.join(root, m.name), (m.mtime, m.mtime))
                except OSError:
                    pass
    return len(members)


def describe_path(path: str) -> JsonObj:
    """``fs_read``'s state of one path (symlinks not followed), the reference server's format."""
    try:
        info = os.lstat(path)
    except OSError:
        return {"kind": "absent"}
    mode = stat.S_IMODE(info.st_mode)
    if stat.S_ISLNK(info.st_mode):
        return {"kind": "symlink", "mode": mode, "target": os.readlink(path)}
    if stat.S_ISDIR(info.st_mode):
        return {"kind": "dir", "mode": mode}
    if stat.S_ISFIFO(info.st_mode):
        return {"kind": "fifo", "mode": mode}
    if stat.S_ISREG(info.st_mode):
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            return {"kind": "file", "mode": mode, "error": str(exc)}
        return {"kind": "file", "mode": mode, "data": base64.b64encode(data).decode("ascii")}
    return {"kind": "other", "mode": mode}


def read_paths(paths: list[str]) -> JsonObj:
    return {p: describe_path(p) for p in paths}


TREE_OPAQUE_DIRS = (".git",)  # as harness.model.file_state: listed by kind only
TREE_HASH_WHOLE_BYTES = 64 << 20  # as harness.model.file_state: larger files hash their ends
TREE_HASH_END_BYTES = 1 << 20


def tree_entry(path: str) -> JsonObj:
    """One path of ``fs_tree``'s listing, in ``harness.model.file_state.tree_entry``'s format."""
    try:
        info = os.lstat(path)
    except OSError:
        return {"kind": "absent"}
    mode = stat.S_IMODE(info.st_mode)
    if stat.S_ISLNK(info.st_mode):
        return {"kind": "symlink", "mode": mode, "target": os.readlink(path)}
    if stat.S_ISDIR(info.st_mode):
        return {"kind": "dir", "mode": mode}
    if stat.S_ISFIFO(info.st_mode):
        return {"kind": "fifo", "mode": mode}
    if stat.S_ISREG(info.st_mode):
        digest = hashlib.sha256()
        try:
            with open(path, "rb") as fh:
                if info.st_size <= TREE_HASH_WHOLE_BYTES:
                    for chunk in iter(lambda: fh.read(1 << 20), b""):
                        digest.update(chunk)
                else:
                    digest.update(fh.read(TREE_HASH_END_BYTES))
                    fh.seek(info.st_size - TREE_HASH_END_BYTES)
                    digest.update(fh.read(TREE_HASH_END_BYTES))
        except OSError as exc:
            return {"kind": "file", "mode": mode, "size": info.st_size, "error": exc.strerror or str(exc)}
        if info.st_size > TREE_HASH_WHOLE_BYTES:
            return {"kind": "file", "mode": mode, "size": info.st_size, "sha256_ends": digest.hexdigest()}
        return {"kind": "file", "mode": mode, "size": info.st_size, "sha256": digest.hexdigest()}
    return {"kind": "other", "mode": mode}


def read_tree(root: str) -> JsonObj:
    """Every path under the workspace ``root``, relative, with its ``tree_entry``."""
    out: JsonObj = {}
    for top, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        rel_top = os.path.relpath(top, root)
        opaque = any(rel_top == d or rel_top.startswith(d + "/") for d in TREE_OPAQUE_DIRS)
        for name in [*dirs, *sorted(files)]:
            rel = name if rel_top == "." else f"{rel_top}/{name}"
            entry = tree_entry(os.path.join(top, name))
            out[rel] = {"kind": entry["kind"]} if opaque else entry
    return out


# -- the kernel: namespaces, mounts, capabilities ------------------------------------------------

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
SANDBOX_NAMESPACES = (("mount", CLONE_NEWNS), ("pid", CLONE_NEWPID), ("ipc", CLONE_NEWIPC), ("uts", CLONE_NEWUTS),
                      ("net", CLONE_NEWNET))
HOME_NAMESPACES = (("pid", CLONE_NEWPID), ("ipc", CLONE_NEWIPC), ("uts", CLONE_NEWUTS), ("net", CLONE_NEWNET),
                   ("mnt", CLONE_NEWNS))  # /proc/self/ns names, in the order the maker returns to them
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_NOATIME = 0x400
MS_NODIRATIME = 0x800
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
MS_RELATIME = 0x200000
MS_STRICTATIME = 0x1000000
MOUNT_FLAGS = {"ro": MS_RDONLY, "nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC, "noatime": MS_NOATIME,
               "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME, "strictatime": MS_STRICTATIME}
PR_SET_DUMPABLE = 4
PR_SET_NAME = 15
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
CAP_KILL = 5
CAP_SETGID = 6
CAP_SETUID = 7
CAP_SETPCAP = 8
CAPABILITY_VERSION_3 = 0x20080522
CAP_LAST_CAP_FILE = "/proc/sys/kernel/cap_last_cap"
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1
COMM_CHARS = 15  # TASK_COMM_LEN - 1


def _path(value: str | None) -> bytes | None:
    return None if value is None else os.fsencode(value)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(_libc.mount(_path(source), _path(target), _path(fstype), ctypes.c_ulong(flags), _path(data or None)),
           f"mount {target}")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def keep_capabilities(caps: tuple[int, ...]) -> None:
    """Reduce this process's effective and permitted sets to ``caps`` (inheritable: none)."""
    mask = 0
    for cap in caps:
        mask |= 1 << cap
    data = (_CapData * 2)()
    for i in range(2):
        data[i].effective = data[i].permitted = (mask >> (32 * i)) & 0xFFFFFFFF
    _check(_libc.capset(ctypes.byref(_CapHeader(CAPABILITY_VERSION_3, 0)), data), "capset")


def last_capability() -> int:
    try:
        with open(CAP_LAST_CAP_FILE, encoding="ascii") as fh:
            return int(fh.read())
    except (OSError, ValueError):
        return 63


def drop_bounding_set(last_cap: int) -> None:
    """Empty this process's capability bounding set and its ambient set (needs CAP_SETPCAP): no
    exec can ever give the implementation, or a command it runs, a capability."""
    for cap in range(last_cap + 1):
        if _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != errno.EINVAL:
            _check(-1, f"dropping capability {cap} from the bounding set")
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)


def loopback_up() -> None:
    """Bring up ``lo`` in a fresh network namespace (it starts down)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        got = fcntl.ioctl(sock.fileno(), SIOCGIFFLAGS, struct.pack("16sh22x", b"lo", 0))
        flags = struct.unpack_from("16sh", got)[1]
        fcntl.ioctl(sock.fileno(), SIOCSIFFLAGS, struct.pack("16sh22x", b"lo", flags | IFF_UP))


class MountEntry(NamedTuple):
    """One line of ``/proc/self/mountinfo``: where, which part of its file system, per-mount
    flags, file-system type, source and super-block options (without ``rw``/``ro``)."""

    mountpoint: str
    root: str
    flags: int
    fstype: str
    source: str
    data: str


def _unescape(field: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def read_mountinfo(path: str = "/proc/self/mountinfo") -> dict[str, MountEntry]:
    """The visible mount at each mount point (a later mount over the same point wins)."""
    entries: dict[str, MountEntry] = {}
    with open(path, encoding="utf-8", errors="surrogateescape") as fh:
        for line in fh:
            fields = line.split()
            try:
                sep = fields.index("-", 6)
            except ValueError:
                continue
            flags = 0
            for opt in fields[5].split(","):
                flags |= MOUNT_FLAGS.get(opt, 0)
            super_opts = fields[sep + 3].split(",") if len(fields) > sep + 3 else []
            data = ",".join(o for o in super_opts if o not in ("rw", "ro"))
            mountpoint = _unescape(fields[4])
            entries.pop(mountpoint, None)
            entries[mountpoint] = MountEntry(mountpoint, _unescape(fields[3]), flags, fields[sep + 1],
                                             _unescape(fields[sep + 2]), data)
    return entries


class SandboxPlan(NamedTuple):
    """What every scenario's sandbox is made of, read once from the container's own mount table:
    fresh instances of its writable mounts, and its /proc with the masks the engine put on it."""

    fresh: tuple[MountEntry, ...]
    proc: MountEntry | None
    proc_masks: tuple[MountEntry, ...]
    last_cap: int

    @classmethod
    def of_container(cls, cfg: JsonObj, mounts: dict[str, MountEntry] | None = None) -> SandboxPlan:
        table = read_mountinfo() if mounts is None else mounts
        fresh = tuple(table[p] for p in cfg.get("sandbox_mounts", ()) if p in table)
        masks = tuple(m for p, m in table.items() if p.startswith("/proc/"))
        return cls(fresh, table.get("/proc"), masks, last_capability())


def enter_fresh_namespaces(plan: SandboxPlan) -> None:
    """Leave every namespace a scenario could leave something in: new mount, PID (for the
    children), IPC, UTS and network namespaces, fresh copies of the writable mounts, ``lo`` up."""
    flags = 0
    for _name, flag in SANDBOX_NAMESPACES:
        flags |= flag
    unshare(flags)
    mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing done here propagates back
    for m in plan.fresh:
        mount(m.source, m.mountpoint, m.fstype, m.flags, m.data)
    loopback_up()


def mount_fresh_proc(plan: SandboxPlan) -> None:
    """A /proc of this PID namespace, with the container's masks on it again: its read-only proc
    subtrees bound read-only, the files and directories the engine hid hidden the same way."""
    held: dict[str, int] = {}
    try:
        for m in plan.proc_masks:
            if m.fstype != "proc":
                held[m.mountpoint] = os.open(m.mountpoint, os.O_PATH | os.O_CLOEXEC)
        proc_flags = plan.proc.flags if plan.proc is not None else MS_NOSUID | MS_NODEV | MS_NOEXEC
        mount("proc", "/proc", "proc", proc_flags)
        for m in plan.proc_masks:
            source = f"/proc/self/fd/{held[m.mountpoint]}" if m.mountpoint in held else "/proc" + m.root
            mount(source, m.mountpoint, None, MS_BIND)
            mount(None, m.mountpoint, None, MS_BIND | MS_REMOUNT | m.flags)
    finally:
        for fd in held.values():
            os.close(fd)


def own_host_pid() -> int:
    """This process's pid in the container's PID namespace (read before /proc is replaced)."""
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("NSpid:"):
                return int(line.split()[1])
    return os.getpid()


def name_process(argv: list[str]) -> None:
    """Make this (forked) process's ``/proc/<pid>/cmdline`` and name read as an exec of ``argv``
    would: its argument area is rewritten in place, the way setproctitle(3) does, so that
    ``pkill -f ^/opt/toolproof/bin/toolproof-reference`` finds it and ``pkill -f ^python3`` does not."""
    with open("/proc/self/stat", "rb") as fh:
        fields = fh.read().rsplit(b")", 1)[1].split()
    start, end = int(fields[45]), int(fields[46])  # arg_start, arg_end (fields 48, 49)
    size = end - start
    if size > 1:
        text = b"\0".join(os.fsencode(a) for a in argv)[:size - 1]
        ctypes.memmove(start, text.ljust(size, b"\0"), size)
    _libc.prctl(PR_SET_NAME, os.fsencode(os.path.basename(argv[0]))[:COMM_CHARS], 0, 0, 0)


def spawn_thread(fn: Callable[..., None], *args: Any) -> None:
    """Run ``fn(*args)`` on a new thread without waiting for it to start: ``threading.Thread.start``
    waits until the new thread has run, and on a loaded machine that wait is a scheduling delay on
    the way of every sandbox. (These threads live as long as their process, which ends by
    ``os._exit``.)"""
    _thread.start_new_thread(fn, args)


# -- the implementation's start ------------------------------------------------------------------

class StartFailure(Exception):
    """The implementation could not be started (the message says why)."""


def close_other_fds(keep: tuple[int, ...]) -> None:
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def become_tool_user(cfg: JsonObj, last_cap: int) -> None:
    """The implementation's side of the fork, as root: the OOM killer's first choice (raising
    one's own score needs no privilege), no capability left even in the bounding set, then the
    tool uid for good."""
    try:
        with open("/proc/self/oom_score_adj", "w", encoding="ascii") as fh:
            fh.write("1000")
    except OSError:
        pass
    drop_bounding_set(last_cap)
    drop_privileges(cfg)


def spawn_program(argv: list[str], executable: str | None, env: dict[str, str], cfg: JsonObj, last_cap: int,
                  stdio: tuple[int, int, int], keep: tuple[int, ...] = ()) -> int:
    """fork + exec of ``argv`` as the tool user with ``stdio``; its pid, or ``StartFailure``."""
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(rd)
            for target, fd in enumerate(stdio):
                os.dup2(fd, target)
            close_other_fds((wr, *keep))
            for fd in keep:
                os.set_inheritable(fd, True)
            os.chdir(cfg["cwd"])
            become_tool_user(cfg, last_cap)
            for fd in keep:  # kept for the exec only: close-on-exec again once it has begun
                os.set_inheritable(fd, False)
            if executable is not None:
                os.execve(executable, argv, env)
            os.execvpe(argv[0], argv, env)
        except OSError as exc:
            os.write(wr, json.dumps([exc.errno, exc.strerror, exc.filename]).encode())
        except BaseException as exc:
            os.write(wr, json.dumps([None, str(exc), None]).encode())
        os._exit(127)
    os.close(wr)
    with os.fdopen(rd, "rb") as fh:
        said = fh.read()
    if said:
        os.waitpid(pid, 0)
        code, message, filename = json.loads(said)
        why = OSError(code, message, filename) if code is not None else RuntimeError(message)
        raise StartFailure(f"cannot start the implementation {argv[0]!r} in the container: {why}")
    return pid


def spawn_preloaded(main: Callable[[], int], argv: list[str], env: dict[str, str], cfg: JsonObj, last_cap: int,
                    stdio: tuple[int, int, int]) -> int:
    """fork of this (preloaded) process into the implementation: the reference server as the
    exec'd one would run (same name and command line, environment, working directory, signal
    dispositions), with nothing loaded but the modules the sandbox maker imported once."""
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        for target, fd in enumerate(stdio):
            os.dup2(fd, target)
        close_other_fds(())
        os.chdir(cfg["cwd"])
        for signum in (signal.SIGPIPE, signal.SIGXFSZ):  # as the interpreter sets them at start-up
            signal.signal(signum, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)
        name_process(argv)
        become_tool_user(cfg, last_cap)
        _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        os.environ.clear()
        os.environ.update(env)
        sys.argv = ["-c", *argv[argv.index("-c") + 2:]] if "-c" in argv else list(argv)
        sys.stdin = open(0, encoding="utf-8", errors="surrogateescape", closefd=False)
        sys.stdout = open(1, "w", encoding="utf-8", errors="surrogateescape", closefd=False, buffering=1)
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False, buffering=1)
        try:
            code = main()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if isinstance(exc.code, str):
                sys.stderr.write(exc.code + "\n")
        except BaseException:
            traceback.print_exc()
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


# -- a scenario's sandbox: its init ---------------------------------------------------------------

HELLO_ID = "toolproof-sandbox-hello"
CONTROL_KEY = "toolproof_sandbox"
CONTROL_PREFIX = b'{"' + CONTROL_KEY.encode() + b'"'
ACTIVATE_OP = "sandbox_activate"
_ID = rb'(-?\d+|"(?:[^"\\]|\\.)*"|null)'
REQUEST_HEAD_RE = re.compile(rb'\s*\{\s*"id"\s*:\s*' + _ID + rb'\s*,\s*"op"\s*:\s*"([A-Za-z0-9_]+)"')
RESPONSE_ID_RE = re.compile(rb'\s*\{\s*"id"\s*:\s*' + _ID + rb'\s*[,}]')


def request_head(raw: bytes) -> tuple[Any, str | None]:
    """(id, op) of a request line, read from its head when it starts ``{"id": …, "op": …``."""
    m = REQUEST_HEAD_RE.match(raw)
    if m:
        return json.loads(m.group(1)), m.group(2).decode("ascii")
    try:
        obj = json.loads(raw)
    except ValueError:
        return None, None
    if not isinstance(obj, dict):
        return None, None
    op = obj.get("op")
    return obj.get("id"), op if isinstance(op, str) else None


def response_id(raw: bytes) -> Any:
    m = RESPONSE_ID_RE.match(raw)
    if m:
        return json.loads(m.group(1))
    try:
        obj = json.loads(raw)
    except ValueError:
        return None
    return obj.get("id") if isinstance(obj, dict) else None


class Sandbox:
    """PID 1 of one scenario's namespaces (root): starts the implementation, answers the
    container chores on the sandbox's files and processes, relays everything else, and reports
    to the supervisor on ``chan`` — ``ready`` with the hello, ``failed`` or ``dead`` with a cause."""

    def __init__(self, cfg: JsonObj, plan: SandboxPlan, chan: socket.socket,
                 preloaded: Callable[[], int] | None, hello: bool = True) -> None:
        self.cfg = cfg
        self.plan = plan
        self.chan = chan
        self.preloaded = preloaded
        # A fork of the preloaded server is serving as soon as it exists, and answers hello as
        # every other fork did: only the container's first sandbox asks (``hello``).
        self.ask_hello = hello or preloaded is None
        self.out_lock = threading.Lock()
        self.impl_pid: int | None = None
        self.impl_sock: socket.socket | None = None
        self.hello_result: JsonObj | None = None
        self.hello_seen = threading.Event()
        self.stderr_done = threading.Event()
        self.stderr_tail = bytearray()
        self.oom_before = oom_kills()
        self.ready = False
        self.host_pid = 0

    # to the supervisor
    def send_line(self, data: bytes) -> None:
        with self.out_lock:
            try:
                self.chan.sendall(data if data.endswith(b"\n") else data + b"\n")
            except OSError:
                self.end(0)  # the supervisor ended this sandbox

    def reply(self, rid: Any, result: Any = None, error: str | None = None, kind: str = "internal") -> None:
        obj = ({"id": rid, "ok": True, "result": result} if error is None
               else {"id": rid, "ok": False, "error": {"message": error, "kind": kind}})
        self.send_line(json.dumps(obj, ensure_ascii=False).encode("utf-8", "surrogateescape"))

    def control(self, state: str, fds: tuple[int, ...] = (), **fields: Any) -> None:
        data = json.dumps({CONTROL_KEY: state, "pid": self.host_pid, **fields}).encode() + b"\n"
        if not fds:
            self.send_line(data)
            return
        with self.out_lock:
            try:
                socket.send_fds(self.chan, [data], list(fds))
            except OSError:
                self.end(0)

    def end(self, code: int) -> None:
        """Everything in this PID namespace dies with its init."""
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
        os._exit(code)

    def fail(self, cause: str) -> None:
        self.control("dead" if self.ready else "failed", cause=cause)
        self.end(3)

    # life
    def run(self) -> None:
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        self.host_pid = own_host_pid()
        try:
            mount_fresh_proc(self.plan)
            keep_capabilities((CAP_KILL, CAP_SETGID, CAP_SETUID, CAP_SETPCAP))
            self.make_tmpdir()
            self.start_impl()
            keep_capabilities((CAP_KILL, CAP_SETGID, CAP_SETUID))
        except (OSError, RuntimeError, StartFailure) as exc:
            self.fail(str(exc) if isinstance(exc, StartFailure) else f"cannot make the scenario's sandbox: {exc}")
        spawn_thread(self.reap_children)
        if self.ask_hello:
            spawn_thread(self.pump_hello)
            self.to_impl(json.dumps({"id": HELLO_ID, "op": "hello"}).encode())
            if not self.hello_seen.wait(START_DEADLINE_S):
                self.fail(f"the implementation did not answer hello within {START_DEADLINE_S:g} s")
        self.ready = True
        # The supervisor talks to the implementation directly from now on (this init still writes
        # the workspace op to it, after the extraction): one relay less on every call.
        assert self.impl_sock is not None
        self.control("ready", fds=(self.impl_sock.fileno(),), hello=self.hello_result)
        for raw in self.chan.makefile("rb"):
            if raw.strip():
                self.handle(raw)
        self.end(0)

    def make_tmpdir(self) -> None:
        """The tools' TMPDIR (``cfg["tmpdir"]``) in this sandbox's /tmp, the tool uid's, mode 0700."""
        tmpdir = self.cfg.get("tmpdir")
        if isinstance(tmpdir, str):
            try:
                as_tool_user(self.cfg, os.makedirs, tmpdir, 0o700)
            except (OSError, RuntimeError) as exc:
                raise RuntimeError(f"cannot make the tools' TMPDIR {tmpdir}: {exc}") from None

    def start_impl(self) -> None:
        cfg = self.cfg
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        err_ours, err_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        env = impl_environment(cfg, dict(os.environ))
        stdio = (theirs.fileno(), theirs.fileno(), err_theirs.fileno())
        try:
            if self.preloaded is not None:
                self.impl_pid = spawn_preloaded(self.preloaded, list(cfg["argv"]), env, cfg, self.plan.last_cap,
                                                stdio)
            else:
                argv, loader_fd, executable = list(cfg["argv"]), None, None
                if cfg.get("launch") == "loader":
                    argv, loader_fd, nondumpable = nondumpable_launch(cfg, env)
                    sandbox = cfg.get("capabilities", {}).get("sandbox")
                    if isinstance(sandbox, dict):
                        sandbox["nondumpable"] = nondumpable
                    if loader_fd is not None:
                        executable = f"/proc/self/fd/{loader_fd}"
                try:
                    self.impl_pid = spawn_program(argv, executable, env, cfg, self.plan.last_cap, stdio,
                                                  () if loader_fd is None else (loader_fd,))
                finally:
                    if loader_fd is not None:
                        os.close(loader_fd)
        finally:
            theirs.close()
            err_theirs.close()
        self.impl_sock = ours
        spawn_thread(self.pump_stderr, err_ours)

    def pump_hello(self) -> None:
        """The implementation's output up to its answer to the init's hello (read a byte at a
        time: what follows is the supervisor's to read)."""
        assert self.impl_sock is not None
        line = bytearray()
        while not self.hello_seen.is_set():
            byte = self.impl_sock.recv(1)
            if not byte:
                return  # it died: the reaper says why
            line += byte
            if byte == b"\n":
                if response_id(bytes(line)) == HELLO_ID:
                    self.take_hello(bytes(line))
                line.clear()

    def take_hello(self, raw: bytes) -> None:
        """The implementation's hello, with the sandbox's facts added to its capabilities."""
        try:
            obj = json.loads(raw)
        except ValueError:
            obj = None
        if not isinstance(obj, dict) or not obj.get("ok"):
            message = obj.get("error", {}).get("message") if isinstance(obj, dict) else None
            self.fail(f"the implementation in the container refused hello: {message or raw[:200]!r}")
        assert isinstance(obj, dict)
        got = obj.get("result")
        result: JsonObj = got if isinstance(got, dict) else {}
        have = result.get("capabilities")
        caps: JsonObj = have if isinstance(have, dict) else {}
        result["capabilities"] = {**caps, **self.cfg.get("capabilities", {})}
        self.hello_result = result
        self.hello_seen.set()

    def pump_stderr(self, sock: socket.socket) -> None:
        err = sys.stderr.buffer
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                self.stderr_done.set()
                return
            self.stderr_tail.extend(chunk)
            del self.stderr_tail[:-STDERR_TAIL_BYTES]
            try:
                err.write(chunk)
                err.flush()
            except OSError:
                pass

    def said_on_stderr(self) -> str:
        lines = [ln for ln in self.stderr_tail.decode("utf-8", "replace").splitlines() if ln.strip()]
        return " | ".join(lines[-STDERR_TAIL_LINES:])

    def reap_children(self) -> None:
        """PID 1's duty: reap every child, orphans included; the implementation's end ends the sandbox."""
        while True:
            try:
                pid, status = os.waitpid(-1, 0)
            except ChildProcessError:
                return
            if pid == self.impl_pid:
                self.impl_died(os.waitstatus_to_exitcode(status))

    def impl_died(self, status: int) -> None:
        cause = describe_signal(status)
        after = oom_kills()
        if after is not None and self.oom_before is not None and after > self.oom_before:
            cause = f"{cause}: out of memory (limit {memory_limit_text()})"
        elif status in (-signal.SIGKILL, -signal.SIGTERM, -signal.SIGINT, -signal.SIGHUP, -signal.SIGQUIT):
            cause += " (nothing outside the container can signal it: a command it ran did)"
        cause = f"the implementation under test {cause}"
        if status >= 0:  # it ended by itself: what it said last is the reason
            self.stderr_done.wait(1.0)
            said = self.said_on_stderr()
            if said:
                cause += f"; its stderr ends with: {said}"
        self.fail(cause)

    # the chores
    def strays(self) -> list[JsonObj]:
        protected = {1, os.getpid(), self.impl_pid if self.impl_pid else -1}
        return [info for pid in live_pids() if pid not in protected
                for info in [describe_process(pid)] if info is not None]

    def reap(self) -> list[JsonObj]:
        found: dict[int, JsonObj] = {}
        for _ in range(REAP_ROUNDS):
            current = self.strays()
            if not current:
                break
            for info in current:
                found.setdefault(info["pid"], info)
                try:
                    os.kill(info["pid"], signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(REAP_PAUSE_S)
        return list(found.values())

    def op_workspace(self, req: JsonObj) -> bytes | None:
        rid, root = req.get("id"), req.get("root")
        parent = self.cfg["workspace_parent"]
        if not isinstance(root, str) or os.path.dirname(os.path.normpath(root)) != parent:
            self.reply(rid, error=f"workspace: root must be a directory directly under {parent}",
                       kind="protocol")
            return None
        archive = req.pop("archive", None)
        try:
            data = base64.b64decode(archive) if isinstance(archive, str) else b""
            as_tool_user(self.cfg, extract, root, data)
        except Exception as exc:
            self.reply(rid, error=f"workspace: the archive could not be extracted: {exc}", kind="protocol")
            return None
        req.pop("clean", None)  # the directory now holds the workspace; it must not be cleared
        return json.dumps(req, ensure_ascii=False).encode("utf-8", "surrogateescape") + b"\n"

    def handle(self, raw: bytes) -> None:
        rid, op = request_head(raw)
        if op == ACTIVATE_OP:  # the scenario starts: OOM kills count from here
            self.oom_before = oom_kills()
            return
        if op not in OWN_OPS:
            self.to_impl(raw)
            return
        try:
            req = json.loads(raw)
        except ValueError:
            req = None
        if not isinstance(req, dict):
            self.reply(rid, error="the request is not a JSON object", kind="protocol")
            return
        if op == "workspace":
            line = self.op_workspace(req)
            if line is not None:
                self.to_impl(line)
        elif op == "fs_read":
            paths = req.get("paths")
            if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
                self.reply(rid, error="fs_read: field 'paths' must be a list of strings", kind="protocol")
                return
            try:
                self.reply(rid, {"files": as_tool_user(self.cfg, read_paths, paths)})
            except Exception as exc:
                self.reply(rid, error=f"fs_read failed: {exc}")
        elif op == "fs_tree":
            root = req.get("root")
            parent = self.cfg["workspace_parent"]
            if not isinstance(root, str) or os.path.dirname(os.path.normpath(root)) != parent:
                self.reply(rid, error=f"fs_tree: root must be a directory directly under {parent}", kind="protocol")
                return
            try:
                self.reply(rid, {"tree": as_tool_user(self.cfg, read_tree, root)})
            except Exception as exc:
                self.reply(rid, error=f"fs_tree failed: {exc}")
        elif op == "ps":
            self.reply(rid, {"processes": self.strays()})
        elif op == "reap":
            self.reply(rid, {"processes": self.reap()})

    def to_impl(self, raw: bytes) -> None:
        assert self.impl_sock is not None
        try:
            self.impl_sock.sendall(raw if raw.endswith(b"\n") else raw + b"\n")
        except OSError:
            pass  # the reaper reports the implementation's death


def _report_failure(chan_fd: int, cause: str) -> None:
    try:
        os.write(chan_fd, json.dumps({CONTROL_KEY: "failed", "pid": 0, "cause": cause}).encode() + b"\n")
    except OSError:
        pass


# -- the sandbox maker ------------------------------------------------------------------------------

def preload(cfg: JsonObj) -> Callable[[], int] | None:
    """The implementation's entry point, imported once (the reference server: ``function`` of
    ``module`` called with the module's attribute ``argument``), or ``None``."""
    spec = cfg.get("preload")
    if not isinstance(spec, dict):
        return None
    sys.path[:0] = [str(p) for p in spec.get("path", [])]
    try:
        module = importlib.import_module(spec["module"])
        entry = getattr(module, spec["function"])
        argument = getattr(module, spec["argument"])
        function: Callable[[], int] = functools.partial(entry, argument)
    except Exception as exc:
        sys.stderr.write(f"toolproof-supervisor: preloading {spec.get('module')} failed ({exc!r}); every "
                         "sandbox starts the implementation afresh\n")
        sys.stderr.flush()
        return None
    for name in spec.get("warm", []):  # optional: what is missing is imported late, or not at all
        module_name, _, call = str(name).partition(":")
        try:
            loaded = importlib.import_module(module_name)
            if call:
                getattr(loaded, call)()
        except Exception:
            pass
    return function


WARM_UP_DIR = "/tmp/toolproof-warm-up"


def rehearse_chores(cfg: JsonObj) -> None:
    """Run the init's chores once in the maker, in the container's own /tmp (no sandbox sees it):
    what they set up on first use (bytecode specialisation, caches, late imports) is then shared
    by every init instead of being redone in each, on the way of its scenario's workspace."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in (("d/a.txt", b"a\n"), ("b.txt", b"b\n")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    root = os.path.join(WARM_UP_DIR, "s-0")
    try:
        for _ in range(2):
            as_tool_user(cfg, extract, root, buf.getvalue())
            as_tool_user(cfg, read_paths, [os.path.join(root, "b.txt"), os.path.join(root, "none")])
            as_tool_user(cfg, read_tree, root)
            json.loads(json.dumps({"id": 1, "op": "workspace", "root": root, "archive": ""}))
            request_head(b'{"id": 1, "op": "fs_read", "paths": []}')
            response_id(b'{"id": 1, "ok": true}')
            shutil.rmtree(root)
        describe_process(os.getpid())
    except (OSError, RuntimeError, tarfile.TarError):
        pass
    finally:
        shutil.rmtree(WARM_UP_DIR, ignore_errors=True)


class SandboxMaker:
    """Forked from the supervisor before it starts a thread, and single-threaded, so that its
    forks are clean. Makes one sandbox per request (the request carries the sandbox's end of its
    channel to the supervisor) and reaps the short-lived children that make them."""

    def __init__(self, cfg: JsonObj, ctl: socket.socket) -> None:
        self.cfg = cfg
        self.ctl = ctl
        # The maker enters each sandbox's namespaces itself, forks the init there, and comes back.
        self.home = {flag: os.open(f"/proc/self/ns/{name}", os.O_RDONLY | os.O_CLOEXEC)
                     for name, flag in HOME_NAMESPACES}
        self.plan = SandboxPlan.of_container(cfg)
        self.preloaded = preload(cfg)
        rehearse_chores(cfg)
        gc.freeze()  # what is loaded now is shared by every fork: the collector leaves it untouched

    def serve(self) -> None:
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        os.close(devnull)
        signal.signal(signal.SIGCHLD, lambda *_: self.reap())
        while True:
            msg, fds, _flags, _addr = socket.recv_fds(self.ctl, 256, 4)
            if not msg and not fds:
                os._exit(0)  # the supervisor is gone
            for fd in fds[1:]:
                os.close(fd)
            if fds:
                self.make(fds[0], bool(json.loads(msg).get("hello", True)))

    def make(self, chan_fd: int, hello: bool) -> None:
        """New namespaces (entered by the maker itself), their PID 1, then back home."""
        try:
            enter_fresh_namespaces(self.plan)
            pid = os.fork()
            if pid == 0:
                self.become_init(chan_fd, hello)
        except OSError as exc:
            _report_failure(chan_fd, f"cannot make the scenario's sandbox: {exc}")
        finally:
            os.close(chan_fd)
            self.go_home()

    def become_init(self, chan_fd: int, hello: bool) -> None:
        code = 3
        try:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            self.ctl.close()
            for fd in self.home.values():
                os.close(fd)
            Sandbox(self.cfg, self.plan, socket.socket(fileno=chan_fd), self.preloaded, hello).run()
        except BaseException as exc:  # a bug here must still end the sandbox with a cause
            _report_failure(chan_fd, f"the scenario's sandbox failed: {exc!r}")
        finally:
            os._exit(code)

    def go_home(self) -> None:
        """Back to the container's namespaces (and its PID namespace for the next children); a
        maker that cannot get back must not make another sandbox from inside this one."""
        for flag, fd in self.home.items():
            if _libc.setns(fd, flag) != 0:
                err = ctypes.get_errno()
                sys.stderr.write(f"toolproof-supervisor: the sandbox maker cannot return to the container's "
                                 f"namespaces: {os.strerror(err)}\n")
                sys.stderr.flush()
                os._exit(3)

    @staticmethod
    def reap() -> None:
        while True:
            try:
                pid, _status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return


# -- the supervisor -------------------------------------------------------------------------------

class SandboxFailure(Exception):
    """No sandbox could be made ready; the message is the cause."""


def lines_of(sock: socket.socket, fds: SandboxHandle | None = None) -> Iterator[bytes]:
    """The lines read from ``sock`` until its end; with ``fds``, a descriptor passed along with
    them (the implementation's channel) becomes ``fds.impl``."""
    parts: list[bytes] = []
    while True:
        try:
            if fds is not None and fds.impl is None:
                data, passed, _flags, _addr = socket.recv_fds(sock, READ_CHUNK, 1)
                if passed:
                    fds.impl = socket.socket(fileno=passed[0])
            else:
                data = sock.recv(READ_CHUNK)
        except OSError:
            data = b""
        if not data:
            return
        start = 0
        while True:
            cut = data.find(b"\n", start)
            if cut < 0:
                parts.append(data[start:])
                break
            parts.append(data[start:cut + 1])
            yield b"".join(parts)
            parts = []
            start = cut + 1


class SandboxHandle:
    """The supervisor's view of one sandbox: its channel, readiness, hello, death and the
    requests it has not answered yet."""

    def __init__(self, number: int, sock: socket.socket) -> None:
        self.number = number
        self.sock = sock
        self.ready = threading.Event()
        self.failure: str | None = None  # before ready: why it could not be made
        self.cause: str | None = None  # after ready: why it died
        self.impl: socket.socket | None = None  # the implementation's channel, once ready
        self.pidfd: int | None = None
        self.pid = 0
        self.active = False
        self.ended = False
        self.outstanding: dict[Any, None] = {}
        self.lock = threading.Lock()

    @property
    def problem(self) -> str | None:
        return self.failure or self.cause


class Supervisor:
    def __init__(self, cfg: JsonObj) -> None:
        self.cfg = cfg
        self.out = sys.stdout.buffer
        self.out_lock = threading.Lock()
        self.maker: socket.socket | None = None
        self.maker_pid = 0
        self.counter = 0
        self.active: SandboxHandle | None = None
        self.prepared: collections.deque[SandboxHandle] = collections.deque()
        self.ahead = max(1, int(cfg.get("prepared_ahead", 1)))
        self.hello: JsonObj | None = None  # the first sandbox's: every one answers the same
        self.stopping = False

    # output to the harness
    def send_line(self, data: bytes) -> None:
        with self.out_lock:
            self.out.write(data if data.endswith(b"\n") else data + b"\n")
            self.out.flush()

    def reply(self, rid: Any, result: Any = None, error: str | None = None, kind: str = "internal") -> None:
        obj = ({"id": rid, "ok": True, "result": result} if error is None
               else {"id": rid, "ok": False, "error": {"message": error, "kind": kind}})
        self.send_line(json.dumps(obj, ensure_ascii=False).encode("utf-8", "surrogateescape"))

    def fatal(self, message: str) -> None:
        sys.stderr.write(FATAL_PREFIX + message + "\n")
        sys.stderr.flush()
        self.kill_all()
        os._exit(3)

    def kill_all(self) -> None:
        self.stopping = True
        try:
            os.kill(-1, signal.SIGKILL)  # every process but docker-init and the caller
        except OSError:
            pass

    # the sandbox maker
    def start_maker(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:
            ours.close()
            try:
                SandboxMaker(self.cfg, theirs).serve()
            except BaseException:
                traceback.print_exc()
            os._exit(3)
        theirs.close()
        self.maker, self.maker_pid = ours, pid

    def watch_maker(self) -> None:
        _pid, status = os.waitpid(self.maker_pid, 0)
        if not self.stopping:
            self.fatal(f"the sandbox maker {describe_signal(os.waitstatus_to_exitcode(status))}")

    # sandboxes
    def prepare(self) -> SandboxHandle:
        assert self.maker is not None
        self.counter += 1
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        handle = SandboxHandle(self.counter, ours)
        request = {"hello": self.hello is None or not self.cfg.get("preload")}
        try:
            socket.send_fds(self.maker, [json.dumps(request).encode()], [theirs.fileno()])
        except OSError as exc:
            handle.failure = f"the sandbox maker is gone ({exc.strerror})"
            handle.ready.set()
        finally:
            theirs.close()
        spawn_thread(self.read_sandbox, handle)
        return handle

    def read_sandbox(self, handle: SandboxHandle) -> None:
        """The init's lines: control messages (the ``ready`` one carries the implementation's
        channel, read from then on by ``read_impl``) and the answers to its chores."""
        for raw in lines_of(handle.sock, fds=handle):
            if raw.startswith(CONTROL_PREFIX):
                self.on_control(handle, json.loads(raw))
            else:
                self.pass_on(handle, raw)
        if not handle.ready.is_set():
            handle.failure = handle.failure or "the sandbox ended before its implementation answered hello"
            handle.ready.set()
        elif not handle.ended:
            self.died(handle, handle.cause or "the scenario's sandbox ended unexpectedly")

    def read_impl(self, handle: SandboxHandle, sock: socket.socket) -> None:
        for raw in lines_of(sock):
            self.pass_on(handle, raw)

    def pass_on(self, handle: SandboxHandle, raw: bytes) -> None:
        """A response of the active sandbox to the harness (an ended or prepared one's: dropped)."""
        if handle.active and not handle.ended:
            rid = response_id(raw)
            if isinstance(rid, (int, str)):
                with handle.lock:
                    handle.outstanding.pop(rid, None)
            self.send_line(raw)

    def on_control(self, handle: SandboxHandle, msg: JsonObj) -> None:
        state = msg.get(CONTROL_KEY)
        if msg.get("pid") and not handle.pid:
            handle.pid = int(msg["pid"])
            try:
                handle.pidfd = os.pidfd_open(handle.pid)
            except (OSError, AttributeError):
                handle.pidfd = None
        if state == "ready":
            hello = msg.get("hello")
            if isinstance(hello, dict) and self.hello is None:
                self.hello = hello
            if handle.impl is not None:
                spawn_thread(self.read_impl, handle, handle.impl)
            handle.ready.set()
        elif state == "failed":
            handle.failure = str(msg.get("cause"))
            handle.ready.set()
        elif state == "dead":
            self.died(handle, str(msg.get("cause")))

    def died(self, handle: SandboxHandle, cause: str) -> None:
        """The implementation (or the whole sandbox) is gone: every request it had not answered,
        and every later one, gets an error of kind ``sandbox`` naming the cause."""
        with handle.lock:
            handle.cause = cause
            pending, handle.outstanding = list(handle.outstanding), {}
        if handle.active and not handle.ended:
            for rid in pending:
                self.reply(rid, error=cause, kind=SANDBOX_ERROR_KIND)

    def ready_prepared(self) -> SandboxHandle:
        """The prepared sandbox once its implementation has answered hello. A failed one is
        replaced once: a failure may be of the moment (the last scenario filled the pids limit)."""
        problem = ""
        for _attempt in range(2):
            if not self.prepared:
                self.prepared.append(self.prepare())
            handle = self.prepared[0]
            if not handle.ready.wait(START_DEADLINE_S):
                handle.failure = f"the implementation did not answer hello within {START_DEADLINE_S:g} s"
            if handle.problem is None:
                return handle
            problem = handle.problem
            self.prepared.popleft()
            self.end(handle)
        raise SandboxFailure(problem)

    def activate(self) -> SandboxHandle:
        self.end_active()
        handle = self.ready_prepared()
        self.prepared.popleft()
        handle.active = True
        self.active = handle
        try:
            handle.sock.sendall(json.dumps({"id": None, "op": ACTIVATE_OP}).encode() + b"\n")
        except OSError:
            pass
        return handle

    def refill(self) -> None:
        while len(self.prepared) < self.ahead:
            self.prepared.append(self.prepare())

    def end(self, handle: SandboxHandle) -> None:
        """SIGKILL to the sandbox's init: the kernel kills everything in its PID namespace."""
        handle.ended = True
        handle.active = False
        try:
            if handle.pidfd is not None:
                signal.pidfd_send_signal(handle.pidfd, signal.SIGKILL)
            elif handle.pid:
                os.kill(handle.pid, signal.SIGKILL)
        except OSError:
            pass
        if handle.pidfd is not None:
            os.close(handle.pidfd)
            handle.pidfd = None
        for sock in (handle.sock, handle.impl):
            if sock is None:
                continue
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def end_active(self) -> None:
        handle, self.active = self.active, None
        if handle is not None:
            self.end(handle)

    def forward(self, handle: SandboxHandle, rid: Any, op: str | None, raw: bytes) -> None:
        with handle.lock:
            cause = handle.cause
            if cause is None and isinstance(rid, (int, str)):
                handle.outstanding[rid] = None
        if cause is not None:
            self.reply(rid, error=cause, kind=SANDBOX_ERROR_KIND)
            return
        target = handle.sock if op in OWN_OPS or op == ACTIVATE_OP or handle.impl is None else handle.impl
        try:
            target.sendall(raw if raw.endswith(b"\n") else raw + b"\n")
        except OSError:
            self.died(handle, "the scenario's sandbox ended unexpectedly")

    # the protocol
    def handle(self, raw: bytes) -> None:
        rid, op = request_head(raw)
        if op == "hello":
            try:
                if self.active is None:
                    self.ready_prepared()
            except SandboxFailure as exc:
                self.reply(rid, error=str(exc), kind=SANDBOX_ERROR_KIND)
                return
            self.reply(rid, self.hello or {})
        elif op == "sandbox_start":
            try:
                handle = self.activate()
            except SandboxFailure as exc:
                self.reply(rid, error=str(exc), kind=SANDBOX_ERROR_KIND)
                return
            self.reply(rid, {"sandbox": handle.number})
            self.refill()  # after the answer: the scenario need not wait for the next one's start
        elif op == "sandbox_end":
            self.end_active()
            self.reply(rid, {})
        elif op == "shutdown":
            self.reply(rid, {})
            self.kill_all()
            os._exit(0)
        elif self.active is None:
            self.reply(rid, error=f"no sandbox is active: send sandbox_start before {op!r}", kind="protocol")
        else:
            self.forward(self.active, rid, op, raw)

    def serve(self) -> int:
        self.start_maker()  # before any thread: the maker's forks must be clean
        keep_capabilities((CAP_KILL,))
        spawn_thread(self.watch_maker)
        self.prepared.append(self.prepare())
        for raw in sys.stdin.buffer:
            if raw.strip():
                self.handle(raw)
        # End of input: the harness is gone. Take everything down; the container removes itself.
        self.kill_all()
        os._exit(0)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        sys.stderr.write("usage: supervisor.py CONFIG_JSON\n")
        return 2
    cfg = json.loads(argv[1])
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    return Supervisor(cfg).serve()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
