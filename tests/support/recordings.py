"""The shipped recordings (tests/fixtures/recordings/recordings.yaml) imported and replayed with
``toolproof import --replay``: the command line of each, and the figures of all of them.

    python -m tests.support.recordings [--no-workspace] [--allow-host] [--expect MODE] [--jobs N]

prints, per recording, the calls recorded, imported, green, resynced, skipped and the real
differences, then the totals (docs/importers.md, "The replay report").
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness.cli import main as toolproof_main
from tests.support.repo import FIXTURES

RECORDINGS = FIXTURES / "recordings"
MANIFEST = RECORDINGS / "recordings.yaml"
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e.invalid", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


@dataclass(frozen=True)
class Recording:
    trace: Path
    workspace: dict[str, str]
    args: tuple[str, ...]
    covers: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.trace.stem


def recordings() -> list[Recording]:
    doc = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    return [Recording((RECORDINGS / r["trace"]).resolve(), dict(r.get("workspace") or {}), tuple(r.get("args", ())),
                      tuple(r.get("covers", ()))) for r in doc["recordings"]]


def git_repository(source: Path, dest: Path) -> Path:
    """A repository at ``dest`` holding ``source`` in one commit."""
    shutil.copytree(source, dest)
    env = {"PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(dest), **GIT_ENV}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "start"]):
        subprocess.run(["git", "-C", str(dest), *args], check=True, env=env, capture_output=True)
    return dest


def workspace_args(rec: Recording, scratch: Path) -> list[str]:
    if "dir" in rec.workspace:
        return ["--workspace-dir", str((RECORDINGS / rec.workspace["dir"]).resolve())]
    if "git" in rec.workspace:
        repo = git_repository((RECORDINGS / rec.workspace["git"]).resolve(), scratch / f"repo-{rec.name}")
        return ["--git", f"{repo}@HEAD"]
    return []


def replay(rec: Recording, scratch: Path, *, workspace: bool = True, host: bool = True, expect: str = "status",
           jobs: int = 1, extra: tuple[str, ...] = ()) -> tuple[int, str, dict[str, Any]]:
    """Import and replay one recording: (exit code, output, the JSON replay report)."""
    out_dir = scratch / f"out-{rec.name}"
    report = scratch / f"report-{rec.name}.json"
    argv = ["import", str(rec.trace), "--out", str(out_dir), "--force", "--replay", "--expect", expect,
            "--report-json", str(report), "--jobs", str(jobs), *rec.args, *extra]
    if host:
        argv.append("--allow-host")
    if workspace:
        argv += workspace_args(rec, scratch)
    out = io.StringIO()
    code = toolproof_main(argv, out=out)
    data = json.loads(report.read_text(encoding="utf-8")) if report.exists() else {}
    return code, out.getvalue(), data


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.support.recordings")
    p.add_argument("--no-workspace", action="store_true", help="import from the traces alone")
    p.add_argument("--allow-host", action="store_true", help="replay on this host instead of a container")
    p.add_argument("--expect", default="status")
    p.add_argument("--jobs", type=int, default=2)
    args = p.parse_args(argv)
    totals: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="toolproof-recordings-") as tmp:
        for rec in recordings():
            code, _, data = replay(rec, Path(tmp), workspace=not args.no_workspace, host=args.allow_host,
                                   expect=args.expect, jobs=args.jobs)
            t = data.get("totals", {})
            for k, v in t.items():
                if isinstance(v, int):
                    totals[k] = totals.get(k, 0) + v
            print(f"{rec.name:32} exit {code}  recorded {t.get('recorded_calls')}  imported {t.get('imported_calls')}  "
                  f"steps {t.get('imported_steps')}  green {t.get('green')}  resyncs {t.get('resyncs')}  "
                  f"skipped at replay {t.get('skipped_at_replay')}  real differences {t.get('real_differences')}  "
                  f"errors {t.get('errors')}")
    steps, green = totals.get("imported_steps", 0), totals.get("green", 0)
    ran = steps - totals.get("skipped_at_replay", 0)
    print(f"totals: {totals.get('recorded_calls', 0)} recorded calls, {totals.get('imported_calls', 0)} imported "
          f"({100 * totals.get('imported_calls', 0) / max(1, totals.get('recorded_calls', 0)):.1f} %), "
          f"{steps} steps, {green} green ({100 * green / max(1, steps):.1f} % of the steps, "
          f"{100 * green / max(1, ran):.1f} % of those that ran), {totals.get('resyncs', 0)} resyncs, "
          f"{totals.get('skipped_at_replay', 0)} skipped at replay, {totals.get('real_differences', 0)} real "
          f"differences, {totals.get('errors', 0)} errors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
