"""toolproof's in-container supervisor: the harness-owned process that owns the protocol channel.

It is the container's main command (under docker-init, as uid 0 with only CAP_SETUID, CAP_SETGID
and CAP_KILL). It reads protocol lines from its stdin (the harness's ``docker run -i`` attach
stream) and writes responses to its stdout; nothing else in the container holds those streams.
It starts the implementation under test once, as the unprivileged tool uid, with stdin/stdout/
stderr connected to UNIX sockets (a socket cannot be reopened through ``/proc/<pid>/fd``: ENXIO),
forwards every tool op to it and answers the container chores itself. Before that it makes the
tools' private TMPDIR (``cfg["tmpdir"]``) and, for a ``cmd:`` program (``cfg["launch"] ==
"loader"``), starts it non-dumpable through a private execute-only copy of its ELF loader (see
``nondumpable_launch``). The chores:

- ``workspace``: extracts the base64 ``archive`` (as the tool uid's file-system identity) into ``root``, then forwards
  the op *without* the archive, so every implementation gets the same delivery;
- ``fs_read``: the state of workspace paths, read with the tool uid's file-system identity;
- ``ps`` / ``reap``: processes in the container other than docker-init, the supervisor and the
  implementation (the container's pid namespace holds exactly one scenario, so no marker is
  needed); ``reap`` SIGKILLs them;
- ``shutdown``: forwarded, then the supervisor ends, and with it the container (auto-removed).

End of stdin means the harness is gone (closed, crashed or SIGKILLed: the attach stream breaks):
the supervisor kills every process and exits, so the container removes itself. When the
implementation dies, the supervisor writes one ``toolproof-supervisor: FATAL: <cause>`` line to its
stderr (the signal, and "out of memory (limit 1 GiB)" when the kernel OOM killer did it) and exits.

Deliberately self-contained (standard library only, nothing from ``tools_impl``): it runs as root
inside any image, including ones whose implementation is under test, before anything is dropped.
"""

from __future__ import annotations

import base64
import ctypes
import fcntl
import hashlib
import io
import json
import os
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tarfile
import threading
import time
from typing import Any

FATAL_PREFIX = "toolproof-supervisor: FATAL: "
REAP_ROUNDS = 50
REAP_PAUSE_S = 0.02
OWN_OPS = ("workspace", "fs_read", "fs_tree", "ps", "reap")
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


# -- the supervisor -----------------------------------------------------------------------------

