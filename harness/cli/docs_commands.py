"""``toolproof docs [TOPIC]``: the documentation that ships with toolproof (``docs/`` and
README.md, package data in a wheel: ``harness.install.shipped``), so a user without a checkout can
read what every message and scaffolded comment cites. Without a topic it lists the topics with
their paths; ``toolproof docs cli`` prints docs/cli.md, ``--path`` only its path."""

from __future__ import annotations

import argparse
import difflib
from pathlib import Path
from typing import TextIO

from harness.cli.options import Subparsers
from harness.errors import UsageError
from harness.install.shipped import shipped_root
from harness.model.results import EXIT_OK

DOCS_DIR = "docs"
README = "README.md"
README_TOPIC = "readme"
# the topics a new user needs first, listed before the rest
FIRST = ("readme", "cli", "scenario-format", "docker", "matrix", "importers", "pi-adapter", "spec/README")


def topics(root: Path | None = None) -> dict[str, Path]:
    """Topic → file: ``readme``, and every Markdown file under ``docs/`` by its path there
    without ``.md`` (``cli``, ``spec/edit``)."""
    base = root or shipped_root()
    found: dict[str, Path] = {}
    if (base / README).is_file():
        found[README_TOPIC] = base / README
    docs = base / DOCS_DIR
    for path in sorted(docs.rglob("*.md")) if docs.is_dir() else ():
        found[path.relative_to(docs).with_suffix("").as_posix()] = path
    order = {name: i for i, name in enumerate(FIRST)}
    return dict(sorted(found.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))


def find_topic(name: str, available: dict[str, Path]) -> Path:
    key = name.strip().removesuffix(".md").removeprefix("docs/").strip("/")
    if key.lower() in (README_TOPIC, README.lower().removesuffix(".md")):
        key = README_TOPIC
    if key in available:
        return available[key]
    close = difflib.get_close_matches(key, list(available), n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise UsageError(f"docs: no topic {name!r}{hint}; `toolproof docs` lists them")


def cmd_docs(args: argparse.Namespace, out: TextIO) -> int:
    available = topics()
    if not available:
        raise UsageError(f"docs: the documentation is not installed (looked in {shipped_root()}); reinstall toolproof")
    if not args.topic:
        width = max(len(t) for t in available)
        print("toolproof docs TOPIC prints one of these (--path: where it is):", file=out)
        for name, path in available.items():
            print(f"  {name:<{width}}  {path}", file=out)
        return EXIT_OK
    path = find_topic(args.topic, available)
    if args.path:
        print(path, file=out)
        return EXIT_OK
    out.write(path.read_text(encoding="utf-8"))
    return EXIT_OK


def register_cli(subparsers: Subparsers) -> None:
    """Add ``docs``."""
    p = subparsers.add_parser(
        "docs", help="read the documentation shipped with toolproof (cli, scenario-format, docker, spec/…)",
        description="Print a page of the documentation that ships with toolproof (the docs/ folder and the "
                    "README, installed with the package). Without TOPIC, list the topics and their paths.")
    p.add_argument("topic", nargs="?", metavar="TOPIC", help="e.g. cli, scenario-format, docker, spec/edit, readme")
    p.add_argument("--path", action="store_true", help="print the file's path instead of its text")
    p.set_defaults(func=cmd_docs)
