"""Loading and validating scenario files: YAML → ``Scenario``, reporting every problem of a file
in one pass as ``file:line: field: what was expected`` (never a traceback).

The document is walked by the shared ``YamlReader`` (harness/corpus/yaml_reader.py), which keeps
every key's line. Field paths count sequence items from 1 (``steps[1]`` is the step whose default
id is ``step-1``).
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from harness.corpus.workspace_source import (
    SOURCE_KINDS,
    WorkspaceLimits,
    WorkspaceSourceError,
    entries_digest,
    read_source,
)
from harness.corpus.yaml_reader import (
    Node,
    Pairs,
    YamlReader,
    parse_yaml_document,
    problem_line,
    read_document_text,
)
from harness.errors import ScenarioError, UsageError
from harness.model.file_state import FILE_KINDS
from harness.model.scenario import (
    CONDITION_NAMES,
    DEFAULT_NORMALIZERS,
    ENCODINGS,
    EOLS,
    ERROR_ONLY_KEYS,
    KNOWN_OPS,
    KNOWN_TOOLS,
    NORMALIZERS,
    RESULT_ONLY_KEYS,
    SURFACES,
    Expectation,
    FileCheck,
    Requires,
    Scenario,
    Step,
    TextMatch,
    Workspace,
    WorkspaceEntry,
    encode_text,
)
from tools_impl.core.profile import ALL_PATCHES, ProfileProblem, profile_problems

ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9._/-]*")
ID_PATTERN_TEXT = "[a-z0-9][a-z0-9._/-]*"
SCENARIO_SUFFIXES = (".yaml", ".yml")
OS_NAMES = ("linux", "windows", "macos")
SHELLS = ("bash", "pwsh", "powershell", "sh")
STATUSES = ("result", "error")
ERROR_KINDS = ("tool", "aborted", "validation", "protocol", "internal")
CONTENT_TYPES = ("text", "image")
SAVE_ROOTS = ("details", "text", "result", "error")

TOP_KEYS = ("id", "title", "tags", "spec", "patches", "requires", "surface", "profile", "env", "normalize", "workspace",
            "steps", "files", "processes")
REQUIRES_KEYS = (*CONDITION_NAMES, "tools")
WHEN_KEYS = (*CONDITION_NAMES, "programs")
PROGRAM_NAME_RE = re.compile(r"[A-Za-z0-9][\w.+-]*")
ISOLATIONS = ("container",)
WORKSPACE_KEYS = ("from", "files", "git")
WS_FROM_KEYS = (*SOURCE_KINDS, "rev", "exclude", "sha256")
WS_FILE_KEYS = ("path", "text", "encoding", "bom", "eol", "mode", "mtime", "base64", "symlink", "fifo", "dir")
WS_CONTENT_KEYS = ("text", "base64", "symlink", "fifo", "dir")
STEP_KEYS = ("id", "tool", "op", "args", "timeout", "when", "expect", "reason", "platform", "save")
SPEC_ID_PATTERN = re.compile(r"[a-z][a-z0-9-]*(\.[a-z0-9][a-z0-9-]*)*")
PATCH_STATES = ("on", "off")
EXPECT_NONE = "none"
MISSING_EXPECT = ("required field is missing (every step asserts something; "
                  "write expect: none with a reason: if it really checks nothing)")
EXPECT_KEYS = ("status", "is_error", "text", "error", "error_kind", "details", "details_absent",
               "content_types", "process_events", "files", "duration")
TEXT_KEYS = ("equals", "contains", "not_contains", "regex", "lines", "max_bytes", "min_bytes",
             "startswith", "endswith", "snapshot")
FILE_CHECK_KEYS = ("text", "encoding", "bom", "eol", "base64", "absent", "mode", "kind", "contains")
DURATION_KEYS = ("min", "max")
PROCESS_KEYS = ("left_behind",)

# -- sections -----------------------------------------------------------------------------------

def _requires(r: YamlReader, node: Node, field: str, keys: tuple[str, ...]) -> Requires:
    pairs = r.mapping(node, field, keys)
    if pairs is None:
        return Requires()
    kw: dict[str, Any] = {}
    for key, (_, v) in pairs.items():
        sub = f"{field}.{key}"
        if key == "os":
            kw[key] = r.string(v, sub, OS_NAMES)
        elif key == "shell":
            kw[key] = r.string(v, sub, SHELLS)
        elif key == "isolation":
            kw[key] = r.string(v, sub, ISOLATIONS)
        elif key == "tools":
            kw[key] = r.strings(v, sub, KNOWN_TOOLS) or ()
        elif key == "programs":
            names: list[str] = list(r.strings(v, sub) or [])
            bad = [n for n in names if not PROGRAM_NAME_RE.fullmatch(n)]
            if bad:
                r.problem(v, sub, f"expected program names (no paths), got {bad[0]!r}")
            kw[key] = tuple(names)
        else:
            kw[key] = r.boolean(v, sub)
    return Requires(**kw)


def _text_match(r: YamlReader, node: Node, field: str) -> TextMatch | None:
    if isinstance(node, yaml.ScalarNode):
        s = r.string(node, field)
        return None if s is None else TextMatch(equals=s)
    pairs = r.mapping(node, field, TEXT_KEYS)
    if pairs is None:
        return None
    kw: dict[str, Any] = {}
    for key, (_, v) in pairs.items():
        sub = f"{field}.{key}"
        if key in ("equals", "startswith", "endswith"):
            kw[key] = r.string(v, sub)
        elif key in ("contains", "not_contains"):
            kw[key] = r.strings(v, sub, allow_scalar=True) or ()
        elif key == "regex":
            pattern = r.string(v, sub)
            if pattern is not None:
                try:
                    re.compile(pattern)
                except re.error as exc:
                    r.problem(v, sub, f"expected a valid regular expression ({exc})")
                    pattern = None
            kw[key] = pattern
        elif key in ("lines", "max_bytes", "min_bytes"):
            kw[key] = r.integer(v, sub, minimum=0)
        elif key == "snapshot":
            kw[key] = bool(r.boolean(v, sub))
    return TextMatch(**kw)


def _file_checks(r: YamlReader, node: Node, field: str) -> tuple[FileCheck, ...]:
    pairs = r.mapping(node, field, None)
    if pairs is None:
        return ()
    out: list[FileCheck] = []
    for path, (k, v) in pairs.items():
        sub = f"{field}.{path}"
        if r.rel_path(k, sub) is None:
            continue
        checks = r.mapping(v, sub, FILE_CHECK_KEYS)
        if checks is None:
            continue
        kw: dict[str, Any] = {}
        for key, (_, cv) in checks.items():
            csub = f"{sub}.{key}"
            if key == "text":
                kw[key] = r.string(cv, csub)
            elif key == "encoding":
                kw[key] = r.string(cv, csub, ENCODINGS) or "utf-8"
            elif key == "eol":
                kw[key] = r.string(cv, csub, tuple(EOLS)) or "lf"
            elif key in ("bom", "absent"):
                kw[key] = bool(r.boolean(cv, csub))
            elif key == "base64":
                kw["data"] = _b64(r, cv, csub)
            elif key == "mode":
                kw[key] = r.mode(cv, csub)
            elif key == "kind":
                kw[key] = r.string(cv, csub, FILE_KINDS)
            elif key == "contains":
                kw[key] = r.strings(cv, csub, allow_scalar=True) or ()
        if "text" in checks and "base64" in checks:
            r.problem(checks["base64"][0], f"{sub}.base64", "expected only one of text, base64")
        if kw.get("absent") and len(checks) > 1:
            r.problem(k, sub, "expected no other checks together with absent: true")
        if path.endswith("/") and "kind" not in kw:
            kw["kind"] = "dir"
        out.append(FileCheck(path=path.rstrip("/") or path, line=k.start_mark.line + 1, **kw))
    return tuple(out)


def _b64(r: YamlReader, node: Node, field: str) -> bytes | None:
    s = r.string(node, field)
    if s is None:
        return None
    try:
        return base64.b64decode("".join(s.split()), validate=True)
    except (binascii.Error, ValueError):
        r.problem(node, field, "expected base64 data")
        return None


def _expectation(r: YamlReader, pairs: Pairs, field: str) -> Expectation:
    kw: dict[str, Any] = {}
    for key, (_, v) in pairs.items():
        sub = f"{field}.{key}"
        if key == "status":
            kw[key] = r.string(v, sub, STATUSES) or "result"
        elif key == "is_error":
            kw[key] = r.boolean(v, sub)
        elif key in ("text", "error"):
            kw[key] = _text_match(r, v, sub)
        elif key == "error_kind":
            kw[key] = r.string(v, sub, ERROR_KINDS)
        elif key == "details":
            d = r.plain(v, sub)
            if not isinstance(d, dict):
                r.expected(v, sub, "a mapping")
                d = None
            kw[key] = d
        elif key == "details_absent":
            kw[key] = r.strings(v, sub) or ()
        elif key == "content_types":
            kw[key] = r.strings(v, sub, CONTENT_TYPES)
        elif key == "process_events":
            events = r.plain(v, sub)
            if not isinstance(events, list) or not all(isinstance(e, dict) and e for e in events):
                r.expected(v, sub, "a list of non-empty mappings (e.g. [{event: spawned, role: shell}]) or []")
            else:
                kw[key] = tuple(events)
        elif key == "files":
            kw[key] = _file_checks(r, v, sub)
        elif key == "duration":
            dpairs = r.mapping(v, sub, DURATION_KEYS)
            for dk, (_, dv) in (dpairs or {}).items():
                kw[f"duration_{dk}"] = r.number(dv, f"{sub}.{dk}", minimum=0)
    status = kw.get("status", "result")
    if status == "result":
        for key in ERROR_ONLY_KEYS:
            if key in pairs:
                r.problem(pairs[key][0], f"{field}.{key}", "only allowed with status: error")
    else:
        for key in RESULT_ONLY_KEYS:
            if key in pairs:
                r.problem(pairs[key][0], f"{field}.{key}", "only allowed with status: result")
    return Expectation(**kw)


def _vacuous(r: YamlReader, node: Node, pairs: Pairs, field: str) -> None:
    """Refuse expectations that every observation satisfies: an empty ``expect``, ``details: {}``
    (a subset match of nothing), an empty text matcher or empty file checks."""
    if isinstance(node, yaml.MappingNode) and not node.value:
        r.problem(node, field, "expected at least one check (an empty expect matches every observation)")
    for key in ("details", "files"):
        if key in pairs and isinstance(pairs[key][1], yaml.MappingNode) and not pairs[key][1].value:
            r.problem(pairs[key][1], f"{field}.{key}", f"{key}: {{}} matches every observation; name what to check")
    for key in ("text", "error"):
        if key in pairs and isinstance(pairs[key][1], yaml.MappingNode) and not pairs[key][1].value:
            r.problem(pairs[key][1], f"{field}.{key}", f"{key}: {{}} matches every string; name a matcher")


def _step(r: YamlReader, node: Node, index: int, seen_ids: dict[str, int]) -> Step | None:
    field = f"steps[{index}]"
    pairs = r.mapping(node, field, STEP_KEYS)
    if pairs is None:
        return None
    tool = op = None
    if "tool" in pairs and "op" in pairs:
        r.problem(pairs["op"][0], f"{field}.op", "expected only one of tool, op")
    elif "tool" in pairs:
        tool = r.string(pairs["tool"][1], f"{field}.tool", KNOWN_TOOLS)
    elif "op" in pairs:
        op = r.string(pairs["op"][1], f"{field}.op", KNOWN_OPS)
    else:
        r.problem(node, f"{field}.tool", "required field is missing (a step needs tool or op)")
    step_id = f"step-{index}"
    if "id" in pairs:
        sid = r.string(pairs["id"][1], f"{field}.id", allow_empty=False)
        if sid is not None:
            if not ID_PATTERN.fullmatch(sid):
                r.problem(pairs["id"][1], f"{field}.id", f"expected an id matching {ID_PATTERN_TEXT}, got {sid!r}")
            step_id = sid
    if step_id in seen_ids:
        r.problem(node, f"{field}.id", f"duplicate step id {step_id!r} (also steps[{seen_ids[step_id]}])")
    seen_ids[step_id] = index
    args: dict[str, Any] = {}
    if "args" in pairs:
        a = r.plain(pairs["args"][1], f"{field}.args")
        if isinstance(a, dict):
            args = a
        else:
            r.expected(pairs["args"][1], f"{field}.args", "a mapping")
    timeout: float | None = None
    if "timeout" in pairs:
        timeout = r.number(pairs["timeout"][1], f"{field}.timeout", minimum=0) or None
    when: dict[str, Any] = {}
    if "when" in pairs:
        cond = _requires(r, pairs["when"][1], f"{field}.when", WHEN_KEYS)
        when = dict(cond.items())
        if cond.programs:
            when["programs"] = cond.programs
    exp_pairs: Pairs = {}
    raw_expect: dict[str, Any] = {}
    reason = ""
    if "reason" in pairs:
        reason = r.string(pairs["reason"][1], f"{field}.reason", allow_empty=False) or ""
    expect_node = pairs["expect"][1] if "expect" in pairs else None
    expect_none = isinstance(expect_node, yaml.ScalarNode) and r.value(expect_node) == EXPECT_NONE
    if expect_node is not None and expect_none:
        if not reason:
            r.problem(expect_node, f"{field}.expect", "expect: none needs a reason: saying why the step checks nothing")
    elif expect_node is not None:
        exp_pairs = r.mapping(expect_node, f"{field}.expect", EXPECT_KEYS) or {}
        raw = r.plain(expect_node, f"{field}.expect")
        raw_expect = raw if isinstance(raw, dict) else {}
        _vacuous(r, expect_node, exp_pairs, f"{field}.expect")
    if reason and not expect_none:
        r.problem(pairs["reason"][0], f"{field}.reason", "only allowed with expect: none")
    expect = _expectation(r, exp_pairs, f"{field}.expect")
    platform: list[tuple[str, Expectation]] = []
    if "platform" in pairs:
        plat = r.mapping(pairs["platform"][1], f"{field}.platform", OS_NAMES) or {}
        for os_name, (_, pv) in plat.items():
            over = r.mapping(pv, f"{field}.platform.{os_name}", EXPECT_KEYS)
            if over is not None:
                platform.append((os_name, _expectation(r, {**exp_pairs, **over}, f"{field}.platform.{os_name}")))
    save: list[tuple[str, str]] = []
    if "save" in pairs:
        for name, (k, v) in (r.mapping(pairs["save"][1], f"{field}.save", None) or {}).items():
            src = r.string(v, f"{field}.save.{name}")
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                r.problem(k, f"{field}.save.{name}", "expected a variable name matching [A-Za-z_][A-Za-z0-9_]*")
            elif src is not None:
                if src.split(".", 1)[0] not in SAVE_ROOTS:
                    r.problem(v, f"{field}.save.{name}",
                              f"expected a path starting with one of {', '.join(SAVE_ROOTS)}; got {src!r}")
                else:
                    save.append((name, src))
    return Step(id=step_id, index=index, line=node.start_mark.line + 1, tool=tool, op=op, args=args,
                timeout=timeout, when=when, expect=expect, platform=tuple(platform), save=tuple(save),
                raw_expect=raw_expect, reason=reason)


def _workspace_from(r: YamlReader, node: Node) -> tuple[WorkspaceEntry, ...]:
    """``workspace.from``: the members of a referenced directory, tar archive or git revision
    (docs/scenario-format.md), its location relative to the scenario file."""
    field = "workspace.from"
    pairs = r.mapping(node, field, WS_FROM_KEYS)
    if pairs is None:
        return ()
    kinds = [k for k in SOURCE_KINDS if k in pairs]
    if len(kinds) != 1:
        r.problem(node, field, f"expected exactly one of {', '.join(SOURCE_KINDS)}")
        return ()
    kind = kinds[0]
    location = r.string(pairs[kind][1], f"{field}.{kind}", allow_empty=False)
    rev = None
    if kind == "repo":
        if "rev" not in pairs:
            r.problem(node, f"{field}.rev", "required with repo (the commit holding the starting files)")
            return ()
        rev = r.string(pairs["rev"][1], f"{field}.rev", allow_empty=False)
    elif "rev" in pairs:
        r.problem(pairs["rev"][0], f"{field}.rev", "only allowed together with repo")
    excludes = r.strings(pairs["exclude"][1], f"{field}.exclude") or () if "exclude" in pairs else ()
    want = r.string(pairs["sha256"][1], f"{field}.sha256", allow_empty=False) if "sha256" in pairs else None
    if location is None or (kind == "repo" and rev is None):
        return ()
    base = os.path.dirname(r.path)
    full = location if os.path.isabs(location) else os.path.normpath(os.path.join(base, location))
    try:
        read = read_source(kind, full, rev, WorkspaceLimits(excludes=tuple(excludes)))
    except WorkspaceSourceError as exc:
        r.problem(pairs[kind][1], f"{field}.{kind}", str(exc))
        return ()
    if want is not None and entries_digest(read.entries) != want:
        r.problem(pairs["sha256"][1], f"{field}.sha256",
                  f"the referenced workspace has changed (its sha256 is now {entries_digest(read.entries)}); "
                  "restore it, or update sha256 to accept the new content")
    return read.entries


def _workspace(r: YamlReader, node: Node) -> Workspace:
    pairs = r.mapping(node, "workspace", WORKSPACE_KEYS)
    if pairs is None:
        return Workspace()
    referenced = _workspace_from(r, pairs["from"][1]) if "from" in pairs else ()
    git = False
    if "git" in pairs:
        git = bool(r.boolean(pairs["git"][1], "workspace.git"))
    entries: list[WorkspaceEntry] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(r.sequence(pairs["files"][1], "workspace.files") or [] if "files" in pairs else [], 1):
        field = f"workspace.files[{i}]"
        f = r.mapping(item, field, WS_FILE_KEYS)
        if f is None:
            continue
        path = None
        if "path" not in f:
            r.problem(item, f"{field}.path", "required field is missing")
        else:
            path = r.rel_path(f["path"][1], f"{field}.path")
        kinds = [k for k in WS_CONTENT_KEYS if k in f]
        if len(kinds) > 1:
            r.problem(f[kinds[1]][0], f"{field}.{kinds[1]}", "expected only one of " + ", ".join(WS_CONTENT_KEYS))
        if "text" not in f:
            for k in ("encoding", "bom", "eol"):
                if k in f:
                    r.problem(f[k][0], f"{field}.{k}", "only allowed together with text")
        kind, data, target = "file", b"", None
        if "text" in f:
            text = r.string(f["text"][1], f"{field}.text")
            enc = r.string(f["encoding"][1], f"{field}.encoding", ENCODINGS) if "encoding" in f else "utf-8"
            bom = r.boolean(f["bom"][1], f"{field}.bom") if "bom" in f else False
            eol = r.string(f["eol"][1], f"{field}.eol", tuple(EOLS)) if "eol" in f else "lf"
            if text is not None:
                data = encode_text(text, enc or "utf-8", bool(bom), eol or "lf")
        elif "base64" in f:
            data = _b64(r, f["base64"][1], f"{field}.base64") or b""
        elif "symlink" in f:
            kind = "symlink"
            target = r.string(f["symlink"][1], f"{field}.symlink", allow_empty=False)
        elif "fifo" in f:
            kind = "fifo"
            if r.boolean(f["fifo"][1], f"{field}.fifo") is False:
                r.problem(f["fifo"][1], f"{field}.fifo", "expected true (omit the key for a regular file)")
        elif "dir" in f:
            kind = "dir"
            if r.boolean(f["dir"][1], f"{field}.dir") is False:
                r.problem(f["dir"][1], f"{field}.dir", "expected true (omit the key for a regular file)")
        mode = r.mode(f["mode"][1], f"{field}.mode") if "mode" in f else None
        mtime = r.number(f["mtime"][1], f"{field}.mtime") if "mtime" in f else None
        if path is not None:
            norm = path.rstrip("/")
            if norm in seen:
                r.problem(f["path"][1], f"{field}.path", f"duplicate path {path!r} (also workspace.files[{seen[norm]}])")
            seen[norm] = i
            entries.append(WorkspaceEntry(path=norm, kind=kind, data=data, target=target, mode=mode, mtime=mtime))
    if referenced:  # inline files replace referenced members of the same path
        entries = [e for e in referenced if e.path not in seen] + entries
    return Workspace(entries=tuple(entries), git=git)


def _profile(r: YamlReader, node: Node) -> dict[str, Any] | None:
    """The overlay as plain values, checked by the server's own validator (``profile_problems``)
    so that a scenario accepts exactly what the ``workspace`` op accepts."""
    pairs = r.mapping(node, "profile", None)
    if pairs is None:
        return None
    overlay = {key: r.plain(v, f"profile.{key}") for key, (_, v) in pairs.items()}
    for problem in profile_problems(overlay):
        r.problem(_overlay_node(pairs, problem), problem.field, problem.message)
    return overlay


def _overlay_node(pairs: Pairs, problem: ProfileProblem) -> Node:
    """The YAML node a profile problem is about: the key or its value, one or two levels deep."""
    key_node, value_node = pairs[problem.key[0]]
    for name in problem.key[1:]:
        if not isinstance(value_node, yaml.MappingNode):
            break
        key_node, value_node = next(((k, v) for k, v in value_node.value if k.value == name),
                                    (key_node, value_node))
    return value_node if problem.in_value else key_node


def _spec_ids(r: YamlReader, node: Node) -> tuple[str, ...]:
    """``spec: [read.6, bash.env.2]``: rule ids (whether each names a rule is checked by
    ``harness.corpus.coverage`` against docs/spec/)."""
    out: list[str] = []
    for i, item in enumerate(r.sequence(node, "spec") or [], 1):
        rid = r.string(item, f"spec[{i}]", allow_empty=False)
        if rid is None:
            continue
        if not SPEC_ID_PATTERN.fullmatch(rid):
            r.problem(item, f"spec[{i}]", f"expected a rule id such as read.6 or bash.env.2, got {rid!r}")
        elif rid in out:
            r.problem(item, f"spec[{i}]", f"duplicate rule id {rid!r}")
        else:
            out.append(rid)
    return tuple(out)


def _patch_pins(r: YamlReader, node: Node) -> tuple[tuple[str, str], ...]:
    """``patches: {edit.fuzzy-span: on}``: the toggle states the scenario pins. YAML reads bare
    on/off as booleans; both spellings are accepted."""
    out: list[tuple[str, str]] = []
    for name, (_, v) in (r.mapping(node, "patches", ALL_PATCHES) or {}).items():
        value = r.value(v)
        if isinstance(value, bool):
            out.append((name, "on" if value else "off"))
        elif value in PATCH_STATES:
            out.append((name, str(value)))
        else:
            r.expected(v, f"patches.{name}", "on or off")
    return tuple(out)


def _env(r: YamlReader, node: Node) -> dict[str, str | None]:
    pairs = r.mapping(node, "env", None) or {}
    out: dict[str, str | None] = {}
    for key, (_, v) in pairs.items():
        value = r.value(v)
        if value is not None and (not isinstance(value, str) or not isinstance(v, yaml.ScalarNode)):
            r.expected(v, f"env.{key}", "a string or null (quote numbers and booleans)")
            continue
        out[key] = value
    return out


def _scenario(r: YamlReader, root: Node) -> Scenario | None:
    pairs = r.mapping(root, "", TOP_KEYS)
    if pairs is None:
        return None
    line = root.start_mark.line + 1
    sid = ""
    if "id" not in pairs:
        r.problem(root, "id", "required field is missing")
    else:
        sid = r.string(pairs["id"][1], "id", allow_empty=False) or ""
        if sid and not ID_PATTERN.fullmatch(sid):
            r.problem(pairs["id"][1], "id", f"expected an id matching {ID_PATTERN_TEXT}, got {sid!r}")
    kw: dict[str, Any] = {}
    if "title" in pairs:
        kw["title"] = r.string(pairs["title"][1], "title") or ""
    if "tags" in pairs:
        kw["tags"] = r.strings(pairs["tags"][1], "tags") or ()
    if "spec" in pairs:
        kw["spec"] = _spec_ids(r, pairs["spec"][1])
    if "patches" in pairs:
        kw["patches"] = _patch_pins(r, pairs["patches"][1])
    if "requires" in pairs:
        kw["requires"] = _requires(r, pairs["requires"][1], "requires", REQUIRES_KEYS)
    if "surface" in pairs:
        kw["surface"] = r.string(pairs["surface"][1], "surface", SURFACES) or "minimax"
    if "profile" in pairs:
        kw["profile"] = _profile(r, pairs["profile"][1])
    if "env" in pairs:
        kw["env"] = _env(r, pairs["env"][1])
    if "normalize" in pairs:
        got = r.strings(pairs["normalize"][1], "normalize", NORMALIZERS)
        kw["normalize"] = DEFAULT_NORMALIZERS if got is None else got
    if "workspace" in pairs:
        kw["workspace"] = _workspace(r, pairs["workspace"][1])
    steps: list[Step] = []
    if "steps" not in pairs:
        r.problem(root, "steps", "required field is missing")
    else:
        seen: dict[str, int] = {}
        items = r.sequence(pairs["steps"][1], "steps")
        if items is not None and not items:
            r.problem(pairs["steps"][1], "steps", "expected at least one step")
        for i, item in enumerate(items or [], 1):
            st = _step(r, item, i, seen)
            if st is not None:
                steps.append(st)
    kw["steps"] = tuple(steps)
    if "files" in pairs:
        kw["files"] = _file_checks(r, pairs["files"][1], "files")
    if "processes" in pairs:
        pp = r.mapping(pairs["processes"][1], "processes", PROCESS_KEYS) or {}
        if "left_behind" in pp:
            kw["processes_left_behind"] = r.integer(pp["left_behind"][1], "processes.left_behind", minimum=0)
    return Scenario(id=sid, path=r.path, line=line, **kw)


def parse_scenario_text(text: str, path: str, strict: bool = False) -> Scenario:
    """Parse one scenario document; raises ``ScenarioError`` listing every problem. ``strict``
    (the shipped corpus's rule) also refuses a step without ``expect`` unless it says
    ``expect: none`` with a ``reason``."""
    scenario, problems = parse_yaml_document(text, path, _scenario)
    if strict and scenario is not None:
        problems = problems + [f"{path}:{st.line}: steps[{st.index}].expect: {MISSING_EXPECT}"
                               for st in scenario.steps if not st.raw_expect and not st.reason
                               and not any(f"steps[{st.index}].expect" in p for p in problems)]
    if problems or scenario is None:
        raise ScenarioError(sorted(problems, key=problem_line) or [f"{path}:1: (document): expected a mapping"])
    return scenario


def load_scenario(path: str | os.PathLike[str], strict: bool = False) -> Scenario:
    """Load one file; unreadable files raise ``ScenarioError`` with a one-line message."""
    p = str(path)
    return parse_scenario_text(read_document_text(p), p, strict)


def find_scenario_files(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """Expand files and directories into a sorted list of scenario files (``.yaml``/``.yml``)."""
    out: list[str] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out.extend(str(f) for f in sorted(p.rglob("*")) if f.suffix in SCENARIO_SUFFIXES and f.is_file())
        elif p.is_file():
            out.append(str(p))
        else:
            raise UsageError(f"no such file or directory: {raw}")
    return sorted(dict.fromkeys(out))


def load_corpus(paths: Iterable[str | os.PathLike[str]], strict: bool = False) -> list[Scenario]:
    """Load every scenario under ``paths`` (sorted by id); raises ``ScenarioError`` with all problems
    of all files, including duplicate ids across files."""
    problems: list[str] = []
    scenarios: list[Scenario] = []
    for f in find_scenario_files(paths):
        try:
            scenarios.append(load_scenario(f, strict))
        except ScenarioError as exc:
            problems.extend(exc.problems)
    seen: dict[str, Scenario] = {}
    for s in scenarios:
        if s.id in seen:
            other = seen[s.id]
            problems.append(f"{s.path}:{s.line}: id: duplicate scenario id {s.id!r} (also {other.path}:{other.line})")
        seen.setdefault(s.id, s)
    if problems:
        raise ScenarioError(problems)
    return sorted(scenarios, key=lambda s: s.id)
