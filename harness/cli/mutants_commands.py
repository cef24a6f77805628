"""``toolproof mutants``: how many of the built-in mutants of the reference a corpus kills
(harness/mutants/, docs/mutants.md)."""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
from pathlib import Path
from typing import TextIO

from harness.cli.gate import SHIPPED_GATE_PATHS
from harness.cli.options import Subparsers, add_jobs, add_selection, load_selection
from harness.errors import EmptySelection
from harness.install.shipped import resolve_all
from harness.model.results import EXIT_FAIL, EXIT_OK
from harness.mutants.campaign import IMPLS, CampaignResult, run_campaign
from harness.mutants.catalogue import MUTANTS, Mutant


def select_mutants(patterns: list[str]) -> list[Mutant]:
    """Mutants whose name (or tool) matches one of ``patterns`` (fnmatch); all without any."""
    if not patterns:
        return list(MUTANTS)
    chosen = [m for m in MUTANTS if any(fnmatch.fnmatchcase(m.name, p) or m.tool == p for p in patterns)]
    if not chosen:
        raise EmptySelection(f"--only {' '.join(patterns)} matched none of the {len(MUTANTS)} mutants "
                             "(toolproof mutants --list shows them)")
    return chosen


def min_kill_value(text: str) -> float:
    try:
        value = float(text.rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a percentage from 0 to 100, got {text!r}") from None
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"expected a percentage from 0 to 100, got {text!r}")
    return value


def print_report(result: CampaignResult, out: TextIO) -> None:
    print(f"\n{'tool':<12}{'killed':>8}{'mutants':>9}{'rate':>8}", file=out)
    for tool, killed, total in result.per_tool():
        print(f"{tool:<12}{killed:>8}{total:>9}{killed / total:>8.0%}", file=out)
    survivors = result.survivors
    if survivors:
        print(f"\nsurvivors ({len(survivors)}):", file=out)
        for o in survivors:
            print(f"  {o.mutant.name}  [{o.mutant.tool}, {o.mutant.surface}]  {o.mutant.description}", file=out)
    if result.clean_failures:
        print(f"\nleft out, failing on the clean {result.impl}: {', '.join(result.clean_failures)}", file=out)
    flaky = sorted({f"{sid} (on {o.mutant.name}: {why.splitlines()[0] if why else '?'})"
                    for o in result.outcomes for sid, why in o.flaky})
    if flaky:
        print(f"\nscenarios that failed once on a mutant and then passed (flaky, not counted): {', '.join(flaky)}",
              file=out)
    print(f"\ntoolproof: mutants: {result.killed} of {len(result.outcomes)} killed ({result.kill_rate:.1%}) by "
          f"{result.passing} scenarios passing on the clean {result.impl}, in {result.duration_s:.0f} s", file=out)


def cmd_mutants(args: argparse.Namespace, out: TextIO) -> int:
    if args.list:
        for m in select_mutants(args.only):
            print(f"{m.name}  [{m.tool}, {m.surface}]  {m.description}", file=out)
        return EXIT_OK
    mutants = select_mutants(args.only)
    if args.impl == "upstream" and not args.only:
        # the upstream emulation runs without the MiniMax wrapper: its mutants cannot show there
        mutants = [m for m in mutants if m.surface != "minimax"]
        print(f"toolproof: --impl upstream: the {len(MUTANTS) - len(mutants)} mutants of the MiniMax wrapper are left out",
              file=sys.stderr)
    paths = args.paths or resolve_all(list(SHIPPED_GATE_PATHS))
    scenarios = load_selection(paths, args.keyword, args.tag)

    def progress(line: str) -> None:
        print(f"toolproof: {line}", file=sys.stderr, flush=True)

    result = run_campaign(mutants, scenarios, impl=args.impl, jobs=args.jobs or 1, progress=progress)
    if args.json:
        Path(args.json).write_text(json.dumps(result.to_json(), indent=2) + "\n", encoding="utf-8")
    print_report(result, out)
    if args.min_kill is not None and result.kill_rate * 100 < args.min_kill:
        print(f"toolproof: kill rate {result.kill_rate:.1%} is below --min-kill {args.min_kill:g}%", file=out)
        return EXIT_FAIL
    return EXIT_OK


def register_cli(subparsers: Subparsers) -> None:
    """Add ``mutants``."""
    p = subparsers.add_parser(
        "mutants", help="how many built-in mutants of the reference a corpus kills",
        description="Run a corpus (default: the shipped one) against each built-in mutant of the reference "
                    "(one realistic regression each) and report the kill rate per tool and every survivor.")
    add_selection(p, shard=False)
    add_jobs(p)
    p.add_argument("--impl", default="reference", choices=IMPLS,
                   help="mutate the reference (default) or its upstream-pi emulation (then only the engine's mutants, "
                        "unless --only names others)")
    p.add_argument("--only", action="append", default=[], metavar="NAME",
                   help="only mutants whose name matches NAME (a glob, e.g. 'edit.*') or of tool NAME (repeatable)")
    p.add_argument("--min-kill", type=min_kill_value, default=None, metavar="PERCENT",
                   help="exit 1 when fewer than PERCENT of the mutants are killed (default: report only)")
    p.add_argument("--json", metavar="F", help="write the campaign (every mutant, its killer or survival) as JSON")
    p.add_argument("--list", action="store_true", help="list the mutants (with --only: the selected ones) and exit")
    p.set_defaults(func=cmd_mutants, toolproof_config=True)


__all__ = ["cmd_mutants", "register_cli", "select_mutants"]
