"""``python -m benchmarks --smoke``: the table has every row and sane numbers. No timing is
asserted (CI machines are noisy); the targets are read off the full run in the README."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.repo import REPO

PER_CALL = ["read.small", "read.large", "read.large.new", "write.small", "edit.exact.small", "edit.fuzzy.small",
            "grep.content", "grep.files", "glob", "bash.true"]
EDIT_SIZES = [f"edit.{kind}.{size}" for kind in ("exact", "fuzzy") for size in ("100KB", "1MB", "10MB")]
GROWTH = ["edit.exact.growth", "edit.fuzzy.growth", "edit.calibration.growth", "growth.x1", "growth.x10", "growth.x100"]
OTHER = ["rg.content", "rg.files_with_matches", "corpus.local.j1", "corpus.local.j2",
         "corpus.docker.j1", "corpus.docker.j2", "docker", "throughput.local", "throughput.docker", "startup"]
TARGETS = {"read.small": 0.5, "read.large": 0.5, "read.large.new": 0.5, "write.small": 0.5, "bash.true": 0.5,
           "rg.content": 1.2, "rg.files_with_matches": 1.2,
           **{row: 1.0 for row in ["edit.exact.small", "edit.fuzzy.small", *EDIT_SIZES]}}


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[dict[str, Any]]]:
    out = tmp_path_factory.mktemp("bench") / "rows.json"
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "--smoke", "--quiet", "--json", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=300, env={**os.environ},
                          check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows: list[dict[str, Any]] = json.loads(Path(out).read_text(encoding="utf-8"))
    return proc.stdout, rows


def _by_id(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in rows}


@pytest.mark.slow
def test_every_row_is_in_the_table_and_the_json(smoke: tuple[str, list[dict[str, Any]]]) -> None:
    stdout, rows = smoke
    # a smoke run never runs benchmarks/docker_bench.py: one "docker" row says so
    assert [row["id"] for row in rows] == [*PER_CALL, *EDIT_SIZES, *GROWTH, *OTHER]
    assert _by_id(rows)["docker"]["reference"] == "skipped"
    for row in rows:
        assert f"| {row['section']} | {row['label']} | {row['reference']} |" in stdout
    assert stdout.startswith("toolproof benchmarks: `python -m benchmarks --smoke`")
    for key in ("date", "cpu", "python", "reference", "rg"):
        assert f"\n- {key}: " in stdout


@pytest.mark.slow
def test_timings_are_sane_and_ratios_consistent(smoke: tuple[str, list[dict[str, Any]]]) -> None:
    _, rows = smoke
    by_id = _by_id(rows)
    for rid in [*PER_CALL, *EDIT_SIZES, "rg.content", "rg.files_with_matches"]:
        data = by_id[rid]["data"]
        for side in ("reference", "other"):
            if side not in data:
                continue
            t = data[side]
            assert 0 < t["median_ms"] <= t["p90_ms"] < 600_000, (rid, side, t)
            assert t["n"] >= 2
        if "other" in data:
            assert by_id[rid]["ratio"] == pytest.approx(data["reference"]["median_ms"] / data["other"]["median_ms"])
        else:
            assert by_id[rid]["ratio"] is None
        assert by_id[rid]["target"] == TARGETS.get(rid)
    for rid in ("edit.exact.growth", "edit.fuzzy.growth", "edit.calibration.growth"):
        k = by_id[rid]["data"]["reference"]
        assert math.isfinite(k) and -1 < k < 3
    for rid in ("growth.x1", "growth.x10", "growth.x100"):
        assert by_id[rid]["data"]["reference_calls_per_s"] > 0
    assert [by_id[r]["data"]["files"] for r in ("growth.x1", "growth.x10", "growth.x100")] == [10, 100, 1000]
    for rid in ("corpus.local.j1", "corpus.local.j2"):
        assert by_id[rid]["data"]["wall_s"] > 0
        assert " pass" in by_id[rid]["data"]["summary"]
    local = by_id["throughput.local"]["data"]
    assert [r["scenarios_done"] for r in local["runs"]] == [by_id["corpus.local.j2"]["data"]["scenarios_done"]]
    assert local["scenarios_per_s"] == pytest.approx(local["runs"][0]["scenarios_done"] / local["runs"][0]["wall_s"])
    assert local["min_target"] == 20 and local["min_met"] == (local["scenarios_per_s"] >= 20)
    assert by_id["throughput.docker"]["reference"] == "skipped"  # a smoke run never runs docker
    start = by_id["startup"]["data"]
    assert len(start["wall_s"]) == 3 and 0 < start["median_cpu_s"] and 0 < start["median_wall_s"] < 120
    assert start["value_met"] == (start["median_wall_s"] <= start["value_target"] == 0.5)


@pytest.mark.slow
def test_files_mode_and_glob_say_why_pi_has_no_figure(smoke: tuple[str, list[dict[str, Any]]]) -> None:
    _, rows = smoke
    by_id = _by_id(rows)
    pi_measured = "other" in by_id["read.small"]["data"]
    if pi_measured:
        assert by_id["grep.files"]["other"] == "n/a (pi's grep has no files mode)"
        glob_other = by_id["glob"]["other"]
        assert glob_other.startswith("n/a (pi's find: ") or re.fullmatch(r"[0-9.]+ ms \(p90 [0-9.]+\)", glob_other)
    else:
        assert by_id["grep.files"]["other"].startswith("not measured (")


def test_an_unknown_section_is_a_usage_error() -> None:
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "--sections", "per-call,nope"], cwd=REPO,
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2
    assert ("unknown section(s) nope; expected some of per-call, edit-size, growth, rg, corpus, docker, throughput"
            in proc.stderr)
