"""A generated call is a one-step ``Scenario`` (``Case.scenario``), run by the one executor
(``harness.run.runner.run_scenario`` over a ``harness.run.session.Session``: a fresh workspace, the
call, the observation with the bash full-output bytes, the workspace tree after the step) and
compared with the one equivalence (``harness.run.equivalence``). A disagreement is a scenario too:
``disagreement_scenario`` puts the oracle's observation in as the step's expectation, so it can be
saved as scenario YAML and replayed with ``toolproof run``.

Shared by ``toolproof fuzz`` (two implementations, compared).
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, replace
from typing import Any

from harness.backends.base import Backend
from harness.errors import InfrastructureError
from harness.model.results import ERROR, StepResult
from harness.model.scenario import (
    Expectation,
    FileCheck,
    Scenario,
    Step,
    TextMatch,
    Workspace,
    WorkspaceEntry,
)
from harness.run.equivalence import differing_keys, differing_paths
from harness.run.runner import WORKSPACE_VARIABLE, run_scenario

JsonObj = dict[str, Any]
ROOT_TOKEN = "${" + WORKSPACE_VARIABLE + "}"  # the workspace root, replaced by the runner
CALL_DEADLINE_S = 60.0
FUZZ_NORMALIZERS = ("workspace", "tmpfiles", "home")
NO_ANSWER = "no-answer"
# pi's grep and find print files in the order ripgrep's and fd's parallel walkers finish them
UNORDERED_TOOLS = ("grep", "find")
# the fuzz tool families (what the generator draws) → the tool each surface calls
SURFACE_TOOLS = {"pi": {"glob": "find"}, "minimax": {}}


@dataclass(frozen=True)
class Case:
    """A generated call: fuzz tool ``tool`` with ``args`` (JSON, in the pi surface's form;
    ``${WORKSPACE}`` inside strings is the root), in a workspace holding ``files`` (path → bytes),
    ``dirs`` and ``links`` (path → target), committed to git with ``git``, with the environment
    overlay ``env``. ``tag`` names the input class the generator drew it from."""

    tool: str
    args: Any
    files: tuple[tuple[str, bytes], ...] = ()
    dirs: tuple[str, ...] = ()
    tag: str = ""
    index: int = -1
    links: tuple[tuple[str, str], ...] = ()
    git: bool = False
    env: tuple[tuple[str, str], ...] = ()
    deadline_s: float = CALL_DEADLINE_S

    def workspace(self) -> Workspace:
        entries = [WorkspaceEntry(d, "dir") for d in self.dirs]
        entries += [WorkspaceEntry(p, "file", data) for p, data in self.files]
        entries += [WorkspaceEntry(p, "symlink", target=t) for p, t in self.links]
        return Workspace(tuple(entries), git=self.git)

    def tool_on(self, surface: str) -> str:
        return SURFACE_TOOLS.get(surface, {}).get(self.tool, self.tool)

    def scenario(self, surface: str = "pi", seed: int | None = None) -> Scenario:
        """This call as a one-step scenario for ``surface`` (the arguments in that surface's form)."""
        case = to_surface(self, surface)
        tool = case.tool_on(surface)
        sid = f"fuzz/{'' if seed is None else f'seed-{seed}-'}{self.tool}-{self.index}"
        step = Step(id="call", index=1, line=0, tool=tool, op=None, args=case.args, timeout=self.deadline_s,
                    reason="generated call; the fuzzer compares two implementations")
        return Scenario(id=sid, path="", line=0, title=f"fuzz case {self.index}: {self.tool} ({self.tag})",
                        tags=("fuzz", self.tool, *(t for t in self.tag.split("+") if t)),
                        surface=surface, env=dict(self.env), normalize=FUZZ_NORMALIZERS,
                        workspace=self.workspace(), steps=(step,))

    def to_json(self) -> JsonObj:
        out: JsonObj = {"tool": self.tool, "args": self.args, "tag": self.tag, "index": self.index,
                        "dirs": list(self.dirs), "files": {p: _bytes_json(d) for p, d in self.files}}
        if self.links:
            out["links"] = dict(self.links)
        if self.git:
            out["git"] = True
        if self.env:
            out["env"] = dict(self.env)
        return out


def _bytes_json(data: bytes) -> Any:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}
    if len(text) > 300:
        return {"text_head": text[:120], "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()[:16]}
    return text


def to_surface(case: Case, surface: str) -> Case:
    """A pi-surface case expressed for the minimax surface (edit's file_path/old_string/new_string;
    grep in content mode; glob's pattern/path/limit)."""
    if surface != "minimax" or not isinstance(case.args, dict):
        return case
    args = dict(case.args)
    if case.tool == "grep":
        return replace(case, args={**args, "output_mode": "content"})
    if case.tool != "edit":
        return case
    edits = args.pop("edits", None)
    first = edits[0] if isinstance(edits, list) and edits and isinstance(edits[0], dict) else {}
    out: dict[str, Any] = {"file_path": args.pop("path", None)}
    out["old_string"] = first.get("oldText")
    out["new_string"] = first.get("newText")
    out.update({k: v for k, v in args.items() if k not in ("oldText", "newText")})
    out = {k: v for k, v in out.items() if v is not None}
    return replace(case, args=out)


@dataclass(frozen=True)
class Observed:
    """One side's run of a case: the step's result (status, observation, tree) or, when the
    implementation gave no answer, why (``no_answer``)."""

    step: StepResult | None
    no_answer: str = ""
    unordered: bool = False

    @property
    def answered(self) -> bool:
        return self.step is not None and not self.no_answer

    @property
    def observation(self) -> JsonObj:
        return dict(self.step.observation or {}) if self.step is not None else {}

    @property
    def tree(self) -> dict[str, Any] | None:
        return self.step.tree if self.step is not None else None

    def aspects(self) -> JsonObj:
        """What is shown of this side in reports."""
        if not self.answered:
            return {"status": NO_ANSWER, "message": self.no_answer}
        return {k: v for k, v in self.observation.items() if k != "duration_s"}


def execute(backend: Backend, scenario: Scenario) -> Observed:
    """Run ``scenario`` (one generated call) on ``backend`` with the one executor; an
    implementation that does not answer gives a ``no-answer`` side and is restarted."""
    result = run_scenario(backend, scenario, trees=True, full_output=True)
    unordered = any(step.tool in UNORDERED_TOOLS and scenario.surface == "pi" for step in scenario.steps)
    step = result.steps[0] if result.steps and result.steps[0].observation is not None else None
    if result.status == ERROR or step is None:
        _restart(backend)
        message = result.message or "; ".join(m for s in result.steps for m in s.messages) or result.reason
        return Observed(None, no_answer=message or "no answer", unordered=unordered)
    return Observed(step, unordered=unordered)


def _restart(backend: Backend) -> None:
    try:
        backend.restart()
    except InfrastructureError:
        pass


def differences(a: Observed, b: Observed) -> list[str]:
    """The names of the aspects in which two sides differ: observation keys (``status``, ``text``,
    ``error``, ``details``, ``full_output``…), ``files:<path>`` per workspace path, or
    ``no-answer`` when either side gave none."""
    if not (a.answered and b.answered):
        return [NO_ANSWER]
    out = differing_keys(a.observation, b.observation, unordered_lines=a.unordered or b.unordered)
    return out + [f"files:{p}" for p in differing_paths(a.tree, b.tree)]


def _text(value: Any) -> TextMatch | None:
    return TextMatch(equals=value) if isinstance(value, str) else None


def expectation_of(side: Observed, other: Observed) -> Expectation:
    """What ``side`` showed, as the expectation of the scenario's step: status, text or error,
    ``is_error``, the error kind, and where ``other`` differs in them, the details (a subset match,
    with the keys only ``other`` has as ``details_absent``), the content types, and a check for
    each workspace path. (Differences in the full-output bytes or the image bytes have no
    expectation; the scenario's comment names them.)"""
    obs = side.observation
    theirs = other.observation if other.answered else {}
    files = []
    tree = side.tree or {}
    for path in differing_paths(side.tree, other.tree):
        entry = tree.get(path)
        if entry is None:
            files.append(FileCheck(path, 0, absent=True))
        elif entry.get("kind") == "file" and isinstance(entry.get("sha256"), str):
            files.append(FileCheck(path, 0, sha256=entry["sha256"], mode=entry.get("mode")))
        else:
            files.append(FileCheck(path, 0, kind=str(entry.get("kind")), mode=entry.get("mode")))
    if obs.get("status") == "error":
        return Expectation(status="error", error=_text(obs.get("error")), error_kind=obs.get("error_kind") or None,
                           files=tuple(files))
    details, absent = None, ()
    mine, other_details = obs.get("details"), theirs.get("details")
    if mine != other_details:
        if isinstance(mine, dict) and mine:
            details = mine
        extra = other_details if isinstance(other_details, dict) else {}
        absent = tuple(k for k in extra if not isinstance(mine, dict) or k not in mine)
    types = obs.get("content_types")
    return Expectation(is_error=bool(obs.get("is_error")), text=_text(obs.get("text")), files=tuple(files),
                       details=details, details_absent=absent,
                       content_types=tuple(types) if isinstance(types, list) and types != theirs.get("content_types")
                       else None)


def disagreement_scenario(scenario: Scenario, oracle: Observed, impl: Observed, oracle_label: str) -> Scenario:
    """The generated scenario with the oracle's observation as its expectation: it passes on the
    oracle and fails on the implementation while the two disagree."""
    step = scenario.steps[0]
    expect = expectation_of(oracle, impl) if oracle.answered else Expectation()
    title = f"{scenario.title}: as {oracle_label} answers"
    return replace(scenario, title=title, steps=(replace(step, expect=expect),))
