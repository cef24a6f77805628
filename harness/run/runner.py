"""The runner: runs scenarios on backends (in parallel: one backend instance per worker thread),
each in a fresh workspace; sends every step, normalises and compares its observation, checks
files, and records per-step results. Infrastructure errors are recorded apart from behaviour
failures; a backend that hung or died is restarted before its next scenario.
"""

from __future__ import annotations

import concurrent.futures
import datetime
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from harness import __version__
from harness.backends.base import Backend, Capabilities, HelloInfo
from harness.errors import DeadlineExceeded, HarnessError, InfrastructureError
from harness.model.features import (
    PATCH_FEATURES,
    UPSTREAM,
    Declaration,
    DeclarationOverride,
    describe_feature,
)
from harness.model.observation import Observation
from harness.model.results import ERROR, FAIL, PASS, SKIP, RunInfo, RunResult, ScenarioResult, StepResult
from harness.model.scenario import Requires, Scenario, Step
from harness.run.compare import Mismatch, SnapshotHook, check_file, check_observation
from harness.run.deadlines import describe_unanswered, step_deadline
from harness.run.normalise import TMPFILE_RE, context_for, find_task_ids, normalize_observation
from harness.run.programs import missing_programs
from harness.run.session import Session
from harness.run.surface_map import map_call, target_surface
from harness.run.workspace_archive import build_archive

MARKER_ENV = "TOOLPROOF_SCENARIO_MARKER"
PROCESS_SETTLE_S = 2.0
PROCESS_START_GRACE_S = 0.2  # lets just-spawned background work show up before the first count
PROCESS_POLL_S = 0.1
VAR_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
FINAL_FILES_STEP = "files"
WORKSPACE_VARIABLE = "WORKSPACE"  # ``${WORKSPACE}`` in args: the workspace root as the implementation sees it
FULL_OUTPUT_KEYS = ("fullOutputPath", "full_output_path")
PROCESSES_STEP = "processes"
LEVEL_FULL, LEVEL_BEHAVIOUR = "full", "behaviour"

BackendFactory = Callable[[], Backend]
ProgressHook = Callable[[ScenarioResult], None]
SnapshotFactory = Callable[[Scenario], "SnapshotHook | None"]


def capability_mismatch(wanted: Iterable[tuple[str, Any]], caps: Capabilities) -> str | None:
    """A skip reason when ``wanted`` capabilities do not hold, else None."""
    for name, value in wanted:
        have = caps.get(name)
        if have != value:
            shown = str(value).lower() if isinstance(value, bool) else value
            has = "none" if have is None else str(have).lower() if isinstance(have, bool) else have
            return f"requires {name}={shown}; the backend has {name}={has}"
    return None


def declaration_for(scenario: Scenario, hello: HelloInfo, declared: DeclarationOverride | None = None) -> Declaration:
    """What the implementation is for this scenario: ``declared`` (``[tool.toolproof]``) or its
    hello's declaration; an implementation that applies profiles (the reference) running a
    scenario with ``profile.base: upstream`` is upstream pi for it (dialect pi, pi's features, and
    the feature of a patch the scenario's profile sets: the profile decides, as for patch pins)."""
    profile = scenario.profile if isinstance(scenario.profile, dict) else {}
    if profile.get("base") == "upstream" and hello.capabilities.get("profile_overlay") is True:
        overlay = profile.get("patches")
        patches: dict[str, Any] = overlay if isinstance(overlay, dict) else {}
        provided = tuple(PATCH_FEATURES[p] for p in patches if p in PATCH_FEATURES)
        return replace(UPSTREAM, features=(*UPSTREAM.features, *provided)) if provided else UPSTREAM
    return declared.over(hello.declaration) if declared is not None else hello.declaration


def _declared_by(decl: Declaration) -> str:
    return "its hello" if decl.source == "hello" else decl.source


def feature_skip(scenario: Scenario, decl: Declaration) -> str | None:
    missing = [f for f in scenario.required_features() if not decl.has_feature(f)]
    if not missing:
        return None
    have = ", ".join(decl.features) or "none"
    return (f"requires feature {describe_feature(missing[0])}"
            + (f" and {', '.join(missing[1:])}" if missing[1:] else "")
            + f"; the implementation declares features: {have} ({_declared_by(decl)})")


