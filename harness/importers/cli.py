"""The ``toolproof import`` subcommand: recorded agent sessions → scenario files (docs/importers.md).

``register_cli(subparsers)`` adds the subcommand to the ``toolproof`` parser; its handler has the
CLI's ``func(args, out) -> int`` signature. Exit codes: 0 scenarios written; 2 usage or input
errors (no starting workspace, malformed traces as ``file:line: what was expected``, existing
files without ``--force``, nothing importable). User mistakes never print a traceback.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from harness.corpus.loader import ID_PATTERN, ID_PATTERN_TEXT
from harness.errors import HarnessError, UsageError
from harness.importers.expectations import DEFAULT_EXPECT_MODE, EXPECT_MODES
from harness.importers.importer import (
    DEFAULT_ID_PREFIX,
    ImportOptions,
    SessionImport,
    build_session,
    write_scenarios,
)
from harness.importers.mapping import SURFACES, TIMEOUT_UNITS
from harness.importers.readers import read_trace
from harness.importers.trace import FORMATS, TraceError
from harness.importers.workspace_files import (
    DEFAULT_EXCLUDES,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_FILES,
    DEFAULT_MAX_TOTAL_BYTES,
    WorkspaceFiles,
    WorkspaceLimits,
    from_directory,
    from_git,
)
from harness.model.results import EXIT_ERROR, EXIT_OK

NO_WORKSPACE_MESSAGE = (
    "import needs the starting workspace of the recorded session: pass --workspace-dir DIR (the "
    "files as they were when the session started) or --git-rev REV [--repo DIR]. A replay from the "
    "wrong starting state is meaningless: the recorded results would not follow from it."
)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def register_cli(subparsers: Any) -> None:
    """Add ``import`` to an argparse subparsers object (``parser.add_subparsers()``)."""
    p = subparsers.add_parser("import", help="turn recorded agent sessions into scenarios",
                              description="Turn recorded agent sessions (Claude Code or pi session JSONL, "
                                          "OpenAI chat-completions or Anthropic messages logs) into scenario files.")
    p.add_argument("traces", nargs="+", metavar="TRACE", help="trace files (one session each)")
    src = p.add_argument_group("starting workspace (one is required)")
    src.add_argument("--workspace-dir", metavar="DIR", help="directory holding the files as the session started")
    src.add_argument("--git-rev", metavar="REV", help="git revision holding the files as the session started")
    src.add_argument("--repo", default=".", metavar="DIR", help="repository of --git-rev (default: .)")
    src.add_argument("--exclude", action="append", default=[], metavar="PATTERN",
                     help="leave out paths matching this glob (repeatable; added to the defaults)")
    src.add_argument("--no-default-excludes", action="store_true",
                     help=f"do not leave out {', '.join(DEFAULT_EXCLUDES)}")
    src.add_argument("--max-file-bytes", type=_positive, default=DEFAULT_MAX_FILE_BYTES, metavar="N")
    src.add_argument("--max-total-bytes", type=_positive, default=DEFAULT_MAX_TOTAL_BYTES, metavar="N")
    src.add_argument("--max-files", type=_positive, default=DEFAULT_MAX_FILES, metavar="N")
    src.add_argument("--git", action="store_true", help="make the workspace a git repository (workspace.git)")
    p.add_argument("--out", required=True, metavar="DIR", help="directory to write the scenarios into")
    p.add_argument("--format", default="auto", choices=("auto", *FORMATS), help="trace format (default: auto)")
    p.add_argument("--surface", default="minimax", choices=SURFACES, help="target surface (default: minimax)")
    p.add_argument("--expect", default=DEFAULT_EXPECT_MODE, choices=EXPECT_MODES,
                   help=f"expectations from recorded results (default: {DEFAULT_EXPECT_MODE})")
    p.add_argument("--root", metavar="PATH", help="the recorded session's working directory (default: from the trace)")
    p.add_argument("--split", type=_positive, metavar="N", help="one scenario per N imported calls")
    p.add_argument("--id-prefix", default=DEFAULT_ID_PREFIX, metavar="PREFIX",
                   help=f"scenario id prefix (default: {DEFAULT_ID_PREFIX})")
    p.add_argument("--bash-timeout-unit", choices=TIMEOUT_UNITS,
                   help="unit of recorded bash timeouts (default: ms for Claude Code's Bash, else s)")
    p.add_argument("--force", action="store_true", help="overwrite existing scenario files")
    p.set_defaults(func=cmd_import)


def _workspace(args: argparse.Namespace) -> WorkspaceFiles:
    if args.workspace_dir and args.git_rev:
        raise UsageError("pass only one of --workspace-dir and --git-rev")
    if not args.workspace_dir and not args.git_rev:
        raise UsageError(NO_WORKSPACE_MESSAGE)
    excludes = tuple(args.exclude) if args.no_default_excludes else (*DEFAULT_EXCLUDES, *args.exclude)
    limits = WorkspaceLimits(max_file_bytes=args.max_file_bytes, max_total_bytes=args.max_total_bytes,
                    max_files=args.max_files, excludes=excludes)
    if args.workspace_dir:
        return from_directory(args.workspace_dir, limits)
    return from_git(args.repo, args.git_rev, limits)


def _summary(imp: SessionImport, files: dict[str, str], out: TextIO) -> None:
    s = imp.session
    targets = ", ".join(files.get(g.file_name, g.file_name) for g in imp.scenarios) or "no scenario"
    print(f"toolproof import: {s.path} ({s.format}, session {s.session_id}) → {targets}", file=out)
    print(f"  calls: {imp.imported} imported as {imp.steps} step(s), {len(imp.skipped)} skipped"
          + (f"; recorded root {imp.root}" if imp.root else ""), file=out)
    for reason, count in imp.skip_counts():
        print(f"  skipped {count}× {reason}", file=out)
    for note in imp.notes:
        print(f"  note: {note}", file=out)


def cmd_import(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``toolproof import``; prints the summary to ``out`` and problems to stderr."""
    try:
        if not ID_PATTERN.fullmatch(args.id_prefix):
            raise UsageError(f"--id-prefix: expected an id matching {ID_PATTERN_TEXT}, got {args.id_prefix!r}")
        workspace = _workspace(args)
        opts = ImportOptions(surface=args.surface, expect=args.expect, root=args.root, split=args.split,
                             id_prefix=args.id_prefix.rstrip("/"), timeout_unit=args.bash_timeout_unit, git=args.git)
        problems: list[str] = []
        imports: list[SessionImport] = []
        for trace in args.traces:
            try:
                session = read_trace(trace, args.format)
            except TraceError as exc:
                problems.extend(exc.problems)
                continue
            imports.append(build_session(session, workspace, opts))
        if problems:
            raise TraceError(problems)
        written = write_scenarios(imports, args.out, force=args.force)
        by_name = {w.rsplit("/", 1)[-1]: w for w in written}
        for imp in imports:
            _summary(imp, by_name, out)
        total = sum(imp.imported for imp in imports)
        skipped = sum(len(imp.skipped) for imp in imports)
        print(f"toolproof import: {len(written)} scenario(s) written to {args.out}, {total} call(s) imported, "
              f"{skipped} skipped", file=out)
        if not written:
            print("toolproof: error: no call could be imported, so no scenario was written", file=sys.stderr)
            return EXIT_ERROR
        return EXIT_OK
    except TraceError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        print(f"toolproof: {len(exc.problems)} problem(s) found in the trace(s); nothing was written", file=sys.stderr)
        return EXIT_ERROR
    except HarnessError as exc:
        print(f"toolproof: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
