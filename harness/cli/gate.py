"""The one-command gate: ``toolproof run --impl IMPL`` with no PATHS (none given, none configured)
runs every shipped scenario (``toolproof:`` and ``toolproof:pi``; those that do not apply to IMPL
skip with their reason), with the shipped baseline whose implementation and version are what
IMPL's ``hello`` says, unless ``--baseline``, ``--no-baseline`` or ``[tool.toolproof] baseline``
decides otherwise. ``choose_run_baseline`` says which baseline a run applies and why."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from harness.backends.base import HelloInfo
from harness.backends.registry import backend_selection
from harness.errors import InfrastructureError
from harness.install.shipped import resolve_all
from harness.report.baseline import Baseline, choose_shipped_baseline, load_baseline, shipped_baseline_path

SHIPPED_GATE_PATHS = ("toolproof:", "toolproof:pi")


@dataclass(frozen=True)
class RunBaseline:
    baseline: Baseline | None
    path: str  # what the run records ("" for none)
    choice: str  # why, in words ("" when nothing needs saying: paths given and no baseline named)


def default_paths(args: argparse.Namespace) -> bool:
    """Fill in the shipped corpus when neither PATHS nor ``[tool.toolproof] paths`` name any;
    True when it did (the run is the shipped gate)."""
    if args.paths:
        return False
    args.paths = resolve_all(list(SHIPPED_GATE_PATHS))
    return True


def probe_hello(backend: str, impl: str) -> HelloInfo:
    """Start the implementation once and return its ``hello`` (who it is, which version)."""
    b = backend_selection(backend, impl).factory()
    try:
        return b.start()
    finally:
        b.close()


def choose_run_baseline(args: argparse.Namespace, shipped_gate: bool) -> RunBaseline:
    """The baseline a run applies: ``--no-baseline`` none; ``--baseline F`` or the configured one
    that file; for the shipped gate the shipped baseline of the implementation's hello."""
    if getattr(args, "no_baseline", False):
        return RunBaseline(None, "", "--no-baseline" if shipped_gate else "")
    if args.baseline:
        source = getattr(args, "baseline_from_config", "")
        choice = f"baseline of [tool.toolproof] in {source}" if source else "--baseline"
        return RunBaseline(load_baseline(args.baseline), args.baseline, choice)
    if not shipped_gate:
        return RunBaseline(None, "", "")
    try:
        hello = probe_hello(args.backend, args.impl)
    except InfrastructureError as exc:  # the run itself reports what is wrong with the implementation
        return RunBaseline(None, "", f"could not learn who the implementation is ({exc})")
    baseline, why = choose_shipped_baseline(hello.implementation, hello.version)
    if baseline is None:
        return RunBaseline(None, "", why)
    return RunBaseline(baseline, shipped_baseline_path(baseline.path), why)
