"""Turning a read ``RecordedSession`` and a starting workspace (or none) into scenario YAML documents:
which calls are imported (``environment`` refuses, contains or conditions shell commands), the
start state and resyncs inferred from the recording (``inference``), step ids, titles, tags,
``--split`` parts, the workspace (referenced through ``workspace.from`` by default, inlined on
request, with the files the trace shows laid over it), the YAML text (with a header comment naming
the recording's agent, version and platform and listing what was skipped, contained, resynced and
inferred), validation of every document with the project loader, and writing without overwriting.

A generated document that the loader rejects, or that loads with different arguments or
workspace bytes than were generated, is a bug of the importer: ``ImporterBug`` is raised and
nothing is written.
"""

from __future__ import annotations

import base64
import os
import re
import shlex
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.corpus.loader import ID_PATTERN, parse_scenario_text
from harness.corpus.workspace_source import entries_digest
from harness.errors import ScenarioError, UsageError
from harness.importers.commands import analyse
from harness.importers.environment import ABORTED_REASON, aborted, decide
from harness.importers.expectations import (
    DEFAULT_EXPECT_MODE,
    TextContext,
    build_expect,
    not_run,
    sibling_cancelled,
)
from harness.importers.inference import ABSENT, OPAQUE, CallView, Inference, Provenance, Resync, State, infer
from harness.importers.mapping import TOOL_ALIASES, Mapped, Skip, map_call
from harness.importers.trace import RecordedSession, ToolCall
from harness.importers.workspace_files import WorkspaceFiles, entry_for_file
from harness.model.scenario import Scenario, encode_text
from harness.report.writers import write_output

DEFAULT_ID_PREFIX = "imported"
IMPORTED_TAG = "imported"
TITLE_MAX_CHARS = 72
SLUG_MAX_CHARS = 48
YAML_WIDTH = 100
# Characters YAML treats as line breaks besides "\n".
YAML_EXTRA_BREAKS = ("\r", "\x85", "\u2028", "\u2029")
PI_PROFILE: dict[str, Any] = {"base": "upstream"}
REPLAY_OS = "linux"
PLATFORM_CHOICES: tuple[str, ...] = ("auto", "any", "linux", "macos", "windows")
SURFACE_CHOICES: tuple[str, ...] = ("auto", "claude-code", "pi", "minimax", "other")
BASH_NAMES = ("bash", "execute_bash", "shell", "local_shell", "shell_command", "exec_command", "run_shell_command",
              "execute_command", "run_terminal_cmd", "run_in_terminal", "run_terminal_command")
# A replayed `git commit` needs an identity; the replay's HOME is fresh, so the scenario names one.
GIT_IDENTITY = {"GIT_AUTHOR_NAME": "toolproof replay", "GIT_AUTHOR_EMAIL": "replay@toolproof.invalid",
                "GIT_COMMITTER_NAME": "toolproof replay", "GIT_COMMITTER_EMAIL": "replay@toolproof.invalid"}
NO_WORKSPACE = WorkspaceFiles(entries=(), source="no workspace (the start state is inferred from the trace)")
SIBLING_REASON = ("cancelled by Claude Code because a parallel call of the same turn failed "
                  "(\"Sibling tool call errored\"); it never ran")


class ImporterBug(Exception):
    """A generated scenario does not load as generated: a bug in the importer, never the user's."""


@dataclass(frozen=True)
class ImportOptions:
    surface: str = "minimax"
    expect: str = DEFAULT_EXPECT_MODE
    root: str | None = None
    split: int | None = None
    id_prefix: str = DEFAULT_ID_PREFIX
    timeout_unit: str | None = None
    git: bool = False
    tool_map: dict[str, str] = field(default_factory=dict)
    recorded_surface: str = "auto"
    platform: str = "auto"
    inline_workspace: bool = False
    out_dir: str = "."


@dataclass(frozen=True)
class SkippedCall:
    line: int
    name: str
    reason: str


@dataclass(frozen=True)
class GeneratedScenario:
    """One scenario document: its id, file name, YAML text and the loaded (validated) form."""

    id: str
    file_name: str
    text: str
    scenario: Scenario
    origins: tuple[StepOrigin, ...] = ()


