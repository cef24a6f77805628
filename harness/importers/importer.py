"""Turning a read ``RecordedSession`` and a starting workspace into scenario YAML documents: step ids,
titles, tags, ``--split`` parts, the platform requirement, the workspace (referenced through
``workspace.from`` by default, inlined on request), the YAML text (with a header comment naming
the recording's agent, version and platform and listing what was skipped), validation of every
document with the project loader, and writing without overwriting.

A generated document that the loader rejects, or that loads with different arguments or
workspace bytes than were generated, is a bug of the importer: ``ImporterBug`` is raised and
nothing is written.
"""

from __future__ import annotations

import base64
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.corpus.loader import ID_PATTERN, parse_scenario_text
from harness.errors import ScenarioError, UsageError
from harness.importers.expectations import (
    DEFAULT_EXPECT_MODE,
    TextContext,
    build_expect,
    not_run,
    sibling_cancelled,
)
from harness.importers.mapping import TOOL_ALIASES, Mapped, Skip, map_call
from harness.importers.trace import RecordedSession
from harness.importers.workspace_files import WorkspaceFiles
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
    requires_os: str | None = None
    text_steps: int = 0
    outcome_steps: int = 0

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
class _Planned:
    call_line: int
    mapped: Mapped
    expects: list[dict[str, Any]]
    setup_expects: list[dict[str, Any]]
    base_id: str


def recorded_surface(session: RecordedSession, opts: ImportOptions) -> str | None:
    """The surface the recording's calls were made on: the option, else what the trace shows."""
    if opts.recorded_surface != "auto":
        return None if opts.recorded_surface == "other" else opts.recorded_surface
    return session.surface


def _plan(session: RecordedSession, opts: ImportOptions, root: str | None
          ) -> tuple[list[_Planned], list[SkippedCall], list[str], int]:
    planned: list[_Planned] = []
    skipped: list[SkippedCall] = []
    notes: list[str] = []
    text_steps = 0
    used_ids: set[str] = set()
    same_surface = recorded_surface(session, opts) == opts.surface
    for n, call in enumerate(session.calls, 1):
        if call.result is None:
            skipped.append(SkippedCall(call.line, call.name, f"no recorded result: {call.missing_reason}"))
            continue
        if sibling_cancelled(call.result):
            skipped.append(SkippedCall(call.line, call.name, SIBLING_REASON))
            continue
        if not_run(call.result):
            skipped.append(SkippedCall(call.line, call.name, "rejected or interrupted in the trace (it never ran)"))
            continue
        mapped = map_call(call, opts.surface, root, session.format, timeout_unit=opts.timeout_unit,
                          tool_map=opts.tool_map)
        if isinstance(mapped, Skip):
            skipped.append(SkippedCall(call.line, call.name, mapped.reason))
            continue
        notes.extend(mapped.notes)
        first = mapped.steps[0]
        offset = first.args.get("offset")
        read_start = int(offset) if isinstance(offset, (int, float)) and not isinstance(offset, bool) and offset >= 1 else 1
        whole = len(mapped.steps) == 1
        # Text is compared only where the recording's surface is the target's, for a call made
        # under the surface's own tool name (an adapted tool of another agent words its results its own way).
        mapped_to = opts.tool_map.get(call.name) or opts.tool_map.get(call.name.lower())
        native = (mapped_to or call.name).lower() in TOOL_ALIASES and mapped.canonical == first.tool
        text_ok = whole and same_surface and native
        text_steps += 1 if text_ok and opts.expect == "text" else 0
        expects = []
        setup = []
        for step in mapped.steps:
            ctx = TextContext(tool=step.tool, surface=opts.surface, root=root, path_pairs=mapped.path_pairs,
                              read_start=read_start)
            expects.append(build_expect(call.result, opts.expect, ctx, text_allowed=text_ok, args=step.args,
                                        last_part=step.part == step.parts))
            setup.append(build_expect(call.result, "none", ctx))
        base = slug(call.call_id) or f"call-{n}"
        if base in used_ids or not ID_PATTERN.fullmatch(base):
            base = f"call-{n}"
        used_ids.add(base)
        planned.append(_Planned(call.line, mapped, expects, setup, base))
    return planned, skipped, notes, text_steps