def patch_skip(scenario: Scenario, hello: HelloInfo, decl: Declaration) -> str | None:
    """A scenario pinning a patch off demands the behaviour without it: it runs only where the
    implementation applies the scenario's profile (``profile_overlay``) or declares the patch
    absent. One pinning it on does not run where the patch is declared absent, unless its profile,
    applied, sets the patch (on an implementation that applies profiles, a pin the profile leaves
    alone is judged by the declaration: ``--upstream`` declares every patch absent): the two
    would demand different results of the same call."""
    overlay = hello.capabilities.get("profile_overlay") is True
    profile = scenario.profile if isinstance(scenario.profile, dict) else {}
    set_by_profile = set(profile.get("patches") or {}) if overlay else set()
    if overlay and profile.get("base") == "upstream":
        set_by_profile = {name for name, _ in scenario.patches}  # upstream, then the overlay's patches
    for name, state in scenario.patches:
        if name in set_by_profile:  # the implementation applies the profile, which decides
            continue
        if state == "off" and not overlay and not decl.lacks_patch(name):
            return (f"pins patch {name} off (the behaviour without it); the implementation neither applies the "
                    f"scenario's profile (profile_overlay) nor declares {name} absent")
        if state == "on" and decl.lacks_patch(name):
            return f"pins patch {name} on; the implementation declares it absent ({_declared_by(decl)})"
    return None


def skip_reason(scenario: Scenario, hello: HelloInfo, declared: DeclarationOverride | None = None) -> str | None:
    """Why ``scenario`` cannot run against this implementation, or None."""
    req: Requires = scenario.requires
    reason = capability_mismatch(req.items(), hello.capabilities)
    if reason:
        return reason
    # the tools the steps call are required implicitly, like the ones `requires.tools` names
    wanted_tools = dict.fromkeys([*req.tools, *(step.tool for step in scenario.steps if step.tool)])
    missing = [t for t in wanted_tools if t not in hello.tools]
    if missing:
        return f"requires tools {', '.join(missing)}; the implementation offers {', '.join(hello.tools) or 'none'}"
    missing_ops = [op for op in dict.fromkeys(step.op for step in scenario.steps if step.op) if op not in hello.ops]
    if missing_ops:
        return f"requires protocol ops {', '.join(missing_ops)}; the implementation supports {', '.join(hello.ops)}"
    surfaces = hello.surfaces or (hello.surface,)
    if target_surface(scenario.surface, surfaces) is None:
        return f"requires surface {scenario.surface}; the implementation speaks {', '.join(surfaces)}"
    decl = declaration_for(scenario, hello, declared)
    if declared is not None and declared.every_pin:
        return feature_skip(scenario, decl)
    return feature_skip(scenario, decl) or patch_skip(scenario, hello, decl)


def substitute(value: Any, variables: dict[str, Any]) -> Any:
    """Replace ``${name}`` in strings (recursively); a string that is exactly one variable takes
    the variable's value with its type."""
    if isinstance(value, str):
        whole = VAR_RE.fullmatch(value)
        if whole and whole.group(1) in variables:
            return variables[whole.group(1)]
        return VAR_RE.sub(lambda m: str(variables.get(m.group(1), m.group(0))), value)
    if isinstance(value, dict):
        return {k: substitute(v, variables) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, variables) for v in value]
    return value


def request_for(step: Step, variables: dict[str, Any], source: str = "", target: str = "") -> tuple[str, dict[str, Any]]:
    """The protocol request of ``step``; a call written on surface ``source`` goes out on
    ``target`` (``harness.run.surface_map``; ``UnmappableCall`` when it cannot)."""
    args = substitute(step.args, variables)
    if step.tool is not None:
        if source and target and source != target:
            mapped = map_call(step.tool, args, source, target)
            if not mapped.ok:
                raise UnmappableCall(mapped.reason)
            args = mapped.args
        return "call", {"tool": step.tool, "args": args}
    return str(step.op), dict(args)


class UnmappableCall(Exception):
    """A call whose arguments have no counterpart on the surface the implementation speaks."""


