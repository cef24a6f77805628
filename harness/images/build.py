"""Builds toolproof images from the recipes in ``harness/images/<name>/`` (see ``__init__``).

``build_image(name)`` returns a ``BuildReport``; an image whose recipe hash is already present is
reported as ``cached`` and not rebuilt. ``linux-bash`` gets its Debian base from a registry when
one answers (``debian:bookworm-slim``, method ``registry``), otherwise offline: ``debootstrap``
from the apt mirror this machine is configured with, ``docker import`` of the root filesystem
(tarball cached under the toolproof cache dir, keyed by the package list), then the same recipe
Dockerfile ``FROM`` the imported image (method ``debootstrap``). The pwsh images need a registry
(and, for Windows, a Windows engine); where they cannot be built, ``ImageBuildError`` says why and
carries ``skip_reason = "requires pwsh image"``.

Command line: ``python -m harness.images.build NAME [--force]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import InfrastructureError
from harness.images.engine import Engine, resolve_endpoint
from harness.images.recipes import (
    DEBIAN_SUITE,
    DEFAULT_DEBIAN_MIRROR,
    LABEL_IMAGE_NAME,
    LABEL_RECIPE_HASH,
    LABEL_ROOTFS_KEY,
    PWSH_SKIP_REASON,
    RECIPES,
    REGISTRY_BASE_IMAGE,
    ImageBuildError,
    Recipe,
    cache_dir,
    get_recipe,
    image_tag,
    package_list,
    parse_debian_mirror,
    parse_windows_build,
    read_apt_sources,
    recipe_hash,
    rootfs_key,
    windows_base_for_build,
)

PULL_PROBE_SECONDS = 20.0
ENGINE_TIMEOUT_SECONDS = 600
DEBOOTSTRAP_VARIANT = "minbase"
BASE_REPOSITORY = "toolproof/base-" + DEBIAN_SUITE
MIRROR_ENV = "TOOLPROOF_DEBIAN_MIRROR"
# Left out of the cached root filesystem: downloaded packages and indexes are build leftovers.
ROOTFS_PRUNE = ("var/cache/apt/archives", "var/lib/apt/lists")

Progress = Callable[[str], None]


@dataclass(frozen=True)
class BuildReport:
    """What ``build_image`` did: ``method`` is ``registry``, ``debootstrap`` or ``cached``."""

    name: str
    tag: str
    recipe_hash: str
    method: str
    seconds: float


def _quiet(_: str) -> None:
    pass


def engine_client() -> Any:
    """A docker SDK client for the engine every toolproof engine call uses (``DOCKER_HOST``,
    ``DOCKER_CONTEXT`` or the CLI's current context); ``ImageBuildError`` if no engine answers."""
    try:
        return Engine(resolve_endpoint(), timeout=ENGINE_TIMEOUT_SECONDS).client
    except InfrastructureError as exc:
        raise ImageBuildError(f"{exc} (CI: ci/docker-setup.sh)") from exc


def check_buildable(recipe: Recipe, engine_os: str, registry_reachable: bool, detail: str = "") -> None:
    """Raise ``ImageBuildError`` when ``recipe`` cannot be built on an engine running
    ``engine_os`` containers with/without a reachable registry."""
    why = f" ({detail})" if detail else ""
    if recipe.platform != engine_os:
        raise ImageBuildError(
            f"cannot build {recipe.name}: it needs a Docker engine running {recipe.platform} containers, "
            f"but this engine runs {engine_os} containers"
            + ("; use a Windows host with Docker in Windows-containers mode" if recipe.platform == "windows"
               else ""),
            skip_reason=PWSH_SKIP_REASON if recipe.needs_pwsh else None)
    if recipe.base == "registry" and not registry_reachable:
        raise ImageBuildError(
            f"cannot build {recipe.name}: no container registry is reachable{why}, and its base image and "
            "PowerShell packages can only be downloaded; build it on a machine with registry access "
            "(or run pwsh scenarios on the local backend)",
            skip_reason=PWSH_SKIP_REASON if recipe.needs_pwsh else None)


def _image_labels(client: Any, ref: str) -> dict[str, str] | None:
    import docker.errors  # optional: the docker SDK

    try:
        img = client.images.get(ref)
    except docker.errors.ImageNotFound:
        return None
    return dict(img.labels or {})


def probe_registry(client: Any, image: str, timeout_s: float = PULL_PROBE_SECONDS) -> tuple[bool, str]:
    """``(True, "")`` if ``image`` is present locally or can be pulled within ``timeout_s``."""
    if _image_labels(client, image) is not None:
        return True, ""
    outcome: dict[str, str] = {}

    def pull() -> None:
        try:
            client.images.pull(image)
            outcome["ok"] = ""
        except Exception as exc:
            outcome["error"] = str(exc)

    t = threading.Thread(target=pull, daemon=True)
    t.start()
    t.join(timeout_s)
    if "ok" in outcome:
        return True, ""
    return False, outcome.get("error", f"pulling {image} took longer than {timeout_s:g} s")


@contextlib.contextmanager
def build_lock(name: str) -> Iterator[None]:
    """Serialise builds of one image across processes (pytest-xdist workers, CI jobs)."""
    lock_dir = cache_dir() / "locks"
    lock_dir.mkdir(parents=True, exist_ok=True)
    with open(lock_dir / f"{name}.lock", "w") as fh:
        try:
            import fcntl  # POSIX only (a build lock)
        except ImportError:  # Windows: no flock; concurrent builds there are merely wasteful
            yield
            return
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def debian_mirror() -> str:
    """``$TOOLPROOF_DEBIAN_MIRROR``, else the mirror apt is configured with, else deb.debian.org."""
    return (os.environ.get(MIRROR_ENV) or parse_debian_mirror(read_apt_sources())
            or DEFAULT_DEBIAN_MIRROR)


def _debian_arch() -> str:
    dpkg = shutil.which("dpkg")
    if dpkg:
        out = subprocess.run([dpkg, "--print-architecture"], capture_output=True, text=True, check=False)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    return {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())


def build_rootfs_tarball(packages: tuple[str, ...], dest: Path, progress: Progress) -> None:
    """debootstrap a minbase root filesystem with ``packages`` and tar it to ``dest``."""
    debootstrap = shutil.which("debootstrap")
    if debootstrap is None:
        raise ImageBuildError("no registry is reachable and debootstrap is not installed "
                              "(apt-get install -y debootstrap) to build the Debian base offline")
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        raise ImageBuildError("no registry is reachable and the offline debootstrap build needs root")
    mirror = debian_mirror()
    dest.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="rootfs-", dir=dest.parent))
    try:
        root = work / "root"
        cmd = [debootstrap, f"--variant={DEBOOTSTRAP_VARIANT}", "--include=" + ",".join(packages),
               DEBIAN_SUITE, str(root), mirror]
        progress(f"debootstrap {DEBIAN_SUITE} from {mirror} (packages: {', '.join(packages)})")
        run = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if run.returncode != 0:
            tail = "\n".join((run.stdout + run.stderr).strip().splitlines()[-15:])
            raise ImageBuildError(f"debootstrap failed (exit {run.returncode}) using mirror {mirror}; set "
                                  f"{MIRROR_ENV} to another Debian mirror. Last output:\n{tail}")
        for rel in ROOTFS_PRUNE:
            target = root / rel
            if target.is_dir():
                for child in target.iterdir():
                    if child.is_file():
                        child.unlink()
        partial = work / "rootfs.tar"
        progress(f"packing root filesystem into {dest}")
        subprocess.run(["tar", "-C", str(root), "--numeric-owner", "-cf", str(partial), "."], check=True)
        os.replace(partial, dest)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def offline_base(client: Any, progress: Progress) -> str:
    """The tag of a local Debian base imported from a (cached) debootstrap root filesystem."""
    packages = package_list("linux-bash")
    key = rootfs_key(DEBIAN_SUITE, packages, _debian_arch())
    tag = f"{BASE_REPOSITORY}:{key}"
    if _image_labels(client, tag) is not None:
        progress(f"offline base {tag} already imported")
        return tag
    tarball = cache_dir() / "rootfs" / f"{DEBIAN_SUITE}-{key}.tar"
    if tarball.is_file():
        progress(f"using cached root filesystem {tarball}")
    else:
        build_rootfs_tarball(packages, tarball, progress)
    progress(f"docker import {tarball} as {tag}")
    repository, _, tag_part = tag.partition(":")
    client.api.import_image_from_file(str(tarball), repository=repository, tag=tag_part,
                                      changes=[f"LABEL {LABEL_ROOTFS_KEY}={key}"])
    return tag


