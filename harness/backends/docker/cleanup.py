"""Removing worker containers left behind by runs that are no longer alive.

Containers remove themselves when their run ends, however it ends (see ``backend``); this is the
backstop for an engine that lost an attach stream. Every container carries its run id and an
owner label ``host:pid:start`` (``hardening.owner_label``). A run is alive when its owner is a
process on this host with that pid and the same start time. Containers of live runs, and of runs
on other hosts (whose liveness cannot be checked from here), are kept unless ``everything``.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from typing import Any

from harness.backends.docker.hardening import LABEL_OWNER, LABEL_RUN_ID, label_filters, process_start_ticks
from harness.errors import InfrastructureError
from harness.images.engine import Engine, shared_engine


@dataclass
class CleanupReport:
    removed: list[str] = field(default_factory=list)
    kept_alive: dict[str, int] = field(default_factory=dict)  # run id -> containers kept

    @property
    def kept(self) -> int:
        return sum(self.kept_alive.values())


def owner_alive(owner: str, hostname: str | None = None) -> bool:
    """Whether the ``host:pid:start`` owner label names a live process (other hosts: assumed alive)."""
    host, _, rest = owner.partition(":")
    pid_text, _, start = rest.partition(":")
    if not host or not pid_text.isdigit():
        return False
    if host != (hostname or socket.gethostname()):
        return True
    return process_start_ticks(int(pid_text)) == start and start != "?"


def cleanup_report(run_id: str | None = None, *, everything: bool = False,
                   engine: Engine | None = None) -> CleanupReport:
    """Remove worker containers (of ``run_id``, or of every run) whose run is dead; with
    ``everything``, live ones too. Raises ``InfrastructureError`` without an engine."""
    client: Any = (engine or shared_engine()).client
    report = CleanupReport()
    for container in client.containers.list(all=True, filters=label_filters(run_id)):
        labels = container.labels or {}
        rid = labels.get(LABEL_RUN_ID, "?")
        if not everything and owner_alive(labels.get(LABEL_OWNER, "")):
            report.kept_alive[rid] = report.kept_alive.get(rid, 0) + 1
            continue
        try:
            container.remove(force=True)
            report.removed.append(container.name)
        except Exception:
            pass
    return report


def cleanup(run_id: str | None = None, *, everything: bool | None = None) -> int:
    """Remove toolproof worker containers; return how many. With a ``run_id`` every container of
    that run goes (the caller names it), otherwise only those of dead runs unless ``everything``.
    Without a reachable engine there is nothing to remove and 0 is returned."""
    try:
        report = cleanup_report(run_id, everything=(run_id is not None) if everything is None else everything)
    except InfrastructureError:
        return 0
    return len(report.removed)


__all__ = ["CleanupReport", "cleanup", "cleanup_report", "owner_alive"]
