"""The pi installer (adapters/pi/pi_setup.py): version → npm package and Node requirement, the
committed locks, the printed backend command, and the cached fast path (with a stand-in npm)."""

from __future__ import annotations

import concurrent.futures
import importlib.util
import json
import os
import shlex
import shutil
import stat
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.repo import REPO

SETUP_PATH = REPO / "adapters" / "pi" / "pi_setup.py"
LOCKED_VERSIONS = ("0.79.1", "0.73.1")


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pi_setup", SETUP_PATH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["pi_setup"] = module
    spec.loader.exec_module(module)
    return module


pi_setup = _load()


@pytest.mark.parametrize(("version", "package"), [
    ("0.72.1", "@mariozechner/pi-coding-agent"),
    ("0.73.1", "@mariozechner/pi-coding-agent"),
    ("0.74.0", "@earendil-works/pi-coding-agent"),
    ("0.79.1", "@earendil-works/pi-coding-agent"),
    ("1.6.0", "@earendil-works/pi-coding-agent"),
])
def test_package_for_switches_scope_after_0_73_1(version: str, package: str) -> None:
    assert pi_setup.package_for(version) == package


@pytest.mark.parametrize(("version", "minimum"), [
    ("0.73.1", None),
    ("0.74.2", None),
    ("0.75.1", (22, 19, 0)),
    ("0.79.1", (22, 19, 0)),
    ("1.6.0", (22, 19, 0)),
])
def test_node_minimum_is_22_19_from_0_75(version: str, minimum: tuple[int, int, int] | None) -> None:
    assert pi_setup.node_minimum_for(version) == minimum


def test_release_pins_the_lockstep_sibling_packages_to_the_same_version() -> None:
    release = pi_setup.release_for("v0.79.1")
    assert release.version == "0.79.1"
    assert release.dependencies() == {
        "@earendil-works/pi-coding-agent": "0.79.1",
        "@earendil-works/pi-agent-core": "0.79.1",
        "@earendil-works/pi-ai": "0.79.1",
        "@earendil-works/pi-tui": "0.79.1",
    }


@pytest.mark.parametrize("bad", ["0.79", "latest", "0.79.1-beta", ""])
def test_parse_version_rejects_non_release_strings(bad: str) -> None:
    with pytest.raises(pi_setup.SetupError) as info:
        pi_setup.parse_version(bad)
    assert str(info.value) == f"not a pi release version: {bad!r} (expected MAJOR.MINOR.PATCH, e.g. 0.79.1)"


@pytest.mark.parametrize(("spec", "minimum"), [
    (">=22.19.0", (22, 19, 0)),
    (">= 20.6", (20, 6, 0)),
    ("^20.0.0", None),
    (None, None),
])
def test_engines_minimum_reads_the_lower_bound(spec: str | None, minimum: tuple[int, int, int] | None) -> None:
    assert pi_setup.engines_minimum(spec) == minimum


def test_node_version_of_parses_node_dash_dash_version() -> None:
    assert pi_setup.node_version_of("v20.20.2\n") == (20, 20, 2)
    assert pi_setup.node_version_of("garbage") is None


def test_backend_command_quotes_paths_for_the_cmd_backend() -> None:
    cmd = pi_setup.backend_command("/opt/node 22/bin/node", "/cache/pi/0.79.1")
    assert cmd == "cmd:'/opt/node 22/bin/node' adapters/pi/driver.mjs --pi-dir /cache/pi/0.79.1"
    assert shlex.split(cmd.removeprefix("cmd:"))[0] == "/opt/node 22/bin/node"


