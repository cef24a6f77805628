"""``toolproof matrix``: combine results files, or run PATHS on several implementations, into the
conformance matrix (harness/report/matrix.py builds and renders it)."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from typing import TextIO

from harness.backends.registry import IMPL_CHOICES_TEXT
from harness.cli.options import add_call_timeout, add_jobs, apply_config, load_selection
from harness.cli.progress import run_scenarios
from harness.errors import UsageError
from harness.model.results import EXIT_ERROR, EXIT_OK, RunResult
from harness.report.matrix import build_matrix, load_run, to_html, to_markdown
from harness.report.writers import is_step_summary, write_output


def _runs_from_args(results: Sequence[str], label_args: Sequence[str]) -> tuple[list[tuple[str, RunResult]],
                                                                                 list[str | None]]:
    def key(path: str) -> str:  # "a.json" and "./a.json" name the same column
        return os.path.normcase(os.path.abspath(path))

    labels: dict[str, str] = {}
    paths = list(results)
    for item in label_args:
        name, sep, path = item.partition("=")
        if not sep or not name.strip() or not path:
            raise UsageError(f"--label {item!r}: expected NAME=RESULTS.json")
        labels[key(path)] = name.strip()
        if key(path) not in {key(p) for p in paths}:
            paths.append(path)
    if not paths:
        raise UsageError("matrix: no results files given")
    runs = [(p, load_run(p)) for p in paths]
    return runs, [labels.get(key(p)) for p in paths]


def _runs_from_impls(args: argparse.Namespace, out: TextIO) -> tuple[list[tuple[str, RunResult]], list[str | None]]:
    """Run the scenario PATHS on every ``--impl`` (one column each), with progress."""
    backend = args.backend  # for the reference only; the configured impl/backend pair is not used here
    args.paths = list(args.results)
    apply_config(args)
    scenarios = load_selection(args.paths, args.keyword, args.tag, None)
    runs: list[tuple[str, RunResult]] = []
    for impl in args.impl:
        print(f"toolproof matrix: {len(scenarios)} scenarios on {impl}", file=out, flush=True)
        runs.append((impl, run_scenarios(scenarios, backend or "local", args.jobs, out, impl=impl,
                                                 call_timeout=args.call_timeout)))
    if args.json_dir:
        for impl, run in runs:
            name = re.sub(r"[^A-Za-z0-9._@-]+", "_", impl).strip("_") or "run"
            write_output(os.path.join(args.json_dir, f"{name}.json"), run.dumps() + "\n")
    # each column is named by what answered hello (implementation, version), not by the --impl text
    return runs, [None] * len(runs)


def cmd_matrix(args: argparse.Namespace, out: TextIO) -> int:
    """Exit 0 when the reports were written (differences are findings, not failures), 2 on
    unreadable inputs or outputs (one line on stderr naming the file)."""
    try:
        if args.impl:
            runs, labels = _runs_from_impls(args, out)
        else:
            runs, labels = _runs_from_args(args.results, args.label)
        m = build_matrix(runs, labels, skips_differ=args.skips_differ)
        if args.html:
            write_output(args.html, to_html(m))
        if args.markdown:
            write_output(args.markdown, to_markdown(m), append=args.markdown_append or is_step_summary(args.markdown))
    except UsageError as exc:
        print(f"toolproof: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    if not (args.html or args.markdown):
        out.write(to_markdown(m))
    else:
        print(f"toolproof: matrix of {len(m.rows)} scenarios × {len(m.columns)} runs, "
              f"{len(m.differing)} differ", file=out)
    return EXIT_OK


def register_cli(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``matrix`` subcommand (``func=cmd_matrix``, called as ``func(args, out)``)."""
    p = subparsers.add_parser(
        "matrix", help="conformance matrix: scenarios × implementations (from results, or run with --impl)",
        description="Either combine JSON results files (toolproof run --json) into a matrix of scenarios × runs, "
                    "or, with --impl (repeatable), run the scenario PATHS on each implementation and render the "
                    "matrix in one command. Without --html/--markdown the Markdown goes to stdout.")
    p.add_argument("results", nargs="*", metavar="RESULTS|PATHS",
                   help="JSON results files, one per run (column); with --impl: scenario files or directories")
    p.add_argument("--impl", action="append", default=[], metavar="IMPL",
                   help=f"run PATHS on this implementation ({IMPL_CHOICES_TEXT}); repeatable, one column each")
    p.add_argument("--backend", default=None, help="backend for --impl reference (default: local)")
    add_jobs(p)
    add_call_timeout(p)
    p.add_argument("-k", dest="keyword", metavar="EXPR", help="with --impl: keyword expression over id, title and tags")
    p.add_argument("--tag", action="append", default=[], metavar="T", help="with --impl: only scenarios with tag T")
    p.add_argument("--json-dir", metavar="DIR", help="with --impl: also write each run's JSON results into DIR")
    p.add_argument("--html", metavar="F", help="write the self-contained HTML matrix")
    p.add_argument("--markdown", metavar="F", help="write the Markdown summary (appended for $GITHUB_STEP_SUMMARY)")
    p.add_argument("--markdown-append", action="store_true", help="append the Markdown summary instead of replacing F")
    p.add_argument("--label", action="append", default=[], metavar="NAME=RESULTS",
                   help="column label for a results file (the file is added if not listed); repeatable")
    p.add_argument("--skips-differ", action="store_true",
                   help="count a skip against a pass or fail as a difference (default: skips are neutral)")
    p.set_defaults(func=cmd_matrix)
