"""``toolproof serve`` (the reference server on stdin/stdout) and ``toolproof selfcheck`` (the
backend self-check suite)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TextIO

from harness.backends.registry import DEFAULT_BACKEND, backend_factory
from harness.cli.options import Subparsers, add_impl
from harness.model.results import EXIT_ERROR
from harness.run.selfcheck import run_selfcheck


def cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    argv = [sys.executable, "-m", "tools_impl.server", *(["--upstream"] if args.upstream else [])]
    sys.stdout.flush()
    os.execv(sys.executable, argv)
    return EXIT_ERROR  # not reached


def cmd_selfcheck(args: argparse.Namespace, out: TextIO) -> int:
    factory, label = backend_factory(args.backend, args.impl)
    report = run_selfcheck(factory, label, only=args.check)
    for check in report.results:
        extra = f" — {check.message}" if check.message else ""
        print(f"{check.status.upper():5} {check.name}{extra}", file=out)
    print(f"toolproof selfcheck [{label}]: {report.summary()}", file=out)
    return report.exit_code


def register_cli(subparsers: Subparsers) -> None:
    """Add ``serve`` and ``selfcheck``."""
    p = subparsers.add_parser("serve", help="serve the tool protocol on stdin/stdout (the reference server)")
    p.add_argument("--upstream", action="store_true", help="emulate upstream pi")
    p.set_defaults(func=cmd_serve)

    p = subparsers.add_parser("selfcheck", help="run the backend self-check suite")
    add_impl(p)
    p.add_argument("--backend", default=DEFAULT_BACKEND, help=f"the backend to check (default: {DEFAULT_BACKEND})")
    p.add_argument("--check", action="append", default=[], metavar="NAME", help="run only this check (repeatable)")
    p.set_defaults(func=cmd_selfcheck)
