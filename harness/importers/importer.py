"""Turning a read ``RecordedSession`` and a starting workspace into scenario YAML documents: step ids,
titles, tags, ``--split`` parts, the YAML text (with a header comment listing what was skipped),
validation of every document with the project loader, and writing without overwriting.

A generated document that the loader rejects, or that loads with different arguments or
workspace bytes than were generated, is a bug of the importer: ``ImporterBug`` is raised and
nothing is written.
"""

from __future__ import annotations

import base64
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.corpus.loader import ID_PATTERN, parse_scenario_text
from harness.errors import ScenarioError, UsageError
from harness.importers.expectations import DEFAULT_EXPECT_MODE, TextContext, build_expect, not_run
from harness.importers.mapping import Mapped, Skip, map_call
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


def _plan(session: RecordedSession, opts: ImportOptions, root: str | None
          ) -> tuple[list[_Planned], list[SkippedCall], list[str]]:
    planned: list[_Planned] = []
    skipped: list[SkippedCall] = []
    notes: list[str] = []
    used_ids: set[str] = set()
    for n, call in enumerate(session.calls, 1):
        if call.result is None:
            skipped.append(SkippedCall(call.line, call.name, "no recorded result (the trace ends before it)"))
            continue
        if not_run(call.result):
            skipped.append(SkippedCall(call.line, call.name, "rejected or interrupted in the trace (it never ran)"))
            continue
        mapped = map_call(call, opts.surface, root, session.format, timeout_unit=opts.timeout_unit)
        if isinstance(mapped, Skip):
            skipped.append(SkippedCall(call.line, call.name, mapped.reason))
            continue
        notes.extend(mapped.notes)
        first = mapped.steps[0]
        offset = first.args.get("offset")
        read_start = int(offset) if isinstance(offset, (int, float)) and not isinstance(offset, bool) and offset >= 1 else 1
        ctx = TextContext(tool=mapped.canonical, surface=opts.surface, root=root,
                          path_pairs=mapped.path_pairs, read_start=read_start)
        whole = len(mapped.steps) == 1
        expects = [build_expect(call.result, opts.expect, ctx, text_allowed=whole) for _ in mapped.steps]
        setup = [build_expect(call.result, "none", ctx) for _ in mapped.steps]
        base = slug(call.call_id) or f"call-{n}"
        if base in used_ids or not ID_PATTERN.fullmatch(base):
            base = f"call-{n}"
        used_ids.add(base)
        planned.append(_Planned(call.line, mapped, expects, setup, base))
    return planned, skipped, notes


def _steps(planned: list[_Planned], *, setup: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in planned:
        for step, expect, setup_expect in zip(p.mapped.steps, p.expects, p.setup_expects, strict=True):
            sid = p.base_id if step.parts == 1 else f"{p.base_id}.{step.part}"
            doc: dict[str, Any] = {"id": f"setup-{sid}" if setup else sid, "tool": step.tool, "args": step.args}
            if step.timeout is not None:
                doc["timeout"] = step.timeout
            chosen = setup_expect if setup else expect
            if chosen:
                doc["expect"] = chosen
            out.append(doc)
    return out


def _header(session: RecordedSession, part: str, imported: int, skipped: list[SkippedCall], opts: ImportOptions) -> str:
    lines = [f"# Imported by toolproof from {Path(session.path).name} ({session.format}, session "
             f"{session.session_id}){part}; surface {opts.surface}, expectations: {opts.expect}.",
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


def validate_generated(text: str, file_name: str, doc: dict[str, Any]) -> Scenario:
    """Load ``text`` with the project loader and check it carries exactly what was generated."""
    try:
        scenario = parse_scenario_text(text, file_name)
    except ScenarioError as exc:
        raise ImporterBug("a generated scenario does not load (importer bug):\n" + "\n".join(exc.problems)) from None
    for loaded, generated in zip(scenario.steps, doc["steps"], strict=True):
        if loaded.args != generated["args"] or loaded.tool != generated["tool"]:
            raise ImporterBug(f"{file_name}: step {generated['id']} does not load with the generated arguments")
    for loaded_entry, entry in zip(scenario.workspace.entries, doc.get("workspace", {}).get("files", []), strict=True):
        want = _expected_bytes(entry)
        if loaded_entry.path != entry["path"] or (want is not None and loaded_entry.data != want):
            raise ImporterBug(f"{file_name}: workspace file {entry['path']} does not load with its exact bytes")
    return scenario


def build_session(session: RecordedSession, workspace: WorkspaceFiles, opts: ImportOptions) -> SessionImport:
    """The scenario documents of one session (none when no call could be imported)."""
    root = opts.root or session.cwd
    planned, skipped, notes = _plan(session, opts, root)
    notes = [*session.notes, *workspace.notes, *(f"{k} ×{v}" if v > 1 else k for k, v in Counter(notes).items())]
    if root is None:
        notes.append("the recorded workspace root is unknown (pass --root): absolute paths cannot be made relative")
    sid = slug(session.session_id) or slug(Path(session.path).stem) or "session"
    chunks = [planned]
    if opts.split and len(planned) > opts.split:
        chunks = [planned[i:i + opts.split] for i in range(0, len(planned), opts.split)]
    base_doc: dict[str, Any] = {}
    if opts.surface != "minimax":
        base_doc["surface"] = opts.surface
        base_doc["profile"] = dict(PI_PROFILE)
    ws: dict[str, Any] = {}
    if workspace.entries:
        ws["files"] = [dict(e) for e in workspace.entries]
    if opts.git:
        ws["git"] = True
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
        generated.append(GeneratedScenario(scenario_id, file_name, text, validate_generated(text, file_name, doc)))
        done.extend(chunk)
    return SessionImport(session=session, root=root, scenarios=tuple(generated), imported=len(planned),
                         steps=sum(len(p.mapped.steps) for p in planned), skipped=tuple(skipped), notes=tuple(notes))


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
