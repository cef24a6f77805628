"""The ``toolproof`` command line (docs/cli.md): the parser, assembled from one module per
command family, and ``main``, which turns errors into exit codes.

Each family module exposes ``register_cli(subparsers)``, adding its subcommands with
``set_defaults(func=handler)``; a handler is called as ``func(args, out) -> exit code``.
Exit codes: 0 pass, 1 behaviour failures (or stale baseline entries, or differences for
``diff``), 2 usage or infrastructure errors, 5 an empty selection (``EXIT_CODES_HELP``). User mistakes print one line per problem, never a
traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from harness import __version__
from harness.backends.termination import Terminated, terminating_signals_end_the_run
from harness.cli import (
    baseline_commands,
    container_commands,
    coverage_commands,
    docs_commands,
    matrix_commands,
    mutants_commands,
    patches_commands,
    record_commands,
    releases_commands,
    run_commands,
    server_commands,
)
from harness.cli import fuzz_commands as fuzz_command
from harness.cli import import_commands as import_command
from harness.cli import init_commands as init_command
from harness.cli import properties_commands as properties_command
from harness.cli.options import apply_config
from harness.errors import EmptySelection, HarnessError, InfrastructureError, ScenarioError
from harness.model.results import EXIT_EMPTY, EXIT_ERROR, EXIT_OK

EXIT_CODES_HELP = """exit codes:
  0  the gate passes (every scenario passed, skipped with a reason, or is a baseline-listed failure)
  1  behaviour failures or stale baseline entries (diff: differences; --fail-on-skip: skips)
  2  usage errors (bad option, invalid scenario or config file) or infrastructure errors
  5  the selection is empty (no scenario matched the paths, -k, --tag or --shard)"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toolproof", description="Conformance and replay tests for coding-agent tools.",
                                     epilog=EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"toolproof {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run_commands.register_cli(sub)          # run, validate, list
    record_commands.register_cli(sub)       # record, diff, merge
    server_commands.register_cli(sub)       # serve, selfcheck
    baseline_commands.register_cli(sub)     # baseline update
    container_commands.register_cli(sub)    # images build, docker cleanup
    matrix_commands.register_cli(sub)              # matrix
    import_command.register_cli(sub)        # import
    init_command.register_cli(sub)          # init
    coverage_commands.register_cli(sub)     # coverage
    patches_commands.register_cli(sub)      # patches
    releases_commands.register_cli(sub)     # releases
    fuzz_command.register_cli(sub)          # fuzz
    properties_command.register_cli(sub)    # properties
    docs_commands.register_cli(sub)         # docs
    mutants_commands.register_cli(sub)      # mutants
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed the usage error
        return EXIT_ERROR if exc.code not in (0, None) else EXIT_OK
    try:
        if getattr(args, "toolproof_config", False):

            apply_config(args)
        with terminating_signals_end_the_run():
            return int(args.func(args, out))
    except EmptySelection as exc:
        print(f"toolproof: nothing to run: {exc}", file=sys.stderr)
        return EXIT_EMPTY
    except ScenarioError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        print(f"toolproof: {len(exc.problems)} problem(s) found", file=sys.stderr)
        return EXIT_ERROR
    except InfrastructureError as exc:
        print(f"toolproof: infrastructure error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except HarnessError as exc:
        print(f"toolproof: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt as exc:
        how = f" by {exc.args[0]}" if isinstance(exc, Terminated) else ""
        print(f"toolproof: interrupted{how}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        # the reader went away (`toolproof list … | head`): stop quietly, as Unix tools do;
        # pointing stdout at /dev/null keeps interpreter shutdown from flushing into the pipe
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return EXIT_ERROR
