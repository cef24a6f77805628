"""``python -m benchmarks``: one run, one table (figures and ratios), the machine described.

    python -m benchmarks                  # the full run (several minutes)
    python -m benchmarks --smoke          # small n and sizes, seconds; what CI runs (no thresholds)
    python -m benchmarks --json out.json  # also write every row as JSON

Ratios are reference / other: below 1 the reference is faster. The targets are those of the
README's "Performance" section; a missed target is marked, never hidden.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from benchmarks.fixtures import CLASS_LABELS
from benchmarks.fuzz_rate import fuzz_rows
from benchmarks.servers import (
    BenchError,
    ToolServer,
    find_fd,
    pi_is_cached,
    pi_spec,
    reference_spec,
)
from benchmarks.suite import (
    CONTENT_SECTION,
    Row,
    Settings,
    default_workdir,
    machine_description,
    rows_json,
    run_all,
)
from benchmarks.throughput import throughput_section
from tools_impl.search.ripgrep import RG_BINARIES

DEFAULT_PI_VERSION = "0.79.1"
SECTIONS = ("per-call", "edit-size", "content", "growth", "rg", "corpus", "docker", "throughput", "fuzz")


def _version(argv: Sequence[str]) -> str:
    try:
        out = subprocess.run(list(argv), capture_output=True, text=True, timeout=20, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unavailable"
    return out.strip().splitlines()[0] if out.strip() else "unavailable"


def _target_cell(row: Row) -> str:
    if row.data.get("answers_differ"):
        return f"answers differ: {row.data['answers_differ']} (MISSED)"
    if "min_target" in row.data:
        mark = "met" if row.data["min_met"] else "MISSED"
        return f"≥ {row.data['min_target']:g} {row.data['min_unit']} ({mark})"
    if "value_target" in row.data:
        mark = "met" if row.data["value_met"] else "MISSED"
        return f"≤ {row.data['value_target']:g} {row.data['value_unit']} ({mark})"
    if "exponent_target" in row.data:
        mark = "met" if row.data["exponent_met"] else "MISSED"
        return f"≤ {row.data['exponent_target']:.2f} ({mark})"
    if row.target is None:
        return ""
    return f"≤ {row.target:g} ({'met' if row.met else 'MISSED'})"


def render_table(rows: Sequence[Row], other_label: str) -> str:
    header = f"| section | measurement | reference | {other_label} / other | ratio | target |"
    out = [header, "|---|---|---|---|---|---|"]
    for r in rows:
        ratio = "" if r.ratio is None else f"{r.ratio:.2f}"
        out.append(f"| {r.section} | {r.label} | {r.reference} | {r.other} | {ratio} | {_target_cell(r)} |")
    return "\n".join(out)


CONTENT_TOOLS = ("read", "write", "edit")


def _content_cell(row: Row) -> str:
    data = row.data
    if "other" not in data:
        return f"{data['reference']['median_ms']:.3g} ms"
    cell = f"{row.ratio:.2f} ({data['reference']['median_ms']:.3g} / {data['other']['median_ms']:.3g})"
    if data.get("answers_differ"):
        return f"{cell} **answers differ: {data['answers_differ']}**"
    return cell + (" **✗**" if row.met is False else "")


def render_content(rows: Sequence[Row], other_label: str) -> str:
    """The ``content`` rows as one matrix per tool: a line per content class (and read or edit
    position), a column per file size; each cell is the ratio and both medians in ms."""
    rows = [r for r in rows if r.section == CONTENT_SECTION]
    if not rows:
        return ""
    sizes = list(dict.fromkeys(r.data["size"] for r in rows))
    headers = list(dict.fromkeys(r.data["size_label"] for r in rows))
    out = [f"Content classes: ratio reference / {other_label} (reference ms / {other_label} ms); "
           "**✗** a missed target (read and write ≤ 0.5; edit ≤ 1.0, and ≤ 0.5 from 1 MB on); "
           "every cell's answers (text, details, bytes written) were equal unless it says otherwise."]
    for tool in CONTENT_TOOLS:
        mine = [r for r in rows if r.data["tool"] == tool]
        if not mine:
            continue
        out += ["", f"| {tool} | where | " + " | ".join(headers) + " |", "|---|---|" + "---|" * len(sizes)]
        lines: dict[tuple[str, str], dict[str, Row]] = {}
        for r in mine:
            lines.setdefault((r.data["class"], r.data["position"]), {})[r.data["size"]] = r
        for (cls, pos), cells in lines.items():
            shown = [_content_cell(cells[size]) if size in cells else "" for size in sizes]
            out.append(f"| {CLASS_LABELS[cls]} | {pos or 'whole file'} | " + " | ".join(shown) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="small n and sizes (seconds); no thresholds")
    parser.add_argument("--pi", default=DEFAULT_PI_VERSION, metavar="VERSION",
                        help=f"pi release to compare with (default {DEFAULT_PI_VERSION}; installed by ci/pi-setup.sh)")
    parser.add_argument("--no-pi", action="store_true", help="measure the reference alone")
    parser.add_argument("--sections", default=",".join(SECTIONS),
                        help=f"comma-separated subset of {','.join(SECTIONS)} (default: all)")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    parser.add_argument("--workdir", metavar="DIR", default=None,
                        help="where to create the workspaces (default: /dev/shm when writable, else the temp dir)")
    parser.add_argument("--corpus-timeout", type=float, default=None, metavar="SECONDS",
                        help="stop one corpus run (and the docker script) after this long; the row says so "
                             "(default 1800)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = parser.parse_args(argv)
    sections = [s for s in args.sections.split(",") if s]
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        parser.error(f"unknown section(s) {', '.join(unknown)}; expected some of {', '.join(SECTIONS)}")
    settings = Settings.for_smoke() if args.smoke else Settings()
    if args.corpus_timeout is not None:
        settings = dataclasses.replace(settings, corpus_timeout_s=args.corpus_timeout)

    def progress(message: str) -> None:
        if not args.quiet:
            print(f"[bench] {message}", file=sys.stderr, flush=True)

    rg_binary = RG_BINARIES.resolve(None, os.environ.get("PATH", ""))
    fd_binary, fd_note = find_fd()
    other_label = f"pi {args.pi}"
    other_missing = ""
    servers: list[ToolServer] = []
    try:
        reference = ToolServer(reference_spec())
        servers.append(reference)
        other: ToolServer | None = None
        if args.no_pi:
            other_missing = "not measured (--no-pi)"
        elif args.smoke and not pi_is_cached(args.pi) and not os.environ.get("TOOLPROOF_PI_DIR"):
            other_missing = f"not measured (pi {args.pi} not installed: bash ci/pi-setup.sh {args.pi})"
        else:
            progress(f"starting pi {args.pi}")
            other = ToolServer(pi_spec(args.pi, rg_binary, fd_binary))
            servers.append(other)
        machine = machine_description()
        machine["reference"] = "python -m tools_impl.server --upstream"
        if other is not None:
            machine[other_label] = f"adapters/pi/driver.mjs on node {_version([other.spec.argv[0], '--version'])}"
        machine["rg"] = _version([rg_binary, "--version"])
        machine["fd"] = _version([fd_binary, "--version"]) if fd_binary else f"{fd_note} (glob has no pi figure)"
        workdir = args.workdir or default_workdir()
        machine["workspaces"] = f"under {workdir or tempfile.gettempdir()}"
        rows = run_all(settings, reference, other, other_missing, rg_binary, fd_note, progress, sections, workdir)
        if "throughput" in sections:
            rows.extend(throughput_section(settings, progress))
        if "fuzz" in sections:  # fuzz's own implementations (benchmarks/fuzz_rate.py)
            rows += fuzz_rows(settings.smoke, None if other is None else args.pi, progress)
    except BenchError as exc:
        print(f"benchmarks: {exc}", file=sys.stderr)
        return 2
    finally:
        for server in servers:
            server.close()
    command = "python -m benchmarks" + (" --smoke" if args.smoke else "") + (
        f" --sections {args.sections}" if args.sections != ",".join(SECTIONS) else "")
    print(f"toolproof benchmarks: `{command}`")
    for key, value in machine.items():
        print(f"- {key}: {value}")
    print()
    print(render_table([r for r in rows if r.section != CONTENT_SECTION], other_label))
    content = render_content(rows, other_label)
    if content:
        print()
        print(content)
    missed = [r for r in rows if r.met is False or r.data.get("exponent_met") is False
              or r.data.get("value_met") is False or r.data.get("min_met") is False]
    print()
    targets = [r for r in rows if r.met is not None or "exponent_met" in r.data or "value_met" in r.data
               or "min_met" in r.data]
    print(f"targets: {len(targets) - len(missed)} of {len(targets)} met"
          + (f"; missed: {', '.join(r.id for r in missed)}" if missed else ""))
    if args.json:
        Path(args.json).write_text(rows_json(rows) + "\n", encoding="utf-8")
    return 0
