"""``toolproof baseline update``: regenerate a baseline from one or more results files, shown as a
diff and written only with ``--write``. Results of another implementation (or version) than the
baseline's are refused unless ``--retarget``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from harness.cli.options import Subparsers
from harness.errors import UsageError
from harness.model.results import EXIT_OK, RunResult
from harness.report.baseline import (
    baseline_diff,
    identity_matches,
    load_baseline,
    update_baseline_from,
    update_baseline_text,
)
from harness.report.results_files import load_results
from harness.report.writers import write_output


def _identity(runs: list[RunResult], paths: list[str]) -> tuple[str, str]:
    """The implementation and version every results file is of (a ``UsageError`` when they differ)."""
    who = {(r.info.implementation, r.info.version) for r in runs}
    if len(who) > 1:
        listed = ", ".join(f"{p}: {' '.join(x for x in (r.info.implementation, r.info.version) if x) or '?'}"
                           for p, r in zip(paths, runs, strict=True))
        raise UsageError(f"--results: the files are of different implementations or versions ({listed}); "
                         "update a baseline from the runs of one implementation")
    impl, version = next(iter(who))
    if not impl:
        raise UsageError(f"--results {paths[0]}: the run names no implementation (no scenario reached its hello); "
                         "nothing to update a baseline from")
    return impl, version


def cmd_baseline_update(args: argparse.Namespace, out: TextIO) -> int:
    paths: list[str] = list(args.results)
    runs = [load_results(p) for p in paths]
    impl, version = _identity(runs, paths)
    who = " ".join(p for p in (impl, version) if p)
    path = args.baseline or str(Path("baselines") / f"{impl}.yaml")
    old = load_baseline(path, legacy=True) if Path(path).exists() else None
    new_impl, new_version = impl, version
    if old is not None:
        new_impl, new_version = old.implementation, old.version
        if not identity_matches(old, impl, version):
            mismatch = f"{path} is the baseline of {old.identity}, but the results are of {who}"
            if not args.retarget:
                raise UsageError(f"{mismatch}; pass --retarget to rewrite it for {who} (or --baseline to name "
                                 "that implementation's own baseline)")
            print(f"toolproof: warning: {mismatch}; --retarget: rewriting it for {who}", file=out)
            new_impl, new_version = impl, version if old.version else ""
    new, warnings = update_baseline_from(runs, old, new_impl, new_version)
    old_text = Path(path).read_text(encoding="utf-8") if old else ""
    new_text = update_baseline_text(old_text, path, new)
    diff = baseline_diff(old_text, new_text, path)
    out.write(diff or f"toolproof: {path} is up to date\n")
    for w in warnings:
        print(f"toolproof: warning: {w}", file=out)
    unreviewed = new.unreviewed()
    if unreviewed:
        print(f"toolproof: {len(unreviewed)} entr{'y is' if len(unreviewed) == 1 else 'ies are'} UNREVIEWED "
              "(reason still a TODO placeholder): they xfail, and every run and `toolproof validate --baseline` "
              "report them until their reasons are written", file=out)
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
    u = actions.add_parser("update", help="regenerate a baseline from results files (shown as a diff)",
                           description="List every failing step of the results in the baseline, pinned to its "
                                       "mismatch: reasons of entries that still match are kept, new entries get "
                                       "a TODO placeholder reason (reported as unreviewed until written).")
    u.add_argument("--results", required=True, action="append", metavar="F",
                   help="JSON results of a run (repeatable: runs of one implementation, e.g. two surfaces, or the "
                        "same run twice to keep only what is stable)")
    u.add_argument("--baseline", metavar="F",
                   help="baseline file (default: baseline in [tool.toolproof], else baselines/<implementation>.yaml)")
    u.add_argument("--retarget", action="store_true",
                   help="the results are of another implementation or version than the baseline's: rewrite its "
                        "implementation (and version) for them instead of refusing")
    u.add_argument("--write", action="store_true", help="write the file (default: show the diff only)")
    u.set_defaults(func=cmd_baseline_update, toolproof_config=True)