class Supervisor:
    def __init__(self, cfg: JsonObj) -> None:
        self.cfg = cfg
        self.out = sys.stdout.buffer
        self.out_lock = threading.Lock()
        self.hello_ids: set[Any] = set()
        self.impl: subprocess.Popen[bytes] | None = None
        self.impl_sock: socket.socket | None = None
        self.oom_before = oom_kills()
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

    # the implementation
    def start_impl(self) -> None:
        cfg = self.cfg
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        err_ours, err_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)

        env = impl_environment(cfg, dict(os.environ))
        argv, loader_fd, executable = list(cfg["argv"]), None, None
        if cfg.get("launch") == "loader":
            argv, loader_fd, nondumpable = nondumpable_launch(cfg, env)
            sandbox = cfg.get("capabilities", {}).get("sandbox")
            if isinstance(sandbox, dict):
                sandbox["nondumpable"] = nondumpable
            if loader_fd is not None:
                executable = f"/proc/self/fd/{loader_fd}"

        def child_setup() -> None:
            if loader_fd is not None:
                # Kept open for the exec only: close-on-exec again, so neither the implementation
                # nor any command it runs holds the loader copy.
                os.set_inheritable(loader_fd, False)
            # Raising one's own OOM score needs no privilege: the kernel then picks the
            # implementation and its commands before the supervisor.
            try:
                with open("/proc/self/oom_score_adj", "w", encoding="ascii") as fh:
                    fh.write("1000")
            except OSError:
                pass
            drop_privileges(cfg)

        try:
            self.impl = subprocess.Popen(
                argv, executable=executable, stdin=theirs.fileno(), stdout=theirs.fileno(),
                stderr=err_theirs.fileno(), env=env, cwd=cfg["cwd"], preexec_fn=child_setup,
                close_fds=True, pass_fds=() if loader_fd is None else (loader_fd,))
        except OSError as exc:
            self.fatal(f"cannot start the implementation {cfg['argv'][0]!r} in the container: {exc}")
        if loader_fd is not None:
            os.close(loader_fd)
        theirs.close()
        err_theirs.close()
        self.impl_sock = ours
        threading.Thread(target=self.pump_impl, daemon=True).start()
        threading.Thread(target=self.pump_stderr, args=(err_ours,), daemon=True).start()
        threading.Thread(target=self.watch_impl, daemon=True).start()

    def pump_impl(self) -> None:
        assert self.impl_sock is not None
        for raw in self.impl_sock.makefile("rb"):
            self.forward_response(raw)

    def forward_response(self, raw: bytes) -> None:
        if self.hello_ids:
            try:
                obj = json.loads(raw)
            except ValueError:
                obj = None
            if isinstance(obj, dict) and obj.get("id") in self.hello_ids and obj.get("ok"):
                self.hello_ids.discard(obj.get("id"))
                got = obj.get("result")
                result: JsonObj = got if isinstance(got, dict) else {}
                have = result.get("capabilities")
                caps: JsonObj = have if isinstance(have, dict) else {}
                result["capabilities"] = {**caps, **self.cfg.get("capabilities", {})}
                obj["result"] = result
                raw = json.dumps(obj, ensure_ascii=False).encode("utf-8", "surrogateescape")
        self.send_line(raw)

    @staticmethod
    def pump_stderr(sock: socket.socket) -> None:
        err = sys.stderr.buffer
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return
            err.write(chunk)
            err.flush()

    def watch_impl(self) -> None:
        assert self.impl is not None
        status = self.impl.wait()
        if self.stopping:
            return
        cause = describe_signal(status)
        after = oom_kills()
        if after is not None and self.oom_before is not None and after > self.oom_before:
            cause = f"{cause}: out of memory (limit {memory_limit_text()})"
        elif status in (-signal.SIGKILL, -signal.SIGTERM, -signal.SIGINT, -signal.SIGHUP,
                        -signal.SIGQUIT):
            cause += " (nothing outside the container can signal it: a command it ran did)"
        self.fatal(f"the implementation under test {cause}")

    def fatal(self, message: str) -> None:
        sys.stderr.write(FATAL_PREFIX + message + "\n")
        sys.stderr.flush()
        self.kill_all()
        os._exit(3)

    # container chores
    def strays(self) -> list[JsonObj]:
        protected = {1, os.getpid(), self.impl.pid if self.impl else -1}
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

    def kill_all(self) -> None:
        self.stopping = True
        try:
            os.kill(-1, signal.SIGKILL)  # every process but docker-init and the caller
        except OSError:
            pass

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
            members = as_tool_user(self.cfg, extract, root, data)
        except Exception as exc:
            self.reply(rid, error=f"workspace: the archive could not be extracted: {exc}", kind="protocol")
            return None
        del members
        req.pop("clean", None)  # the directory now holds the workspace; it must not be cleared
        return json.dumps(req, ensure_ascii=False).encode("utf-8", "surrogateescape") + b"\n"

    def handle(self, raw: bytes) -> None:
        try:
            req = json.loads(raw)
        except ValueError:
            req = None
        op = req.get("op") if isinstance(req, dict) else None
        if op not in OWN_OPS and op != "hello":
            self.to_impl(raw)
            if op == "shutdown":
                self.shutdown()
            return
        assert isinstance(req, dict)
        rid = req.get("id")
        if op == "hello":
            self.hello_ids.add(rid)
            self.to_impl(raw)
        elif op == "workspace":
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
            pass  # the watcher reports the implementation's death

    def shutdown(self) -> None:
        assert self.impl is not None
        self.stopping = True
        try:
            self.impl.wait(float(self.cfg.get("shutdown_grace_s", 3)))
        except subprocess.TimeoutExpired:
            pass
        time.sleep(0.05)  # let the pump forward the shutdown response
        self.kill_all()
        with self.out_lock:
            self.out.flush()
        os._exit(0)

    def make_tmpdir(self) -> None:
        """The tools' TMPDIR (``cfg["tmpdir"]``), owned by the tool uid, mode 0700."""
        tmpdir = self.cfg.get("tmpdir")
        if isinstance(tmpdir, str):
            try:
                as_tool_user(self.cfg, os.makedirs, tmpdir, 0o700)
            except (OSError, RuntimeError) as exc:
                self.fatal(f"cannot make the tools' TMPDIR {tmpdir}: {exc}")

    def serve(self) -> int:
        self.make_tmpdir()
        self.start_impl()
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
