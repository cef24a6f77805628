"""``toolproof fuzz``: differential fuzzing of two implementations (docs/cli.md)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from harness.corpus.scenario_writer import dump_scenario
from harness.errors import UsageError
from harness.fuzz.cases import TOOLS
from harness.fuzz.differential import Disagreement, DisagreementClass, FuzzReport, run_fuzz
from harness.fuzz.execute import Observed
from harness.fuzz.impls import IMPL_HELP, resolve_impl
from harness.model.results import EXIT_FAIL, EXIT_OK
from harness.report.writers import write_output

DEFAULT_N = 1000
PROGRESS_EVERY = 250
SHOW_CHARS = 400


def _pct(agreed: int, total: int) -> str:
    return f"{100.0 * agreed / total:.2f}%" if total else "n/a"


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SHOW_CHARS else text[:SHOW_CHARS] + f"… ({len(text)} chars)"


def _side(o: Observed, aspects: list[str]) -> dict[str, Any]:
    full = o.aspects()
    names = {a.split(":")[0] for a in aspects} | {"status", "message"}
    out = {k: v for k, v in full.items() if k in names}
    wanted = [a.split(":", 1)[1] for a in aspects if a.startswith("files:")]
    if wanted:
        tree = o.tree or {}
        out["files"] = {p: tree.get(p, "absent") for p in wanted}
    return out


def scenario_text(d: Disagreement, r: FuzzReport) -> str:
    """A disagreement as scenario YAML that expects what the oracle answered."""
    comment = (f"Disagreement found by `toolproof fuzz --impl {r.impl} --oracle {r.oracle} --seed {r.seed} "
               f"--case {d.case.index}`:\n{', '.join(d.aspects)} differ; the expectations are {r.oracle}'s answer.")
    return dump_scenario(d.scenario(r.oracle, r.seed), comment)


def class_json(cls: DisagreementClass) -> dict[str, Any]:
    ex = cls.shrunk or cls.example
    out: dict[str, Any] = {"class": cls.key, "tool": cls.tool, "count": cls.count, "flaky": cls.flaky,
                           "aspects": cls.aspects, "cases": cls.indexes}
    if ex is not None:
        out["example"] = {"case": ex.case.to_json(), "shrunk": cls.shrunk is not None,
                          "impl": _side(ex.a, ex.aspects), "oracle": _side(ex.b, ex.aspects)}
    return out


def per_tool_json(r: FuzzReport) -> dict[str, Any]:
    return {t: {"agreed": a, "total": n, "share_percent": round(100.0 * n / r.total, 2) if r.total else 0.0}
            for t, (a, n) in r.per_tool.items()}


def report_json(r: FuzzReport) -> dict[str, Any]:
    classes = sorted(r.classes.values(), key=lambda c: -c.count)
    return {
        "impl": r.impl, "oracle": r.oracle, "seed": r.seed, "n": r.n, "agreed": r.agreed, "total": r.total,
        "agreement_percent": round(r.agreement, 3), "seconds": round(r.seconds, 1),
        "calls_per_second": round(r.rate, 1), "failing": r.failing, "no_answer": r.no_answer,
        "per_tool": per_tool_json(r),
        "classes": [class_json(c) for c in classes],
        "changes": [{"change": key, "count": calls, "classes": [classes[n - 1].key for n in numbers]}
                    for key, calls, numbers in change_groups(classes)],
    }


def change_groups(classes: list[DisagreementClass]) -> list[tuple[str, int, list[int]]]:
    """Classes that differ only in their input family, merged: one line per behaviour change.
    Each group is (tool | aspects | status, calls, the 1-based numbers of its classes), largest
    first; a class is numbered by its place in ``classes``."""
    groups: dict[str, tuple[int, list[int]]] = {}
    for number, cls in enumerate(classes, 1):
        parts = cls.key.split(" | ")
        key = " | ".join(parts[:1] + parts[2:])
        calls, numbers = groups.get(key, (0, []))
        groups[key] = (calls + cls.count, [*numbers, number])
    return sorted(((k, c, ns) for k, (c, ns) in groups.items()), key=lambda g: (-g[1], g[2][0]))


def summary_lines(r: FuzzReport) -> list[str]:
    lines = [f"toolproof fuzz: {r.impl} vs {r.oracle}, seed {r.seed}, {r.total} calls in {r.seconds:.0f} s "
             f"({r.rate:.1f} calls/s)",
             f"agreement {r.agreed}/{r.total} = {_pct(r.agreed, r.total)}"
             + (f"; {r.no_answer} call(s) without an answer (counted as disagreements)" if r.no_answer else "")]
    for tool, (a, n) in r.per_tool.items():
        if n:
            lines.append(f"  {tool:6} {a}/{n} = {_pct(a, n)}  ({_pct(n, r.total)} of the calls)")
    classes = sorted(r.classes.values(), key=lambda c: -c.count)
    if classes:
        groups = change_groups(classes)
        lines.append(f"changes ({len(groups)}; the classes below merged across input families):")
        for key, calls, numbers in groups:
            lines.append(f"  {key}  — {calls} call(s) in class(es) {', '.join(map(str, numbers))}")
        lines.append(f"disagreement classes ({len(classes)}):")
    for k, cls in enumerate(classes, 1):
        flaky = f", {cls.flaky} flaky" if cls.flaky else ""
        lines.append(f"[{k}] {cls.key}  — {cls.count} call(s){flaky}; cases {', '.join(map(str, cls.indexes))}")
        ex = cls.shrunk or cls.example
        if ex is None:
            continue
        lines.append(f"    call: {ex.case.tool} {_short(ex.case.args)}")
        if ex.case.files:
            lines.append(f"    files: {_short(ex.case.to_json()['files'])}")
        lines.append(f"    {r.impl}: {_short(_side(ex.a, ex.aspects))}")
        lines.append(f"    {r.oracle}: {_short(_side(ex.b, ex.aspects))}")
    return lines


def markdown(r: FuzzReport) -> str:
    out = [f"# Differential fuzzing: {r.impl} vs {r.oracle}", "",
           f"Seed {r.seed}, {r.total} calls ({r.rate:.1f} calls/s): "
           f"**agreement {r.agreed}/{r.total} = {_pct(r.agreed, r.total)}**", "",
           "| tool | agreed | calls | share of calls | agreement |", "| --- | ---: | ---: | ---: | ---: |"]
    for tool, (a, n) in r.per_tool.items():
        out.append(f"| {tool} | {a} | {n} | {_pct(n, r.total)} | {_pct(a, n)} |")
    classes = sorted(r.classes.values(), key=lambda c: -c.count)
    if classes:
        out += ["", "## Changes (classes merged across input families)", "", "| change | calls | classes |",
                "| --- | ---: | --- |"]
        for key, calls, numbers in change_groups(classes):
            out.append(f"| {key.replace('|', chr(92) + '|')} | {calls} | {', '.join(map(str, numbers))} |")
        out += ["", "## Disagreement classes", "", "| # | class | calls | flaky | example case |",
                "| ---: | --- | ---: | ---: | --- |"]
        for k, cls in enumerate(classes, 1):
            key = cls.key.replace("|", "\\|")
            out.append(f"| {k} | {key} | {cls.count} | {cls.flaky} | {cls.indexes[0] if cls.indexes else ''} |")
        for k, cls in enumerate(classes, 1):
            ex = cls.shrunk or cls.example
            if ex is None:
                continue
            out += ["", f"### [{k}] {cls.key}", "", "```json",
                    json.dumps(class_json(cls)["example"], ensure_ascii=False, indent=2)[:4000], "```"]
    return "\n".join(out) + "\n"


def cmd_fuzz(args: argparse.Namespace, out: TextIO) -> int:

    if args.n < 1:
        raise UsageError("--n must be at least 1")
    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    tools = tuple(args.tool) if args.tool else TOOLS
    unknown = [t for t in tools if t not in TOOLS]
    if unknown:
        raise UsageError(f"--tool {unknown[0]!r}: expected one of {', '.join(TOOLS)}")
    impl = resolve_impl(args.impl, args.backend)
    oracle = resolve_impl(args.oracle, args.oracle_backend or "local")
    t0 = time.monotonic()
    every = max(1, min(PROGRESS_EVERY, args.n // 10 or 1))

    def progress(done: int, rep: FuzzReport) -> None:
        if not args.quiet and (done % every == 0 or done == args.n):
            rate = done / max(time.monotonic() - t0, 1e-6)
            print(f"fuzz: {done}/{args.n} calls, {rep.total - rep.agreed} disagreeing, "
                  f"{rate:.0f} calls/s", file=sys.stderr, flush=True)

    only = [int(x) for x in args.case] if args.case else None
    report = run_fuzz(impl, oracle, args.n, args.seed, tools=tools, progress=progress,
                      shrink_examples=not args.no_shrink, only=only, jobs=args.jobs)
    for line in summary_lines(report):
        print(line, file=out)
    if args.json:
        write_output(args.json, json.dumps(report_json(report), ensure_ascii=False, indent=2) + "\n", "fuzz report")
    if args.markdown:
        write_output(args.markdown, markdown(report), "fuzz summary")
    if args.save:
        save_scenarios(report, Path(args.save), out)
    if args.min_agreement is not None:
        if report.agreement < args.min_agreement:
            print(f"toolproof fuzz: agreement {report.agreement:.2f}% is below --min-agreement "
                  f"{args.min_agreement:g}%", file=out)
            return EXIT_FAIL
        return EXIT_OK
    if report.failing:
        print(f"toolproof fuzz: {report.failing} call(s) disagree (not flaky); "
              "--min-agreement P accepts an agreement of at least P percent instead", file=out)
        return EXIT_FAIL
    return EXIT_OK


def save_scenarios(r: FuzzReport, directory: Path, out: TextIO) -> None:
    """One scenario file per disagreement class (its shrunk example), named after the case."""
    written = 0
    for cls in sorted(r.classes.values(), key=lambda c: -c.count):
        ex = cls.shrunk or cls.example
        if ex is None:
            continue
        scenario = ex.scenario(r.oracle, r.seed)
        path = directory / (scenario.id.rsplit("/", 1)[-1] + ".yaml")
        try:
            directory.mkdir(parents=True, exist_ok=True)
            path.write_text(scenario_text(ex, r), encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--save {directory}: cannot write {path.name}: {exc.strerror or exc}") from None
        written += 1
    print(f"toolproof fuzz: wrote {written} scenario(s) to {directory}", file=out)


def register_cli(sub: Any) -> None:
    p = sub.add_parser("fuzz", help="differential fuzzing of two implementations on generated calls")
    p.add_argument("--impl", required=True, metavar="IMPL", help=f"the implementation under test: {IMPL_HELP}")
    p.add_argument("--oracle", required=True, metavar="IMPL", help=f"the implementation to agree with: {IMPL_HELP}")
    p.add_argument("--backend", default="local", help="where --impl runs: local | docker[:IMAGE] (default: local)")
    p.add_argument("--oracle-backend", default=None, metavar="B", help="where --oracle runs (default: local)")
    p.add_argument("--n", type=int, default=DEFAULT_N, metavar="N", help=f"number of calls (default {DEFAULT_N})")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="generator seed (default 0); same seed, same calls")
    p.add_argument("--jobs", "-j", type=int, default=1, metavar="J",
                   help="run J pairs of implementations side by side (the report does not depend on J)")
    p.add_argument("--tool", action="append", default=[], metavar="T", help="only this tool (repeatable)")
    p.add_argument("--case", action="append", default=[], metavar="I", help="re-run only case I of the seed (repeatable)")
    p.add_argument("--min-agreement", type=float, default=None, metavar="P",
                   help="exit 1 only when the agreement is below P percent (default: exit 1 on any disagreement "
                        "a re-run did not resolve)")
    p.add_argument("--save", metavar="DIR",
                   help="write each disagreement class's example as a scenario expecting the oracle's answer")
    p.add_argument("--no-shrink", action="store_true", help="keep the first example of each class as found")
    p.add_argument("--json", metavar="F", help="write the full report as JSON")
    p.add_argument("--markdown", metavar="F", help="write a Markdown summary")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=cmd_fuzz)
