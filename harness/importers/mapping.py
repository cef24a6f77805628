"""Mapping recorded tool calls onto a toolproof surface (``minimax`` or ``pi``): tool names and
argument names translated, units converted (Claude Code's Bash ``timeout`` is in milliseconds),
absolute paths inside the recorded workspace root made relative. Pure functions.

A call that cannot be mapped faithfully is never dropped silently: ``map_call`` returns a
``Skip`` with the reason, and the importer lists it in its report.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, replace
from typing import Any

from harness.importers.agent_tools import (
    AGENT_TOOLS,
    AGENT_UNMAPPABLE,
    CANONICAL_TOOLS,
    CanonicalCall,
    Unmappable,
)
from harness.importers.trace import JsonObj, ToolCall

SURFACES: tuple[str, ...] = ("minimax", "pi")
TIMEOUT_UNITS: tuple[str, ...] = ("ms", "s")
GREP_OUTPUT_MODES: tuple[str, ...] = ("files_with_matches", "content", "count")
GLOB_SORTS: tuple[str, ...] = ("none", "modified")

TOOL_ALIASES: dict[str, str] = {
    "read": "read",
    "write": "write", "write_file": "write",
    "edit": "edit", "multiedit": "multiedit",
    "grep": "grep",
    "glob": "glob", "find": "glob",
    "bash": "bash",
}
# Tools with no toolproof equivalent, by lower-cased name, with why.
UNMAPPABLE_WHY: dict[str, str] = {
    "ls": "toolproof has no ls tool",
    "webfetch": "network tool",
    "websearch": "network tool",
    "web_search": "network tool",
    "web_fetch": "network tool",
    "google_web_search": "network tool",
    "fetch": "network tool",
    "task": "subagent tool",
    "agent": "subagent tool",
    "todowrite": "planning tool",
    "todoread": "planning tool",
    "exitplanmode": "planning tool",
    "bashoutput": "background shell follow-up",
    "bash_output": "background shell follow-up",
    "killshell": "background shell follow-up",
    "killbash": "background shell follow-up",
    "notebookedit": "notebook tool",
    "notebookread": "notebook tool",
    **AGENT_UNMAPPABLE,
}
OLD_NAMES = ("old_string", "oldText", "old_str", "oldString")
NEW_NAMES = ("new_string", "newText", "new_str", "newString")
# Arguments that only label a call for humans; dropping them changes nothing the tool does.
COSMETIC_ARGS: dict[str, tuple[str, ...]] = {
    "bash": ("description",),
    "grep": ("-n",),
}


@dataclass(frozen=True)
class MappedStep:
    """One scenario step: a tool call on the target surface. ``part``/``parts`` number the steps
    one recorded call was split into (a MultiEdit on the minimax surface)."""

    tool: str
    args: JsonObj
    part: int = 1
    parts: int = 1


@dataclass(frozen=True)
class Mapped:
    """A mapped call: its steps, the path arguments made relative (absolute form, relative
    form) and notes on what was adapted."""

    canonical: str
    steps: tuple[MappedStep, ...]
    path_pairs: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Skip:
    """A call not imported, with the reason (the summary groups skips by reason)."""

    reason: str


_Unmappable = Unmappable


def _is_absolute(p: str) -> bool:
    return p.startswith(("/", "\\")) or bool(re.match(r"^[A-Za-z]:[\\/]", p))


def relativize(path: str, root: str | None) -> str:
    """``path`` relative to the workspace root; a relative path is kept. Raises ``_Unmappable``
    for an absolute path outside the root (or any absolute path when the root is unknown) and
    for ``~`` paths, which would reach outside the replay workspace."""
    if path.startswith("~"):
        raise _Unmappable(f"path {path!r} is in the home directory, outside the workspace")
    if not _is_absolute(path):
        return path
    if root is None:
        raise _Unmappable(f"absolute path {path!r} and the workspace root is unknown (pass --root)")
    base = root.rstrip("/\\")
    if not base:  # the root is "/" itself
        return path.lstrip("/\\") or "."
    if path == base:
        return "."
    for sep in ("/", "\\"):
        if path.startswith(base + sep):
            return path[len(base) + 1:].lstrip(sep) or "."
    raise _Unmappable(f"path {path!r} is outside the workspace root {root}")


def relativize_path_or_none(path: str, root: str | None) -> str | None:
    """``relativize``, or None for a path outside the workspace."""
    try:
        return relativize(path, root)
    except _Unmappable:
        return None


def relativize_command(command: str, root: str | None) -> str:
    """``command`` with the workspace root made relative (``ROOT/x`` → ``./x``, ``ROOT`` → ``.``):
    the replay's shell starts in the workspace root, as the recorded one did."""
    if not root:
        return command
    base = root.rstrip("/") or root
    if base == "/":
        return command
    return re.sub(re.escape(base) + r"(?![\w.\-])", ".", command)


