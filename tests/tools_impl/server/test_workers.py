"""The server's worker pool: threads are reused, a job never waits for a free worker, and
``wait_idle`` reports whether every job finished."""

from __future__ import annotations

import threading

from tools_impl.server.workers import WorkerPool

WAIT_S = 5.0


def test_sequential_jobs_reuse_one_worker() -> None:
    pool = WorkerPool()
    seen: list[str] = []
    for _ in range(20):
        done = threading.Event()

        def job(done: threading.Event = done) -> None:
            seen.append(threading.current_thread().name)
            done.set()

        pool.submit(job)
        assert done.wait(WAIT_S)
        assert pool.wait_idle(WAIT_S)
    assert pool.started == 1
    assert set(seen) == {"toolproof-worker-1"}


def test_a_job_blocked_on_a_later_one_does_not_deadlock() -> None:
    pool = WorkerPool()
    release = threading.Event()
    finished: list[str] = []
    pool.submit(lambda: (release.wait(WAIT_S), finished.append("first")))
    pool.submit(lambda: (finished.append("second"), release.set()))
    assert pool.wait_idle(WAIT_S)
    assert finished == ["second", "first"]
    assert pool.started == 2


def test_wait_idle_times_out_while_a_job_runs_and_a_failing_job_keeps_the_worker() -> None:
    pool = WorkerPool()
    release = threading.Event()
    pool.submit(lambda: release.wait(WAIT_S) and None)
    assert pool.wait_idle(0.05) is False
    release.set()
    assert pool.wait_idle(WAIT_S) is True

    def boom() -> None:
        raise RuntimeError("job bug")

    pool.submit(boom)
    assert pool.wait_idle(WAIT_S)
    ran = threading.Event()
    pool.submit(ran.set)
    assert ran.wait(WAIT_S)
    assert pool.started == 1
