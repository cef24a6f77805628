"""``toolproof record``, ``diff`` and ``merge``: expectations from an implementation, the steps
two backends disagree on, shard results combined into one."""

from __future__ import annotations

import argparse
from typing import TextIO

from harness.backends.cmd import PREFIX as CMD_PREFIX
from harness.backends.impl import parse_impl
from harness.backends.registry import BACKEND_CHOICES_TEXT, DEFAULT_BACKEND, DEFAULT_IMPL, IMPL_CHOICES_TEXT
from harness.cli.options import (
    Subparsers,
    add_backend,
    add_call_timeout,
    add_jobs,
    add_selection,
    load_selection,
)
from harness.cli.progress import run_scenarios
from harness.cli.run_commands import add_report_options
from harness.corpus.record import record_files
from harness.errors import UsageError
from harness.model.results import ERROR, EXIT_ERROR, EXIT_FAIL, EXIT_OK
from harness.report.cross_run_diff import diff_to_json, diff_to_markdown, differences, one_sided_skips
from harness.report.results_files import load_results, merge
from harness.report.writers import is_step_summary, write_output, write_reports


def cmd_record(args: argparse.Namespace, out: TextIO) -> int:
    scenarios = load_selection(args.paths, args.keyword, args.tag, None)
    run = run_scenarios(scenarios, args.backend, args.jobs, out, quiet=True, impl=args.impl,
                        call_timeout=args.call_timeout)
    errors = [r for r in run.scenarios if r.status == ERROR]
    for r in errors:
        print(f"ERROR {r.id}: {r.message}", file=out)
    diff = record_files(scenarios, run, write=args.write, exact=args.exact)
    out.write(diff or "toolproof: every expectation already matches\n")
    if diff and not args.write:
        print("toolproof: not written (pass --write to write it)", file=out)
    return EXIT_ERROR if errors else EXIT_OK


def side_label(backend: str, impl: str) -> str:
    """How one side of a diff is named: the backend, and the implementation unless it is the
    reference (``docker``, ``local --impl pi@0.79.1``, ``cmd:…`` for the alias)."""
    return backend if impl == DEFAULT_IMPL or backend.startswith(CMD_PREFIX) else f"{backend} --impl {impl}"


def diff_sides(args: argparse.Namespace) -> tuple[tuple[str, str], tuple[str, str]]:
    """((backend, impl) of side a, of side b). ``--impl-a`` defaults to the configured impl
    (``[tool.toolproof]``, filled by ``apply_config``), else the reference; ``--impl-b`` and
    ``--backend-b`` default to side a's (``--impl-b`` not for a ``cmd:`` backend-b, which names its
    implementation). Both sides alike is a ``UsageError``."""
    impl_a = args.impl_a or DEFAULT_IMPL
    backend_a = args.backend_a or DEFAULT_BACKEND
    a = (backend_a, impl_a)
    backend_b = args.backend_b or backend_a
    # a cmd: backend names its implementation itself, so it takes side a's only when asked to
    b = (backend_b, args.impl_b or (DEFAULT_IMPL if backend_b.startswith(CMD_PREFIX) else impl_a))
    for option, (backend, impl) in (("a", a), ("b", b)):
        parse_impl(impl)  # a bad --impl-a/--impl-b is a usage error before anything runs
        if backend.startswith(CMD_PREFIX) and impl != DEFAULT_IMPL:
            raise UsageError(f"--backend-{option} {backend!r} already names the implementation; use "
                             f"--impl-{option} {impl} with --backend-{option} local or docker instead")
    if side_label(*a) == side_label(*b):
        raise UsageError(f"both sides of the diff are {side_label(*a)}: pass a different --backend-b or --impl-b")
    return a, b