def _pick(args: JsonObj, names: tuple[str, ...], used: set[str]) -> Any:
    for n in names:
        if n in args:
            used.add(n)
            return args[n]
    return None


def _require(value: Any, kind: type | tuple[type, ...], what: str) -> Any:
    if value is None:
        raise _Unmappable(f"missing argument {what}")
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise _Unmappable(f"argument {what} has the wrong type ({type(value).__name__})")
    return value


def _leftover(args: JsonObj, used: set[str], canonical: str, name: str) -> None:
    extra = [k for k in args if k not in used and k not in COSMETIC_ARGS.get(canonical, ())]
    if extra:
        raise _Unmappable(f"{name} argument {extra[0]!r} has no toolproof equivalent")


def _number(value: Any, what: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if isinstance(value, str) and re.fullmatch(r"\d+(\.\d+)?", value):
            return int(value) if value.isdigit() else float(value)
        raise _Unmappable(f"argument {what} is not a number ({value!r})")
    return value


def _seconds(value: Any, unit: str) -> int | float:
    n = _number(value, "timeout")
    if unit == "ms":
        n = n / 1000
    return int(n) if float(n).is_integer() else n


def _set(out: JsonObj, key: str, value: Any) -> None:
    if value is not None:
        out[key] = value


def _map_read(args: JsonObj, surface: str, root: str | None, name: str) -> Mapped:
    used: set[str] = set()
    raw = _require(_pick(args, ("file_path", "path", "filePath"), used), str, "file_path")
    rel = relativize(raw, root)
    out: JsonObj = {"path": rel}
    _set(out, "offset", _pick(args, ("offset",), used))
    _set(out, "limit", _pick(args, ("limit",), used))
    pages = _pick(args, ("pages",), used)
    if pages is not None:
        if surface == "pi":
            raise _Unmappable("argument pages has no pi equivalent")
        out["pages"] = pages
    _leftover(args, used, "read", name)
    return Mapped("read", (MappedStep("read", out),), ((raw, rel),) if raw != rel else ())


def _map_write(args: JsonObj, surface: str, root: str | None, name: str) -> Mapped:
    used: set[str] = set()
    raw = _require(_pick(args, ("file_path", "path", "filePath"), used), str, "file_path")
    content = _require(_pick(args, ("content",), used), str, "content")
    _leftover(args, used, "write", name)
    rel = relativize(raw, root)
    return Mapped("write", (MappedStep("write", {"path": rel, "content": content}),),
                  ((raw, rel),) if raw != rel else ())


def _edit_items(args: JsonObj, used: set[str]) -> list[tuple[str, str, bool]]:
    items: list[tuple[str, str, bool]] = []
    edits = _pick(args, ("edits",), used)
    if edits is not None:
        if not isinstance(edits, list) or not edits:
            raise _Unmappable("argument edits is not a non-empty list")
        for i, e in enumerate(edits, 1):
            if not isinstance(e, dict):
                raise _Unmappable(f"edits[{i}] is not an object")
            sub: set[str] = set()
            old = _require(_pick(e, OLD_NAMES, sub), str, f"edits[{i}].old_string")
            new = _require(_pick(e, NEW_NAMES, sub), str, f"edits[{i}].new_string")
            rall = _pick(e, ("replace_all", "replaceAll"), sub)
            extra = [k for k in e if k not in sub]
            if extra:
                raise _Unmappable(f"edits[{i}] argument {extra[0]!r} has no toolproof equivalent")
            items.append((old, new, rall is True))
    old = _pick(args, OLD_NAMES, used)
    if old is not None or not items:
        new = _pick(args, NEW_NAMES, used)
        rall = _pick(args, ("replace_all", "replaceAll"), used)
        items.insert(0, (_require(old, str, "old_string"), _require(new, str, "new_string"), rall is True))
    return items


def _map_edit(args: JsonObj, surface: str, root: str | None, name: str, *, recorded_error: bool) -> Mapped:
    used: set[str] = set()
    raw = _require(_pick(args, ("file_path", "path", "filePath"), used), str, "file_path")
    items = _edit_items(args, used)
    _leftover(args, used, "edit", name)
    rel = relativize(raw, root)
    pairs = ((raw, rel),) if raw != rel else ()
    if items[0][0] == "":
        return _create_then_edit(items, surface, rel, pairs, recorded_error=recorded_error)
    if surface == "pi":
        if any(rall for _, _, rall in items):
            raise _Unmappable("replace_all has no pi equivalent")
        notes = ("several edits matched against the original file (pi edits[])",) if len(items) > 1 else ()
        step = MappedStep("edit", {"path": rel, "edits": [{"oldText": o, "newText": n} for o, n, _ in items]})
        return Mapped("edit", (step,), pairs, notes)
    if len(items) > 1 and recorded_error:
        raise _Unmappable("a failed multi-edit cannot be split into minimax edit steps (it applied nothing)")
    steps = []
    for i, (o, n, rall) in enumerate(items, 1):
        a: JsonObj = {"file_path": rel, "old_string": o, "new_string": n}
        if rall:
            a["replace_all"] = True
        steps.append(MappedStep("edit", a, part=i, parts=len(items)))
    notes = ("multi-edit split into sequential minimax edit steps",) if len(items) > 1 else ()
    return Mapped("edit", tuple(steps), pairs, notes)


def _create_then_edit(items: list[tuple[str, str, bool]], surface: str, rel: str,
                      pairs: tuple[tuple[str, str], ...], *, recorded_error: bool) -> Mapped:
    """Claude Code's create mode: an Edit (or a MultiEdit's first edit) with an empty
    ``old_string`` creates the file with ``new_string``; it is a ``write`` (then the other edits)."""
    if recorded_error:
        raise _Unmappable("a create-mode Edit (empty old_string) failed in the trace (the file existed); "
                          "a write would overwrite it instead of failing")
    rest = items[1:]
    if any(o == "" for o, _, _ in rest):
        raise _Unmappable("an edit after the first has an empty old_string")
    steps = [MappedStep("write", {"path": rel, "content": items[0][1]})]
    if rest and surface == "pi":
        if any(rall for _, _, rall in rest):
            raise _Unmappable("replace_all has no pi equivalent")
        steps.append(MappedStep("edit", {"path": rel, "edits": [{"oldText": o, "newText": n} for o, n, _ in rest]}))
    else:
        for o, n, rall in rest:
            a: JsonObj = {"file_path": rel, "old_string": o, "new_string": n}
            if rall:
                a["replace_all"] = True
            steps.append(MappedStep("edit", a))
    numbered = tuple(replace(st, part=i, parts=len(steps)) for i, st in enumerate(steps, 1))
    return Mapped("write", numbered, pairs, ("create-mode Edit (empty old_string) mapped to write",))


def _search_path(args: JsonObj, used: set[str], root: str | None, out: JsonObj) -> tuple[tuple[str, str], ...]:
    """Copy grep/glob's optional ``path`` into ``out`` relative to ``root``; returns the
    (recorded, relative) pair when relativizing changed it."""
    path = _pick(args, ("path",), used)
    if path is None:
        return ()
    rel = relativize(_require(path, str, "path"), root)
    out["path"] = rel
    return ((path, rel),) if path != rel else ()


def _map_grep(args: JsonObj, surface: str, root: str | None, name: str) -> Mapped:
    used: set[str] = set()
    out: JsonObj = {"pattern": _require(_pick(args, ("pattern",), used), str, "pattern")}
    pairs = _search_path(args, used, root, out)
    _set(out, "glob", _pick(args, ("glob", "include"), used))
    mode = _pick(args, ("output_mode",), used)
    if mode is not None:
        if mode not in GREP_OUTPUT_MODES:
            raise _Unmappable(f"output_mode {mode!r} has no toolproof equivalent")
        out["output_mode"] = mode
    ignore = _pick(args, ("ignoreCase", "-i", "case_insensitive"), used)
    if ignore is not None:
        out["ignoreCase"] = ignore is True
    _set(out, "literal", _pick(args, ("literal",), used))
    ctx = _pick(args, ("context", "-C"), used)
    after, before = _pick(args, ("-A",), used), _pick(args, ("-B",), used)
    if after is not None or before is not None:
        if after != before or (ctx is not None and ctx != after):
            raise _Unmappable("different -A/-B context has no toolproof equivalent (only symmetric context)")
        ctx = after
    if ctx is not None:
        out["context"] = _number(ctx, "context")
    limit = _pick(args, ("limit", "head_limit"), used)
    if limit is not None:
        out["limit"] = _number(limit, "limit")
    offset = _pick(args, ("offset",), used)
    if offset is not None:
        out["offset"] = _number(offset, "offset")
    multiline = _pick(args, ("multiline",), used)
    if multiline is True:
        raise _Unmappable("multiline grep has no toolproof equivalent")
    if _pick(args, ("type",), used) is not None:
        raise _Unmappable("grep argument 'type' (a ripgrep file type) has no toolproof equivalent")
    _leftover(args, used, "grep", name)
    return Mapped("grep", (MappedStep("grep", out),), pairs)


def _map_glob(args: JsonObj, surface: str, root: str | None, name: str) -> Mapped:
    used: set[str] = set()
    pattern = _require(_pick(args, ("pattern",), used), str, "pattern")
    if _is_absolute(pattern):
        pattern = relativize(pattern, root)
    out: JsonObj = {"pattern": pattern}
    pairs = _search_path(args, used, root, out)
    for key in ("limit", "offset"):
        v = _pick(args, (key,), used)
        if v is not None:
            out[key] = _number(v, key)
    sort = _pick(args, ("sort",), used)
    if sort is not None:
        if sort not in GLOB_SORTS:
            raise _Unmappable(f"glob sort {sort!r} has no toolproof equivalent")
        out["sort"] = sort
    _set(out, "include_ignored", _pick(args, ("include_ignored",), used))
    _leftover(args, used, "glob", name)
    return Mapped("glob", (MappedStep("glob", out),), pairs)


def _map_bash(args: JsonObj, surface: str, root: str | None, name: str, unit: str) -> Mapped:
    used: set[str] = set()
    command = _require(_pick(args, ("command", "cmd"), used), str, "command")
    out: JsonObj = {"command": relativize_command(command, root)}
    notes: tuple[str, ...] = ("recorded workspace root in a bash command made relative",) \
        if out["command"] != command else ()
    workdir = _pick(args, ("workdir",), used)
    if workdir is not None:
        rel_dir = relativize(_require(workdir, str, "workdir"), root)
        if rel_dir not in (".", ""):
            out["command"] = f"cd {shlex.quote(rel_dir)} && {out['command']}"
            notes += ("the recorded working directory of a command became a leading cd",)
    timeout = _pick(args, ("timeout",), used)
    timeout_ms = _pick(args, ("timeout_ms",), used)
    if timeout is None and timeout_ms is not None:
        timeout, unit = timeout_ms, "ms"
    if timeout is not None:
        out["timeout"] = _seconds(timeout, unit)
    background = _pick(args, ("run_in_background",), used)
    if background is True:
        if surface == "pi":
            raise _Unmappable("run_in_background has no pi equivalent")
        out["run_in_background"] = True
    _leftover(args, used, "bash", name)
    return Mapped("bash", (MappedStep("bash", out),), (), notes)


def timeout_unit_for(name: str, fmt: str, override: str | None) -> str:
    """Bash ``timeout`` unit: the override, else milliseconds for Claude Code's ``Bash`` (in a
    Claude Code session, or a tool named exactly ``Bash`` in a log), else seconds (pi, MiniMax)."""
    if override:
        return override
    return "ms" if fmt == "claude-code" or name == "Bash" else "s"


def unmappable_reason(name: str) -> str:
    low = name.lower()
    if low.startswith("mcp__"):
        return f"unmappable tool {name}: MCP tool"
    why = UNMAPPABLE_WHY.get(low, "no toolproof equivalent (name it with --tool-map NAME=TOOL)")
    return f"unmappable tool {name}: {why}"


def known_tool_names() -> tuple[str, ...]:
    """Every tool name ``--tool-map`` may map to: toolproof's tools and the built-in agent names."""
    return tuple(dict.fromkeys((*CANONICAL_TOOLS, *TOOL_ALIASES, *AGENT_TOOLS)))


def _map_one(canonical: str, args: JsonObj, surface: str, root: str | None, fmt: str, name: str,
             timeout_unit: str | None, recorded_error: bool) -> Mapped:
    if canonical == "read":
        return _map_read(args, surface, root, name)
    if canonical == "write":
        return _map_write(args, surface, root, name)
    if canonical in ("edit", "multiedit"):
        return _map_edit(args, surface, root, name, recorded_error=recorded_error)
    if canonical == "grep":
        return _map_grep(args, surface, root, name)
    if canonical == "glob":
        return _map_glob(args, surface, root, name)
    return _map_bash(args, surface, root, name, timeout_unit_for(name, fmt, timeout_unit))


def _combine(parts: list[Mapped], canonical: str) -> Mapped:
    """One recorded call that became several tool calls (a patch over several files)."""
    if len(parts) == 1:
        return parts[0]
    steps = [st for m in parts for st in m.steps]
    numbered = tuple(replace(st, part=i, parts=len(steps)) for i, st in enumerate(steps, 1))
    notes = (*(n for m in parts for n in m.notes), f"one {canonical} call split into {len(steps)} steps")
    return Mapped(canonical, numbered, tuple(p for m in parts for p in m.path_pairs), notes)


def map_call(call: ToolCall, surface: str, root: str | None, fmt: str, *,
             timeout_unit: str | None = None, tool_map: dict[str, str] | None = None) -> Mapped | Skip:
    """Map one recorded call onto ``surface``; ``Skip`` (with the reason) when it cannot be.
    ``tool_map`` maps recorded tool names (exact, else lower-cased) to a name of
    ``known_tool_names()``, before the built-in names are looked up."""
    target = (tool_map or {}).get(call.name) or (tool_map or {}).get(call.name.lower())
    key = (target or call.name).lower()
    if key not in TOOL_ALIASES and key not in AGENT_TOOLS:
        return Skip(unmappable_reason(call.name))
    if call.args is None:
        return Skip(f"malformed call: {call.args_problem or 'arguments are not an object'}")
    recorded_error = call.result is not None and call.result.is_error
    try:
        calls: list[CanonicalCall] = [(TOOL_ALIASES[key], call.args)] if key in TOOL_ALIASES \
            else AGENT_TOOLS[key](call.args, call.result)
        if len(calls) > 1 and recorded_error:
            raise _Unmappable("a failed call that changes several files cannot be split into steps "
                              "(it applied nothing)")
        parts = [_map_one(c, a, surface, root, fmt, call.name, timeout_unit, recorded_error) for c, a in calls]
        return _combine(parts, key)
    except _Unmappable as exc:
        return Skip(f"{call.name}: {exc}")
