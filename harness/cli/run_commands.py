"""``toolproof run``, ``validate`` and ``list``: gate on a corpus, lint it, show a selection."""

from __future__ import annotations

import argparse
from typing import TextIO

from harness.cli.options import Subparsers, add_backend, add_selection, load_selection
from harness.cli.progress import print_summary, run_scenarios
from harness.corpus.loader import find_scenario_files, load_corpus
from harness.model.results import EXIT_OK
from harness.report.baseline import apply_baseline, load_baseline
from harness.report.writers import write_reports


def cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    scenarios = load_selection(args.paths, args.keyword, args.tag, args.shard)
    baseline = load_baseline(args.baseline) if args.baseline else None
    run = run_scenarios(scenarios, args.backend, args.jobs, out, shard=args.shard or "",
                        baseline=args.baseline or "", baseline_obj=baseline)
    if baseline is not None:
        run = apply_baseline(run, baseline)
    write_reports(run, junit=args.junit, json_path=args.json, markdown=args.markdown)
    print_summary(run, out)
    return run.exit_code


def cmd_validate(args: argparse.Namespace, out: TextIO) -> int:
    files = find_scenario_files(args.paths)
    scenarios = load_corpus(args.paths)
    print(f"toolproof: {len(scenarios)} scenarios in {len(files)} files are valid", file=out)
    return EXIT_OK


def cmd_list(args: argparse.Namespace, out: TextIO) -> int:
    for s in load_selection(args.paths, args.keyword, args.tag, args.shard):
        tags = f"  [{', '.join(s.tags)}]" if s.tags else ""
        print(f"{s.id}  {s.title}{tags}" if s.title else f"{s.id}{tags}", file=out)
    return EXIT_OK


def register_cli(subparsers: Subparsers) -> None:
    """Add ``run``, ``validate`` and ``list``."""
    p = subparsers.add_parser("run", help="run scenarios and gate on the results")
    add_selection(p)
    add_backend(p)
    p.add_argument("--junit", metavar="F", help="write a JUnit XML report")
    p.add_argument("--json", metavar="F", help="write a JSON results file")
    p.add_argument("--markdown", metavar="F", help="write a Markdown summary")
    p.add_argument("--baseline", metavar="F", help="baseline YAML of known failures")
    p.set_defaults(func=cmd_run)

    p = subparsers.add_parser("validate", help="lint scenario files")
    p.add_argument("paths", nargs="+", metavar="PATHS")
    p.set_defaults(func=cmd_validate)

    p = subparsers.add_parser("list", help="list scenarios")
    add_selection(p)
    p.set_defaults(func=cmd_list)
