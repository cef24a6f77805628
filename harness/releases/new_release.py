"""``toolproof releases --new``: a new upstream release in one command.

The newest published release is checked against the newest release older than it that has a
baseline (``baselines/pi-X.Y.Z.yaml``, as the one-command gate picks them): the sweep runs over
that interval (so every change between them is bisected and explained), then

- a **draft baseline** for the new release: its failing steps on the corpus, each pinned to its
  mismatch (``baseline update``'s rules). Every entry names where it comes from: an entry whose
  failure is the one the pinned baseline already lists keeps its reason and says it carried over
  unchanged; a new or changed failure gets a ``TODO: review:`` reason naming the change (tool,
  last release without, first release, the changelog entries of the interval or *unlisted*); an
  entry the sweep could not check (its scenario did not run here, e.g. the compatibility run's
  minimax-surface scenarios) is carried over with ``TODO: review: not checked``. Placeholders keep
  the draft honest: the gate warns about unreviewed entries until someone writes the reasons.
- a **pull-request report** (Markdown): the release, the changes, the draft's entries by origin,
  patch survival at the new release, and the commands that reproduce it.

Only scenarios the shipped gate runs count for the draft (those needing pi's own search tools run
in the sweep but not in the gate, ``toolproof run --impl pi@V``).
"""

from __future__ import annotations

import argparse
import dataclasses
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from harness.errors import UsageError
from harness.install.shipped import shipped_root
from harness.model.results import RunInfo, RunResult
from harness.releases.analysis import Change, Report, analyse
from harness.releases.history import HistoryRow, entry_key
from harness.releases.launch import BASE_TOOLS
from harness.releases.sweep import Sweep
from harness.releases.versions import parse_version, published
from harness.report.baseline import (
    PLACEHOLDER_PREFIX,
    Baseline,
    BaselineEntry,
    baseline_header,
    is_placeholder,
    load_baseline,
    update_baseline_from,
)
from harness.report.writers import write_output
from tools_impl.server.patch_catalogue import patch_catalogue

Log = Callable[[str], None]
BASELINE_NAME = re.compile(r"^pi-(\d+\.\d+\.\d+)\.yaml$")
CARRIED = "carried over unchanged from pi-{pinned}"


def pinned_baselines(directory: Path) -> dict[str, Path]:
    """{version: baseline file} of the ``pi-X.Y.Z.yaml`` baselines in ``directory``."""
    out: dict[str, Path] = {}
    for path in sorted(directory.glob("pi-*.yaml")):
        m = BASELINE_NAME.match(path.name)
        if m:
            out[m.group(1)] = path
    return out


def change_reason(change: Change) -> str:
    """What a draft entry says of the change it comes from."""
    where = f"{change.tool} changed between {change.last_release_without} and {change.first_release}"
    if change.between:
        where += f" ({change.between_text()} in between)"
    if change.changelog_entries:
        listed = "; ".join(f"{e.version}: {e.summary[:120]} ({entry_key(e)})" for e in change.changelog_entries[:2])
        return f"{where}; changelog: {listed}"
    return f"{where}; unlisted: no changelog entry of the interval explains it"


def changes_by_scenario(report: Report) -> dict[str, Change]:
    """The latest change each scenario took part in."""
    out: dict[str, Change] = {}
    for c in report.changes:
        for s in c.scenarios:
            out[s.scenario] = c
    return out


def annotate(entries: Sequence[BaselineEntry], old: Baseline, report: Report, pinned: str, newest: str,
             ran: set[str]) -> tuple[BaselineEntry, ...]:
    """Every entry of the draft says where it comes from (see the module docstring)."""
    changes = changes_by_scenario(report)
    old_keys = {(e.id, e.step): e for e in old.entries}
    out = []
    for e in entries:
        change = changes.get(e.id)
        if e.id not in ran:
            reason = e.reason if is_placeholder(e.reason) else \
                f"{PLACEHOLDER_PREFIX}: review: not checked by releases --new (its scenario did not run in the sweep); " \
                f"{CARRIED.format(pinned=pinned)}: {e.reason}"
        elif (e.id, e.step) in old_keys and old_keys[(e.id, e.step)] == e and not is_placeholder(e.reason):
            reason = f"{e.reason} ({CARRIED.format(pinned=pinned)}: the same failure at {newest})"
        elif change is not None:
            reason = f"{PLACEHOLDER_PREFIX}: review: {change.id}: {change_reason(change)}"
        else:
            reason = (f"{PLACEHOLDER_PREFIX}: review: fails at {newest} and failed at {pinned} too, but "
                      f"pi-{pinned}.yaml does not list it (a scenario new to the corpus?)")
        out.append(dataclasses.replace(e, reason=reason))
    return tuple(out)


def gate_scenarios(report: Report) -> set[str]:
    """The scenarios the shipped gate runs (the driver's default tools)."""
    return {sid for sid, info in report.state.scenarios.items() if set(info.tools) <= set(BASE_TOOLS)}


def draft_baseline(report: Report, old: Baseline, pinned: str, newest: str) -> Baseline:
    runs = report.state.outcomes.get(newest, {})
    gate = gate_scenarios(report)
    results = tuple(o.to_result(sid, report.state.scenarios[sid].path) for sid, o in sorted(runs.items())
                    if sid in gate and sid in report.state.scenarios)
    run = RunResult(RunInfo(implementation=old.implementation, version=newest), results)
    new, _warnings = update_baseline_from([run], old, implementation=old.implementation, version=newest)
    ran = {r.id for r in results if r.status not in ("skip", "error")}
    return dataclasses.replace(new, entries=annotate(new.entries, old, report, pinned, newest, ran), path="")