def _render(ms: list[Mismatch]) -> tuple[str, ...]:
    return tuple(m.render() for m in ms)


def infrastructure_result(scenario: Scenario, exc: HarnessError, context: str = "") -> ScenarioResult:
    """An infrastructure failure before the scenario could start. A backend that cannot exist
    here by design (e.g. a pwsh image where no registry can be reached) says so with a
    ``skip_reason`` attribute: that is a skip with that reason, never a pass and never an error."""
    base = {"path": scenario.path, "title": scenario.title, "tags": scenario.tags, "spec": scenario.spec}
    reason = getattr(exc, "skip_reason", None)
    if reason:
        return ScenarioResult(scenario.id, SKIP, reason=str(reason), **base)  # type: ignore[arg-type]
    return ScenarioResult(scenario.id, ERROR, message=f"infrastructure: {context}{exc}", **base)  # type: ignore[arg-type]


def _full_output_path(details: Any) -> str | None:
    """The bash full-output file a result's details name, if any."""
    if isinstance(details, dict):
        for key in FULL_OUTPUT_KEYS:
            path = details.get(key)
            if isinstance(path, str) and TMPFILE_RE.fullmatch(path):
                return path
    return None


def run_scenario(backend: Backend, scenario: Scenario, *, snapshot: SnapshotHook | None = None,
                 keep_observations: bool = True, trees: bool = False, full_output: bool = False,
                 level: str = LEVEL_FULL, declared: DeclarationOverride | None = None,
                 call_timeout: float | None = None) -> ScenarioResult:
    """Run one scenario on a started-or-startable backend. Raises nothing: infrastructure
    problems become ``error`` results (and the caller should ``restart()`` the backend).
    ``trees``: list the workspace tree after every step (``StepResult.tree``), for ``diff``;
    ``full_output``: read the bash full-output file a step's details name into its observation;
    ``call_timeout``: the deadline of calls without one of their own (``harness.run.deadlines``).
    ``level``: ``full`` judges each step's ``expect`` and the wording of the dialects the
    implementation declares (``declared``, else its hello); ``behaviour`` the ``expect`` alone."""
    t0 = time.monotonic()
    base = {"path": scenario.path, "title": scenario.title, "tags": scenario.tags, "spec": scenario.spec}
    try:
        hello = backend.start()
    except HarnessError as exc:
        return infrastructure_result(scenario, exc)
    reason = skip_reason(scenario, hello, declared)
    if reason:
        return ScenarioResult(scenario.id, SKIP, reason=reason, **base)  # type: ignore[arg-type]
    try:
        archive = build_archive(scenario.workspace)
    except HarnessError as exc:
        return ScenarioResult(scenario.id, ERROR, message=f"infrastructure: {exc}", **base)  # type: ignore[arg-type]
    marker = uuid.uuid4().hex
    env = {**scenario.env}
    if scenario.processes_left_behind is not None:
        env[MARKER_ENV] = marker
    steps: list[StepResult] = []
    session: Session | None = None
    root: str | None = None
    status_error = ""
    try:
        session = Session(backend, archive, env, scenario.profile)
        root = session.root
        ctx = context_for(scenario, backend.name, hello, root)
        variables: dict[str, Any] = {WORKSPACE_VARIABLE: root}
        caps = hello.capabilities
        surface = target_surface(scenario.surface, hello.surfaces or (hello.surface,)) or scenario.surface
        dialects = declaration_for(scenario, hello, declared).dialects if level == LEVEL_FULL else ()
        cut = ""  # a step could not be sent: the rest of the scenario does not run either
        for step in scenario.steps:
            if status_error:
                steps.append(StepResult(step.id, SKIP, reason="not run: an earlier step hit an infrastructure error"))
                continue
            if cut:
                steps.append(StepResult(step.id, SKIP, reason=f"not run: {cut}"))
                continue
            why = capability_mismatch([(k, v) for k, v in step.when.items() if k != "programs"], caps) \
                or missing_programs(session, step.when.get("programs", ()), caps, scenario.env)
            if why:
                steps.append(StepResult(step.id, SKIP, reason=f"when: {why}"))
                continue
            try:
                op, fields = request_for(step, variables, scenario.surface, surface)
            except UnmappableCall as exc:
                steps.append(StepResult(step.id, SKIP, reason=f"on the {surface} surface: {exc}"))
                cut = f"step {step.id} could not be sent on the {surface} surface"
                continue
            deadline = step_deadline(step, fields.get("args") if step.tool else fields, call_timeout)
            s0 = time.monotonic()
            try:
                resp = session.request(op, fields, deadline_s=deadline.seconds)
            except InfrastructureError as exc:
                if isinstance(exc, DeadlineExceeded):
                    exc = InfrastructureError(describe_unanswered(step, deadline))
                status_error = str(exc)
                steps.append(StepResult(step.id, ERROR, (f"infrastructure: {exc}",), time.monotonic() - s0))
                continue
            raw = Observation.from_response(resp, time.monotonic() - s0)
            output_path = _full_output_path(raw.details) if full_output else None
            if output_path is not None:
                state = session.read_files([output_path])[output_path]
                raw = raw.with_full_output(state.data if state.kind == "file" else None, state.kind)
            for name, src in step.save:
                variables[name] = raw.lookup(src)
            ctx = replace(ctx, task_ids=(*ctx.task_ids, *find_task_ids(raw)))
            obs = normalize_observation(raw, scenario.normalize, ctx)
            exp = step.expectation_for(caps.os)
            mism = check_observation(exp, obs, snapshot, f"{step.id}.")
            for label, wording in step.wording_for(dialects):
                mism.extend(check_observation(wording, obs, snapshot, f"{step.id}.", label=f"wording.{label}"))
            if exp.files:
                states = session.read_files([f.path for f in exp.files])
                for fc in exp.files:
                    mism.extend(check_file(fc, states[fc.path], "files"))
            tree = session.tree() if trees else None
            steps.append(StepResult(step.id, FAIL if mism else PASS, _render(mism), raw.duration_s,
                                    obs.to_json() if keep_observations else None, tree=tree))
        if cut:
            steps.extend(StepResult(name, SKIP, reason=f"not run: {cut}") for name, wanted in
                         ((FINAL_FILES_STEP, bool(scenario.files)),
                          (PROCESSES_STEP, scenario.processes_left_behind is not None)) if wanted)
        if not status_error and not cut and scenario.files:
            states = session.read_files([f.path for f in scenario.files])
            mism = []
            for fc in scenario.files:
                mism.extend(check_file(fc, states[fc.path], "files"))
            steps.append(StepResult(FINAL_FILES_STEP, FAIL if mism else PASS, _render(mism)))
        if not status_error and not cut and scenario.processes_left_behind is not None:
            steps.append(_check_processes(backend, f"{MARKER_ENV}={marker}", scenario.processes_left_behind))
    except InfrastructureError as exc:
        status_error = str(exc)
        steps.append(StepResult("workspace" if root is None else "(harness)", ERROR, (f"infrastructure: {exc}",)))
    finally:
        if session is not None and not status_error:
            session.close()
    duration = time.monotonic() - t0
    if status_error:
        return ScenarioResult(scenario.id, ERROR, steps=tuple(steps), message=f"infrastructure: {status_error}",
                              duration_s=duration, **base)  # type: ignore[arg-type]
    statuses = {s.status for s in steps}
    if FAIL in statuses:
        status = FAIL
    elif statuses and statuses <= {SKIP}:
        return ScenarioResult(scenario.id, SKIP, steps=tuple(steps), reason="every step was skipped: "
                              + "; ".join(sorted({s.reason for s in steps})), duration_s=duration, **base)  # type: ignore[arg-type]
    else:
        status = PASS
    return ScenarioResult(scenario.id, status, steps=tuple(steps), duration_s=duration, **base)  # type: ignore[arg-type]


