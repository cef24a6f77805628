"""Stand-ins for ``toolproof releases`` tests that need no network and no Node: a registry that
lists versions from a dict, releases whose tools change behaviour at set versions (an in-process
``Backend``), and a launcher that "installs" them (or says a release does not install or load).

The fake releases change twice, as pi did: ``write`` stops reporting a byte count at 0.85.0, and
``bash`` stops raising on a non-zero exit (returning an ``isError`` result instead) at 0.99.0.
"""

from __future__ import annotations

import os
import shutil
import tarfile
import tempfile
from collections.abc import Callable, Mapping, Sequence
from io import BytesIO
from pathlib import Path
from typing import Any

from harness.backends.base import Backend, Capabilities, HelloInfo
from harness.backends.client import Response
from harness.corpus.loader import load_corpus
from harness.model.file_state import FileState, describe_path
from harness.releases.analysis import Report, analyse
from harness.releases.cache import SweepCache
from harness.releases.launch import Launcher
from harness.releases.records import DOES_NOT_LOAD, NOT_INSTALLABLE, OK, ReleaseState
from harness.releases.sweep import Sweep, SweepOptions
from harness.releases.versions import ImplTemplate, parse_version
from tools_impl.core.profile import ALL_PATCHES
from tools_impl.server.patch_catalogue import patch_catalogue

WRITE_CHANGE = (0, 85, 0)
BASH_CHANGE = (0, 99, 0)
# `bash coin`: a flaky command; its first run at a release says heads before 1.0 and tails after,
# every later run at that release says the other side
COIN_RUNS: dict[str, int] = {}

CHANGELOG = """# Changelog

## [1.0.0] - 2026-10-01

### Fixed

- Fixed the code mode tool description claiming every failed tool call rejects (e.g. `bash` with a nonzero exit)

## [0.99.0] - 2026-09-29

### Changed

- `bash` and `powershell` structured results, which codemode scripts receive, now hold up to 1 MiB

## [0.85.0] - 2026-09-04

### New Features

- **Write tool** — summary of what is below

### Fixed

- Fixed the write tool reporting UTF-16 code-unit counts as byte counts by removing the misleading count ([#8979](https://example.invalid/8979))
- Fixed the find tool returning no results for patterns starting with `./`, such as `./src/*.ts` ([#12020](https://example.invalid/12020))

## [0.84.0] - 2026-08-06

### Fixed

- Fixed the read tool syntax-highlighting errors in the TUI
"""


class FakeRegistry:
    def __init__(self, versions: Mapping[str, Sequence[str]]) -> None:
        self.by_package = dict(versions)
        self.asked: list[str] = []

    def versions(self, package: str) -> list[str]:
        self.asked.append(package)
        return list(self.by_package.get(package, ()))


class FakeRelease(Backend):
    """A release of a tool layer with ``write`` and ``bash`` on the pi surface, in process."""

    name = "fake"

    def __init__(self, version: str) -> None:
        self.version = version
        self.roots: list[str] = []

    def start(self) -> HelloInfo:
        return HelloInfo("fake-tools", self.version, 1, "pi", ("write", "bash"), ("hello", "workspace", "call"), (),
                         Capabilities.from_json({"os": "linux", "shell": "bash"}), ("pi",),
                         # as the pi driver declares a published release: pi's wording, no MiniMax patch
                         dialects=("pi",), absent_patches=ALL_PATCHES)

    def new_workspace(self, archive: bytes, env: dict[str, str | None], profile: dict[str, Any] | None) -> str:
        root = tempfile.mkdtemp(prefix="toolproof-fake-ws-")
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(root, filter="data")
        self.roots.append(root)
        return root

    def request(self, op: str, fields: dict[str, Any], *, deadline_s: float) -> Response:
        if op != "call":
            return Response(None, True, {})
        tool, args = fields.get("tool"), fields.get("args", {})
        new = parse_version(self.version)
        root = self.roots[-1]
        if tool == "write":
            content = str(args.get("content", ""))
            with open(os.path.join(root, str(args["path"])), "w", encoding="utf-8") as fh:
                fh.write(content)
            text = (f"Successfully wrote to {args['path']}" if new >= WRITE_CHANGE
                    else f"Successfully wrote {len(content)} bytes to {args['path']}")
            return Response(None, True, {"content": [{"type": "text", "text": text}], "details": None})
        if tool == "bash" and args.get("command") == "coin":
            COIN_RUNS[self.version] = COIN_RUNS.get(self.version, 0) + 1
            first = "heads" if new < (1, 0, 0) else "tails"
            side = first if COIN_RUNS[self.version] == 1 else {"heads": "tails", "tails": "heads"}[first]
            return Response(None, True, {"content": [{"type": "text", "text": side}], "details": None})
        if tool == "bash":
            command = str(args.get("command", ""))
            code = int(command.rsplit("exit ", 1)[1]) if "exit " in command else 0
            if code and new < BASH_CHANGE:
                return Response(None, False, error={"message": f"Command exited with code {code}", "kind": "tool"})
            text = f"Command exited with code {code}" if code else "(no output)"
            return Response(None, True, {"content": [{"type": "text", "text": text}], "details": None,
                                         "is_error": bool(code)})
        return Response(None, False, error={"message": f"Tool {tool} not found", "kind": "validation"})

    def read_files(self, root: str, paths: list[str]) -> dict[str, FileState]:
        return {p: describe_path(os.path.join(root, p), p) for p in paths}

    def drop_workspace(self, root: str) -> None:
        shutil.rmtree(root, ignore_errors=True)

    def restart(self) -> None:
        pass

    def close(self) -> None:
        for root in self.roots:
            shutil.rmtree(root, ignore_errors=True)


