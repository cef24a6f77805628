"""Options several ``toolproof`` commands share: the scenario selection (``PATHS``, ``-k``,
``--tag``, ``--shard``) and the backend (``--backend``, ``--jobs``), and loading the selection."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from harness.backends.registry import BACKEND_CHOICES_TEXT, DEFAULT_BACKEND
from harness.corpus.loader import load_corpus
from harness.corpus.selection import select
from harness.errors import UsageError
from harness.model.scenario import Scenario

Subparsers = argparse._SubParsersAction  # what ``parser.add_subparsers()`` returns


def add_selection(p: argparse.ArgumentParser, shard: bool = True) -> None:
    p.add_argument("paths", nargs="+", metavar="PATHS", help="scenario files or directories")
    p.add_argument("-k", dest="keyword", metavar="EXPR", help="keyword expression over id, title and tags")
    p.add_argument("--tag", action="append", default=[], metavar="T", help="only scenarios with tag T (repeatable)")
    if shard:
        p.add_argument("--shard", metavar="I/N", help="run only shard I of N (deterministic)")


def add_backend(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", default=DEFAULT_BACKEND, help=f"{BACKEND_CHOICES_TEXT} (default: local)")
    p.add_argument("--jobs", "-j", type=int, default=1, metavar="N", help="parallel workers")


def load_selection(paths: Sequence[str], keyword: str | None = None, tags: Sequence[str] = (),
                   shard: str | None = None) -> list[Scenario]:
    """The selected scenarios of a corpus (every file validated first)."""
    if not paths:
        raise UsageError("no scenario paths given")
    return select(load_corpus(paths), keyword=keyword, tags=tags, shard=shard)