@dataclass(frozen=True)
class SessionImport:
    """What importing one session produced and left out."""

    session: RecordedSession
    root: str | None
    scenarios: tuple[GeneratedScenario, ...]
    imported: int
    steps: int
    skipped: tuple[SkippedCall, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)
    text_steps: int = 0
    outcome_steps: int = 0
    recorded_calls: int = 0
    resyncs: tuple[Resync, ...] = ()
    contained: tuple[tuple[int, str], ...] = ()  # (trace line, why) of steps that run only in a container
    platform_bound: tuple[tuple[int, str], ...] = ()  # (trace line, why) of steps bound to a platform
    provenance: tuple[Provenance, ...] = ()
    start: dict[str, State] = field(default_factory=dict)  # the start files inferred from the trace
    with_workspace: bool = True

    def skip_counts(self) -> list[tuple[str, int]]:
        return Counter(s.reason for s in self.skipped).most_common()


class _Dumper(yaml.SafeDumper):
    pass


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style: str | None = None
    if any(ch in value for ch in YAML_EXTRA_BREAKS):
        style = '"'  # plain and block scalars would fold these line breaks; double quotes escape them
    elif "\n" in value.rstrip("\n"):
        style = "|"
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_representer)


def slug(text: str, max_chars: int = SLUG_MAX_CHARS) -> str:
    """A lower-case id segment matching the loader's id pattern ('' if nothing usable is left)."""
    s = re.sub(r"[^a-z0-9.-]+", "-", text.lower())
    s = re.sub(r"^[^a-z0-9]+", "", s)[:max_chars]
    return s.rstrip("-._")


def title_for(session: RecordedSession) -> str:
    first = session.first_prompt.strip().split("\n", 1)[0].strip() if session.first_prompt else ""
    if not first:
        return f"Imported {session.format} session {session.session_id}"
    return first if len(first) <= TITLE_MAX_CHARS else first[: TITLE_MAX_CHARS - 1].rstrip() + "…"


@dataclass
class _CallPlan:
    """One recorded call on its way to steps: its mapping (None when it has none), why it is
    skipped ("" when imported), the ``when`` of its steps, its expectations and its id."""

    n: int
    call: ToolCall
    mapped: Mapped | None = None
    skip: str = ""
    when: dict[str, Any] = field(default_factory=dict)
    contained: str = ""
    platform: str = ""
    expects: list[dict[str, Any]] = field(default_factory=list)
    setup_expects: list[dict[str, Any]] = field(default_factory=list)
    base_id: str = ""
    text_ok: bool = False


def recorded_surface(session: RecordedSession, opts: ImportOptions) -> str | None:
    """The surface the recording's calls were made on: the option, else what the trace shows."""
    if opts.recorded_surface != "auto":
        return None if opts.recorded_surface == "other" else opts.recorded_surface
    return session.surface


def _pre_skip(call: ToolCall) -> str:
    if call.result is None:
        return f"no recorded result: {call.missing_reason}"
    if sibling_cancelled(call.result):
        return SIBLING_REASON
    if not_run(call.result):
        return "rejected or interrupted in the trace (it never ran)"
    if call.name.lower() in BASH_NAMES and aborted(call.result):
        return ABORTED_REASON
    return ""


def _bash_policy(plan: _CallPlan, opts: ImportOptions, workspace: WorkspaceFiles) -> None:
    """Refuse, contain or condition a call's shell steps (``harness.importers.environment``)."""
    assert plan.mapped is not None and plan.call.result is not None
    paths = {m.path for m in workspace.members}
    for step in plan.mapped.steps:
        if step.tool != "bash":
            continue
        decision = decide(analyse(str(step.args.get("command", ""))), plan.call.result,
                          background=step.args.get("run_in_background") is True,
                          platform_any=opts.platform == "any", git_repository=opts.git,
                          has_path=lambda p: p in paths or any(q.startswith(p + "/") for q in paths))
        if decision.skip:
            plan.skip = decision.skip
            return
        plan.when.update(decision.when)
        plan.contained = plan.contained or decision.contained
        plan.platform = plan.platform or decision.platform


