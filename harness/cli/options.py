"""Options several ``toolproof`` commands share: the scenario selection (``PATHS``, ``-k``,
``--tag``, ``--shard``) and the backend (``--backend``, ``--jobs``), their defaults from
``[tool.toolproof]`` (``harness.cli.config``), and loading the selection."""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Sequence

from harness.backends.registry import BACKEND_CHOICES_TEXT, DEFAULT_BACKEND, DEFAULT_IMPL, IMPL_CHOICES_TEXT
from harness.cli.config import Config, load_config, parse_jobs
from harness.corpus.loader import find_scenario_files, load_corpus
from harness.corpus.selection import select
from harness.corpus.shipped import resolve_all
from harness.errors import EmptySelection, UsageError
from harness.model.scenario import Scenario
from harness.run.deadlines import BASH_GRACE_S, DEFAULT_CALL_TIMEOUT_S

Subparsers = argparse._SubParsersAction  # what ``parser.add_subparsers()`` returns
PATHS_HELP = ("scenario files or directories; toolproof: names the shipped corpus (toolproof:edit, toolproof:pi); "
              "default: paths in [tool.toolproof] of pyproject.toml")


def jobs_value(text: str) -> int:
    """``--jobs`` argument type: a positive integer or ``auto`` (one per CPU)."""
    try:
        return parse_jobs(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--jobs: ")) from None


def add_selection(p: argparse.ArgumentParser, shard: bool = True) -> None:
    p.add_argument("paths", nargs="*", metavar="PATHS", help=PATHS_HELP)
    p.add_argument("-k", dest="keyword", metavar="EXPR",
                   help="keyword expression over id, title and tags, e.g. \"edit and not fuzzy\"")
    p.add_argument("--tag", action="append", default=[], metavar="T", help="only scenarios with tag T (repeatable)")
    if shard:
        p.add_argument("--shard", metavar="I/N", help="run only shard I of N (1-based, deterministic)")


def add_jobs(p: argparse.ArgumentParser) -> None:
    p.add_argument("--jobs", "-j", type=jobs_value, default=None, metavar="N",
                   help="parallel workers: a number or auto (one per CPU); default: jobs in [tool.toolproof], else 1")


def add_impl(p: argparse.ArgumentParser, option: str = "--impl", dest: str = "impl", configured: bool = False) -> None:
    """``--impl``; with ``configured`` its default is left unset (None) for ``apply_config`` to
    fill from ``[tool.toolproof]``, so an explicit ``--impl reference`` is never replaced."""
    where = "impl in [tool.toolproof] of pyproject.toml, else reference" if configured else "reference"
    p.add_argument(option, dest=dest, default=None if configured else DEFAULT_IMPL, metavar="IMPL",
                   help=f"implementation under test: {IMPL_CHOICES_TEXT} (default: {where})")


def positive_seconds(text: str) -> float:
    """An argparse type: a number of seconds > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text}")
    return value


def add_call_timeout(p: argparse.ArgumentParser) -> None:
    p.add_argument("--call-timeout", type=positive_seconds, default=None, metavar="S",
                   help=f"deadline of a call of a tool other than bash, and of an op, unless its step sets timeout: "
                        f"(default: {DEFAULT_CALL_TIMEOUT_S:g}); bash gets its own timeout plus {BASH_GRACE_S:g} s")


def add_backend(p: argparse.ArgumentParser) -> None:
    add_impl(p, configured=True)
    p.add_argument("--backend", default=None,
                   help=f"{BACKEND_CHOICES_TEXT}; default: impl/backend in [tool.toolproof], else {DEFAULT_BACKEND}")
    add_jobs(p)
    add_call_timeout(p)


def apply_config(args: argparse.Namespace, config: Config | None = None) -> Config:
    """Fill what the command line left unset from ``[tool.toolproof]``: ``paths``, ``backend``
    and ``impl`` (when neither option was given; for ``diff``, side a's), ``jobs`` and, for commands with ``--baseline``, the baseline
    (unless ``--no-baseline``). Resolves ``toolproof:`` names. Returns the config used."""
    config = config if config is not None else load_config()
    if hasattr(args, "paths"):
        args.paths = resolve_all(list(args.paths or config.paths))
    if hasattr(args, "backend") and args.backend is None:
        args.backend = config.backend or DEFAULT_BACKEND
        if config.impl and getattr(args, "impl", None) is None:
            args.impl = config.impl
    if getattr(args, "impl", "") is None:  # not given, and not taken from the config
        args.impl = DEFAULT_IMPL
    if hasattr(args, "impl_a"):  # toolproof diff: side a is the configured pair unless named
        if args.backend_a is None:
            args.backend_a = config.backend or DEFAULT_BACKEND
        if args.impl_a is None and config.impl:
            args.impl_a = config.impl
    if hasattr(args, "jobs") and args.jobs is None:
        args.jobs = config.jobs or 1
    if hasattr(args, "baseline"):
        if getattr(args, "no_baseline", False):
            args.baseline = None
        elif args.baseline is None and config.baseline:
            args.baseline = config.baseline
            args.baseline_from_config = config.path  # the run's summary says where its baseline came from
        if args.baseline:
            args.baseline = resolve_all([args.baseline])[0]
    return config


def load_selection(paths: Sequence[str], keyword: str | None = None, tags: Sequence[str] = (),
                   shard: str | None = None) -> list[Scenario]:
    """The selected scenarios of a corpus (every file validated first). No paths is a
    ``UsageError``; a selection of nothing is ``EmptySelection`` (exit code 5)."""
    if not paths:
        raise UsageError("no scenario paths given (pass PATHS, or set paths in [tool.toolproof] of pyproject.toml)")
    corpus = load_corpus(paths)
    chosen = select(corpus, keyword=keyword, tags=tags, shard=shard)
    if not chosen:
        if not corpus:
            files = find_scenario_files(paths)
            raise EmptySelection(f"no scenarios in {', '.join(paths)} ({len(files)} scenario files)")
        filters = [f for f in (f"-k {keyword!r}" if keyword else "", *(f"--tag {t!r}" for t in tags),
                               f"--shard {shard}" if shard else "") if f]
        raise EmptySelection(f"{' '.join(filters)} selected none of the {len(corpus)} scenarios in {', '.join(paths)}"
                             + unknown_tags_hint(corpus, tags))
    return chosen


def unknown_tags_hint(corpus: Sequence[Scenario], tags: Sequence[str]) -> str:
    """``; no scenario has the tag 'pwshh' (did you mean 'pwsh'?)`` for each ``--tag`` that no
    scenario of ``corpus`` carries, or ""."""
    known = sorted({t for s in corpus for t in s.tags})
    parts = []
    for tag in tags:
        if tag in known:
            continue
        close = difflib.get_close_matches(tag, known, n=1, cutoff=0.6)
        parts.append(f"no scenario has the tag {tag!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return "".join(f"; {p}" for p in parts)
