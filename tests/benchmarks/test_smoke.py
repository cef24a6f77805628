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
CLASSES = ["ascii", "latin", "cjk", "emoji", "mixed"]
SIZES = ["1KB", "100KB", "1MB", "10MB"]
POSITIONS = ["start", "middle", "end"]
CONTENT = [row for cls in CLASSES for size in SIZES for row in (
    *(f"content.read.{cls}.{size}.{pos}" for pos in POSITIONS),
    f"content.write.{cls}.{size}",
    *(f"content.edit.{cls}.{size}.{pos}" for pos in POSITIONS))]
EDIT_GROWTH = ["edit.exact.growth", "edit.fuzzy.growth", "edit.calibration.growth"]
GROWTH = ["growth.x1", "growth.x10", "growth.x100"]
OTHER = ["rg.content", "rg.files_with_matches", "corpus.local.j1", "corpus.local.j2",
         "corpus.docker.j1", "corpus.docker.j2", "docker", "throughput.local", "throughput.docker", "startup"]
FUZZ = ["fuzz.rate"]  # benchmarks/fuzz_rate.py, after the others
TARGETS = {"read.small": 0.5, "read.large": 0.5, "read.large.new": 0.5, "write.small": 0.5, "bash.true": 0.5,
           "rg.content": 1.2, "rg.files_with_matches": 1.2,
           **{row: 1.0 for row in ["edit.exact.small", "edit.fuzzy.small", *EDIT_SIZES]},
           **{row: 0.5 for row in CONTENT if ".read." in row or ".write." in row},
           **{row: (0.5 if row.split(".")[3] in ("1MB", "10MB") else 1.0) for row in CONTENT if ".edit." in row}}
# rows whose two sides take the same arguments: their answers are compared on every call
COMPARED = ["read.small", "read.large", "read.large.new", "write.small", "edit.exact.small", "edit.fuzzy.small",
            "bash.true", *EDIT_SIZES, *CONTENT]


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
    ids = [row["id"] for row in rows]
    # a smoke run never runs benchmarks/docker_bench.py: one "docker" row says so
    assert ids == [*PER_CALL, *EDIT_SIZES, *EDIT_GROWTH, *CONTENT, *GROWTH, *OTHER, *FUZZ]
    by_id = _by_id(rows)
    assert by_id["docker"]["reference"] == "skipped"
    for row in rows:
        if row["section"] != "content":
            assert f"| {row['section']} | {row['label']} | {row['reference']} |" in stdout
    # the content rows: one matrix per tool, a line per class and position, a cell per size
    for tool, positions in (("read", POSITIONS), ("write", ["whole file"]), ("edit", POSITIONS)):
        assert f"\n| {tool} | where | " in stdout
        for label in ("ASCII", "Latin-1 + typographic punctuation", "CJK", "emoji (non-BMP)", "mixed"):
            for pos in positions:
                assert re.search(rf"\n\| {re.escape(label)} \| {pos} \|( [0-9.]+ \([^|\n]*\|){{4}}\n", stdout), (tool, label, pos)
    assert stdout.startswith("toolproof benchmarks: `python -m benchmarks --smoke`")
    for key in ("date", "cpu", "python", "reference", "rg"):
        assert f"\n- {key}: " in stdout


@pytest.mark.slow
def test_timings_are_sane_and_ratios_consistent(smoke: tuple[str, list[dict[str, Any]]]) -> None:
    _, rows = smoke
    by_id = _by_id(rows)
    for rid in [*PER_CALL, *EDIT_SIZES, *CONTENT, "rg.content", "rg.files_with_matches"]:
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
    fuzz = by_id["fuzz.rate"]["data"]
    assert fuzz["calls"] == 100 and fuzz["upstream_calls_per_s"] > 0 and fuzz["met"] == (
        fuzz["upstream_calls_per_s"] >= fuzz["target_calls_per_s"])
    for rid in ("corpus.local.j1", "corpus.local.j2"):
        assert by_id[rid]["data"]["wall_s"] > 0 and by_id[rid]["data"]["scenarios_per_s"] > 0
        assert " pass" in by_id[rid]["data"]["summary"]
    local = by_id["throughput.local"]["data"]
    corpus_j2 = by_id["corpus.local.j2"]["data"]
    if not local["runs"][0]["timed_out"] and "timed_out_after_s" not in corpus_j2:
        # the same corpus run twice: the same scenarios done (a run cut by the corpus timeout on a
        # loaded machine stops wherever it is)
        assert [r["scenarios_done"] for r in local["runs"]] == [corpus_j2["scenarios_done"]]
    assert local["scenarios_per_s"] == pytest.approx(local["runs"][0]["scenarios_done"] / local["runs"][0]["wall_s"])
    assert local["min_target"] == 20 and local["min_met"] == (local["scenarios_per_s"] >= 20)
    assert by_id["throughput.docker"]["reference"] == "skipped"  # a smoke run never runs docker
    start = by_id["startup"]["data"]
    assert len(start["wall_s"]) == 3 and 0 < start["median_cpu_s"] and 0 < start["median_wall_s"] < 120
    assert start["value_met"] == (start["median_wall_s"] <= start["value_target"] == 0.5)


@pytest.mark.slow
def test_both_sides_answered_alike_wherever_they_were_compared(smoke: tuple[str, list[dict[str, Any]]]) -> None:
    """The reference under --upstream and pi give the same answers (text, details, bytes written)
    on every row both ran with the same arguments; no row is met with different answers."""
    _, rows = smoke
    by_id = _by_id(rows)
    if "other" not in by_id["read.small"]["data"]:
        pytest.skip("pi is not installed: nothing to compare with")
    for rid in COMPARED:
        assert by_id[rid]["data"]["answers"] == "equal", (rid, by_id[rid]["data"].get("answers_differ"))
    for rid in ("grep.content", "glob"):  # pi's grep and find take other arguments
        assert "answers" not in by_id[rid]["data"]


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
    assert ("unknown section(s) nope; expected some of per-call, edit-size, content, growth, rg, corpus, docker, "
            "throughput, fuzz") in proc.stderr