def _check_processes(backend: Backend, marker: str, allowed: int) -> StepResult:
    time.sleep(PROCESS_START_GRACE_S)
    deadline = time.monotonic() + PROCESS_SETTLE_S
    while True:
        count = backend.count_processes(marker)
        if count is None:
            return StepResult(PROCESSES_STEP, SKIP, reason=f"backend {backend.name} cannot count processes")
        if count <= allowed or time.monotonic() >= deadline:
            break
        time.sleep(PROCESS_POLL_S)
    if count > allowed:
        return StepResult(PROCESSES_STEP, FAIL, (f"processes: expected at most {allowed} left behind, found {count}",))
    return StepResult(PROCESSES_STEP, PASS)


def describe_level(level: str, hello: HelloInfo | None, declared: DeclarationOverride | None = None) -> str:
    """What a run judged, in words: ``full (dialect minimax)``, or ``behaviour`` (asked for, or
    the implementation declares no dialect); "" when no scenario reached the implementation."""
    decl = None if hello is None else declared.over(hello.declaration) if declared is not None else hello.declaration
    if decl is None:  # no scenario reached the implementation: nothing was judged
        return ""
    if level == LEVEL_BEHAVIOUR:
        return LEVEL_BEHAVIOUR
    if not decl.dialects:
        return f"{LEVEL_BEHAVIOUR} (the implementation declares no dialect)"
    return f"{LEVEL_FULL} (dialect {', '.join(decl.dialects)})"


