"""``toolproof properties``: property-based checks of one implementation (docs/cli.md)."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any, TextIO

from harness.errors import UsageError
from harness.fuzz.impls import IMPL_HELP, resolve_impl
from harness.install.shipped import resolve
from harness.model.results import EXIT_FAIL, EXIT_OK
from harness.properties.baseline import (
    apply_properties_baseline,
    check_implementation,
    load_properties_baseline,
)
from harness.properties.invariants import INVARIANTS, Invariant
from harness.properties.runner import ERROR, FAIL, PATCH_ABSENT, STALE, XFAIL, PropertyResult, check_invariant
from harness.report.baseline import Baseline
from harness.report.writers import write_output

DEFAULT_EXAMPLES = 50
MAX_SHOWN_LINES = 60  # a counterexample longer than this is shown cut, see shown_yaml
HEAD_LINES = 40
WORDS = {"pass": "PASS", "fail": "FAIL", "stale": "STALE", "patch-absent": "XFAIL", "xfail": "XFAIL", "n/a": "N/A",
         "error": "ERROR"}


def shown_yaml(text: str, written: Path | None = None) -> str:
    """A counterexample scenario as printed: whole up to ``MAX_SHOWN_LINES`` lines; a longer one
    (a bash output past the 2000-line limit expected in full) is cut after ``HEAD_LINES`` with a
    line saying how much is left out and where the whole of it is (``--save``)."""
    lines = text.rstrip("\n").split("\n")
    if len(lines) <= MAX_SHOWN_LINES:
        return text
    where = f"the whole scenario is in {written}" if written is not None else "--save DIR writes the whole scenario"
    return "\n".join([*lines[:HEAD_LINES], f"# … {len(lines) - HEAD_LINES} more lines not shown ({where})"]) + "\n"


def select(names: list[str]) -> list[Invariant]:
    if not names:
        return list(INVARIANTS)
    known = {i.name: i for i in INVARIANTS}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(f"--only {unknown[0]!r}: unknown invariant; expected one of {', '.join(known)}")
    return [known[n] for n in names]


def run_properties(impl_spec: str, backend: str = "local", *, examples: int = DEFAULT_EXAMPLES, seed: int = 0,
                   only: list[str] | None = None, out: TextIO | None = None,
                   baseline: Baseline | None = None) -> tuple[str, list[PropertyResult]]:
    """Check the invariants (``only`` these) of ``impl_spec`` on ``backend``, printing one line
    each on ``out``; with ``baseline`` (for the implementation ``hello`` names), listed failures are
    xfail and listed invariants that hold are stale."""
    impl = resolve_impl(impl_spec, backend)
    be = impl.factory()
    results: list[PropertyResult] = []
    try:
        hello = impl.effective_hello(be.start())
        if baseline is not None:
            check_implementation(baseline, hello.implementation)
        for inv in select(only or []):
            t0 = time.monotonic()
            res = check_invariant(inv, be, hello, impl.label, examples=examples, seed=seed, profile=impl.profile)
            if baseline is not None:
                (res,) = apply_properties_baseline([res], baseline)
            results.append(res)
            if out is not None:
                extra = f" — {res.reason}" if res.reason else ""
                print(f"{WORDS[res.status]:5} {inv.name} (spec {inv.rule}; {res.examples} examples, "
                      f"{time.monotonic() - t0:.1f} s){extra}", file=out, flush=True)
    finally:
        be.close()
    return impl.label, results


def cmd_properties(args: argparse.Namespace, out: TextIO) -> int:

    if args.examples < 1:
        raise UsageError("--examples must be at least 1")
    save = Path(args.save) if args.save else None
    if save is not None and save.exists() and not save.is_dir():
        raise UsageError(f"--save {args.save}: not a directory")
    baseline = load_properties_baseline(resolve(args.baseline)) if args.baseline else None
    label, results = run_properties(args.impl, args.backend, examples=args.examples, seed=args.seed,
                                    only=args.only, out=out, baseline=baseline)
    for res in results:
        if res.status not in (FAIL, PATCH_ABSENT, XFAIL) or not res.yaml:
            continue
        print(f"\n{WORDS[res.status]} {res.invariant.name}: shrunk counterexample as a scenario:", file=out)
        written = None
        if save is not None:
            os.makedirs(save, exist_ok=True)
            name = res.yaml.split("\nid: properties/", 1)[1].split("\n", 1)[0] + ".yaml"
            target = save / name
            if target.exists() and not args.force:
                print(f"toolproof: {target} exists; not overwritten (pass --force)", file=out)
            else:
                write_output(str(target), res.yaml, "scenario")
                written = target
        print(shown_yaml(res.yaml, written), file=out)
        if written is not None:
            print(f"toolproof: wrote {written}", file=out)
    counts: dict[str, int] = {}
    by_word: dict[str, int] = {}
    for res in results:
        counts[res.status] = counts.get(res.status, 0) + 1
        by_word[WORDS[res.status]] = by_word.get(WORDS[res.status], 0) + 1
    summary = ", ".join(f"{n} {word.lower()}" for word, n in sorted(
        by_word.items(), key=lambda kv: list(WORDS.values()).index(kv[0])))
    print(f"toolproof properties [{label}]: {summary} (seed {args.seed}, up to {args.examples} examples each)", file=out)
    return EXIT_FAIL if counts.get(FAIL) or counts.get(ERROR) or counts.get(STALE) else EXIT_OK


def register_cli(sub: Any) -> None:
    p = sub.add_parser("properties", help="property-based checks of an implementation through the protocol")
    p.add_argument("--impl", required=True, metavar="IMPL", help=f"the implementation under test: {IMPL_HELP}")
    p.add_argument("--backend", default="local", help="local | docker[:IMAGE] (default: local)")
    p.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES, metavar="N",
                   help=f"examples per invariant (default {DEFAULT_EXAMPLES})")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="Hypothesis seed (default 0)")
    p.add_argument("--only", action="append", default=[], metavar="NAME", help="only this invariant (repeatable)")
    p.add_argument("--save", metavar="DIR", help="write each counterexample scenario into DIR")
    p.add_argument("--force", action="store_true", help="overwrite existing files in --save DIR")
    p.add_argument("--baseline", metavar="FILE",
                   help="expected property failures with reasons (e.g. toolproof:baselines/properties/pi-0.79.1.yaml): "
                        "listed failures are xfail, listed invariants that hold are stale and fail the run")
    p.set_defaults(func=cmd_properties)