def _plan(session: RecordedSession, opts: ImportOptions, root: str | None, workspace: WorkspaceFiles) -> list[_CallPlan]:
    plans: list[_CallPlan] = []
    for n, call in enumerate(session.calls, 1):
        plan = _CallPlan(n, call, skip=_pre_skip(call))
        plans.append(plan)
        if plan.skip:
            continue
        mapped = map_call(call, opts.surface, root, session.format, timeout_unit=opts.timeout_unit,
                          tool_map=opts.tool_map)
        if isinstance(mapped, Skip):
            plan.skip = mapped.reason
            continue
        plan.mapped = mapped
        _bash_policy(plan, opts, workspace)
    return plans


def _expectations(plans: list[_CallPlan], session: RecordedSession, opts: ImportOptions, root: str | None) -> int:
    """Fill in the expectations and step ids of the imported calls; returns how many compare text."""
    text_steps = 0
    used_ids: set[str] = set()
    same_surface = recorded_surface(session, opts) == opts.surface
    for plan in plans:
        if plan.skip or plan.mapped is None:
            continue
        call, mapped = plan.call, plan.mapped
        assert call.result is not None
        first = mapped.steps[0]
        offset = first.args.get("offset")
        read_start = int(offset) if isinstance(offset, (int, float)) and not isinstance(offset, bool) and offset >= 1 else 1
        whole = len(mapped.steps) == 1
        # Text is compared only where the recording's surface is the target's, for a call made
        # under the surface's own tool name (an adapted tool of another agent words its results its own way).
        mapped_to = opts.tool_map.get(call.name) or opts.tool_map.get(call.name.lower())
        native = (mapped_to or call.name).lower() in TOOL_ALIASES and mapped.canonical == first.tool
        plan.text_ok = whole and same_surface and native
        text_steps += 1 if plan.text_ok and opts.expect == "text" else 0
        for step in mapped.steps:
            ctx = TextContext(tool=step.tool, surface=opts.surface, root=root, path_pairs=mapped.path_pairs,
                              read_start=read_start)
            plan.expects.append(build_expect(call.result, opts.expect, ctx, text_allowed=plan.text_ok, args=step.args,
                                             last_part=step.part == step.parts))
            plan.setup_expects.append(build_expect(call.result, "none", ctx))
        base = slug(call.call_id) or f"call-{plan.n}"
        if base in used_ids or not ID_PATTERN.fullmatch(base) or base.startswith(("resync-", "setup-")):
            base = f"call-{plan.n}"
        used_ids.add(base)
        plan.base_id = base
    return text_steps


def _repository(workspace: WorkspaceFiles) -> dict[str, State]:
    """The workspace's files as text (``OPAQUE`` when not UTF-8)."""
    out: dict[str, State] = {}
    for m in workspace.members:
        if m.kind != "file":
            continue
        try:
            out[m.path] = m.data.decode("utf-8-sig")
        except UnicodeDecodeError:
            out[m.path] = OPAQUE
    return out


def _infer(plans: list[_CallPlan], session: RecordedSession, workspace: WorkspaceFiles, root: str | None) -> Inference:
    views = [CallView(index=p.n, line=p.call.line, steps=p.mapped.steps if p.mapped else (), result=p.call.result,
                      imported=not p.skip, skip=p.skip, numbered=session.format != "pi") for p in plans]
    inference = infer(views, _repository(workspace), root, with_repository=bool(workspace.kind))
    for plan in plans:
        if not plan.skip and plan.n in inference.dropped:
            plan.skip = inference.dropped[plan.n]
    return inference


@dataclass(frozen=True)
class StepOrigin:
    """Where a generated step came from: ``kind`` ``call`` (a recorded call, ``line`` its trace
    line), ``resync`` (``reason``, ``cause``, ``path``), ``setup`` (an earlier part's call replayed
    first)."""

    step_id: str
    kind: str
    line: int
    tool: str
    path: str = ""
    cause: str = ""
    reason: str = ""
    when: tuple[tuple[str, Any], ...] = ()


