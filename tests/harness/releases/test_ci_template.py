"""ci/pi-releases.yml, the scheduled release radar users copy: a matrix of shards, one job that
merges them, one that drafts the baseline of a new release; every toolproof command in it parses,
and actionlint accepts it."""

from __future__ import annotations

from typing import Any

import yaml

from tests.project.test_ci_templates import check_command
from tests.support.linters import actionlint
from tests.support.repo import REPO

TEMPLATE = REPO / "ci" / "pi-releases.yml"


def load() -> dict[Any, Any]:
    data = yaml.safe_load(TEMPLATE.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_the_radar_runs_on_a_schedule_in_shards_then_merges_them() -> None:
    data = load()
    assert set(data[True]) == {"schedule", "workflow_dispatch"}  # YAML 1.1 reads `on` as true
    jobs = data["jobs"]
    assert list(jobs) == ["sweep", "report", "new-release"]
    shards = jobs["sweep"]["strategy"]["matrix"]["shard"]
    sweep = " ".join(step.get("run", "") for step in jobs["sweep"]["steps"])
    assert f'--shard "${{{{ matrix.shard }}}}/{len(shards)}"' in sweep
    assert jobs["report"]["needs"] == "sweep"
    report = " ".join(step.get("run", "") for step in jobs["report"]["steps"])
    assert "toolproof releases --merge releases-*.json" in report
    new = " ".join(step.get("run", "") for step in jobs["new-release"]["steps"])
    assert "toolproof releases --new" in new and "--pr-report pr-report.md" in new


def test_every_toolproof_command_in_it_parses() -> None:
    lines = [step["run"].replace("\n", " ") for job in load()["jobs"].values() for step in job["steps"]
             if step.get("run", "").startswith("toolproof ")]
    assert len(lines) == 3
    for line in lines:
        check_command(line.replace('"$PI_FROM"', "0.73.1").replace('"$GITHUB_STEP_SUMMARY"', "summary.md"))


def test_actionlint_accepts_it() -> None:
    assert actionlint(TEMPLATE) == []
