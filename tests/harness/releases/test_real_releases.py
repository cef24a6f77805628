"""One sweep over real pi releases, where they are installed: 0.84.4, 0.85.0 and 0.85.1 from the pi
cache (``ci/pi-setup.sh 0.84.4 0.85.0 0.85.1``; the versions come from a stand-in registry, so no
network is needed). write's byte count disappears at 0.85.0, which installs but does not load, so
the change is found between 0.84.4 and 0.85.1 and names 0.85.0. Skipped, with the reason, when the
releases are not installed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness.corpus.loader import load_corpus
from harness.releases.analysis import analyse
from harness.releases.cache import SweepCache
from harness.releases.launch import Launcher
from harness.releases.records import DOES_NOT_LOAD
from harness.releases.sweep import Sweep, SweepOptions
from harness.releases.versions import PI_PACKAGES, ImplTemplate
from tests.support.releases import FakeRegistry
from tests.support.repo import REPO
from tools_impl.server.patch_catalogue import patch_catalogue

VERSIONS = ("0.84.4", "0.85.0", "0.85.1")


def _installed() -> None:
    cache = Path(os.environ.get("TOOLPROOF_PI_CACHE") or Path.home() / ".cache" / "toolproof" / "pi")
    missing = [v for v in VERSIONS if not (cache / v / "toolproof-pi.json").is_file()]
    if missing:
        pytest.skip(f"pi {', '.join(missing)} not installed in {cache} (ci/pi-setup.sh {' '.join(VERSIONS)})")


@pytest.mark.slow
def test_writes_byte_count_change_steps_over_the_release_that_does_not_load(tmp_path: Path) -> None:
    _installed()
    scenarios = load_corpus([REPO / "adapters" / "pi" / "scenarios" / "history" / "write-byte-count.yaml"])
    template = ImplTemplate("pi@{version}")
    launcher = Launcher(template)
    registry = FakeRegistry({PI_PACKAGES[1]: list(VERSIONS)})
    sweep = Sweep(template, registry, launcher, scenarios, SweepCache(tmp_path, "real"),
                  SweepOptions(packages=PI_PACKAGES, jobs=1, fuzz=False))
    report = analyse(sweep.run(), patch_catalogue())
    assert report.state.releases["0.85.0"].state == DOES_NOT_LOAD
    assert "@earendil-works/pi-server" in report.state.releases["0.85.0"].detail
    (change,) = report.changes
    assert (change.tool, change.last_release_without, change.first_release) == ("write", "0.84.4", "0.85.1")
    assert [r.version for r in change.between] == ["0.85.0"]
    assert change.listed and any("#8979" in e.text for e in change.changelog_entries)
    assert json.loads(json.dumps(report.to_json()))["changes"][0]["scenarios"] == ["pi/history/write-byte-count"]
