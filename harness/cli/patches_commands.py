"""``toolproof patches --impl IMPL [--backend B] [--json F] [PATHS]``: per patch toggle, whether an
implementation has the change (present / absent / partial / untested), with the scenarios behind
each verdict (harness.corpus.patch_pins). Exit 0 when the run had no infrastructure errors, 2
otherwise; a verdict is information, not a gate. ``toolproof patches --list [--json F]`` lists
the toggles from the reference's patch registry (layer, description, seams) and runs nothing.

``--impl``: ``reference`` (the local backend), ``upstream`` (the reference server with
``--upstream``), ``pi@VERSION`` (a published pi release through ``ci/pi-setup.sh VERSION``) or any
label together with ``--backend``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TextIO

from harness.backends.registry import backend_factory
from harness.cli.options import Subparsers
from harness.corpus.loader import load_corpus
from harness.corpus.patch_pins import pinned, render_catalogue, render_text, verdicts
from harness.errors import UsageError
from harness.model.results import EXIT_ERROR, EXIT_OK
from harness.run.runner import Runner
from harness.run.snapshots import SnapshotStore
from tools_impl.server.patch_catalogue import patch_catalogue

DEFAULT_CORPUS = ("scenarios", "adapters/pi/scenarios")
PI_SETUP = Path("ci") / "pi-setup.sh"


def _write_json(path: str, doc: object) -> None:
    try:
        Path(path).write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc}") from None


def cmd_patches(args: argparse.Namespace, out: TextIO) -> int:
    if args.list:
        if args.impl or args.backend or args.paths:
            raise UsageError("patches --list lists the toggles and runs nothing: it takes no --impl, --backend or PATH")
        entries = patch_catalogue()
        out.write(render_catalogue(entries))
        if args.json:
            _write_json(args.json, {"patches": [e.to_json() for e in entries]})
        return EXIT_OK
    if not args.impl:
        raise UsageError("patches needs --impl IMPL (or --list)")
    paths = args.paths or [p for p in DEFAULT_CORPUS if Path(p).is_dir()]
    if not paths:
        raise UsageError("no scenario paths given and no scenarios/ directory here")
    scenarios = pinned(load_corpus(paths))
    factory, label = backend_factory(args.backend or "local", args.impl)
    store = SnapshotStore(SnapshotStore.default_root())
    run = Runner(factory, jobs=args.jobs, backend_label=label, snapshot_factory=store.hook_for).run(scenarios)
    found = verdicts(scenarios, run)
    out.write(render_text(found, args.impl))
    if args.json:
        _write_json(args.json, {"impl": args.impl, "backend": label, "patches": [v.to_json() for v in found]})
    errors = [r.id for r in run.scenarios if r.status == "error"]
    if errors:
        out.write(f"toolproof: {len(errors)} scenario(s) could not run: {', '.join(errors[:5])}\n")
        return EXIT_ERROR
    return EXIT_OK


def register_cli(subparsers: Subparsers) -> None:
    """Add the ``patches`` subcommand (``func=cmd_patches``, called as ``func(args, out)``)."""
    p = subparsers.add_parser(
        "patches", help="which patch toggles an implementation has (present/absent/partial/untested)",
        description="Run the scenarios that pin a patch state (patches: {name: on|off}) and give a verdict per patch.")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="scenario files or directories (default: scenarios/ and adapters/pi/scenarios/)")
    p.add_argument("--impl", metavar="IMPL", help="reference | upstream | pi@VERSION | a label (with --backend)")
    p.add_argument("--list", action="store_true",
                   help="list the patch toggles (layer, description, seams) from the reference's registry; run nothing")
    p.add_argument("--backend", metavar="B", help="backend for the implementation (overrides what --impl implies)")
    p.add_argument("--jobs", "-j", type=int, default=2, metavar="N", help="parallel workers (default 2)")
    p.add_argument("--json", metavar="F", help="write the verdicts (with --list: the toggles) as JSON")
    p.set_defaults(func=cmd_patches)
