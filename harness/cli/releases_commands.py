"""``toolproof releases``: every published release of a tool layer, bisected (harness/releases).

    toolproof releases [PATHS] [--from V] [--to V] [--impl-template pi@{version}] [--package P]
                       [--shard I/N] [--jobs N] [--json F] [--markdown F] [--html F]
                       [--fuzz-n N] [--fuzz-seed S] [--no-fuzz] [--cache-dir D] [--refresh]
    toolproof releases --merge SHARD.json… [--json F] [--markdown F] [--html F]
    toolproof releases --new [--draft F] [--pr-report F] …

The report is information, not a gate: exit 0 when it was written, 2 for usage or
infrastructure errors (the registry unreachable, no release in range). ``--new`` checks the newest
published release against the newest one with a shipped baseline (harness/releases/new_release.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TextIO

from harness.cli.gate import SHIPPED_GATE_PATHS
from harness.cli.options import Subparsers, jobs_value
from harness.corpus.loader import load_corpus
from harness.corpus.selection import parse_shard
from harness.errors import UsageError
from harness.install.shipped import resolve_all, shipped_root
from harness.model.results import EXIT_OK
from harness.releases.analysis import Report, analyse
from harness.releases.cache import SweepCache, default_cache_dir
from harness.releases.history import load_history
from harness.releases.launch import Launcher
from harness.releases.new_release import run_new
from harness.releases.records import SweepState, merge_states
from harness.releases.render import to_html, to_markdown, to_text
from harness.releases.sweep import DEFAULT_FUZZ_N, DEFAULT_FUZZ_SEED, Sweep, SweepOptions
from harness.releases.versions import ImplTemplate, NpmRegistry, Registry
from harness.report.writers import write_output
from tools_impl.server.patch_catalogue import patch_catalogue

HISTORY_DOC = Path("docs") / "pi-history.md"


def _log(message: str) -> None:
    print(f"toolproof releases: {message}", file=sys.stderr, flush=True)


def history_rows(args: argparse.Namespace, template: ImplTemplate) -> list:  # type: ignore[type-arg]
    if args.history:
        path = Path(args.history)
        if not path.is_file():
            raise UsageError(f"--history {args.history}: no such file")
        return load_history(path)
    return load_history(shipped_root() / HISTORY_DOC) if template.is_pi else []


def write_report(report: Report, args: argparse.Namespace, out: TextIO) -> None:
    out.write(to_text(report))
    if args.json:
        write_output(args.json, json.dumps(report.to_json(), ensure_ascii=False, indent=1) + "\n", "releases report")
    if args.markdown:
        write_output(args.markdown, to_markdown(report), "releases summary")
    if args.html:
        write_output(args.html, to_html(report), "releases timeline")


def load_state(path: str) -> SweepState:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: cannot read a releases report: {exc}") from None
    try:
        return SweepState.from_json(doc.get("state", doc) if isinstance(doc, dict) else {})
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"{path}: not a toolproof releases report (--json of toolproof releases): {exc}") from None


def make_sweep(args: argparse.Namespace, registry: Registry | None = None) -> Sweep:
    template = ImplTemplate(args.impl_template)
    paths = resolve_all(args.paths or list(SHIPPED_GATE_PATHS))
    scenarios = load_corpus(paths)
    launcher = Launcher(template)
    cache_root = Path(args.cache_dir) if args.cache_dir else default_cache_dir()
    cache = SweepCache(cache_root, SweepCache.template_key(template.text, launcher.launch_key), read=not args.refresh)
    shard = parse_shard(args.shard) if args.shard else None
    if args.fuzz_n < 1:
        raise UsageError("--fuzz-n must be at least 1")
    options = SweepOptions(args.range_from, args.range_to, tuple(args.package), args.jobs, shard, args.fuzz_n,
                           args.fuzz_seed, not args.no_fuzz)
    return Sweep(template, registry or NpmRegistry(), launcher, scenarios, cache, options, log=_log)


def cmd_releases(args: argparse.Namespace, out: TextIO) -> int:
    template = ImplTemplate(args.impl_template)
    if args.merge:
        if args.paths or args.shard or args.new:
            raise UsageError("releases --merge joins shard reports and runs nothing: it takes no PATH, --shard or --new")
        state, warnings = merge_states([load_state(p) for p in args.merge])
        for w in warnings:
            _log(f"warning: {w}")
        report = analyse(state, patch_catalogue(), history_rows(args, ImplTemplate(state.impl_template)))
        write_report(report, args, out)
        return EXIT_OK
    if args.new:
        found = run_new(args, make_sweep(args), history_rows(args, template), out, log=_log)
        if found is not None:
            write_report(found, args, out)
        return EXIT_OK
    state = make_sweep(args).run()
    report = analyse(state, patch_catalogue(), history_rows(args, template))
    write_report(report, args, out)
    return EXIT_OK


def register_cli(subparsers: Subparsers) -> None:
    """Add ``releases``."""
    p = subparsers.add_parser(
        "releases", help="every published release of a tool layer, bisected: behaviour changes and patch survival",
        description="Install every published release in a range, run the corpus where it tells something (bisecting "
                    "each change to neighbouring releases) and the differential fuzzer between neighbours, and report "
                    "every behaviour change with the changelog entries of its interval, and per patch toggle whether "
                    "upstream still needs it.")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="scenario files or directories (default: the shipped gate corpus, toolproof: and toolproof:pi)")
    p.add_argument("--from", dest="range_from", metavar="V", help="first release of the range (default: the first published)")
    p.add_argument("--to", dest="range_to", metavar="V", help="last release of the range (default: the newest published)")
    p.add_argument("--impl-template", default="pi@{version}", metavar="T",
                   help="the --impl of one release, with {version} (default pi@{version})")
    p.add_argument("--package", action="append", default=[], metavar="P",
                   help="npm package whose published versions are the releases (repeatable; default for pi@{version}: "
                        "@mariozechner/pi-coding-agent and @earendil-works/pi-coding-agent)")
    p.add_argument("--shard", metavar="I/N", help="run segment I of N of the range (merge the shards with --merge)")
    p.add_argument("--jobs", "-j", type=jobs_value, default=2, metavar="N",
                   help="releases worked on side by side (default 2)")
    p.add_argument("--json", metavar="F", help="write the report as JSON (input of --merge)")
    p.add_argument("--markdown", metavar="F", help="write the report as Markdown")
    p.add_argument("--html", metavar="F", help="write the HTML timeline")
    p.add_argument("--fuzz-n", type=int, default=DEFAULT_FUZZ_N, metavar="N",
                   help=f"fuzzer calls per pair of neighbouring releases (default {DEFAULT_FUZZ_N})")
    p.add_argument("--fuzz-seed", type=int, default=DEFAULT_FUZZ_SEED, metavar="S",
                   help=f"fuzzer seed (default {DEFAULT_FUZZ_SEED})")
    p.add_argument("--no-fuzz", action="store_true", help="do not run the fuzzer between neighbours")
    p.add_argument("--cache-dir", metavar="D",
                   help="where outcomes are cached (default $TOOLPROOF_RELEASES_CACHE or ~/.cache/toolproof/releases)")
    p.add_argument("--refresh", action="store_true", help="ignore cached outcomes (and refresh the cache)")
    p.add_argument("--history", metavar="F", help="the reviewed changelog history (default for pi: docs/pi-history.md)")
    p.add_argument("--merge", nargs="+", metavar="F", help="join the --json reports of shards into one report")
    p.add_argument("--new", action="store_true",
                   help="check the newest published release against the newest with a shipped baseline: draft baseline "
                        "and a report to paste into a pull request")
    p.add_argument("--draft", metavar="F", help="with --new: where the draft baseline goes (default baselines/pi-V.yaml "
                                                "in a checkout, else ./pi-V.yaml)")
    p.add_argument("--pr-report", metavar="F", help="with --new: write the pull-request report (Markdown) here")
    p.add_argument("--baselines", metavar="DIR", help="with --new: where the pinned baselines are (default: the shipped ones)")
    p.set_defaults(func=cmd_releases)