def _docker_build(client: Any, recipe: Recipe, tag: str, digest: str, buildargs: dict[str, str],
                  progress: Progress, *, offline: bool, isolation: str | None = None) -> None:
    kwargs: dict[str, Any] = dict(
        path=str(recipe.directory), tag=tag, buildargs=buildargs, rm=True, forcerm=True, decode=True,
        labels={LABEL_RECIPE_HASH: digest, LABEL_IMAGE_NAME: recipe.name}, pull=False,
    )
    if offline:
        kwargs["network_mode"] = "none"
    if isolation:
        kwargs["isolation"] = isolation
    tail: list[str] = []
    try:
        for chunk in client.api.build(**kwargs):
            if "error" in chunk:
                raise ImageBuildError(f"docker build of {recipe.name} failed: {chunk['error'].strip()}\n"
                                      + "\n".join(tail[-15:]))
            text = str(chunk.get("stream", "")).rstrip()
            if text:
                tail.append(text)
                progress(text)
    except ImageBuildError:
        raise
    except Exception as exc:
        raise ImageBuildError(f"docker build of {recipe.name} failed: {exc}") from exc


def build_from_context(client: Any, context: Any, tag: str, labels: dict[str, str] | None = None) -> None:
    """Build ``tag`` offline from a tar build context (a file object holding a Dockerfile and
    its files): no pull, no network; an engine error becomes ``ImageBuildError``."""
    try:
        for chunk in client.api.build(fileobj=context, custom_context=True, tag=tag, rm=True, forcerm=True,
                                      pull=False, network_mode="none", decode=True, labels=labels or {}):
            if "error" in chunk:
                raise ImageBuildError(f"building {tag} failed: {str(chunk['error']).strip()}")
    except ImageBuildError:
        raise
    except Exception as exc:
        raise ImageBuildError(f"building {tag} failed: {exc}") from exc


