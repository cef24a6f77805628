"""Contradictions in a corpus: two scenarios that can both run on one implementation, make the same
calls on the same workspace, and demand results no single observation satisfies (issue: a
patch-off twin beside its patch-on scenario on an implementation that cannot apply profiles).

For each implementation **model** (what it declares, whether it applies profiles, the surfaces it
speaks), the scenarios that would run there (``harness.run.runner.skip_reason``) are grouped by what
the implementation receives: the starting workspace, the environment overlay, the profile (only
where the implementation applies it) and the calls, mapped to the surface it speaks. Two scenarios
whose calls agree up to step *k* are compared on steps 1..*k* (and on their final files when every
call agrees): where one expectation pins a value exactly (the outcome, the model-visible text, a
file's bytes), the other's checks are run against that value with the runner's own comparators; a
mismatch is a contradiction.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.backends.base import Capabilities, HelloInfo
from harness.model.features import ALL, FEATURE_NAMES, PI_FEATURES, UPSTREAM_FEATURES, patch_names
from harness.model.file_state import FileState
from harness.model.scenario import Expectation, FileCheck, Scenario, Step
from harness.run.compare import check_file, check_text
from harness.run.read_view import read_view
from harness.run.runner import LEVEL_FULL, capability_mismatch, declaration_for, skip_reason
from harness.run.surface_map import map_call, target_surface

LINUX = {"os": "linux", "shell": "bash", "symlinks": True, "fifo": True, "case_sensitive_fs": True, "root": False,
         "isolation": "container"}
TOOLS = ["read", "write", "edit", "grep", "glob", "bash"]
OPS = ["hello", "workspace", "call", "cancel", "task_output", "task_stop", "task_query", "classify", "fs_read"]


@dataclass(frozen=True)
class Model:
    """An implementation as far as the runner's choices go."""

    name: str
    surfaces: tuple[str, ...]
    dialects: tuple[str, ...] = ()
    features: tuple[str, ...] = ()
    absent_patches: Any = ()
    profile_overlay: bool = False
    tools: tuple[str, ...] = tuple(TOOLS)
    ops: tuple[str, ...] = tuple(OPS)
    caps: dict[str, Any] = field(default_factory=lambda: dict(LINUX))

    def hello(self) -> HelloInfo:
        caps = {**self.caps, **({"profile_overlay": True} if self.profile_overlay else {})}
        return HelloInfo.from_json({
            "implementation": self.name, "version": "0", "protocol": 1, "surface": self.surfaces[0],
            "surfaces": list(self.surfaces), "tools": list(self.tools), "ops": list(self.ops),
            "capabilities": caps, "dialects": list(self.dialects), "features": list(self.features),
            "absent_patches": self.absent_patches})


# The kinds of implementation the shipped corpus meets: the reference and its upstream emulation
# (they apply profiles), a published pi release, a layer declaring nothing, and a MiniMax-like
# layer declaring every feature that cannot apply profiles.
MODELS: tuple[Model, ...] = (
    Model("reference", ("minimax", "pi"), ("minimax",), FEATURE_NAMES, (), True),
    Model("upstream", ("minimax", "pi"), ("pi",), UPSTREAM_FEATURES, ALL, True),
    Model("pi", ("pi",), ("pi",), PI_FEATURES, ALL, False, ("read", "write", "edit", "bash"),
          ("hello", "workspace", "call", "cancel", "fs_read")),
    Model("plain-layer", ("minimax",)),
    Model("minimax-layer", ("minimax",), ("minimax",), FEATURE_NAMES),
)


@dataclass(frozen=True)
class Contradiction:
    model: str
    a: str
    b: str
    where: str  # the step (or ``files``)
    detail: str

    def render(self) -> str:
        return f"on {self.model}: {self.a} and {self.b} make the same calls; at {self.where}: {self.detail}"


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=repr).encode()).hexdigest()[:16]


def _workspace_key(s: Scenario) -> str:
    entries = [(e.path, e.kind, e.data.hex(), e.target, e.mode, e.mtime) for e in s.workspace.entries]
    return _digest([sorted(entries), s.workspace.git])


def _calls(s: Scenario, model: Model, caps: Capabilities) -> list[tuple[Step, str]]:
    """The steps that run on ``model`` (``when`` met, arguments mapped) with their request key;
    stops at a step that cannot be mapped (the runner cuts the scenario there)."""
    surface = target_surface(s.surface, model.surfaces) or s.surface
    out: list[tuple[Step, str]] = []
    for st in s.steps:
        if capability_mismatch([(k, v) for k, v in st.when.items() if k != "programs"], caps):
            continue
        args = st.args
        if st.tool is not None and surface != s.surface:
            mapped = map_call(st.tool, args, s.surface, surface)
            if not mapped.ok:
                break
            args = mapped.args
        out.append((st, _digest([st.tool, st.op, args])))
    return out


def _checks(st: Step, dialects: tuple[str, ...]) -> list[Expectation]:
    return [st.expectation_for("linux"), *(exp for _, exp in st.wording_for(dialects))]


