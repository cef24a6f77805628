"""Published releases of a tool layer: version numbers, the registry's list of them, a range, and
the implementation template (``--impl-template pi@{version}``) that turns a version into an
``--impl`` value.

The registry is asked through npm's own client (``npm view PACKAGE versions --json``), once per
package; a fake registry (any object with ``versions(package)``) stands in for it in tests.
Pre-releases (``1.0.0-rc.1``) are not releases and are left out.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from harness.errors import InfrastructureError, UsageError

Version = tuple[int, int, int]
VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)$")
PI_PACKAGES = ("@mariozechner/pi-coding-agent", "@earendil-works/pi-coding-agent")
PLACEHOLDER = "{version}"
NPM_VIEW_TIMEOUT_S = 120.0


def parse_version(text: str) -> Version:
    """``"0.79.1"`` → ``(0, 79, 1)``; ``UsageError`` for anything else (pre-releases included)."""
    m = VERSION_RE.match(text.strip())
    if not m:
        raise UsageError(f"not a release version: {text!r} (expected MAJOR.MINOR.PATCH, e.g. 0.79.1)")
    return (int(m.group(1)), int(m.group(2)), int(m.group(3)))


def is_release(text: str) -> bool:
    return VERSION_RE.match(text.strip()) is not None


def canonical(text: str) -> str:
    return ".".join(map(str, parse_version(text)))


def sort_versions(versions: Iterable[str]) -> list[str]:
    """Release versions, deduplicated and in version order (pre-releases dropped)."""
    return sorted({canonical(v) for v in versions if is_release(v)}, key=parse_version)


def select_range(versions: Sequence[str], lo: str | None, hi: str | None) -> list[str]:
    """The versions between ``lo`` and ``hi`` inclusive (either may be None: open)."""
    low = parse_version(lo) if lo else None
    high = parse_version(hi) if hi else None
    if low and high and low > high:
        raise UsageError(f"--from {lo} is after --to {hi}")
    return [v for v in versions if (low is None or parse_version(v) >= low)
            and (high is None or parse_version(v) <= high)]


class Registry(Protocol):
    """Where the version list comes from: ``versions(package)`` lists what is published."""

    def versions(self, package: str) -> list[str]: ...


class NpmRegistry:
    """The npm registry through the ``npm`` client (its configured registry and proxy)."""

    def versions(self, package: str) -> list[str]:
        npm = shutil.which("npm")
        if npm is None:
            raise InfrastructureError("npm is not on PATH; install Node.js and npm to list published releases")
        try:
            proc = subprocess.run([npm, "view", package, "versions", "--json"], capture_output=True, text=True,
                                  timeout=NPM_VIEW_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            raise InfrastructureError(f"npm view {package} versions: no answer in {NPM_VIEW_TIMEOUT_S:.0f} s") from None
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise InfrastructureError(f"npm view {package} versions failed (exit {proc.returncode}): {last}")
        return parse_npm_versions(proc.stdout, package)


def parse_npm_versions(text: str, package: str) -> list[str]:
    """``npm view … versions --json`` output: a JSON list (or one string when one version exists)."""
    try:
        data = json.loads(text)
    except ValueError:
        raise InfrastructureError(f"npm view {package} versions: not JSON: {text[:200]!r}") from None
    if isinstance(data, str):
        data = [data]
    if not isinstance(data, list) or not all(isinstance(v, str) for v in data):
        raise InfrastructureError(f"npm view {package} versions: expected a list of versions, got {text[:200]!r}")
    return data


def published(registry: Registry, packages: Sequence[str]) -> list[str]:
    """Every release version any of ``packages`` publishes, in version order."""
    found: list[str] = []
    for package in packages:
        found.extend(registry.versions(package))
    return sort_versions(found)


@dataclass(frozen=True)
class ImplTemplate:
    """``--impl-template``: an ``--impl`` value with ``{version}`` in it (``pi@{version}``, or
    ``cmd:node my-adapter.mjs --release {version}`` for another npm-published tool layer)."""

    text: str

    def __post_init__(self) -> None:
        if PLACEHOLDER not in self.text:
            raise UsageError(f"--impl-template {self.text!r}: must contain {PLACEHOLDER}, e.g. pi@{PLACEHOLDER}")

    @property
    def is_pi(self) -> bool:
        return self.text == f"pi@{PLACEHOLDER}"

    def impl(self, version: str) -> str:
        return self.text.replace(PLACEHOLDER, version)

    def default_packages(self) -> tuple[str, ...]:
        return PI_PACKAGES if self.is_pi else ()
