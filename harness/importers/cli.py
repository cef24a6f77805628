"""The ``toolproof import`` subcommand: recorded agent sessions → scenario files (docs/importers.md).

``register_cli(subparsers)`` adds the subcommand to the ``toolproof`` parser; its handler has the
CLI's ``func(args, out) -> int`` signature. Exit codes: 0 scenarios written; 2 usage or input
errors (no starting workspace, malformed traces as ``file:line: what was expected``, existing
files without ``--force``, nothing importable). User mistakes never print a traceback.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from harness.backends.registry import DEFAULT_IMPL, backend_selection
from harness.corpus.loader import ID_PATTERN, ID_PATTERN_TEXT, load_corpus
from harness.errors import HarnessError, UsageError
from harness.importers.expectations import DEFAULT_EXPECT_MODE, EXPECT_MODES
from harness.importers.importer import (
    DEFAULT_ID_PREFIX,
    PLATFORM_CHOICES,
    SURFACE_CHOICES,
    ImportOptions,
    SessionImport,
    build_session,
    write_scenarios,
)
from harness.importers.mapping import SURFACES, TIMEOUT_UNITS, known_tool_names
from harness.importers.readers import read_trace
from harness.importers.report import TraceReport, build_report, reports_json, reports_markdown
from harness.importers.trace import FORMATS, TraceError
from harness.importers.workspace_files import (
    DEFAULT_EXCLUDES,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_FILES,
    DEFAULT_MAX_TOTAL_BYTES,
    WorkspaceFiles,
    WorkspaceLimits,
    from_archive,
    from_directory,
    from_git,
)
from harness.model.results import EXIT_ERROR, EXIT_FAIL, EXIT_OK, RunResult, ScenarioResult
from harness.report.writers import write_output
from harness.run.deadlines import DEFAULT_CALL_TIMEOUT_S
from harness.run.runner import Runner

NO_WORKSPACE_NOTE = (
    "no starting workspace given (--workspace-dir, --git, --workspace-archive): the start state is inferred from "
    "the trace alone, and calls that need the rest of the repository are skipped"
)
TRACE_SUFFIXES = (".jsonl", ".json", ".ndjson")
DEFAULT_REPLAY_BACKEND = "docker"
HOST_BACKENDS = ("local",)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text}")
    return value


def _tool_mapping(text: str) -> tuple[str, str]:
    name, sep, tool = text.partition("=")
    if not sep or not name or not tool:
        raise argparse.ArgumentTypeError(f"expected NAME=TOOL, got {text!r}")
    known = known_tool_names()
    if tool.lower() not in known:
        raise argparse.ArgumentTypeError(f"unknown tool {tool!r} in {text!r}; expected one of {', '.join(known)}")
    return name, tool.lower()


def register_cli(subparsers: Any) -> None:
    """Add ``import`` to an argparse subparsers object (``parser.add_subparsers()``)."""
    p = subparsers.add_parser("import", help="turn recorded agent sessions into scenarios",
                              description="Turn recorded agent sessions (Claude Code or pi session JSONL, "
                                          "OpenAI chat-completions / Responses logs or Codex CLI rollouts, "
                                          "Anthropic messages logs) into scenario files.")
    p.add_argument("traces", nargs="+", metavar="TRACE",
                   help="trace files (one session each) or directories of them (*.jsonl, *.json, *.ndjson)")
    src = p.add_argument_group("starting workspace (at most one; without one the start state is inferred from the "
                               "trace alone)")
    src.add_argument("--workspace-dir", metavar="DIR", help="directory holding the files as the session started")
    src.add_argument("--git", metavar="REPO@REV", dest="git_source",
                     help="git revision holding the files as the session started (REV alone: in the current "
                          "directory); the replay workspace is a git repository (--git-init)")
    src.add_argument("--git-rev", metavar="REV", help="same as --git REPO@REV with --repo (default: .)")
    src.add_argument("--repo", default=".", metavar="DIR", help="repository of --git-rev (default: .)")
    src.add_argument("--workspace-archive", metavar="FILE", help="tar archive (.tar, .tar.gz, …) of the starting files")
    src.add_argument("--inline-workspace", action="store_true",
                     help="copy the files into each scenario (workspace.files) instead of referencing the source "
                          "(workspace.from)")
    src.add_argument("--exclude", action="append", default=[], metavar="PATTERN",
                     help="leave out paths matching this glob (repeatable; added to the defaults)")
    src.add_argument("--no-default-excludes", action="store_true",
                     help=f"do not leave out {', '.join(DEFAULT_EXCLUDES)}")
    src.add_argument("--max-file-bytes", type=_positive, default=DEFAULT_MAX_FILE_BYTES, metavar="N",
                     help=f"largest file taken (default: {DEFAULT_MAX_FILE_BYTES})")
    src.add_argument("--max-total-bytes", type=_positive, default=DEFAULT_MAX_TOTAL_BYTES, metavar="N",
                     help=f"largest workspace taken (default: {DEFAULT_MAX_TOTAL_BYTES})")
    src.add_argument("--max-files", type=_positive, default=DEFAULT_MAX_FILES, metavar="N",
                     help=f"most files taken (default: {DEFAULT_MAX_FILES})")
    src.add_argument("--git-init", action="store_true", dest="git",
                     help="make the replay workspace a git repository (workspace.git)")
    p.add_argument("--out", required=True, metavar="DIR", help="directory to write the scenarios into")
    p.add_argument("--format", default="auto", choices=("auto", *FORMATS), help="trace format (default: auto)")
    p.add_argument("--surface", default="minimax", choices=SURFACES, help="target surface (default: minimax)")
    p.add_argument("--expect", default=DEFAULT_EXPECT_MODE, choices=EXPECT_MODES,
                   help=f"expectations from recorded results (default: {DEFAULT_EXPECT_MODE})")
    p.add_argument("--recorded-surface", default="auto", choices=SURFACE_CHOICES,
                   help="the surface the recording was made on, deciding where --expect text compares text "
                        "(default: from the trace: claude-code, pi, or unknown for logs)")
    p.add_argument("--platform", default="auto", choices=PLATFORM_CHOICES,
                   help="platform of the recording (default: from the trace); a platform other than linux "
                        "becomes requires.os; any: no requirement")
    p.add_argument("--tool-map", action="append", default=[], type=_tool_mapping, metavar="NAME=TOOL",
                   help="import the recorded tool NAME as TOOL (a toolproof tool or a built-in agent tool name; "
                        "repeatable)")
    p.add_argument("--root", metavar="PATH", help="the recorded session's working directory (default: from the trace)")
    p.add_argument("--split", type=_positive, metavar="N", help="one scenario per N imported calls")
    p.add_argument("--id-prefix", default=DEFAULT_ID_PREFIX, metavar="PREFIX",
                   help=f"scenario id prefix (default: {DEFAULT_ID_PREFIX})")
    p.add_argument("--bash-timeout-unit", choices=TIMEOUT_UNITS,
                   help="unit of recorded bash timeouts (default: ms for Claude Code's Bash, else s)")
    p.add_argument("--skip-bad-lines", action="store_true",
                   help="leave out invalid JSON lines of a trace (noted) instead of refusing it")
    p.add_argument("--force", action="store_true", help="overwrite existing scenario files")
    rep = p.add_argument_group("replay (--replay: import, then run the scenarios and report per trace)")
    rep.add_argument("--replay", action="store_true",
                     help="run the imported scenarios and print the replay report (in a container by default)")
    rep.add_argument("--backend", default=DEFAULT_REPLAY_BACKEND,
                     help=f"where the replay runs: docker or docker:IMAGE (default: {DEFAULT_REPLAY_BACKEND}); "
                          "local only with --allow-host")
    rep.add_argument("--allow-host", action="store_true",
                     help="replay on this host (--backend local): the recorded shell commands run here; those that "
                          "reach outside the workspace still only run in a container and are skipped")
    rep.add_argument("--impl", default=DEFAULT_IMPL, metavar="IMPL", help="implementation to replay on (default: "
                                                                          "reference)")
    rep.add_argument("--jobs", type=_positive, default=1, metavar="N", help="parallel scenarios (default: 1)")
    rep.add_argument("--call-timeout", type=_seconds, default=None, metavar="S",
                     help=f"deadline of a call other than bash (default: {DEFAULT_CALL_TIMEOUT_S:g})")
    rep.add_argument("--report-json", metavar="F", help="write the replay report as JSON")
    rep.add_argument("--report-markdown", metavar="F", help="write the replay report as Markdown")
    p.set_defaults(func=cmd_import)


def _workspace(args: argparse.Namespace) -> WorkspaceFiles | None:
    """The starting workspace the options name, or None (the start state is then inferred from
    the trace alone). ``--git`` makes the replay workspace a git repository (``--git-init``)."""
    git = args.git_source or (f"{args.repo}@{args.git_rev}" if args.git_rev else None)
    given = [name for name, value in (("--workspace-dir", args.workspace_dir), ("--git", git),
                                      ("--workspace-archive", args.workspace_archive)) if value]
    if len(given) > 1:
        raise UsageError(f"pass only one of --workspace-dir, --git and --workspace-archive (got {', '.join(given)})")
    if not given:
        return None
    if git:
        args.git = True
    excludes = tuple(args.exclude) if args.no_default_excludes else (*DEFAULT_EXCLUDES, *args.exclude)
    limits = WorkspaceLimits(max_file_bytes=args.max_file_bytes, max_total_bytes=args.max_total_bytes,
                             max_files=args.max_files, excludes=excludes)
    if args.workspace_dir:
        return from_directory(args.workspace_dir, limits)
    if args.workspace_archive:
        return from_archive(args.workspace_archive, limits)
    repo, sep, rev = str(git).rpartition("@")
    if not sep:
        repo, rev = ".", str(git)
    if not rev:
        raise UsageError(f"--git {git}: expected REPO@REV (a revision after the @)")
    return from_git(repo or ".", rev, limits)


def trace_files(paths: list[str]) -> tuple[list[str], list[str]]:
    """The trace files named: files as given, directories expanded to their trace files
    (``*.jsonl``, ``*.json``, ``*.ndjson``, recursively, sorted). Returns (files, files found
    in directories); a path that does not exist is a ``UsageError``."""
    files: list[str] = []
    found: list[str] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            inside = sorted(str(f) for f in p.rglob("*") if f.suffix in TRACE_SUFFIXES and f.is_file())
            if not inside:
                raise UsageError(f"{raw}: the directory holds no trace files ({', '.join(TRACE_SUFFIXES)})")
            files.extend(inside)
            found.extend(inside)
        elif p.exists():
            files.append(raw)
        else:
            raise UsageError(f"{raw}: no such file or directory")
    return list(dict.fromkeys(files)), found


def _summary(imp: SessionImport, files: dict[str, str], out: TextIO) -> None:
    s = imp.session
    targets = ", ".join(files.get(g.file_name, g.file_name) for g in imp.scenarios) or "no scenario"
    print(f"toolproof import: {s.path} ({s.format}, session {s.session_id}) → {targets}", file=out)
    print(f"  calls: {imp.recorded_calls} recorded, {imp.imported} imported as {imp.steps} step(s), "
          f"{len(imp.skipped)} skipped" + (f"; recorded root {imp.root}" if imp.root else ""), file=out)
    for reason, count in imp.skip_counts():
        print(f"  skipped {count}× {reason}", file=out)
    if imp.contained:
        print(f"  {len(imp.contained)} shell step(s) run only in a container (--backend docker) and skip on a host "
              "backend; they never run on the host:", file=out)
        for line, why in imp.contained:
            print(f"    trace line {line}: {why}", file=out)
    for line, why in imp.platform_bound:
        print(f"  platform-bound, trace line {line}: {why}", file=out)
    out_of_band = sum(1 for r in imp.resyncs if r.cause == "out-of-band")
    if imp.resyncs:
        print(f"  {len(imp.resyncs)} resync step(s) ({out_of_band} out-of-band change(s)): the file as the recording "
              "saw it next, where the replayed steps cannot produce it:", file=out)
        for r in imp.resyncs:
            print(f"    {r.reason}", file=out)
    for note in imp.notes:
        print(f"  note: {note}", file=out)


def replay_backend(args: argparse.Namespace) -> str:
    """The backend of ``--replay``: a container unless ``--allow-host`` (then ``local``)."""
    if args.allow_host:
        if args.backend not in (DEFAULT_REPLAY_BACKEND, *HOST_BACKENDS):
            raise UsageError(f"--allow-host replays on this host; it does not go with --backend {args.backend}")
        return "local"
    if args.backend in HOST_BACKENDS or args.backend.startswith("cmd:"):
        raise UsageError(f"--backend {args.backend} would run the recorded shell commands on this host: pass "
                         "--allow-host to say so, or leave the replay in a container (--backend docker)")
    return str(args.backend)


def _replay(args: argparse.Namespace, imports: list[SessionImport], written: list[str], out: TextIO) -> int:
    """Run the written scenarios and report per trace; exit 1 on a real difference, 2 on errors."""
    backend = replay_backend(args)
    scenarios = load_corpus(written)
    selection = backend_selection(backend, args.impl)
    print(f"toolproof import: replaying {len(scenarios)} scenario(s) on {selection.label}", file=out, flush=True)

    def progress(res: ScenarioResult) -> None:
        print(f"{res.status.upper():5} {res.id}" + (f" ({res.reason})" if res.reason else ""), file=out,
              flush=True)

    run: RunResult = Runner(selection.factory, jobs=args.jobs, progress=progress, backend_label=selection.label,
                            call_timeout=args.call_timeout).run(scenarios)
    reports: list[TraceReport] = [build_report(imp, run) for imp in imports if imp.scenarios]
    markdown = reports_markdown(reports)
    if args.report_json:
        write_output(args.report_json, reports_json(reports), "replay report")
    if args.report_markdown:
        write_output(args.report_markdown, markdown, "replay report")
    out.write(markdown)
    if any(s.category == "error" for r in reports for s in r.steps):
        return EXIT_ERROR
    return EXIT_FAIL if any(r.count("difference") for r in reports) else EXIT_OK


def cmd_import(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``toolproof import``; prints the summary to ``out`` and problems to stderr."""
    try:
        if args.replay:
            replay_backend(args)  # a usage mistake before anything is written
        if not ID_PATTERN.fullmatch(args.id_prefix):
            raise UsageError(f"--id-prefix: expected an id matching {ID_PATTERN_TEXT}, got {args.id_prefix!r}")
        traces, in_dirs = trace_files(args.traces)
        workspace = _workspace(args)
        opts = ImportOptions(surface=args.surface, expect=args.expect, root=args.root, split=args.split,
                             id_prefix=args.id_prefix.rstrip("/"), timeout_unit=args.bash_timeout_unit, git=args.git,
                             tool_map=dict(args.tool_map), recorded_surface=args.recorded_surface,
                             platform=args.platform, inline_workspace=args.inline_workspace, out_dir=args.out)
        problems: list[str] = []
        passed_over: list[str] = []
        imports: list[SessionImport] = []
        taken: set[str] = set()
        if workspace is None:
            print(f"toolproof import: {NO_WORKSPACE_NOTE}", file=out)
        for trace in traces:
            try:
                session = read_trace(trace, args.format, skip_bad_lines=args.skip_bad_lines)
            except TraceError as exc:
                if trace in in_dirs and exc.problems[0].startswith(f"{trace}:1: cannot tell the trace format"):
                    passed_over.append(f"{trace}: not a recorded session of a known format")
                    continue
                problems.extend(exc.problems)
                continue
            imports.append(build_session(session, workspace, opts, taken))
        if problems:
            raise TraceError(problems)
        written = write_scenarios(imports, args.out, force=args.force)
        by_name = {w.rsplit("/", 1)[-1]: w for w in written}
        for imp in imports:
            _summary(imp, by_name, out)
        for line in passed_over:
            print(f"toolproof import: passed over {line}", file=out)
        total = sum(imp.imported for imp in imports)
        skipped = sum(len(imp.skipped) for imp in imports)
        print(f"toolproof import: {len(written)} scenario(s) written to {args.out}, {total} call(s) imported, "
              f"{skipped} skipped", file=out)
        if not written:
            print("toolproof: error: no call could be imported, so no scenario was written", file=sys.stderr)
            return EXIT_ERROR
        if args.replay:
            return _replay(args, imports, written, out)
        return EXIT_OK
    except TraceError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        print(f"toolproof: {len(exc.problems)} problem(s) found in the trace(s); nothing was written", file=sys.stderr)
        return EXIT_ERROR
    except HarnessError as exc:
        print(f"toolproof: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