def draft_text(baseline: Baseline, pinned: str, newest: str) -> str:
    head = (f"# DRAFT written by `toolproof releases --new`: the known failures of pi {newest} on the shipped corpus,\n"
            f"# from the sweep {pinned}..{newest}. Each entry says where it comes from; replace every TODO reason\n"
            f"# (`toolproof validate --baseline F` lists them), run the compatibility run of docs/pi-adapter.md,\n"
            f"# then `toolproof run --impl pi@{newest}`.\n")
    return head + baseline.dumps()


def pr_report(report: Report, baseline: Baseline, pinned: str, newest: str, draft_path: str) -> str:
    entries = baseline.entries
    carried = [e for e in entries if not is_placeholder(e.reason)]
    changed = [e for e in entries if is_placeholder(e.reason) and "not checked" not in e.reason]
    unchecked = [e for e in entries if "not checked" in e.reason]
    out = [f"## pi {newest} (previous pinned release: {pinned})", ""]
    releases = [r for r in report.releases if parse_version(pinned) < parse_version(r.version)]
    out.append("Releases since the pinned one: " + ", ".join(
        f"{r.version}{'' if r.usable else ' (' + r.state + ')'}" for r in releases) + ".")
    out += ["", "### Behaviour changes", ""]
    if not report.changes:
        out.append("None observed by the corpus or the fuzzer.")
    for c in report.changes:
        scen = ", ".join(sorted({f"`{s.scenario}`" for s in c.scenarios})) or "—"
        fuzz = ", ".join(f"`{cls.key}`" for cls in c.fuzz_classes[:3])
        out.append(f"- **{c.tool}** {c.last_release_without} → {c.first_release}"
                   f"{' (' + c.between_text() + ' in between)' if c.between else ''}: "
                   f"{'listed' if c.listed else '**unlisted**'}; scenarios {scen}" + (f"; fuzz {fuzz}" if fuzz else ""))
        for e in c.changelog_entries[:3]:
            out.append(f"  - changelog {e.version}: {e.summary[:200]}")
    out += ["", f"### Draft baseline `{draft_path}`", "",
            f"{len(entries)} entries: {len(carried)} carried over unchanged, {len(changed)} new or changed "
            f"(TODO reasons naming their change), {len(unchecked)} not checked by this sweep.", ""]
    for be in changed:
        out.append(f"- `{be.id}` {be.step or '(scenario)'}: {be.reason.removeprefix(PLACEHOLDER_PREFIX + ': review: ')}")
    out += ["", "### Patch survival at " + newest, "", "| toggle | verdict | evidence |", "| --- | --- | --- |"]
    for s in report.survival:
        cell = next((c for c in s.cells if c.version == newest), None)
        if cell is not None:
            out.append(f"| `{s.toggle}` | {cell.verdict} | {cell.evidence.replace('|', chr(92) + '|')} |")
    out += ["", "### Reproduce", "", "```sh", f"toolproof releases --from {pinned} --to {newest} --markdown releases.md",
            f"toolproof run --impl pi@{newest} --baseline {draft_path}", "```", ""]
    return "\n".join(out)


def run_new(args: argparse.Namespace, sweep: Sweep, history: Sequence[HistoryRow], out: TextIO, *,
            log: Log) -> Report | None:
    """The sweep from the pinned release to the newest, the draft and the PR report; the sweep's
    report (None when there is nothing new)."""
    if not sweep.template.is_pi and not args.baselines:
        raise UsageError("--new with another --impl-template needs --baselines DIR (its pi-X.Y.Z.yaml baselines)")
    if args.range_from or args.range_to:
        raise UsageError("--new picks its own range (the newest release and the pinned one before it): "
                         "drop --from/--to")
    directory = Path(args.baselines) if args.baselines else shipped_root() / "baselines"
    pins = pinned_baselines(directory)
    newest = published(sweep.registry, sweep.state.packages)[-1] if sweep.state.packages else ""
    if not newest:
        raise UsageError("no published release found")
    older = sorted((v for v in pins if parse_version(v) < parse_version(newest)), key=parse_version)
    if newest in pins:
        out.write(f"toolproof releases --new: pi {newest} is the newest published release and already has "
                  f"{pins[newest].name}; nothing new\n")
        return None
    if not older:
        raise UsageError(f"no baseline pi-X.Y.Z.yaml older than {newest} in {directory}")
    pinned = older[-1]
    log(f"new release {newest}; previous pinned release {pinned} ({pins[pinned].name})")
    sweep.options.range_from, sweep.options.range_to = pinned, newest
    state = sweep.run()
    report = analyse(state, patch_catalogue(), history)
    if not state.releases.get(newest) or not state.releases[newest].usable:
        why = state.releases.get(newest)
        out.write(f"toolproof releases --new: pi {newest} cannot be run here ({why.state + ': ' + why.detail if why else 'not probed'}); "
                  "no draft baseline\n")
        return report
    old = load_baseline(str(pins[pinned]))
    header = baseline_header(str(pins[pinned]))
    old = dataclasses.replace(old, implementation=header.implementation or old.implementation)
    draft = draft_baseline(report, old, pinned, newest)
    default_dir = Path("baselines")
    draft_path = args.draft or str(default_dir / f"pi-{newest}.yaml" if default_dir.is_dir() else f"pi-{newest}.yaml")
    write_output(draft_path, draft_text(draft, pinned, newest), "draft baseline")
    text = pr_report(report, draft, pinned, newest, draft_path)
    if args.pr_report:
        write_output(args.pr_report, text, "pull-request report")
    else:
        out.write(text)
    log(f"draft baseline {draft_path}: {len(draft.entries)} entries")
    return report
