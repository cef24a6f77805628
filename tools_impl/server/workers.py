"""Reusable worker threads for the tool server.

Starting a thread per call costs more than a small ``read`` does; a worker that finished its job
waits for the next instead. The pool never makes a job wait for a free worker (a job may block
until an earlier one finishes, so a bounded pool could deadlock): when no worker is idle a new one
is started. ``wait_idle`` waits until every submitted job has finished.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable

Job = Callable[[], None]


class WorkerPool:
    """Runs each submitted job on an idle daemon thread, starting one when none is idle."""

    def __init__(self, name: str = "toolproof-worker") -> None:
        self._name = name
        self._jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
        self._cond = threading.Condition()
        self._idle = 0
        self._outstanding = 0
        self._started = 0

    @property
    def started(self) -> int:
        """How many worker threads were ever started."""
        return self._started

    def submit(self, job: Job) -> None:
        with self._cond:
            self._outstanding += 1
            if self._idle:
                self._idle -= 1  # an idle worker takes it
            else:
                self._started += 1
                threading.Thread(target=self._work, name=f"{self._name}-{self._started}", daemon=True).start()
        self._jobs.put(job)

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                job()
            except BaseException:  # a job reports its own errors; a worker never dies of one
                pass
            finally:
                with self._cond:
                    self._outstanding -= 1
                    self._idle += 1
                    self._cond.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for every submitted job to finish; True when they did."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._outstanding:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(remaining)
        return True
