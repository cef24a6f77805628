"""Ending a run cleanly on SIGINT, SIGTERM and SIGHUP (Ctrl-C, ``timeout``, CI cancellations,
a closed terminal): the signal first ends every container of this process's docker backends
(in-flight calls then fail at once instead of running on), then ``KeyboardInterrupt`` unwinds
the run, whose ``finally`` closes every backend. SIGKILL cannot be caught; there the containers'
lifeline does the same job (harness/backends/docker/backend.py).
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

TERMINATING_SIGNALS = tuple(s for s in (signal.SIGINT, getattr(signal, "SIGTERM", None),
                                        getattr(signal, "SIGHUP", None)) if s is not None)


class Terminated(KeyboardInterrupt):
    """The run was ended by ``signum``."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def abort_containers() -> None:
    """End the containers of every docker backend of this process (none if docker was never used)."""
    docker_backend = sys.modules.get("harness.backends.docker.backend")
    if docker_backend is not None:
        docker_backend.abort_all()


def _handler(signum: int, frame: FrameType | None) -> None:
    abort_containers()
    raise Terminated(signum)


@contextmanager
def terminating_signals_end_the_run() -> Iterator[None]:
    """Within the block (main thread only), the terminating signals end the run as above."""
    try:
        previous = {s: signal.signal(s, _handler) for s in TERMINATING_SIGNALS}
    except ValueError:  # not the main thread: leave signal handling to the host program
        yield
        return
    try:
        yield
    finally:
        for s, old in previous.items():
            signal.signal(s, old)
