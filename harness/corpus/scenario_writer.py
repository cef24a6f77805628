"""A ``Scenario`` as scenario YAML (docs/scenario-format.md): the inverse of the loader for what a
program builds — a fuzz disagreement (``toolproof fuzz --save``) and a property counterexample
(``toolproof properties``) are ``Scenario`` objects, written here and loaded back by
``harness.corpus.loader`` like any scenario.

Bytes are written as ``text`` when YAML gives the same string back (and ``base64`` otherwise);
expectations carry what the builder set: status, ``is_error``, exact ``text``/``error``,
``error_kind``, ``content_types``, file checks (``text``/``base64``/``sha256``, ``absent``,
``kind``, ``mode``).
"""

from __future__ import annotations

import base64
from typing import Any

import yaml

from harness.model.scenario import (
    DEFAULT_NORMALIZERS,
    Expectation,
    FileCheck,
    Scenario,
    TextMatch,
    WorkspaceEntry,
)

YAML_WIDTH = 100


def _round_trips(text: str) -> bool:
    try:
        return yaml.safe_load(yaml.safe_dump(text, allow_unicode=True)) == text
    except yaml.YAMLError:
        return False


def bytes_fields(data: bytes) -> dict[str, Any]:
    """``{text: …}`` when the bytes are UTF-8 text that YAML keeps exactly, else ``{base64: …}``."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and _round_trips(text):
        return {"text": text}
    return {"base64": base64.b64encode(data).decode("ascii")}


def _entry(e: WorkspaceEntry) -> dict[str, Any]:
    out: dict[str, Any] = {"path": e.path}
    if e.kind == "dir":
        out["dir"] = True
    elif e.kind == "symlink":
        out["symlink"] = e.target or ""
    elif e.kind == "fifo":
        out["fifo"] = True
    else:
        out.update(bytes_fields(e.data))
    if e.mode is not None:
        out["mode"] = f"0o{e.mode:o}"
    if e.mtime is not None:
        out["mtime"] = e.mtime
    return out


def _text_match(m: TextMatch) -> Any:
    if m.equals is not None and m == TextMatch(equals=m.equals):
        return m.equals
    out: dict[str, Any] = {}
    for key in ("equals", "regex", "lines", "max_bytes", "min_bytes", "startswith", "endswith"):
        value = getattr(m, key)
        if value is not None:
            out[key] = value
    for key in ("contains", "not_contains"):
        if getattr(m, key):
            out[key] = list(getattr(m, key))
    if m.snapshot:
        out["snapshot"] = True
    return out


def file_check_fields(c: FileCheck) -> dict[str, Any]:
    if c.absent:
        return {"absent": True}
    out: dict[str, Any] = {}
    if c.kind is not None and not (c.kind == "file" and (c.data is not None or c.text is not None or c.sha256)):
        out["kind"] = c.kind
    want = c.expected_bytes()
    if want is not None:
        out.update(bytes_fields(want))
    if c.sha256 is not None:
        out["sha256"] = c.sha256
    if c.mode is not None:
        out["mode"] = f"0o{c.mode:o}"
    if c.contains:
        out["contains"] = list(c.contains)
    return out


def expectation_fields(e: Expectation) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if e.status != "result":
        out["status"] = e.status
    if e.is_error is not None:
        out["is_error"] = e.is_error
    if e.text is not None:
        out["text"] = _text_match(e.text)
    if e.error is not None:
        out["error"] = _text_match(e.error)
    if e.error_kind is not None:
        out["error_kind"] = e.error_kind
    if e.details is not None:
        out["details"] = e.details
    if e.details_absent:
        out["details_absent"] = list(e.details_absent)
    if e.content_types is not None:
        out["content_types"] = list(e.content_types)
    if e.files:
        out["files"] = {c.path: file_check_fields(c) for c in e.files}
    return out


def scenario_document(s: Scenario) -> dict[str, Any]:
    """The YAML document of ``s`` as plain data."""
    doc: dict[str, Any] = {"id": s.id}
    if s.title:
        doc["title"] = s.title
    if s.tags:
        doc["tags"] = list(s.tags)
    if s.spec:
        doc["spec"] = list(s.spec)
    if s.patches:
        doc["patches"] = dict(s.patches)
    wanted = {name: value for name, value in s.requires.items()}
    if s.requires.tools:
        wanted["tools"] = list(s.requires.tools)
    if wanted:
        doc["requires"] = wanted
    doc["surface"] = s.surface
    if s.profile is not None:
        doc["profile"] = s.profile
    if s.env:
        doc["env"] = dict(s.env)
    if s.normalize != DEFAULT_NORMALIZERS:
        doc["normalize"] = list(s.normalize)
    workspace: dict[str, Any] = {}
    if s.workspace.entries:
        workspace["files"] = [_entry(e) for e in s.workspace.entries]
    if s.workspace.git:
        workspace["git"] = True
    if workspace:
        doc["workspace"] = workspace
    steps = []
    for k, step in enumerate(s.steps, 1):
        out: dict[str, Any] = {}
        if step.id != f"step-{k}":
            out["id"] = step.id
        if step.tool is not None:
            out["tool"] = step.tool
        else:
            out["op"] = step.op
        out["args"] = step.args
        if step.timeout is not None:
            out["timeout"] = step.timeout
        expect = expectation_fields(step.expect)
        if expect:
            out["expect"] = expect
        else:
            out["expect"] = "none"
            out["reason"] = step.reason or "nothing to assert"
        steps.append(out)
    doc["steps"] = steps
    if s.files:
        doc["files"] = {c.path: file_check_fields(c) for c in s.files}
    if s.processes_left_behind is not None:
        doc["processes"] = {"left_behind": s.processes_left_behind}
    return doc


def dump_scenario(s: Scenario, comment: str = "") -> str:
    """``s`` as scenario YAML, with ``comment`` (any number of lines) as ``#`` lines on top."""
    header = "".join(f"# {line}\n" if line else "#\n" for line in comment.splitlines())
    return header + yaml.safe_dump(scenario_document(s), sort_keys=False, allow_unicode=True, width=YAML_WIDTH)
