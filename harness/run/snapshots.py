"""Snapshot storage shared by the CLI and the pytest plugin: the snapshot of expectation
``snapshot: true`` on step S of scenario I is the file ``snapshots/<I>/<S>.<text|error>.txt``
(exact UTF-8 bytes). pytest writes and updates them through syrupy (``--snapshot-update``,
see ``pytest_plugin``); the CLI only compares against them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.install.shipped import snapshot_root_for
from harness.model.scenario import Scenario
from harness.run.compare import readable_diff

SNAPSHOT_DIRNAME = "snapshots"
SNAPSHOT_SUFFIX = ".txt"


def snapshot_path(root: Path, scenario_id: str, name: str) -> Path:
    return root / scenario_id / f"{name}{SNAPSHOT_SUFFIX}"


@dataclass(frozen=True)
class SnapshotStore:
    root: Path

    @staticmethod
    def default_root() -> Path:
        return Path.cwd() / SNAPSHOT_DIRNAME

    def hook_for(self, scenario: Scenario) -> Callable[[str, str], str | None]:
        # the shipped corpus brings its own snapshots, wherever toolproof runs
        root = snapshot_root_for(scenario.path) or self.root

        def check(name: str, actual: str) -> str | None:
            path = snapshot_path(root, scenario.id, name)
            try:
                expected = path.read_bytes().decode("utf-8", "surrogateescape")
            except OSError:
                return (f"snapshot {path} is missing; create it with "
                        "pytest --toolproof <paths> --snapshot-update")
            if expected != actual:
                return f"differs from snapshot {path}\n" + readable_diff(expected, actual)
            return None

        return check
