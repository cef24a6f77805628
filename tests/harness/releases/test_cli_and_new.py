"""``toolproof releases`` on the command line (merging shard reports, usage errors) and
``--new``: the draft baseline whose every entry names where it comes from, and the PR report."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import UsageError
from harness.model.results import RunInfo, RunResult
from harness.releases.analysis import analyse
from harness.releases.new_release import pinned_baselines, run_new
from harness.report.baseline import is_placeholder, load_baseline, update_baseline_from
from tests.support.releases import make, write_corpus
from tools_impl.server.patch_catalogue import patch_catalogue


def test_merge_joins_shard_reports_into_one(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus")
    files = []
    for i in (1, 2):
        sweep, _ = make(corpus, tmp_path / f"cache{i}", shard=(i, 2))
        path = tmp_path / f"shard-{i}.json"
        path.write_text(json.dumps(analyse(sweep.run(), patch_catalogue()).to_json()), encoding="utf-8")
        files.append(str(path))
    out = io.StringIO()
    merged = tmp_path / "merged.json"
    html = tmp_path / "merged.html"
    assert main(["releases", "--merge", *files, "--json", str(merged), "--html", str(html)], out=out) == 0
    doc = json.loads(merged.read_text(encoding="utf-8"))
    assert {(c["tool"], c["last_release_without"], c["first_release"]) for c in doc["changes"]} == \
        {("write", "0.84.4", "0.85.1"), ("bash", "0.87.1", "1.3.0")}
    assert doc["shards"] == ["1/2", "2/2"]
    assert "bash" in out.getvalue() and html.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_merge_refuses_what_is_not_a_releases_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "r.json"
    bad.write_text('{"format": 1, "scenarios": []}', encoding="utf-8")
    assert main(["releases", "--merge", str(bad)], out=io.StringIO()) == 2
    assert "not a toolproof releases report" in capsys.readouterr().err


def test_usage_errors_say_what_is_wrong(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["releases", "--impl-template", "pi@1.0.0"], out=io.StringIO()) == 2
    assert "must contain {version}" in capsys.readouterr().err
    assert main(["releases", "--merge", "a.json", "--shard", "1/2"], out=io.StringIO()) == 2
    assert "takes no PATH, --shard or --new" in capsys.readouterr().err


def _args(tmp_path: Path, **kw: object) -> argparse.Namespace:
    base = {"baselines": str(tmp_path / "baselines"), "draft": str(tmp_path / "draft.yaml"),
            "pr_report": str(tmp_path / "pr.md"), "range_from": None, "range_to": None}
    return argparse.Namespace(**{**base, **kw})


def _pin(tmp_path: Path, version: str) -> Path:
    """A reviewed baseline of the fake releases at ``version``, from a sweep's runs there."""
    sweep, _ = make(write_corpus(tmp_path / "pin-corpus"), tmp_path / "pin-cache", range_from=version)
    state = sweep.run()
    results = tuple(o.to_result(sid) for sid, o in sorted(state.outcomes[version].items()))
    baseline, _ = update_baseline_from([RunResult(RunInfo(implementation="fake-tools", version=version), results)],
                                       None, implementation="fake-tools", version=version)
    entries = tuple(e.__class__(e.id, f"reviewed: {e.id} fails at {version}", e.step, e.mismatch) for e in baseline.entries)
    directory = tmp_path / "baselines"
    directory.mkdir(exist_ok=True)
    path = directory / f"pi-{version}.yaml"
    path.write_text(baseline.__class__(baseline.implementation, entries, "", version).dumps(), encoding="utf-8")
    return path


def test_new_drafts_a_baseline_whose_entries_name_their_change(tmp_path: Path) -> None:
    _pin(tmp_path, "0.87.1")
    assert list(pinned_baselines(tmp_path / "baselines")) == ["0.87.1"]
    sweep, _ = make(write_corpus(tmp_path / "corpus"), tmp_path / "cache")
    report = run_new(_args(tmp_path), sweep, (), io.StringIO(), log=lambda _m: None)
    assert report is not None and (report.state.range_from, report.state.range_to) == ("0.87.1", "1.5.0")
    draft = load_baseline(str(tmp_path / "draft.yaml"))
    assert draft.version == "1.5.0" and draft.implementation == "fake-tools"
    reasons = {e.id: e.reason for e in draft.entries}
    assert set(reasons) == {"hist/write-count", "hist/pin-off", "hist/bash-exit"}
    assert reasons["hist/write-count"] == ("reviewed: hist/write-count fails at 0.87.1 (carried over unchanged "
                                           "from pi-0.87.1: the same failure at 1.5.0)")
    assert is_placeholder(reasons["hist/bash-exit"])
    assert "bash@1.3.0: bash changed between 0.87.1 and 1.3.0 (0.99.1 not installable, 1.0.3 not installable " \
           "in between); unlisted" in reasons["hist/bash-exit"]
    pr = (tmp_path / "pr.md").read_text(encoding="utf-8")
    assert pr.startswith("## pi 1.5.0 (previous pinned release: 0.87.1)")
    assert "3 entries: 2 carried over unchanged, 1 new or changed" in pr
    assert "| `edit.fidelity-guard` | adopted | hist/pin-on |" in pr
    assert (tmp_path / "draft.yaml").read_text(encoding="utf-8").startswith("# DRAFT written by `toolproof releases --new`")


def test_new_has_nothing_to_do_when_the_newest_release_is_pinned(tmp_path: Path) -> None:
    _pin(tmp_path, "1.5.0")
    sweep, launcher = make(write_corpus(tmp_path / "corpus"), tmp_path / "cache")
    out = io.StringIO()
    assert run_new(_args(tmp_path), sweep, (), out, log=lambda _m: None) is None
    assert "already has pi-1.5.0.yaml; nothing new" in out.getvalue()
    assert launcher.probed == []


def test_new_picks_its_own_range(tmp_path: Path) -> None:
    sweep, _ = make(write_corpus(tmp_path / "corpus"), tmp_path / "cache")
    with pytest.raises(UsageError, match="picks its own range"):
        run_new(_args(tmp_path, range_from="0.84.0"), sweep, (), io.StringIO(), log=lambda _m: None)
