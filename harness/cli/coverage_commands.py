"""``toolproof coverage``: the map from spec rules (docs/spec/) to the scenarios that pin them.

Exit 0 when every rule that is not exempt has a scenario, every ``spec:`` citation names a rule
and (with ``--check``) the Markdown file is current; 1 otherwise; 2 for usage errors. Scenario
files are loaded strictly: a step without ``expect`` is a problem here (docs/scenario-format.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from harness.cli.options import Subparsers
from harness.corpus.coverage import build_coverage, load_rules, render_markdown, render_text
from harness.corpus.loader import load_corpus
from harness.errors import UsageError
from harness.model.results import EXIT_FAIL, EXIT_OK

DEFAULT_CORPUS = ("scenarios", "adapters/pi/scenarios")


def cmd_coverage(args: argparse.Namespace, out: TextIO) -> int:
    spec_dir = Path(args.spec)
    if not spec_dir.is_dir():
        raise UsageError(f"no spec directory {spec_dir} (pass --spec DIR)")
    paths = args.paths or [p for p in DEFAULT_CORPUS if Path(p).is_dir()]
    if not paths:
        raise UsageError("no scenario paths given and no scenarios/ directory here")
    rules, problems = load_rules(spec_dir)
    if not rules:
        raise UsageError(f"{spec_dir} holds no rules (headings '## <rule-id> — <title>')")
    cov = build_coverage(rules, load_corpus(paths, strict=True), problems)
    out.write(render_text(cov, verbose=args.verbose))
    status = EXIT_OK if cov.complete else EXIT_FAIL
    if args.markdown:
        md = render_markdown(cov)
        target = Path(args.markdown)
        current = target.read_text(encoding="utf-8") if target.is_file() else None
        if args.check:
            if current != md:
                out.write(f"toolproof: {target} is not current; regenerate it with "
                          f"toolproof coverage --markdown {target}\n")
                status = EXIT_FAIL
        elif current != md:
            try:
                target.write_text(md, encoding="utf-8")
            except OSError as exc:
                raise UsageError(f"cannot write {target}: {exc}") from None
            out.write(f"toolproof: wrote {target}\n")
    elif args.check:
        raise UsageError("--check needs --markdown FILE (the file to compare)")
    return status


def register_cli(subparsers: Subparsers) -> None:
    """Add the ``coverage`` subcommand (``func=cmd_coverage``, called as ``func(args, out)``)."""
    p = subparsers.add_parser(
        "coverage", help="map spec rules to the scenarios that pin them",
        description="List every rule of the behaviour spec with the scenarios citing it (spec: [...]). "
                    "Fails when a rule that is not exempt has no scenario or a citation names no rule.")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="scenario files or directories (default: scenarios/ and adapters/pi/scenarios/)")
    p.add_argument("--spec", default="docs/spec", metavar="DIR", help="spec directory (default: docs/spec)")
    p.add_argument("--markdown", metavar="F", help="write the map as Markdown to F (docs/spec/COVERAGE.md)")
    p.add_argument("--check", action="store_true", help="with --markdown: fail if F is not current instead of writing it")
    p.add_argument("-v", "--verbose", action="store_true", help="list the scenario ids of every rule")
    p.set_defaults(func=cmd_coverage)