def build_image(name: str, *, force: bool = False, progress: Progress | None = None) -> BuildReport:
    """Build image ``name`` unless an image with the same recipe hash exists (then ``cached``).
    Raises ``ImageBuildError`` (an ``InfrastructureError``) when it cannot be built here."""
    say = progress or _quiet
    recipe = get_recipe(name)
    digest = recipe_hash(name)
    tag = image_tag(name, digest)
    started = time.monotonic()
    client = engine_client()
    with build_lock(name):
        labels = _image_labels(client, tag)
        if not force and labels is not None and labels.get(LABEL_RECIPE_HASH) == digest:
            say(f"{tag} is up to date")
            return BuildReport(name, tag, digest, "cached", time.monotonic() - started)
        engine_os = str(client.info().get("OSType", "linux"))
        if recipe.platform != engine_os:
            check_buildable(recipe, engine_os, registry_reachable=False)
        buildargs: dict[str, str] = {}
        isolation: str | None = None
        if recipe.platform == "windows":
            info = client.info()
            base = windows_base_for_build(parse_windows_build(str(info.get("KernelVersion")
                                                                  or info.get("OSVersion", ""))))
            buildargs["WINDOWS_TAG"] = base.tag
            isolation = base.isolation
            reachable, detail = True, ""
        else:
            reachable, detail = probe_registry(client, REGISTRY_BASE_IMAGE)
        check_buildable(recipe, engine_os, reachable, detail)
        if reachable:
            method = "registry"
            if recipe.platform == "linux":
                buildargs["BASE"] = REGISTRY_BASE_IMAGE
        else:
            say(f"no registry reachable ({detail}); building the Debian base offline")
            method = "debootstrap"
            buildargs["BASE"] = offline_base(client, say)
        say(f"building {tag} ({method})")
        _docker_build(client, recipe, tag, digest, buildargs, say, offline=not reachable, isolation=isolation)
    return BuildReport(name, tag, digest, method, time.monotonic() - started)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.images.build",
                                     description="Build a toolproof image from its recipe (cached when unchanged).")
    parser.add_argument("name", help="image recipe: " + ", ".join(sorted(RECIPES)))
    parser.add_argument("--force", action="store_true", help="rebuild even if the recipe hash is present")
    parser.add_argument("--quiet", action="store_true", help="print only the final report")
    args = parser.parse_args(argv)
    try:
        report = build_image(args.name, force=args.force,
                             progress=None if args.quiet else (lambda line: print(line, file=sys.stderr)))
    except ImageBuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{report.tag} {report.method} {report.seconds:.1f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