class Runner:
    """Runs a list of scenarios with ``jobs`` worker threads, each with its own backend."""

    def __init__(self, backend_factory: BackendFactory, *, jobs: int = 1,
                 progress: ProgressHook | None = None, snapshot_factory: SnapshotFactory | None = None,
                 keep_observations: bool = True, backend_label: str = "", trees: bool = False,
                 level: str = LEVEL_FULL, declared: DeclarationOverride | None = None,
                 call_timeout: float | None = None) -> None:
        self.backend_factory = backend_factory
        self.level = level
        self.declared = declared
        self.call_timeout = call_timeout
        self.trees = trees
        self.jobs = max(1, jobs)
        self.progress = progress
        self.snapshot_factory = snapshot_factory
        self.keep_observations = keep_observations
        self.backend_label = backend_label
        self._local = threading.local()
        self._backends: list[Backend] = []
        self._lock = threading.Lock()
        self.hello: HelloInfo | None = None

    def _backend(self) -> Backend:
        backend = getattr(self._local, "backend", None)
        if backend is None:
            backend = self.backend_factory()
            self._local.backend = backend
            self._local.dirty = False
            with self._lock:
                self._backends.append(backend)
        return backend

    def _run_one(self, scenario: Scenario) -> ScenarioResult:
        res: ScenarioResult | None
        try:
            backend = self._backend()
        except HarnessError as exc:
            res = infrastructure_result(scenario, exc)
        else:
            res = None
            if getattr(self._local, "dirty", False):
                try:
                    backend.restart()
                    self._local.dirty = False
                except HarnessError as exc:
                    res = infrastructure_result(scenario, exc, "backend restart failed: ")
            if res is None:
                snap = self.snapshot_factory(scenario) if self.snapshot_factory else None
                res = run_scenario(backend, scenario, snapshot=snap, keep_observations=self.keep_observations,
                                   trees=self.trees, level=self.level, declared=self.declared,
                                   call_timeout=self.call_timeout)
                if res.status == ERROR:
                    self._local.dirty = True
                if self.hello is None and res.status != ERROR:
                    self.hello = getattr(backend, "hello", None)
        assert res is not None
        if self.progress:
            self.progress(res)
        return res

    def run(self, scenarios: Sequence[Scenario], *, shard: str = "", baseline: str = "") -> RunResult:
        started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        t0 = time.monotonic()
        try:
            if self.jobs == 1:
                results = [self._run_one(s) for s in scenarios]
            else:
                with concurrent.futures.ThreadPoolExecutor(self.jobs, thread_name_prefix="toolproof") as pool:
                    results = list(pool.map(self._run_one, scenarios))
        finally:
            self.close()
        hello = self.hello
        info = RunInfo(backend=self.backend_label, implementation=hello.implementation if hello else "",
                       version=hello.version if hello else "", started=started,
                       duration_s=time.monotonic() - t0, jobs=self.jobs, shard=shard, baseline=baseline,
                       toolproof_version=__version__, level=describe_level(self.level, hello, self.declared))
        return RunResult(info, tuple(results))

    def close(self) -> None:
        with self._lock:
            backends, self._backends = self._backends, []
        for b in backends:
            try:
                b.close()
            except Exception:  # closing must never mask the run's results
                pass