def _failed(exp: Expectation) -> bool | None:
    if exp.failed is not None:
        return exp.failed
    if exp.status == "error" or exp.is_error is True:
        return True
    if exp.status == "result" and exp.is_error is False:
        return False
    return None


def _witness(exps: Sequence[Expectation]) -> tuple[bool | None, str | None, str | None]:
    """What the expectations of one step pin exactly: the outcome, the form, the model-visible text."""
    failed = form = text = None
    for e in exps:
        failed = _failed(e) if failed is None else failed
        if e.status is not None and (e.text is not None or e.error is not None or e.is_error is not None
                                     or (e.failed is None and e.output is None and e.content is None)):
            form = form or e.status
        for match, status in ((e.text, "result"), (e.error, "error"), (e.output, None)):
            if match is not None and match.equals is not None and text is None:
                text = match.equals
                form = form or status
    return failed, form, text


def _against(exps: Sequence[Expectation], failed: bool | None, form: str | None, text: str | None) -> list[str]:
    """The checks of ``exps`` that a call pinned to (failed, form, text) cannot satisfy."""
    out: list[str] = []
    for e in exps:
        mine = _failed(e)
        if failed is not None and mine is not None and mine != failed:
            out.append(f"failed: {str(mine).lower()} against {str(failed).lower()}")
        if form is not None and e.status is not None and e.status != form and (
                e.text is not None or e.error is not None or e.is_error is not None):
            out.append(f"status: {e.status} against {form}")
        if text is None:
            continue
        matches = [("output", e.output, text)]
        if form == "result" and e.status == "result":
            matches.append(("text", e.text, text))
        if form == "error" and e.status == "error":
            matches.append(("error", e.error, text))
        if e.content is not None or e.checks_next_offset:
            view = read_view(text)
            matches.append(("content", e.content, view.content))
            if e.checks_next_offset and e.next_offset != view.next_offset:
                out.append(f"next_offset: {e.next_offset} against {view.next_offset}")
        for label, match, value in matches:
            if match is not None and not match.snapshot:
                out.extend(m.message for m in check_text(label, match, value))
    return out


def _file_conflicts(a: Iterable[FileCheck], b: Iterable[FileCheck]) -> list[str]:
    out: list[str] = []
    theirs = {f.path: f for f in b}
    for fc in a:
        other = theirs.get(fc.path)
        if other is None:
            continue
        if fc.absent:
            state = FileState(fc.path, "absent")
        elif fc.expected_bytes() is not None:
            state = FileState(fc.path, "file", data=fc.expected_bytes())
        else:
            continue
        out.extend(m.message for m in check_file(other, state))
    return out


def _compare(a: Scenario, b: Scenario, ca: list[tuple[Step, str]], cb: list[tuple[Step, str]],
             dialects_a: tuple[str, ...], dialects_b: tuple[str, ...]) -> tuple[str, str] | None:
    n = 0
    while n < min(len(ca), len(cb)) and ca[n][1] == cb[n][1]:
        n += 1
    for (sa, _), (sb, _) in zip(ca[:n], cb[:n], strict=True):
        ea, eb = _checks(sa, dialects_a), _checks(sb, dialects_b)
        found = _against(eb, *_witness(ea)) + _against(ea, *_witness(eb))
        found += _file_conflicts([f for e in ea for f in e.files], [f for e in eb for f in e.files])
        found += _file_conflicts([f for e in eb for f in e.files], [f for e in ea for f in e.files])
        if found:
            return sa.id, "; ".join(dict.fromkeys(found))
    if n and n == len(ca) == len(cb) == len(a.steps) == len(b.steps):
        found = _file_conflicts(a.files, b.files) + _file_conflicts(b.files, a.files)
        if found:
            return "files", "; ".join(dict.fromkeys(found))
    return None


def contradictions(scenarios: Sequence[Scenario], models: Sequence[Model] = MODELS,
                   level: str = LEVEL_FULL) -> list[Contradiction]:
    out: list[Contradiction] = []
    for model in models:
        hello = model.hello()
        groups: dict[str, list[tuple[Scenario, list[tuple[Step, str]], tuple[str, ...]]]] = {}
        for s in scenarios:
            if skip_reason(s, hello) is not None:
                continue
            calls = _calls(s, model, hello.capabilities)
            if not calls:
                continue
            profile = _digest(s.profile) if model.profile_overlay else ""
            key = _digest([_workspace_key(s), s.env, profile, calls[0][1]])
            dialects = declaration_for(s, hello).dialects if level == LEVEL_FULL else ()
            groups.setdefault(key, []).append((s, calls, dialects))
        for members in groups.values():
            for i, (a, ca, da) in enumerate(members):
                for b, cb, db in members[i + 1:]:
                    found = _compare(a, b, ca, cb, da, db)
                    if found:
                        out.append(Contradiction(model.name, a.id, b.id, *found))
    return out


__all__ = ["MODELS", "Contradiction", "Model", "contradictions", "patch_names"]
