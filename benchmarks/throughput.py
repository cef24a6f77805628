"""What users of the harness wait for: the shipped corpus's throughput on each backend and the start
of the ``toolproof`` command — the ``throughput`` rows of ``python -m benchmarks``.

- ``throughput.local`` / ``throughput.docker``: ``toolproof run <corpus> --jobs 2`` on local and on
  docker, interleaved (local, docker, docker, local, …: the same machine noise for both), as
  scenarios per second over the median wall time; the docker row's ratio is docker's wall time
  over local's, target <= 2 (the issue's "a contained gate that costs about what a local one
  does"). Docker runs the scenarios that need container isolation (``scenarios/hostile``) where
  local skips them, so it does more work for the same corpus. The load average before each run is
  recorded with it.
- ``startup``: ``toolproof --version``, wall and CPU time of the whole process (interpreter,
  imports, argument parsing), median of several starts.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from benchmarks.servers import REPO, BenchError
from benchmarks.suite import CorpusRun, Row, Settings, docker_engine, run_corpus

SECTION = "harness throughput"
LOCAL_TARGET_PER_S = 20.0  # scenarios/s of the shipped corpus with --jobs 2 on local
DOCKER_RATIO_TARGET = 2.0  # docker's wall time over local's, same corpus, same run
STARTUP_TARGET_S = 0.5  # `toolproof --version`, median wall time
FULL_REPETITIONS = 2
STARTS = 7


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def _corpus_argv(settings: Settings, backend: str) -> list[str]:
    return [sys.executable, "-m", "harness.cli", "run", *settings.corpus_paths, "--backend", backend,
            "--jobs", "2"]


def _timed_corpus(settings: Settings, backend: str, progress: Callable[[str], None], rep: int) -> dict[str, Any]:
    what = f"{SECTION}: {backend} --jobs 2, run {rep + 1}"
    progress(what)
    load = _load()
    argv = _corpus_argv(settings, backend)
    run: CorpusRun = run_corpus(argv, settings.corpus_timeout_s, progress, what)
    if run.returncode is not None and (run.returncode not in (0, 1) or not run.summary):
        raise BenchError(f"`{' '.join(argv[1:])}` exited {run.returncode}: {run.stderr_tail}")
    return {"wall_s": run.wall_s, "load_before": load, "scenarios_done": run.done, "summary": run.summary,
            "timed_out": run.returncode is None, "failing": run.failing}


def _rate_cell(runs: list[dict[str, Any]]) -> tuple[str, float, float]:
    wall = statistics.median(r["wall_s"] for r in runs)
    done = max(r["scenarios_done"] for r in runs)
    rate = done / wall if wall > 0 else 0.0
    loads = ", ".join(f"{r['load_before']:.1f}" for r in runs)
    return f"{rate:.1f} scenarios/s ({wall:.1f} s for {done}; load {loads})", rate, wall


def corpus_rows(settings: Settings, progress: Callable[[str], None]) -> list[Row]:
    """The two scenarios/s rows (docker skipped in a smoke run or without an engine)."""
    docker_ok, docker_note = docker_engine()
    if settings.smoke:
        docker_ok, docker_note = False, "skipped in a smoke run"
    reps = 1 if settings.smoke else FULL_REPETITIONS
    runs: dict[str, list[dict[str, Any]]] = {"local": [], "docker": []}
    for rep in range(reps):
        order = ["local", "docker"] if rep % 2 == 0 else ["docker", "local"]
        for backend in order:
            if backend == "docker" and not docker_ok:
                continue
            runs[backend].append(_timed_corpus(settings, backend, progress, rep))
    corpus = " ".join(settings.corpus_paths)
    rows: list[Row] = []
    cell, rate, local_wall = _rate_cell(runs["local"])
    rows.append(Row("throughput.local", SECTION, f"`toolproof run {corpus} --jobs 2`, local, median of {reps}",
                    cell, runs["local"][-1]["summary"].split(" in ")[0],
                    data={"runs": runs["local"], "scenarios_per_s": rate, "min_target": LOCAL_TARGET_PER_S,
                          "min_unit": "scenarios/s", "min_met": rate >= LOCAL_TARGET_PER_S}))
    label = f"`toolproof run {corpus} --jobs 2`, docker, median of {reps} interleaved with local (ratio: wall vs local)"
    if not runs["docker"]:
        rows.append(Row("throughput.docker", SECTION, label, "skipped", docker_note))
        return rows
    cell, rate, docker_wall = _rate_cell(runs["docker"])
    rows.append(Row("throughput.docker", SECTION, label, cell, runs["docker"][-1]["summary"].split(" in ")[0],
                    ratio=docker_wall / local_wall if local_wall > 0 else None, target=DOCKER_RATIO_TARGET,
                    data={"runs": runs["docker"], "scenarios_per_s": rate}))
    return rows


def startup_row(settings: Settings, progress: Callable[[str], None]) -> Row:
    """``toolproof --version`` from a fresh interpreter: median wall and CPU time of the process."""
    progress(f"{SECTION}: toolproof start-up")
    argv = [sys.executable, "-m", "harness.cli", "--version"]
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(3 if settings.smoke else STARTS):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        if proc.returncode != 0:
            raise BenchError(f"`toolproof --version` exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
    wall = statistics.median(walls)
    cpu = statistics.median(cpus)
    return Row("startup", SECTION, f"`toolproof --version` (interpreter, imports, arguments), median of {len(walls)}",
               f"{wall:.2f} s (CPU {cpu:.2f} s)", "",
               data={"wall_s": walls, "cpu_s": cpus, "median_wall_s": wall, "median_cpu_s": cpu,
                     "value_target": STARTUP_TARGET_S, "value_unit": "s", "value_met": wall <= STARTUP_TARGET_S})


def throughput_section(settings: Settings, progress: Callable[[str], None]) -> list[Row]:
    return [*corpus_rows(settings, progress), startup_row(settings, progress)]


__all__ = ["DOCKER_RATIO_TARGET", "LOCAL_TARGET_PER_S", "STARTUP_TARGET_S", "throughput_section"]
