"""Image recipes: which toolproof images exist, where their recipe files live, how a recipe is
content-hashed into an image tag, and the pure helpers the builder needs (apt mirror parsing, the
Windows host build → base image tag mapping). Building itself is in ``build.py``.

A recipe is the directory ``harness/images/<name>/``; its hash covers every file in it plus the
builder's own version, so editing any recipe file (or the build procedure) yields a new tag and an
unchanged recipe is never rebuilt.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from harness.errors import InfrastructureError

RECIPES_DIR = Path(__file__).resolve().parent
# Bump when build.py changes how an image is produced from the same recipe files.
BUILDER_VERSION = "1"
TAG_REPOSITORY_PREFIX = "toolproof/"
SHORT_HASH_CHARS = 12
LABEL_RECIPE_HASH = "org.toolproof.recipe-hash"
LABEL_IMAGE_NAME = "org.toolproof.image"
LABEL_ROOTFS_KEY = "org.toolproof.rootfs-key"
DEBIAN_SUITE = "bookworm"
REGISTRY_BASE_IMAGE = "debian:bookworm-slim"
DEFAULT_DEBIAN_MIRROR = "http://deb.debian.org/debian"
PWSH_SKIP_REASON = "requires pwsh image"

# Windows Server base tags by host build number. Process isolation needs an exact build match;
# Hyper-V isolation can run an older base on a newer host.
WINDOWS_BASE_TAGS: dict[int, str] = {
    17763: "ltsc2019",
    20348: "ltsc2022",
    26100: "ltsc2025",
}


@dataclass(frozen=True)
class Recipe:
    """One buildable image: ``platform`` is the engine OS it needs; ``base`` says how the base is
    obtained (``debian`` = registry or offline debootstrap; ``registry`` = registry only)."""

    name: str
    platform: str
    base: str
    needs_pwsh: bool

    @property
    def directory(self) -> Path:
        return RECIPES_DIR / self.name


RECIPES: dict[str, Recipe] = {
    "linux-bash": Recipe("linux-bash", platform="linux", base="debian", needs_pwsh=False),
    "linux-pwsh": Recipe("linux-pwsh", platform="linux", base="registry", needs_pwsh=True),
    "windows-pwsh": Recipe("windows-pwsh", platform="windows", base="registry", needs_pwsh=True),
}


class ImageBuildError(InfrastructureError):
    """An image cannot be built here; the message says why and what would make it work.
    ``skip_reason`` is what scenarios needing the image report when they are skipped."""

    def __init__(self, message: str, skip_reason: str | None = None) -> None:
        super().__init__(message)
        self.skip_reason = skip_reason


@dataclass(frozen=True)
class WindowsBase:
    """The Windows base image tag for a host and the isolation mode it needs there."""

    tag: str
    isolation: str


def get_recipe(name: str) -> Recipe:
    try:
        return RECIPES[name]
    except KeyError:
        known = ", ".join(sorted(RECIPES))
        raise ImageBuildError(f"unknown image {name!r}; known images: {known}") from None


def recipe_files(directory: Path) -> dict[str, bytes]:
    """Every regular file under ``directory`` by POSIX relative path (caches excluded)."""
    files: dict[str, bytes] = {}
    for path in sorted(directory.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            files[path.relative_to(directory).as_posix()] = path.read_bytes()
    return files


def hash_recipe(name: str, files: dict[str, bytes], builder_version: str = BUILDER_VERSION) -> str:
    """Content hash of a recipe: stable under file order, sensitive to every name and byte."""
    h = hashlib.sha256()
    h.update(f"toolproof-image\0{builder_version}\0{name}\0".encode())
    for rel in sorted(files):
        data = files[rel]
        h.update(f"{rel}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def recipe_hash(name: str) -> str:
    return hash_recipe(name, recipe_files(get_recipe(name).directory))


def image_tag(name: str, digest: str | None = None) -> str:
    """``toolproof/<name>:<first 12 hex of the recipe hash>``."""
    return f"{TAG_REPOSITORY_PREFIX}{name}:{(digest or recipe_hash(name))[:SHORT_HASH_CHARS]}"


def package_list(name: str = "linux-bash") -> tuple[str, ...]:
    text = (get_recipe(name).directory / "packages.txt").read_text(encoding="utf-8")
    return tuple(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


def rootfs_key(suite: str, packages: tuple[str, ...], arch: str) -> str:
    """Cache key of a debootstrap root filesystem: what it contains, not where it came from."""
    text = "\0".join([BUILDER_VERSION, suite, arch, *sorted(packages)])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def cache_dir(environ: dict[str, str] | None = None) -> Path:
    """``$TOOLPROOF_CACHE_DIR``, else ``$XDG_CACHE_HOME/toolproof``, else ``~/.cache/toolproof``."""
    env = os.environ if environ is None else environ
    if env.get("TOOLPROOF_CACHE_DIR"):
        return Path(env["TOOLPROOF_CACHE_DIR"])
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "toolproof"


_ONE_LINE_DEB = re.compile(r"^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)")


def parse_debian_mirror(sources: list[str], suite: str = DEBIAN_SUITE) -> str | None:
    """The Debian archive URI apt is configured with, from the texts of ``sources.list`` files
    (one-line ``deb …`` format) and ``*.sources`` files (deb822). Prefers an entry serving
    ``suite`` itself; ignores security, updates, backports, ``deb-src`` and non-Debian archives
    (``/debian`` must end the URI path). ``None`` when nothing matches."""
    candidates: list[tuple[str, list[str]]] = []
    for text in sources:
        if re.search(r"^\s*(Types|URIs)\s*:", text, re.MULTILINE | re.IGNORECASE):
            for stanza in re.split(r"\n\s*\n", text):
                fields: dict[str, str] = {}
                for line in stanza.splitlines():
                    if line.lstrip().startswith("#") or ":" not in line:
                        continue
                    key, _, value = line.partition(":")
                    fields[key.strip().lower()] = value.strip()
                if fields.get("enabled", "yes").lower() == "no" or "deb" not in fields.get("types", "").split():
                    continue
                for uri in fields.get("uris", "").split():
                    candidates.append((uri, fields.get("suites", "").split()))
        else:
            for line in text.splitlines():
                m = _ONE_LINE_DEB.match(line)
                if m:
                    candidates.append((m.group(1), [m.group(2)]))
    debian = [(uri.rstrip("/"), suites) for uri, suites in candidates
              if re.search(r"/debian$", uri.rstrip("/"))]
    for uri, suites in debian:
        if suite in suites:
            return uri
    return None


def read_apt_sources(etc_apt: Path = Path("/etc/apt")) -> list[str]:
    texts: list[str] = []
    main = etc_apt / "sources.list"
    if main.is_file():
        texts.append(main.read_text(encoding="utf-8", errors="replace"))
    d = etc_apt / "sources.list.d"
    if d.is_dir():
        for p in sorted(d.iterdir()):
            if p.suffix in (".list", ".sources") and p.is_file():
                texts.append(p.read_text(encoding="utf-8", errors="replace"))
    return texts


def windows_base_for_build(host_build: int) -> WindowsBase:
    """Servercore tag for a Windows host build: exact match → process isolation; a newer host than
    any known base → the newest older base under Hyper-V isolation. Older than every known base
    → ``ImageBuildError``."""
    if host_build in WINDOWS_BASE_TAGS:
        return WindowsBase(WINDOWS_BASE_TAGS[host_build], "process")
    older = [b for b in WINDOWS_BASE_TAGS if b < host_build]
    if not older:
        oldest = min(WINDOWS_BASE_TAGS)
        raise ImageBuildError(
            f"Windows host build {host_build} is older than every supported base image "
            f"(oldest: build {oldest}, {WINDOWS_BASE_TAGS[oldest]})")
    return WindowsBase(WINDOWS_BASE_TAGS[max(older)], "hyperv")


def parse_windows_build(os_version: str) -> int:
    """The build number from an engine's ``OSVersion``/``KernelVersion`` (``10.0.20348.2113`` or
    ``10.0 20348 (20348.1.amd64fre…)``)."""
    m = re.search(r"10\.0[. ](\d{5})", os_version)
    if not m:
        raise ImageBuildError(f"cannot read a Windows build number from {os_version!r}")
    return int(m.group(1))


__all__ = [
    "LABEL_IMAGE_NAME",
    "LABEL_RECIPE_HASH",
    "PWSH_SKIP_REASON",
    "RECIPES",
    "ImageBuildError",
    "Recipe",
    "WindowsBase",
    "cache_dir",
    "get_recipe",
    "hash_recipe",
    "image_tag",
    "package_list",
    "parse_debian_mirror",
    "parse_windows_build",
    "read_apt_sources",
    "recipe_files",
    "recipe_hash",
    "rootfs_key",
    "windows_base_for_build",
]
