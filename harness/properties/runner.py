"""Run the invariants against one implementation through the tool protocol: Hypothesis draws
examples, each runs in a fresh workspace of the backend, and the outcome is compared with the
oracle's expectation. A failing invariant keeps Hypothesis's shrunk counterexample and renders it
as a scenario YAML (``harness/corpus/loader.py`` loads it) that fails while the bug is there.

Outcomes: ``pass``; ``fail``; ``patch-absent`` (the invariant belongs to a patch the implementation
does not declare, and it fails — expected, reported with the patch name, not a regression);
``n/a`` (does not apply: surface or tool missing; never counted as passed); ``error`` (the
implementation did not answer). A ``--baseline`` adds ``xfail`` (a listed failure) and ``stale``
(a listed invariant that holds again).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed

from harness.backends.base import Backend, HelloInfo
from harness.corpus.scenario_writer import dump_scenario
from harness.errors import InfrastructureError
from harness.model.observation import Observation
from harness.model.scenario import Expectation, FileCheck, Scenario, TextMatch, Workspace, WorkspaceEntry
from harness.model.scenario import Step as ScenarioStep
from harness.properties.invariants import Example, Invariant
from harness.run.normalise import TMPFILE_RE, NormalisationContext, normalize_observation
from harness.run.session import Session
from harness.run.workspace_archive import build_plain_archive

PASS, FAIL, PATCH_ABSENT, NOT_APPLICABLE, ERROR = "pass", "fail", "patch-absent", "n/a", "error"
XFAIL, STALE = "xfail", "stale"  # set by a --baseline (harness/properties/baseline.py)
CALL_DEADLINE_S = 60.0
BASE_TIME = 1_767_225_600.0
EXAMPLE_NORMALISERS = ("workspace", "tmpfiles")  # as the counterexample scenarios declare


@dataclass
class PropertyResult:
    invariant: Invariant
    status: str
    reason: str = ""
    examples: int = 0
    counterexample: Example | None = None
    failure: str = ""
    yaml: str = ""


class Mismatch(Exception):
    pass


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 600 else text[:600] + f"… ({len(text)} chars)"


def run_example(backend: Backend, example: Example, profile: dict[str, Any] | None = None) -> None:
    """Run ``example`` in a fresh workspace (one ``Session``, as scenarios run); raise ``Mismatch``
    naming the first difference."""
    entries = tuple(WorkspaceEntry(p, "file", d) for p, d in example.files)
    with Session(backend, build_plain_archive(Workspace(entries), BASE_TIME), {}, profile) as session:
        ctx = NormalisationContext(roots=(session.root, os.path.realpath(session.root)))
        for k, step in enumerate(example.steps, 1):
            resp = session.call(step.tool, step.args, deadline_s=CALL_DEADLINE_S)
            # the one observation type, normalised as the counterexample scenario declares
            obs = normalize_observation(Observation.from_response(resp, 0.0), EXAMPLE_NORMALISERS, ctx)
            where = f"step {k} ({step.tool} {_describe(step.args)})"
            if obs.status == "error":
                got = obs.error_message
                if step.status != "error":
                    raise Mismatch(f"{where}: expected a result, the call raised: {_describe(got)}")
                if step.error is not None and got != step.error:
                    raise Mismatch(f"{where}: error\n  expected {_describe(step.error)}\n  actual   {_describe(got)}")
                continue
            text = obs.text
            if step.status == "error":
                raise Mismatch(f"{where}: expected the call to raise {_describe(step.error)}, it returned {_describe(text)}")
            if step.is_error is not None and obs.is_error != step.is_error:
                raise Mismatch(f"{where}: is_error is {obs.is_error!r}, expected {step.is_error!r}: {_describe(text)}")
            if step.text is not None and text != step.text:
                raise Mismatch(f"{where}: text\n  expected {_describe(step.text)}\n  actual   {_describe(text)}")
            if step.full_output is not None:
                raw_details = resp.result.get("details") if isinstance(resp.result, dict) else None
                _check_full_output(session, where, raw_details, step.full_output)
        states = session.read_files([p for p, _ in example.final_files])
        for path, data in example.final_files:
            state = states.get(path)
            actual = state.data if state is not None else None
            if actual != data:
                raise Mismatch(f"file {path}\n  expected {_describe(data)}\n  actual   {_describe(actual)}")


def _check_full_output(session: Session, where: str, details: Any, expected: bytes) -> None:
    """The full-output file the details name holds the whole output: read where the
    implementation runs (on the host, or by the supervisor in the container), on every backend."""
    path = details.get("fullOutputPath") if isinstance(details, dict) else None
    if not isinstance(path, str) or not TMPFILE_RE.fullmatch(path):
        raise Mismatch(f"{where}: output was truncated but details name no full-output file: {_describe(details)}")
    state = session.read_files([path])[path]
    if state.kind != "file" or state.data is None:
        raise Mismatch(f"{where}: the full-output file {path} the details name is {state.kind}")
    if os.path.isfile(path):
        os.unlink(path)  # a host backend's temp dir: implementations never delete these files
    if state.data != expected:
        raise Mismatch(f"{where}: the full-output file holds {len(state.data)} bytes, expected the "
                       f"{len(expected)} bytes of the whole output")


# -- the counterexample as a scenario ------------------------------------------------------------

def example_scenario(inv: Invariant, example: Example, surface: str = "minimax") -> Scenario:
    """The counterexample as a scenario: same workspace, same calls, the oracle's expectations."""
    digest = hashlib.sha256(repr((example.files, example.steps)).encode()).hexdigest()[:8]
    steps = []
    for k, step in enumerate(example.steps, 1):
        if step.status == "error":
            expect = Expectation(status="error", error=None if step.error is None else TextMatch(equals=step.error))
        else:
            expect = Expectation(is_error=step.is_error, text=None if step.text is None else TextMatch(equals=step.text))
        steps.append(ScenarioStep(id=f"step-{k}", index=k, line=0, tool=step.tool, op=None, args=step.args,
                                  expect=expect))
    return Scenario(
        id=f"properties/{inv.name.replace('.', '-')}-{digest}", path="", line=0,
        title=f"property {inv.name}: {inv.title}",
        tags=("properties", inv.name, *([f"patch:{inv.patch}"] if inv.patch else [])),
        surface=surface, normalize=EXAMPLE_NORMALISERS,
        workspace=Workspace(tuple(WorkspaceEntry(p, "file", d) for p, d in example.files)),
        steps=tuple(steps), files=tuple(FileCheck(p, 0, data=d) for p, d in example.final_files))