def _resync_doc(k: int, r: Resync) -> dict[str, Any]:
    if r.content is None:
        step: dict[str, Any] = {"id": f"resync-{k}", "tool": "bash", "args": {"command": f"rm -f -- {shlex.quote(r.path)}"}}
    else:
        step = {"id": f"resync-{k}", "tool": "write", "args": {"path": r.path, "content": r.content}}
    step["expect"] = "none"
    step["reason"] = f"resync, not a recorded call: {r.reason}"
    return step


def _call_docs(plans: list[_CallPlan], resyncs: list[Resync]
               ) -> tuple[list[list[tuple[dict[str, Any], dict[str, Any], StepOrigin]]], list[Resync]]:
    """Per imported call, its step documents (normal, setup form, origin) with the resyncs that
    go before them; returns those and the resyncs that were placed."""
    pending = sorted(resyncs, key=lambda r: (r.index, r.part))
    placed: list[Resync] = []
    out = []
    k = 0
    for plan in plans:
        if plan.skip or plan.mapped is None:
            continue
        docs = []
        for step, expect, setup_expect in zip(plan.mapped.steps, plan.expects, plan.setup_expects, strict=True):
            while pending and (pending[0].index, pending[0].part) <= (plan.n, step.part):
                r = pending.pop(0)
                k += 1
                doc = _resync_doc(k, r)
                placed.append(r)
                docs.append((doc, doc, StepOrigin(doc["id"], "resync", plan.call.line, doc["tool"], r.path, r.cause,
                                                  r.reason)))
            sid = plan.base_id if step.parts == 1 else f"{plan.base_id}.{step.part}"
            doc = {"id": sid, "tool": step.tool, "args": step.args}
            if plan.when and step.tool == "bash":
                doc["when"] = dict(plan.when)
            normal, setup = dict(doc), dict(doc)
            if expect:
                normal["expect"] = expect
            if setup_expect:
                setup["expect"] = setup_expect
            docs.append((normal, setup, StepOrigin(sid, "call", plan.call.line, step.tool,
                                                   when=tuple(sorted(doc.get("when", {}).items())))))
        out.append(docs)
    return out, placed


def _as_setup(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "id": f"setup-{doc['id']}"}


def _header(session: RecordedSession, part: str, imp_counts: tuple[int, int], skipped: list[SkippedCall],
            opts: ImportOptions, extra: list[str]) -> str:
    imported, resyncs = imp_counts
    lines = [f"# Imported by toolproof from {Path(session.path).name} ({session.format}, session "
             f"{session.session_id}){part}; surface {opts.surface}, expectations: {opts.expect}.",
             f"# {recording_line(session)}.",
             f"# {imported} call(s) imported, {len(skipped)} skipped, {resyncs} resync step(s)."]
    for s in skipped:
        lines.append(f"#   skipped trace line {s.line}: {s.reason}")
    lines.extend(f"#   {e}" for e in extra)
    return "\n".join(line.replace("\n", " ") for line in lines) + "\n"


def recording_line(session: RecordedSession) -> str:
    """What the trace shows of the agent, its version and the platform (one line)."""
    agent = session.agent
    parts = [f"recorded with {agent.name or session.format}" + (f" {agent.version}" if agent.version else "")]
    if agent.detail:
        parts.append(agent.detail)
    plat = session.platform
    parts.append(f"platform {plat.os} (from the {plat.evidence})" if plat.os
                 else "platform unknown (the trace does not show it)")
    return "; ".join(parts)



def render_yaml(doc: dict[str, Any]) -> str:
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False,
                     width=YAML_WIDTH)


def _expected_bytes(entry: dict[str, Any]) -> bytes | None:
    if "base64" in entry:
        return base64.b64decode(entry["base64"])
    if "text" in entry:
        return encode_text(entry["text"], entry.get("encoding", "utf-8"), bool(entry.get("bom")), entry.get("eol", "lf"))
    return None


def _start_entries(start: dict[str, State]) -> list[dict[str, Any]]:
    return [entry_for_file(path, content.encode("utf-8")) for path, content in sorted(start.items())
            if isinstance(content, str)]


def _absent(start: dict[str, State]) -> list[str]:
    return sorted(p for p, c in start.items() if c is ABSENT)