def cmd_diff(args: argparse.Namespace, out: TextIO) -> int:
    sides = diff_sides(args)
    labels = (side_label(*sides[0]), side_label(*sides[1]))
    scenarios = load_selection(args.paths, args.keyword, args.tag, None)
    runs = []
    for (backend, impl), label in zip(sides, labels, strict=True):
        print(f"toolproof diff: {len(scenarios)} scenarios on {label}", file=out, flush=True)
        runs.append(run_scenarios(scenarios, backend, args.jobs, out, impl=impl, trees=True,
                                  call_timeout=args.call_timeout))
    left, right = runs
    diffs = differences(left, right, labels)
    for d in diffs:
        print(d.render(), file=out)
    skipped = one_sided_skips(left, right)
    for sid, why in skipped:
        print(f"not compared: {sid} ({why})", file=out)
    errors = [r for run in (left, right) for r in run.scenarios if r.status == ERROR]
    for r in errors:
        print(f"ERROR {r.id}: {r.message}", file=out)
    if args.json:
        write_output(args.json, diff_to_json(diffs, left, right, labels))
    if args.markdown:
        write_output(args.markdown, diff_to_markdown(diffs, left, right, labels),
                     append=args.markdown_append or is_step_summary(args.markdown))
    print(f"toolproof: {len(diffs)} differing steps between {labels[0]} and {labels[1]}"
          + (f"; {len(skipped)} scenario(s) skipped on one side, not compared" if skipped else ""), file=out)
    if errors:
        return EXIT_ERROR
    return EXIT_FAIL if diffs else EXIT_OK


def cmd_merge(args: argparse.Namespace, out: TextIO) -> int:
    run = merge([load_results(p) for p in args.results])
    if not (args.json or args.junit or args.markdown):
        out.write(run.dumps() + "\n")
    write_reports(run, junit=args.junit, json_path=args.json, markdown=args.markdown,
                  markdown_append=args.markdown_append)
    return run.exit_code


def register_cli(subparsers: Subparsers) -> None:
    """Add ``record``, ``diff`` and ``merge``."""
    p = subparsers.add_parser("record", help="fill or refresh expectations from an implementation")
    add_selection(p, shard=False)
    add_backend(p)
    p.add_argument("--write", action="store_true", help="write the files (default: show the diff only)")
    p.add_argument("--exact", action="store_true",
                   help="replace loose text/error matchers (contains, startswith, …) by the exact text even when they hold")
    p.set_defaults(func=cmd_record, toolproof_config=True)

    p = subparsers.add_parser("diff", help="run a corpus on two implementation/backend pairs and list differing steps")
    add_selection(p, shard=False)
    p.add_argument("--backend-a", "-a", default=None, metavar="BACKEND",
                   help=f"the first side's backend: {BACKEND_CHOICES_TEXT} (default: backend in "
                        f"[tool.toolproof], else {DEFAULT_BACKEND})")
    p.add_argument("--backend-b", "-b", default=None, metavar="BACKEND",
                   help="the second side's backend (default: the first side's)")
    p.add_argument("--impl-a", default=None, metavar="IMPL",
                   help=f"the first side's implementation: {IMPL_CHOICES_TEXT} (default: impl in [tool.toolproof], "
                        "else reference)")
    p.add_argument("--impl-b", default=None, metavar="IMPL", help="the second side's implementation (default: as --impl-a's)")
    add_jobs(p)
    add_call_timeout(p)
    p.add_argument("--json", metavar="F", help="write the differences as JSON")
    p.add_argument("--markdown", metavar="F", help="write the differences as Markdown (appended for $GITHUB_STEP_SUMMARY)")
    p.add_argument("--markdown-append", action="store_true", help="append the Markdown to F instead of replacing it")
    p.set_defaults(func=cmd_diff, toolproof_config=True)

    p = subparsers.add_parser("merge", help="merge shard JSON results")
    p.add_argument("results", nargs="+", metavar="RESULTS", help="JSON results files of the shards (run --json)")
    add_report_options(p)
    p.set_defaults(func=cmd_merge)
