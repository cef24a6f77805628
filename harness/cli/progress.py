"""Running scenarios from the command line: live progress (a bar with counts on a terminal, one
``STATUS id`` line per scenario otherwise) and the summary after the run."""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
from collections.abc import Callable
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from harness.backends.registry import DEFAULT_IMPL, backend_selection
from harness.model.features import DeclarationOverride
from harness.model.results import ERROR, FAIL, SKIP, STALE, STATUSES, XFAIL, RunResult, ScenarioResult
from harness.model.scenario import Scenario
from harness.report.baseline import Baseline, apply_to_result
from harness.report.writers import summary_line
from harness.run.runner import LEVEL_FULL, Runner
from harness.run.snapshots import SnapshotStore

STATUS_WORDS = {status: status.upper() for status in STATUSES}


def plain_output() -> bool:
    """No progress bar or tables: stderr is not a terminal, or ``CI`` is set."""
    return not sys.stderr.isatty() or os.environ.get("CI", "").lower() in ("true", "1", "yes")


def status_printer(out: TextIO, baseline_obj: Baseline | None = None) -> Callable[[ScenarioResult], None]:
    """The plain progress: one ``STATUS id`` line per scenario, written whole (the runner's workers
    report from their own threads; ``print`` writes the text and the newline apart, so two workers
    could run their lines together)."""
    lock = threading.Lock()

    def progress_cb(res: ScenarioResult) -> None:
        res = apply_to_result(res, baseline_obj)
        extra = f" ({res.reason})" if res.status in (SKIP, XFAIL) and res.reason else ""
        line = f"{STATUS_WORDS[res.status]:5} {res.id}{extra}\n"
        with lock:
            out.write(line)
            out.flush()

    return progress_cb


def run_scenarios(scenarios: list[Scenario], backend: str, jobs: int, out: TextIO, *, shard: str = "",
                  baseline: str = "", keep_observations: bool = True, quiet: bool = False,
                  baseline_obj: Baseline | None = None, impl: str = DEFAULT_IMPL, trees: bool = False,
                  level: str = LEVEL_FULL, declared: DeclarationOverride | None = None,
                  call_timeout: float | None = None) -> RunResult:
    """Run ``scenarios`` of implementation ``impl`` on the backend named ``backend`` with ``jobs``
    workers, showing progress on ``out`` unless ``quiet``; ``baseline_obj`` only relabels the
    live progress; ``call_timeout`` is ``--call-timeout`` (``harness.run.deadlines``). The run id is
    printed on stderr first and recorded in the results."""
    selection = backend_selection(backend, impl)
    factory, label = selection.factory, selection.label
    labelled = " (its containers are labelled org.toolproof.run-id=" + selection.run_id + ")" \
        if selection.backend.startswith("docker") else ""
    print(f"toolproof: run {selection.run_id}: {selection.impl.label} on {selection.backend}{labelled}",
          file=sys.stderr, flush=True)
    plain = plain_output() or quiet
    progress_cb: Callable[[ScenarioResult], None] | None = None
    bar = None
    if not plain:
        bar = Progress(TextColumn("[bold]toolproof"), BarColumn(), MofNCompleteColumn(),
                       TextColumn("{task.description}"), TimeElapsedColumn(), transient=True)
        task = bar.add_task("", total=len(scenarios))
        counts = dict.fromkeys(STATUS_WORDS, 0)

        lock = threading.Lock()

        def progress_cb(res: ScenarioResult) -> None:
            res = apply_to_result(res, baseline_obj)
            with lock:
                counts[res.status] += 1
                desc = " ".join(f"{k}={v}" for k, v in counts.items() if v)
                bar.update(task, advance=1, description=desc)
    elif not quiet:
        progress_cb = status_printer(out, baseline_obj)

    snapshots = SnapshotStore(SnapshotStore.default_root())
    runner = Runner(factory, jobs=jobs, progress=progress_cb, snapshot_factory=snapshots.hook_for,
                    keep_observations=keep_observations, backend_label=label, trees=trees, level=level,
                    declared=declared, call_timeout=call_timeout)
    if bar is not None:
        with bar:
            run = runner.run(scenarios, shard=shard, baseline=baseline)
    else:
        run = runner.run(scenarios, shard=shard, baseline=baseline)
    return dataclasses.replace(run, info=dataclasses.replace(run.info, run_id=selection.run_id))


def print_summary(run: RunResult, out: TextIO) -> None:
    """Failing scenarios with their step messages and diffs, then the counts."""
    # Scenario-level infrastructure errors usually share one cause (a backend that cannot
    # start): print each distinct message once, listing the scenarios it hit.
    infra: dict[str, list[str]] = {}
    for res in run.scenarios:
        if res.status == ERROR and res.message and not res.steps:
            cause = res.message.replace("backend restart failed: ", "")
            infra.setdefault(cause, []).append(res.id)
            continue
        if res.status in (FAIL, ERROR, STALE):
            print(f"\n{STATUS_WORDS[res.status]} {res.id}  ({res.path})", file=out)
            for line in res.failure_text.splitlines():
                print(f"    {line}", file=out)
    for cause, ids in infra.items():
        shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
        print(f"\n{STATUS_WORDS[ERROR]} {len(ids)} scenario(s): {shown}\n    {cause}", file=out)
    if not plain_output():
        table = Table(title="toolproof summary")
        table.add_column("status")
        table.add_column("scenarios", justify="right")
        for k, v in run.counts().items():
            if v:
                table.add_row(k, str(v))
        Console(file=out).print(table)
    print(f"\ntoolproof: {summary_line(run)} in {run.info.duration_s:.1f} s "
          f"[{run.info.backend}{' ' + run.info.implementation if run.info.implementation else ''}]", file=out)
    if run.info.level:
        print(f"toolproof: level {run.info.level}", file=out)