def validate_generated(text: str, path: str, doc: dict[str, Any], workspace: WorkspaceFiles,
                       start: dict[str, State] | None = None) -> Scenario:
    """Load ``text`` (as the file ``path``, so a referenced workspace resolves as it will after
    writing) with the project loader and check it carries exactly what was generated: the
    arguments of every step, the referenced workspace as it was read (less the files the trace
    shows absent), and the bytes of every inline file."""
    file_name = os.path.basename(path)
    try:
        scenario = parse_scenario_text(text, path)
    except ScenarioError as exc:
        raise ImporterBug("a generated scenario does not load (importer bug):\n" + "\n".join(exc.problems)) from None
    for loaded, generated in zip(scenario.steps, doc["steps"], strict=True):
        if loaded.args != generated["args"] or loaded.tool != generated["tool"]:
            raise ImporterBug(f"{file_name}: step {generated['id']} does not load with the generated arguments")
    ws_doc = doc.get("workspace", {})
    loaded_by_path = {e.path: e for e in scenario.workspace.entries}
    inline = {e["path"]: e for e in ws_doc.get("files", [])}
    if "from" in ws_doc:
        gone = set(_absent(start or {}))
        want = [(e.path, e.kind, e.data, e.target) for e in workspace.members
                if e.path not in inline and e.path not in gone]
        got = [(e.path, e.kind, e.data, e.target) for e in scenario.workspace.entries if e.path not in inline]
        if got != want:
            raise ImporterBug(f"{file_name}: the referenced workspace does not load as it was read")
    if set(inline) - set(loaded_by_path):
        raise ImporterBug(f"{file_name}: inline workspace files are missing when loaded")
    for p, entry in inline.items():
        want_bytes = _expected_bytes(entry)
        if want_bytes is not None and loaded_by_path[p].data != want_bytes:
            raise ImporterBug(f"{file_name}: workspace file {p} does not load with its exact bytes")
    return scenario


