"""``toolproof baseline update``: regenerate a baseline from a results file, shown as a diff and
written only with ``--write``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from harness.cli.options import Subparsers
from harness.model.results import EXIT_OK
from harness.report.baseline import baseline_diff, load_baseline, update_baseline, update_baseline_text
from harness.report.results_files import load_results
from harness.report.writers import write_output


def cmd_baseline_update(args: argparse.Namespace, out: TextIO) -> int:
    run = load_results(args.results)
    path = args.baseline or str(Path("baselines") / f"{run.info.implementation or 'implementation'}.yaml")
    old = load_baseline(path) if Path(path).exists() else None
    old_text = Path(path).read_text(encoding="utf-8") if old else ""
    new = update_baseline(run, old)
    new_text = update_baseline_text(old_text, path, new)
    diff = baseline_diff(old_text, new_text, path)
    out.write(diff or f"toolproof: {path} is up to date\n")
    if args.write and diff:
        write_output(path, new_text, "baseline")
        print(f"toolproof: wrote {path}", file=out)
    elif diff:
        print("toolproof: not written (pass --write to write it)", file=out)
    return EXIT_OK


def register_cli(subparsers: Subparsers) -> None:
    """Add ``baseline update``."""
    p = subparsers.add_parser("baseline", help="baseline maintenance")
    actions = p.add_subparsers(dest="baseline_command", required=True, metavar="ACTION")
    u = actions.add_parser("update", help="regenerate a baseline from a results file (shown as a diff)")
    u.add_argument("--results", required=True, metavar="F", help="JSON results of a run")
    u.add_argument("--baseline", metavar="F",
                   help="baseline file (default: baseline in [tool.toolproof], else baselines/<implementation>.yaml)")
    u.add_argument("--write", action="store_true", help="write the file (default: show the diff only)")
    u.set_defaults(func=cmd_baseline_update, toolproof_config=True)