def test_default_cache_dir_prefers_the_explicit_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TOOLPROOF_PI_CACHE", str(tmp_path / "c"))
    assert pi_setup.default_cache_dir() == tmp_path / "c"
    monkeypatch.delenv("TOOLPROOF_PI_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert pi_setup.default_cache_dir() == tmp_path / "x" / "toolproof" / "pi"


@pytest.mark.parametrize("version", LOCKED_VERSIONS)
def test_committed_lock_pins_exactly_what_the_release_installs(version: str) -> None:
    release = pi_setup.release_for(version)
    lock_dir = pi_setup.LOCKS_DIR / version
    manifest = json.loads((lock_dir / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((lock_dir / "package-lock.json").read_text(encoding="utf-8"))
    assert manifest["dependencies"] == release.dependencies()
    assert lock["packages"][""]["dependencies"] == release.dependencies()
    for name in release.dependencies():
        assert lock["packages"][f"node_modules/{name}"]["version"] == version


def test_committed_node_runtime_lock_pins_the_runtime_version() -> None:
    lock_dir = pi_setup.LOCKS_DIR / f"node-{pi_setup.NODE_RUNTIME_VERSION}"
    lock = json.loads((lock_dir / "package-lock.json").read_text(encoding="utf-8"))
    entry = lock["packages"][f"node_modules/{pi_setup.NODE_RUNTIME_PACKAGE}"]
    assert entry["version"] == pi_setup.NODE_RUNTIME_VERSION
    assert pi_setup.NODE_RUNTIME_VERSION.startswith("22.")
    assert pi_setup.node_version_of(pi_setup.NODE_RUNTIME_VERSION) >= pi_setup.NODE22_MINIMUM


FAKE_NPM = """#!{python}
# stand-in npm: "installs" package.json dependencies as bare manifests and counts its runs
import json, os, sys
with open(os.environ["FAKE_NPM_LOG"], "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\\n")
deps = json.load(open("package.json"))["dependencies"]
for name, version in deps.items():
    os.makedirs(os.path.join("node_modules", name), exist_ok=True)
    with open(os.path.join("node_modules", name, "package.json"), "w") as fh:
        json.dump({{"name": name, "version": version, "engines": {{"node": ">=20.6.0"}}}}, fh)
"""


def test_install_is_cached_after_the_first_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    if shutil.which("node") is None:
        pytest.skip("requires node on PATH (0.73.1 runs on the host's Node)")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text(FAKE_NPM.format(python=sys.executable), encoding="utf-8")
    npm.chmod(npm.stat().st_mode | stat.S_IEXEC)
    log = tmp_path / "npm.log"
    monkeypatch.setenv("FAKE_NPM_LOG", str(log))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    cache = tmp_path / "cache"

    assert pi_setup.main(["0.73.1", "--cache", str(cache)]) == 0
    first = capsys.readouterr().out
    assert pi_setup.main(["0.73.1", "--cache", str(cache)]) == 0
    second = capsys.readouterr().out

    assert log.read_text().splitlines() == ["ci --ignore-scripts --no-audit --no-fund --loglevel=error"]
    assert first == second == pi_setup.backend_command(shutil.which("node"), str(cache / "0.73.1")) + "\n"
    info = json.loads((cache / "0.73.1" / pi_setup.INFO_FILE).read_text(encoding="utf-8"))
    assert info == {"version": "0.73.1", "package": "@mariozechner/pi-coding-agent", "node": shutil.which("node")}
    # no half-installed work dirs left; the per-target lock files live in their own directory
    assert sorted(p.name for p in cache.iterdir()) == [pi_setup.LOCKS_SUBDIR, "0.73.1"]


def test_concurrent_installs_of_one_release_run_npm_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Two installs of the same release at once (threads here; processes alike, the lock is a file
    lock): the second waits for the first and finds its stamp instead of racing npm and the swap."""
    if shutil.which("node") is None:
        pytest.skip("requires node on PATH (0.73.1 runs on the host's Node)")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text(FAKE_NPM.format(python=sys.executable) + "import time; time.sleep(0.5)\n", encoding="utf-8")
    npm.chmod(npm.stat().st_mode | stat.S_IEXEC)
    log = tmp_path / "npm.log"
    monkeypatch.setenv("FAKE_NPM_LOG", str(log))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    cache = tmp_path / "cache"
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        done = list(pool.map(lambda _: pi_setup.install("0.73.1", cache), range(2)))
    assert done[0] == done[1] == (shutil.which("node"), cache / "0.73.1")
    assert len(log.read_text().splitlines()) == 1
    assert sorted(p.name for p in cache.iterdir()) == [pi_setup.LOCKS_SUBDIR, "0.73.1"]


def test_main_reports_a_bad_version_without_a_traceback(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert pi_setup.main(["latest", "--cache", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        "pi_setup: not a pi release version: 'latest' (expected MAJOR.MINOR.PATCH, e.g. 0.79.1)\n")