def _glob_escape(path: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", path)


def workspace_doc(workspace: WorkspaceFiles, opts: ImportOptions, start: dict[str, State] | None = None) -> dict[str, Any]:
    """The scenario's ``workspace`` section: a ``from`` reference (path relative to the output
    directory, the resolved commit of a repo, the excludes — plus the files the trace shows
    absent —, the content digest) unless the workspace is inlined or there is none; then the
    start files inferred from the trace laid over it (``files``)."""
    start = start or {}
    ws: dict[str, Any] = {}
    overlay = _start_entries(start)
    gone = set(_absent(start))
    if workspace.kind and not opts.inline_workspace:
        location = workspace.location
        try:
            location = os.path.relpath(location, os.path.abspath(opts.out_dir))
        except ValueError:  # another drive (Windows): keep it absolute
            pass
        ref: dict[str, Any] = {workspace.kind: location.replace(os.sep, "/")}
        if workspace.rev:
            ref["rev"] = workspace.rev
        excludes = list(workspace.excludes) if workspace.kind != "archive" else []
        excludes += [_glob_escape(p) for p in sorted(gone)]
        if excludes and workspace.kind == "archive":
            raise ImporterBug("an archive workspace cannot leave files out")  # guarded by the caller
        if excludes:
            ref["exclude"] = excludes
        kept = tuple(m for m in workspace.members if m.path not in gone)
        ref["sha256"] = entries_digest(kept)
        ws["from"] = ref
        if overlay:
            ws["files"] = overlay
    else:
        over = {e["path"] for e in overlay}
        files = [dict(e) for e in workspace.entries if e["path"] not in over and e["path"] not in gone] + overlay
        if files:
            ws["files"] = sorted(files, key=lambda e: str(e["path"]))
    if opts.git:
        ws["git"] = True
    return ws


def _subagent_import(session: RecordedSession, root: str | None) -> SessionImport:
    reason = (f"subagent transcript of session {session.subagent_of}: its calls ran in the middle of the parent "
              "session, from files this import cannot reconstruct")
    skipped = tuple(SkippedCall(c.line, c.name, reason) for c in session.calls)
    return SessionImport(session=session, root=root, scenarios=(), imported=0, steps=0, skipped=skipped,
                         notes=(reason + "; not imported",), recorded_calls=len(session.calls))


def _scenario_id(session: RecordedSession, opts: ImportOptions, taken: set[str]) -> str:
    """``<prefix>/<session slug>``, made unique among ``taken`` (two traces may share a session id
    or slug): the trace file's name is added, then a number."""
    sid = slug(session.session_id) or slug(Path(session.path).stem) or "session"
    stem = slug(Path(session.path).stem)
    candidates = [sid, *([f"{sid}-{stem}"] if stem and stem != sid else []), *(f"{sid}-{k}" for k in range(2, 1000))]
    for c in candidates:
        if f"{opts.id_prefix}/{c}" not in taken and not any(t.startswith(f"{opts.id_prefix}/{c}-part") for t in taken):
            taken.add(f"{opts.id_prefix}/{c}")
            return c
    raise ImporterBug(f"no free scenario id for session {session.session_id}")


def _workspace_notes(inference: Inference, workspace: WorkspaceFiles) -> list[str]:
    prov = inference.provenance
    trace = [p for p in prov if p.source == "trace"]
    agree = [p for p in prov if p.source == "both" and not p.disagreed]
    disagree = [p for p in prov if p.disagreed]
    repo = [p for p in prov if p.source == "repository"]
    if not workspace.kind:
        return [f"start state inferred from the trace alone (no workspace given): {len(trace)} file(s)"]
    note = (f"start state: {len(repo) + len(agree)} file(s) from the repository ({len(agree)} of them as the trace shows "
            f"them), {len(trace)} from the trace only, {len(disagree)} where the repository and the trace disagree")
    return [note, *(p.describe() for p in disagree), *(p.describe() for p in trace)]


def build_session(session: RecordedSession, workspace: WorkspaceFiles | None, opts: ImportOptions,
                  taken: set[str] | None = None) -> SessionImport:
    """The scenario documents of one session (none when no call could be imported). ``workspace``
    None: no starting workspace, the start state is inferred from the trace alone. ``taken``: the
    scenario ids already used by other sessions of the same import (updated)."""
    workspace = workspace if workspace is not None else NO_WORKSPACE
    taken = set() if taken is None else taken
    root = opts.root or session.cwd
    if session.subagent_of:
        return _subagent_import(session, root)
    plans = _plan(session, opts, root, workspace)
    inference = _infer(plans, session, workspace, root)
    if workspace.kind == "archive" and not opts.inline_workspace and _absent(inference.start):
        inference.start = {p: c for p, c in inference.start.items() if c is not ABSENT}
    text_steps = _expectations(plans, session, opts, root)
    imported_plans = [p for p in plans if not p.skip and p.mapped is not None]
    skipped = [SkippedCall(p.call.line, p.call.name, p.skip) for p in plans if p.skip]
    plan_notes = [n for p in imported_plans for n in p.mapped.notes] if imported_plans else []  # type: ignore[union-attr]
    notes = [*session.notes, *workspace.notes, recording_line(session),
             *(f"{k} ×{v}" if v > 1 else k for k, v in Counter(plan_notes).items())]
    if root is None:
        notes.append("the recorded workspace root is unknown (pass --root): absolute paths cannot be made relative")
    outcome_steps = len(imported_plans) - text_steps if opts.expect == "text" else 0
    if outcome_steps:
        surface = recorded_surface(session, opts) or "an unknown surface"
        notes.append(f"text compared on {text_steps} of {len(imported_plans)} call(s); the others (recorded on "
                     f"{surface}, or with another agent's tool) check outcomes instead: status, exit code, files")
    notes.extend(_workspace_notes(inference, workspace))
    if opts.platform == "any" and session.platform.os and session.platform.os != REPLAY_OS:
        notes.append(f"recorded on {session.platform.os}; --platform any: every step runs on any platform")
    per_call, placed = _call_docs(plans, inference.resyncs)
    contained = tuple((p.call.line, p.contained) for p in imported_plans if p.contained)
    platform_bound = tuple((p.call.line, p.platform) for p in imported_plans if p.platform)
    extra = [f"runs only in a container (trace line {line}): {why}" for line, why in contained]
    extra += [f"platform-bound (trace line {line}): {why}" for line, why in platform_bound]
    extra += [f"resync: {r.reason}" for r in placed]
    extra += [p.describe() for p in inference.provenance if p.source == "trace" or p.disagreed]
    sid = _scenario_id(session, opts, taken) if imported_plans else ""
    chunks = [per_call]
    if opts.split and len(per_call) > opts.split:
        chunks = [per_call[i:i + opts.split] for i in range(0, len(per_call), opts.split)]
    base_doc: dict[str, Any] = {}
    if opts.git:
        base_doc["env"] = dict(GIT_IDENTITY)
    if opts.surface != "minimax":
        base_doc["surface"] = opts.surface
        base_doc["profile"] = dict(PI_PROFILE)
    ws = workspace_doc(workspace, opts, inference.start)
    generated: list[GeneratedScenario] = []
    done: list[list[tuple[dict[str, Any], dict[str, Any], StepOrigin]]] = []
    for k, chunk in enumerate(chunks, 1):
        if not chunk:
            continue
        multi = len(chunks) > 1
        scenario_id = f"{opts.id_prefix}/{sid}" + (f"-part{k}" if multi else "")
        if multi:
            taken.add(scenario_id)
        part = f", part {k} of {len(chunks)}" if multi else ""
        doc: dict[str, Any] = {"id": scenario_id,
                               "title": title_for(session) + (f" (part {k}/{len(chunks)})" if multi else ""),
                               "tags": [IMPORTED_TAG, session.format], **base_doc}
        if ws:
            doc["workspace"] = ws
        setup = [(_as_setup(s), StepOrigin(f"setup-{o.step_id}", "setup", o.line, o.tool, o.path, o.cause, o.reason,
                                            o.when)) for call_docs in done for _, s, o in call_docs]
        current = [(n, o) for call_docs in chunk for n, _, o in call_docs]
        doc["steps"] = [d for d, _ in setup] + [d for d, _ in current]
        origins = tuple(o for _, o in setup) + tuple(o for _, o in current)
        chunk_skipped = skipped if k == 1 else []
        file_name = scenario_id.rsplit("/", 1)[-1] + ".yaml"
        text = _header(session, part, (len(imported_plans), len(placed)), chunk_skipped, opts,
                       extra if k == 1 else []) + render_yaml(doc)
        scenario = validate_generated(text, os.path.join(opts.out_dir, file_name), doc, workspace, inference.start)
        generated.append(GeneratedScenario(scenario_id, file_name, text, scenario, origins))
        done.extend(chunk)
    steps = sum(len(p.mapped.steps) for p in imported_plans if p.mapped)
    return SessionImport(session=session, root=root, scenarios=tuple(generated), imported=len(imported_plans),
                         steps=steps, skipped=tuple(skipped), notes=tuple(notes), text_steps=text_steps,
                         outcome_steps=outcome_steps, recorded_calls=len(session.calls),
                         resyncs=tuple(placed), contained=contained, platform_bound=platform_bound,
                         provenance=tuple(inference.provenance), start=dict(inference.start),
                         with_workspace=bool(workspace.kind))


def write_scenarios(imports: list[SessionImport], out_dir: str, *, force: bool) -> list[str]:
    """Write every generated scenario into ``out_dir``; refuses (``UsageError``, nothing
    written) when a file exists and ``force`` is False, or two scenarios share a file name."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out_dir}: not a directory")
    targets: dict[str, GeneratedScenario] = {}
    for imp in imports:
        for g in imp.scenarios:
            if g.file_name in targets:
                raise UsageError(f"two sessions produce the same scenario id {g.id!r}; import them separately "
                                 "or give each its own --out directory")
            targets[g.file_name] = g
    existing = sorted(name for name in targets if (out / name).exists())
    if existing and not force:
        raise UsageError(f"{len(existing)} file(s) already exist in {out_dir} ({', '.join(existing)}); "
                         "pass --force to overwrite them")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {out_dir}: cannot create the directory: {exc}") from None
    written = []
    for name, g in targets.items():
        write_output(str(out / name), g.text, "scenario")
        written.append(str(out / name))
    return written