def _steps(planned: list[_Planned], *, setup: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in planned:
        for step, expect, setup_expect in zip(p.mapped.steps, p.expects, p.setup_expects, strict=True):
            sid = p.base_id if step.parts == 1 else f"{p.base_id}.{step.part}"
            doc: dict[str, Any] = {"id": f"setup-{sid}" if setup else sid, "tool": step.tool, "args": step.args}
            chosen = setup_expect if setup else expect
            if chosen:
                doc["expect"] = chosen
            out.append(doc)
    return out


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


def _header(session: RecordedSession, part: str, imported: int, skipped: list[SkippedCall], opts: ImportOptions) -> str:
    lines = [f"# Imported by toolproof from {Path(session.path).name} ({session.format}, session "
             f"{session.session_id}){part}; surface {opts.surface}, expectations: {opts.expect}.",
             f"# {recording_line(session)}.",
             f"# {imported} call(s) imported, {len(skipped)} skipped."]
    for s in skipped:
        lines.append(f"#   skipped trace line {s.line}: {s.reason}")
    return "\n".join(lines) + "\n"


def render_yaml(doc: dict[str, Any]) -> str:
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False,
                     width=YAML_WIDTH)


def _expected_bytes(entry: dict[str, Any]) -> bytes | None:
    if "base64" in entry:
        return base64.b64decode(entry["base64"])
    if "text" in entry:
        return encode_text(entry["text"], entry.get("encoding", "utf-8"), bool(entry.get("bom")), entry.get("eol", "lf"))
    return None


def validate_generated(text: str, path: str, doc: dict[str, Any], workspace: WorkspaceFiles) -> Scenario:
    """Load ``text`` (as the file ``path``, so a referenced workspace resolves as it will after
    writing) with the project loader and check it carries exactly what was generated."""
    file_name = os.path.basename(path)
    try:
        scenario = parse_scenario_text(text, path)
    except ScenarioError as exc:
        raise ImporterBug("a generated scenario does not load (importer bug):\n" + "\n".join(exc.problems)) from None
    for loaded, generated in zip(scenario.steps, doc["steps"], strict=True):
        if loaded.args != generated["args"] or loaded.tool != generated["tool"]:
            raise ImporterBug(f"{file_name}: step {generated['id']} does not load with the generated arguments")
    ws_doc = doc.get("workspace", {})
    if "from" in ws_doc:
        got = [(e.path, e.kind, e.data, e.target) for e in scenario.workspace.entries]
        want = [(e.path, e.kind, e.data, e.target) for e in workspace.members]
        if got != want:
            raise ImporterBug(f"{file_name}: the referenced workspace does not load as it was read")
        return scenario
    for loaded_entry, entry in zip(scenario.workspace.entries, ws_doc.get("files", []), strict=True):
        want_bytes = _expected_bytes(entry)
        if loaded_entry.path != entry["path"] or (want_bytes is not None and loaded_entry.data != want_bytes):
            raise ImporterBug(f"{file_name}: workspace file {entry['path']} does not load with its exact bytes")
    return scenario


def workspace_doc(workspace: WorkspaceFiles, opts: ImportOptions) -> dict[str, Any]:
    """The scenario's ``workspace`` section: a ``from`` reference (path relative to the output
    directory, the resolved commit of a repo, the excludes, the content digest) unless the
    workspace is inlined or was not read from a source."""
    ws: dict[str, Any] = {}
    if workspace.kind and not opts.inline_workspace:
        location = workspace.location
        try:
            location = os.path.relpath(location, os.path.abspath(opts.out_dir))
        except ValueError:  # another drive (Windows): keep it absolute
            pass
        ref: dict[str, Any] = {workspace.kind: location.replace(os.sep, "/")}
        if workspace.rev:
            ref["rev"] = workspace.rev
        if workspace.excludes and workspace.kind != "archive":
            ref["exclude"] = list(workspace.excludes)
        ref["sha256"] = workspace.digest()
        ws["from"] = ref
    elif workspace.entries:
        ws["files"] = [dict(e) for e in workspace.entries]
    if opts.git:
        ws["git"] = True
    return ws


