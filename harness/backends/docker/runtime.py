"""How each implementation gets into a worker container: which runtime image it runs in
(``harness.images.runtime`` builds them) and the supervisor configuration that starts it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.backends.base import container_tools_tmpdir
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
    f"sys.path[:0] = [{INSTALL_DIR!r}, {INSTALL_DIR + '/' + runtime_images.SITE_PACKAGES!r}]\n"
    "from tools_impl.server.dispatch import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)
# The same server without the exec: the supervisor's sandbox maker imports this module once and
# each sandbox's implementation is a fork of it that calls FUNCTION(ARGUMENT) — what the launch
# above ends in, minus the interpreter's start-up, the imports and the argument parsing — named
# and set up as the exec'd one would be.
# ``warm``: what the server would import (or set up) late, on a scenario's first image or classify
# call, done once in the maker instead of in every fork (pypdf is not: it would triple the size of
# every fork for the few scenarios that read a PDF).
REFERENCE_PRELOAD = {"path": [INSTALL_DIR, f"{INSTALL_DIR}/{runtime_images.SITE_PACKAGES}"],
                     "module": "tools_impl.server.dispatch", "function": "serve_stdio",
                     "warm": ["unicodedata2", "stringzilla", "PIL.Image:preinit", "tree_sitter", "tree_sitter_bash"]}
CONTAINER_PYTHON = "python3"
# Where commands may write: never on the implementation's PATH.
WRITABLE_ROOTS = ("/tmp", WORKSPACE_PARENT, CONTAINER_HOME, "/dev/shm", "/dev/mqueue")
# Mounted afresh for every scenario's sandbox, with the container's own options for each.
SANDBOX_MOUNTS = (*WRITABLE_ROOTS, "/dev/pts")
SANDBOX_NAMESPACES = ("mount", "pid", "ipc", "uts", "net")
# Sandboxes the supervisor keeps ready: a short scenario after a long one finds one waiting.
PREPARED_AHEAD = 2


def container_argv(impl: Implementation) -> tuple[list[str], dict[str, str], bool]:
    """(argv inside the container, extra environment, whether it makes itself non-dumpable)."""
    if impl.is_reference:
        argv = [f"{INSTALL_DIR}/bin/toolproof-reference", "-E", "-s", "-B", "-c", REFERENCE_LAUNCH]
        if impl.kind == "upstream":
            argv.append("--upstream")
        return argv, {}, True
    if impl.kind == "pi":
        # Node has no way to make itself non-dumpable (prctl); its binary is installed
        # execute-only (harness.images.runtime.EXECUTE_ONLY_MODE), so exec makes it non-dumpable.
        return [f"{INSTALL_DIR}/node/bin/node", f"{INSTALL_DIR}/pi/driver.mjs", "--pi-dir", f"{INSTALL_DIR}/pi"], {}, True
    # A user's program: the supervisor starts it through a private execute-only copy of its ELF
    # loader where it can, and reports in the hello whether that made it non-dumpable.
    # ``{python}`` (the interpreter running toolproof, on the host) is the image's python3 here.
    return [CONTAINER_PYTHON if word == PYTHON_PLACEHOLDER else word for word in impl.command_argv()], {}, False


def launch_mode(impl: Implementation) -> str:
    """``direct`` (exec the argv) or ``loader`` (the supervisor's non-dumpable start of a ``cmd:``
    program through a private execute-only copy of its ELF interpreter)."""
    return "direct" if impl.is_reference or impl.kind == "pi" else "loader"


def supervisor_config(impl: Implementation, hardening: Hardening, tmpdir: str | None = None) -> dict[str, Any]:
    """What the supervisor starts and how; ``tmpdir``: the tools' TMPDIR (default a fresh
    ``/tmp/toolproof-tmp-XXXXXXXX``, the local backend's length), made by the supervisor."""
    argv, env, nondumpable = container_argv(impl)
    tmpdir = tmpdir or container_tools_tmpdir()
    preload = ({**REFERENCE_PRELOAD, "argument": "UPSTREAM_PI" if impl.kind == "upstream" else "REFERENCE"}
               if impl.is_reference else None)
    return {
        "argv": argv,
        "launch": launch_mode(impl),
        "preload": preload,
        "prepared_ahead": PREPARED_AHEAD,
        "sandbox_mounts": list(SANDBOX_MOUNTS),
        "env": {**env, "TMPDIR": tmpdir},
        "tmpdir": tmpdir,
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
            "tmpdir": tmpdir,
            "sandbox": {
                "uid": TOOL_UID,
                "protocol_channel": "socket",
                "nondumpable": nondumpable,
                "namespaces": list(SANDBOX_NAMESPACES),
                "capabilities": "none",
                "cpus": hardening.cpus,
                "memory": hardening.mem_limit,
                "pids": hardening.pids_limit,
            },
        },
    }


def runtime_payload(impl: Implementation, engine_arch: str, client: Any = None, base: str | None = None,
                    warn: Callable[[str], None] | None = None) -> tuple[str, runtime_images.Payload]:
    """(runtime image name, payload) for ``impl``. With ``client`` and ``base``, the reference's
    optional packages are fetched for the base image's Python and shipped; when that is not
    possible ``warn`` is told why (the reference then degrades as it does without them)."""
    if impl.is_reference:
        packages = None
        if client is not None and base is not None:
            python = runtime_images.container_python(client, base)
            problem = "cannot tell which Python the image has"
            if python is not None:
                packages, problem = runtime_images.packages_for(python)
            if packages is None and warn is not None:
                warn(f"the reference's container image is built without its optional packages "
                     f"({', '.join(runtime_images.REFERENCE_PACKAGES)}): {problem}")
        return "reference", runtime_images.reference_payload(engine_arch, packages)
    if impl.kind == "pi":
        pi = install_pi(impl.version, pinned_node=True)
        return f"pi-{impl.version}", runtime_images.pi_payload(pi.directory, Path(pi.node))
    return "cmd", runtime_images.base_payload()


__all__ = ["REFERENCE_LAUNCH", "REFERENCE_PRELOAD", "SANDBOX_MOUNTS", "container_argv", "launch_mode",
           "runtime_payload", "supervisor_config"]
