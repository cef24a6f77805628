"""How this toolproof was installed, so that the CI ``toolproof init`` writes installs the same:
read from the installed distribution's ``direct_url.json`` (PEP 610), which pip writes for every
install that did not come from a package index.

- from an index (no ``direct_url.json``): ``toolproof==<version>``;
- from a VCS URL: ``toolproof @ git+<url>@<commit>`` (the commit that is installed);
- from an archive URL: ``toolproof @ <url>``;
- from a local wheel or sdist: that file, copied into the repository for the user to commit;
- from a local directory (a checkout, editable or not): a wheel built from it with pip, likewise.

``--pip-spec`` overrides all of this.
"""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from harness import __version__
from harness.errors import UsageError

DISTRIBUTION = "toolproof"
WHEEL_BUILD_TIMEOUT_S = 600


@dataclass(frozen=True)
class InstallSource:
    """``spec``: what CI passes to ``pip install`` (for a ``file``, its path in the repository is
    filled in by the plan); ``file``: a wheel or sdist to copy into the repository; ``how``: the
    sentence ``init`` prints about it."""

    kind: str  # index | vcs | url | file | directory
    spec: str
    how: str
    file: Path | None = None


def _local_path(url: str) -> Path:
    return Path(urllib.request.url2pathname(urllib.parse.urlparse(url).path))


def from_direct_url(info: dict[str, object] | None, version: str) -> InstallSource:
    """The source a ``direct_url.json`` (None: none was written) describes."""
    if not info:
        return InstallSource("index", f"{DISTRIBUTION}=={version}",
                             "the version installed here, from a package index")
    url = str(info.get("url", ""))
    sub = info.get("subdirectory")
    fragment = f"#subdirectory={sub}" if sub else ""
    vcs = info.get("vcs_info")
    if isinstance(vcs, dict):
        rev = vcs.get("commit_id") or vcs.get("requested_revision")
        spec = f"{DISTRIBUTION} @ {vcs.get('vcs', 'git')}+{url}" + (f"@{rev}" if rev else "") + fragment
        return InstallSource("vcs", spec, f"the {vcs.get('vcs', 'git')} commit installed here")
    if url.startswith("file:"):
        path = _local_path(url)
        if isinstance(info.get("dir_info"), dict):
            return InstallSource("directory", "", f"a wheel built from {path}, the directory toolproof is installed from", path)
        return InstallSource("file", "", f"a copy of {path}, the file toolproof was installed from", path)
    return InstallSource("url", f"{DISTRIBUTION} @ {url}{fragment}", "the archive toolproof was installed from")


def installed_from() -> InstallSource:
    """How the running toolproof was installed (a source tree that is not installed counts as
    a directory install of that tree)."""
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        tree = Path(__file__).resolve().parents[2]
        return InstallSource("directory", "", f"a wheel built from {tree}, the source tree toolproof runs from", tree)
    text = dist.read_text("direct_url.json")
    try:
        info = json.loads(text) if text else None
    except json.JSONDecodeError:
        info = None
    return from_direct_url(info if isinstance(info, dict) else None, dist.version or __version__)


def build_wheel(directory: Path, into: Path) -> Path:
    """``pip wheel`` of the project in ``directory`` (no dependencies) into ``into``; the wheel's
    path. ``UsageError`` when pip cannot build it."""
    with tempfile.TemporaryDirectory(prefix="toolproof-wheel-") as tmp:
        try:
            done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", tmp, str(directory)],
                                  capture_output=True, text=True, timeout=WHEEL_BUILD_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise UsageError(f"cannot build a wheel of toolproof from {directory} for CI: {exc}; "
                             "pass --pip-spec (a version, a git URL or a wheel path)") from None
        wheels = sorted(Path(tmp).glob(f"{DISTRIBUTION}-*.whl"))
        if done.returncode != 0 or not wheels:
            tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
            raise UsageError(f"cannot build a wheel of toolproof from {directory} for CI ({tail}); "
                             "pass --pip-spec (a version, a git URL or a wheel path)")
        into.mkdir(parents=True, exist_ok=True)
        target = into / wheels[-1].name
        target.write_bytes(wheels[-1].read_bytes())
        return target


__all__ = ["InstallSource", "build_wheel", "from_direct_url", "installed_from"]