def requires_os(session: RecordedSession, opts: ImportOptions) -> str | None:
    """The ``requires.os`` of the scenarios: the recorded platform when it is not Linux
    (``--platform`` names it instead, or ``any`` drops the requirement)."""
    if opts.platform == "any":
        return None
    chosen = session.platform.os if opts.platform == "auto" else opts.platform
    return chosen if chosen and chosen != REPLAY_OS else None


def _subagent_import(session: RecordedSession, root: str | None) -> SessionImport:
    reason = (f"subagent transcript of session {session.subagent_of}: its calls ran in the middle of the parent "
              "session, from files this import cannot reconstruct")
    skipped = tuple(SkippedCall(c.line, c.name, reason) for c in session.calls)
    return SessionImport(session=session, root=root, scenarios=(), imported=0, steps=0, skipped=skipped,
                         notes=(reason + "; not imported",))


def build_session(session: RecordedSession, workspace: WorkspaceFiles, opts: ImportOptions) -> SessionImport:
    """The scenario documents of one session (none when no call could be imported)."""
    root = opts.root or session.cwd
    if session.subagent_of:
        return _subagent_import(session, root)
    planned, skipped, plan_notes, text_steps = _plan(session, opts, root)
    notes = [*session.notes, *workspace.notes, recording_line(session),
             *(f"{k} ×{v}" if v > 1 else k for k, v in Counter(plan_notes).items())]
    if root is None:
        notes.append("the recorded workspace root is unknown (pass --root): absolute paths cannot be made relative")
    outcome_steps = len(planned) - text_steps if opts.expect == "text" else 0
    if outcome_steps:
        surface = recorded_surface(session, opts) or "an unknown surface"
        notes.append(f"text compared on {text_steps} of {len(planned)} call(s); the others (recorded on {surface}, "
                     f"or with another agent's tool) check outcomes instead: status, exit code, files")
    os_required = requires_os(session, opts)
    if os_required:
        notes.append(f"the scenarios require os {os_required}, the platform of the recording (--platform any "
                     "replays them anywhere)")
    sid = slug(session.session_id) or slug(Path(session.path).stem) or "session"
    chunks = [planned]
    if opts.split and len(planned) > opts.split:
        chunks = [planned[i:i + opts.split] for i in range(0, len(planned), opts.split)]
    base_doc: dict[str, Any] = {}
    if os_required:
        base_doc["requires"] = {"os": os_required}
    if opts.surface != "minimax":
        base_doc["surface"] = opts.surface
        base_doc["profile"] = dict(PI_PROFILE)
    ws = workspace_doc(workspace, opts)
    generated: list[GeneratedScenario] = []
    done: list[_Planned] = []
    for k, chunk in enumerate(chunks, 1):
        if not chunk:
            continue
        multi = len(chunks) > 1
        scenario_id = f"{opts.id_prefix}/{sid}" + (f"-part{k}" if multi else "")
        part = f", part {k} of {len(chunks)}" if multi else ""
        doc: dict[str, Any] = {"id": scenario_id, "title": title_for(session) + (f" (part {k}/{len(chunks)})" if multi else ""),
                               "tags": [IMPORTED_TAG, session.format], **base_doc}
        if ws:
            doc["workspace"] = ws
        doc["steps"] = _steps(done, setup=True) + _steps(chunk, setup=False)
        chunk_skipped = skipped if k == 1 else []
        file_name = scenario_id.rsplit("/", 1)[-1] + ".yaml"
        text = _header(session, part, sum(len(c) for c in chunks), chunk_skipped, opts) + render_yaml(doc)
        scenario = validate_generated(text, os.path.join(opts.out_dir, file_name), doc, workspace)
        generated.append(GeneratedScenario(scenario_id, file_name, text, scenario))
        done.extend(chunk)
    return SessionImport(session=session, root=root, scenarios=tuple(generated), imported=len(planned),
                         steps=sum(len(p.mapped.steps) for p in planned), skipped=tuple(skipped), notes=tuple(notes),
                         requires_os=os_required, text_steps=text_steps, outcome_steps=outcome_steps)


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
