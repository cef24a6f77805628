"""``toolproof run``, ``validate`` and ``list``: gate on a corpus, lint it, show a selection."""

from __future__ import annotations

import argparse
import dataclasses
from typing import TextIO

from harness.cli.gate import choose_run_baseline, default_paths
from harness.cli.options import Subparsers, add_backend, add_selection, load_selection
from harness.cli.progress import print_summary, run_scenarios
from harness.corpus.loader import find_scenario_files, load_corpus
from harness.errors import UsageError
from harness.importers.importer import IMPORTED_TAG
from harness.model.results import EXIT_FAIL, EXIT_OK, SKIP
from harness.report.baseline import apply_baseline, load_baseline, summary_lines, validate_baseline_lines
from harness.report.writers import write_reports


def cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    shipped_gate = default_paths(args)  # no PATHS anywhere: the shipped corpus, and its baseline for IMPL
    scenarios = load_selection(args.paths, args.keyword, args.tag, args.shard)
    imported = sum(1 for s in scenarios if IMPORTED_TAG in s.tags)
    if imported and not args.backend.startswith("docker"):
        print(f"toolproof: {imported} imported scenario(s) replay recorded shell commands on this host (backend "
              f"{args.backend}); their steps that reach outside the workspace skip here and run only in a container "
              "(--backend docker)", file=out)
    chosen = choose_run_baseline(args, shipped_gate)
    baseline = chosen.baseline
    run = run_scenarios(scenarios, args.backend, args.jobs, out, shard=args.shard or "",
                        baseline=chosen.path, baseline_obj=baseline, impl=args.impl,
                        call_timeout=args.call_timeout)
    run = dataclasses.replace(run, info=dataclasses.replace(run.info, baseline_choice=chosen.choice))
    if baseline is not None:
        run = apply_baseline(run, baseline)
    write_reports(run, junit=args.junit, json_path=args.json, markdown=args.markdown,
                  markdown_append=args.markdown_append)
    print_summary(run, out)
    for line in summary_lines(run, baseline, chosen.choice):
        print(line, file=out)
    skipped = [r for r in run.scenarios if r.status == SKIP]
    if args.fail_on_skip and skipped and run.exit_code == EXIT_OK:
        for r in skipped:
            print(f"SKIP  {r.id}: {r.reason}", file=out)
        print(f"toolproof: {len(skipped)} scenario(s) skipped; --fail-on-skip makes that a failure", file=out)
        return EXIT_FAIL
    return run.exit_code


def cmd_validate(args: argparse.Namespace, out: TextIO) -> int:
    if not args.paths and not args.baseline:
        raise UsageError("no scenario paths given (pass PATHS, or set paths in [tool.toolproof] of pyproject.toml)")
    if args.paths:
        files = find_scenario_files(args.paths)
        scenarios = load_corpus(args.paths)
        print(f"toolproof: {len(scenarios)} scenarios in {len(files)} files are valid", file=out)
    if args.baseline:
        for line in validate_baseline_lines(load_baseline(args.baseline)):
            print(line, file=out)
    return EXIT_OK


def cmd_list(args: argparse.Namespace, out: TextIO) -> int:
    for s in load_selection(args.paths, args.keyword, args.tag, args.shard):
        tags = f"  [{', '.join(s.tags)}]" if s.tags else ""
        print(f"{s.id}  {s.title}{tags}" if s.title else f"{s.id}{tags}", file=out)
    return EXIT_OK


def add_report_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--junit", metavar="F", help="write a JUnit XML report (Jenkins xUnit, GitLab and GitHub readers)")
    p.add_argument("--json", metavar="F", help="write a JSON results file (input of merge, matrix, baseline update)")
    p.add_argument("--markdown", metavar="F",
                   help="write a Markdown summary; appended, not replaced, when F is $GITHUB_STEP_SUMMARY")
    p.add_argument("--markdown-append", action="store_true", help="append the Markdown summary to F instead of replacing it")


def register_cli(subparsers: Subparsers) -> None:
    """Add ``run``, ``validate`` and ``list``."""
    p = subparsers.add_parser("run", help="run scenarios and gate on the results",
                              description="Run scenarios on an implementation and gate on the results. "
                                          "Without PATHS, runs the gate configured in [tool.toolproof]; with "
                                          "none configured, every shipped scenario with the shipped baseline of "
                                          "what IMPL's hello says.")
    add_selection(p)
    add_backend(p)
    add_report_options(p)
    p.add_argument("--baseline", metavar="F", help="baseline YAML of known failures (default: baseline in "
                                                   "[tool.toolproof]; for the shipped gate, the shipped baseline of "
                                                   "IMPL's implementation and version)")
    p.add_argument("--no-baseline", action="store_true", help="apply no baseline, not even the configured one")
    p.add_argument("--fail-on-skip", action="store_true",
                   help="a skipped scenario fails the run (exit 1): for jobs whose scenarios must all really run")
    p.set_defaults(func=cmd_run, toolproof_config=True)

    p = subparsers.add_parser("validate", help="lint scenario files (and a baseline)")
    p.add_argument("paths", nargs="*", metavar="PATHS", help="scenario files or directories (default: configured paths)")
    p.add_argument("--baseline", metavar="F", help="also check this baseline and list its unreviewed entries "
                                                   "(default: baseline in [tool.toolproof])")
    p.set_defaults(func=cmd_validate, toolproof_config=True)

    p = subparsers.add_parser("list", help="list scenarios")
    add_selection(p)
    p.set_defaults(func=cmd_list, toolproof_config=True)