def scenario_yaml(inv: Invariant, example: Example, impl: str, failure: str, surface: str = "minimax") -> str:
    """``example_scenario`` as scenario YAML, headed by how it was found and why it failed."""
    comment = "\n".join((f"Counterexample found by `toolproof properties --impl {impl}` (spec {inv.rule}).",
                          *failure.splitlines()))
    return dump_scenario(example_scenario(inv, example, surface), comment)


# -- the Hypothesis loop --------------------------------------------------------------------------

def check_invariant(inv: Invariant, backend: Backend, hello: HelloInfo, impl: str, *, examples: int,
                    seed: int, profile: dict[str, Any] | None = None) -> PropertyResult:
    reason = inv.applicability(hello)
    if reason is not None:
        return PropertyResult(inv, NOT_APPLICABLE, reason)
    last: dict[str, Any] = {}
    count = [0]

    @settings(max_examples=max(1, int(examples * inv.examples_factor)), deadline=None, database=None,
              verbosity=Verbosity.quiet, suppress_health_check=list(HealthCheck),
              phases=(Phase.generate, Phase.shrink), print_blob=False, report_multiple_bugs=False)
    @hypothesis_seed(seed)
    @given(inv.build(hello))
    def prop(example: Example) -> None:
        count[0] += 1
        try:
            run_example(backend, example, profile)
        except Mismatch as exc:
            last["example"], last["failure"] = example, str(exc)
            raise

    try:
        prop()
    except Mismatch:
        example, failure = last["example"], last["failure"]
        patch_missing = inv.patch is not None and inv.patch not in hello.patches
        status = PATCH_ABSENT if patch_missing else FAIL
        reason = f"patch absent: {impl} does not declare {inv.patch}" if patch_missing else ""
        return PropertyResult(inv, status, reason, count[0], example, failure,
                              scenario_yaml(inv, example, impl, failure, hello.surface))
    except InfrastructureError as exc:
        return PropertyResult(inv, ERROR, str(exc), count[0])
    return PropertyResult(inv, PASS, "", count[0])
