"""How each implementation gets into a worker container: which runtime image it runs in
(``harness.images.runtime`` builds them) and the supervisor configuration that starts it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.backends.cmd import PYTHON_PLACEHOLDER
from harness.backends.docker.hardening import (
    CONTAINER_HOME,
    INSTALL_DIR,
    TOOL_GID,
    TOOL_UID,
    WORKSPACE_PARENT,
    Hardening,
)
from harness.backends.impl import Implementation, install_pi
from harness.images import runtime as runtime_images

# The reference server, started so that it first makes itself non-dumpable (PR_SET_DUMPABLE 0):
# commands it runs (same uid) then cannot open its /proc/<pid>/mem, fd or environ entries.
REFERENCE_LAUNCH = (
    "import ctypes, sys\n"
    "ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)\n"
    f"sys.path.insert(0, {INSTALL_DIR!r})\n"
    "from tools_impl.server.dispatch import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)
CONTAINER_PYTHON = "python3"
# Where commands may write: never on the implementation's PATH.
WRITABLE_ROOTS = ("/tmp", WORKSPACE_PARENT, CONTAINER_HOME, "/dev/shm", "/dev/mqueue")


def container_argv(impl: Implementation) -> tuple[list[str], dict[str, str], bool]:
    """(argv inside the container, extra environment, whether it makes itself non-dumpable)."""
    if impl.is_reference:
        argv = [f"{INSTALL_DIR}/bin/toolproof-reference", "-E", "-s", "-B", "-c", REFERENCE_LAUNCH]
        if impl.kind == "upstream":
            argv.append("--upstream")
        return argv, {}, True
    if impl.kind == "pi":
        # Node has no way to make itself non-dumpable (prctl), so pi's process stays dumpable.
        return [f"{INSTALL_DIR}/node/bin/node", f"{INSTALL_DIR}/pi/driver.mjs", "--pi-dir", f"{INSTALL_DIR}/pi"], {}, False
    # ``{python}`` (the interpreter running toolproof, on the host) is the image's python3 here
    return [CONTAINER_PYTHON if word == PYTHON_PLACEHOLDER else word for word in impl.command_argv()], {}, False


def supervisor_config(impl: Implementation, hardening: Hardening) -> dict[str, Any]:
    argv, env, nondumpable = container_argv(impl)
    return {
        "argv": argv,
        "env": env,
        "uid": TOOL_UID,
        "gid": TOOL_GID,
        "cwd": WORKSPACE_PARENT,
        "home": CONTAINER_HOME,
        "workspace_parent": WORKSPACE_PARENT,
        "path_prefix": f"{INSTALL_DIR}/bin",
        "writable": list(WRITABLE_ROOTS),
        "capabilities": {
            "isolation": "container",
            "home": CONTAINER_HOME,
            "tmpdir": "/tmp",
            "sandbox": {
                "uid": TOOL_UID,
                "protocol_channel": "socket",
                "nondumpable": nondumpable,
                "cpus": hardening.cpus,
                "memory": hardening.mem_limit,
                "pids": hardening.pids_limit,
            },
        },
    }


def runtime_payload(impl: Implementation, engine_arch: str) -> tuple[str, runtime_images.Payload]:
    """(runtime image name, payload) for ``impl``."""
    if impl.is_reference:
        return "reference", runtime_images.reference_payload(engine_arch)
    if impl.kind == "pi":
        pi = install_pi(impl.version, pinned_node=True)
        return f"pi-{impl.version}", runtime_images.pi_payload(pi.directory, Path(pi.node))
    return "cmd", runtime_images.base_payload()


__all__ = ["REFERENCE_LAUNCH", "container_argv", "runtime_payload", "supervisor_config"]