class FakeLauncher(Launcher):
    """A launcher whose releases are ``FakeRelease``; ``broken`` maps versions to the state they
    fail with (``not installable`` / ``does not load``)."""

    def __init__(self, broken: Mapping[str, str] | None = None, changelogs: Mapping[str, str] | None = None) -> None:
        super().__init__(ImplTemplate("fake@{version}"), search_tools=False)
        self.broken = dict(broken or {})
        self.changelogs = dict(changelogs or {})
        self.probed: list[str] = []
        self.started: list[str] = []

    @property
    def launch_key(self) -> str:
        return "fake"

    def install(self, version: str) -> ReleaseState:
        if self.broken.get(version) == NOT_INSTALLABLE:
            return ReleaseState(version, NOT_INSTALLABLE, "dependency @x/chord@^0.99.1 is missing from the registry")
        return ReleaseState(version, OK)

    def probe(self, version: str) -> ReleaseState:
        self.probed.append(version)
        state = self.install(version)
        if state.usable and self.broken.get(version) == DOES_NOT_LOAD:
            return ReleaseState(version, DOES_NOT_LOAD, "package @x/pi-server is missing")
        # as Launcher.probe: a release that answers says which surfaces it speaks
        return ReleaseState(version, OK, surfaces=("pi",)) if state.usable else state

    def factory(self, version: str) -> Callable[[], Backend]:
        def make() -> Backend:
            self.started.append(version)
            return FakeRelease(version)
        return make

    def changelog_text(self, version: str, packages: tuple[str, ...]) -> str | None:
        return self.changelogs.get(version)


VERSIONS = ["0.84.0", "0.84.4", "0.85.0", "0.85.1", "0.86.1", "0.87.1", "0.99.1", "1.0.3", "1.3.0", "1.4.0", "1.5.0",
            "1.6.0-rc.1"]
BROKEN = {"0.85.0": DOES_NOT_LOAD, "0.99.1": NOT_INSTALLABLE, "1.0.3": NOT_INSTALLABLE}
SCENARIOS = {
    "write-count.yaml": """
id: hist/write-count
surface: pi
steps:
  - tool: write
    args: {path: a.txt, content: hello}
    expect: {text: "Successfully wrote 5 bytes to a.txt"}
""",
    "bash-exit.yaml": """
id: hist/bash-exit
surface: pi
steps:
  - tool: bash
    args: {command: "exit 3"}
    expect: {status: error, error: "Command exited with code 3"}
""",
    "bash-ok.yaml": """
id: hist/bash-ok
surface: pi
steps:
  - tool: bash
    args: {command: "true"}
    expect: {text: "(no output)"}
""",
    "pin-on.yaml": """
id: hist/pin-on
surface: pi
patches: {edit.fidelity-guard: on}
steps:
  - tool: write
    args: {path: b.txt, content: x}
    expect: {text: "Successfully wrote to b.txt"}
""",
    "pin-off.yaml": """
id: hist/pin-off
surface: pi
patches: {edit.fidelity-guard: off}
steps:
  - tool: write
    args: {path: b.txt, content: x}
    expect: {text: "Successfully wrote 1 bytes to b.txt"}
""",
}


def write_corpus(root: Path) -> Path:
    root.mkdir(parents=True)
    for name, text in SCENARIOS.items():
        (root / name).write_text(text.lstrip(), encoding="utf-8")
    return root


def make(corpus: Path, cache_dir: Path, *, shard: tuple[int, int] | None = None, fuzz: bool = False,
         jobs: int = 1, range_from: str | None = None, range_to: str | None = None) -> tuple[Sweep, FakeLauncher]:
    """A sweep of the fake releases over ``corpus`` with its own cache."""
    launcher = FakeLauncher(BROKEN, {"1.5.0": CHANGELOG})
    scenarios = load_corpus([corpus])
    cache = SweepCache(cache_dir, "fake")
    options = SweepOptions(range_from, range_to, ("fake-tools",), jobs, shard, 10, 1, fuzz)
    sweep = Sweep(ImplTemplate("fake@{version}"), FakeRegistry({"fake-tools": VERSIONS}), launcher, scenarios, cache,
                  options)
    return sweep, launcher


def fake_report(tmp_path: Path) -> Report:
    """The report of a sweep over the fake releases (two changes, 14 toggles × 11 releases)."""
    sweep, _ = make(write_corpus(tmp_path / "corpus"), tmp_path / "cache")
    return analyse(sweep.run(), patch_catalogue())
