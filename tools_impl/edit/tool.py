"""The ``edit`` tool: MiniMax's wrapper around the pi edit engine (spec edit.1–4).

The wrapper surface takes ``file_path`` / ``old_string`` / ``new_string`` / ``replace_all``,
translates them into the engine's ``{path, edits}``, retries once with ``read``-style line-number
prefixes stripped, and implements ``replace_all`` itself as one whole-file replacement. pi's own
``{path, edits}`` form is accepted too and goes straight to the engine. With ``profile.wrapper``
off the tool is the bare engine on the pi surface (spec edit.10).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tools_impl.core.context import ToolContext
from tools_impl.core.errors import ToolAborted, ToolError
from tools_impl.core.patches import SURFACE_WRAPPER, Seam
from tools_impl.core.profile import Profile
from tools_impl.core.result import ToolResult
from tools_impl.core.tool import MODE_SEQUENTIAL, Tool
from tools_impl.edit.engine import engine_edit, prepare_arguments
from tools_impl.js.node_errors import error_code
from tools_impl.js.text import JS_WHITESPACE
from tools_impl.shared.paths import wrapper_base_resolve

NAME = "edit"

MINIMAX_SCHEMA: dict[str, Any] = {
    "properties": {
        "file_path": {"type": "string"},
        "old_string": {"type": "string"},
        "new_string": {"type": "string"},
        "replace_all": {"type": "boolean"},
    },
    "required": ["file_path", "old_string", "new_string"],
    "additionalProperties": False,
}
PI_SCHEMA: dict[str, Any] = {
    "properties": {
        "path": {"type": "string"},
        "edits": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
                "required": ["oldText", "newText"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["path", "edits"],
    "additionalProperties": False,
}
CODE_OLD_STRING_EMPTY = "OLD_STRING_EMPTY"
CODE_READ_FAILED = "READ_FAILED"
CODE_OLD_STRING_NOT_FOUND = "OLD_STRING_NOT_FOUND"
DETAIL_PREFIXES_STRIPPED = "line_number_prefixes_stripped"

# /^\s*\d+[→\t](.*)$/ with JavaScript semantics: \s is the JS whitespace set, \d is ASCII only,
# and "." stops at every JS line terminator, so a line holding "\r" never matches.
LINE_NUMBER_PREFIX_RE = re.compile(
    "^[" + re.escape(JS_WHITESPACE) + "]*[0-9]+[\u2192\t]([^\n\r\u2028\u2029]*)$"
)


def schema_for_args(profile: Profile, args: Mapping[str, Any]) -> dict[str, Any]:
    """The schema a host validates ``args`` against: the MiniMax surface with the wrapper, pi's
    without it; pi's own ``{path, edits}`` form is accepted on the wrapper surface too, so it is
    validated against the pi schema."""
    if not profile.wrapper or is_pi_form(args):
        return PI_SCHEMA
    return MINIMAX_SCHEMA


def is_pi_form(args: Mapping[str, Any]) -> bool:
    """Arguments in pi's ``{path, edits}`` form (rather than the wrapper's ``file_path`` form)."""
    return "edits" in args or "path" in args


def prepare_call_arguments(args: dict[str, Any]) -> dict[str, Any]:
    """pi's host loop runs the engine's ``prepareArguments`` (the legacy-input shim) before
    validation; arguments in the wrapper's ``file_path`` form are left as they are (arguments
    that also carry ``path`` or ``edits`` are in pi's form, and pi prepares them)."""
    if "file_path" in args and not is_pi_form(args):
        return args
    return prepare_arguments(args)


# -- line-number-prefix retry (spec edit.3) ----------------------------------------------------------


def strip_line_number_prefixes_from_block(text: str) -> str | None:
    """``stripLineNumberPrefixesFromBlock``: the block without ``read``-style prefixes, or
    ``None`` when it is empty, any non-empty line lacks a prefix, or no line carried one."""
    if text == "":
        return None
    out: list[str] = []
    prefixed = False
    for line in text.split("\n"):
        if line == "":
            out.append(line)
            continue
        m = LINE_NUMBER_PREFIX_RE.match(line)
        if m is None:
            return None
        out.append(m.group(1))
        prefixed = True
    return "\n".join(out) if prefixed else None


def strip_edits(edits: Sequence[Mapping[str, str]]) -> list[dict[str, str]] | None:
    """Each edit's ``oldText`` and ``newText`` stripped independently; ``None`` if nothing changed."""
    changed = False
    out: list[dict[str, str]] = []
    for edit in edits:
        item = dict(edit)
        for key in ("oldText", "newText"):
            stripped = strip_line_number_prefixes_from_block(item[key])
            if stripped is not None:
                item[key] = stripped
                changed = True
        out.append(item)
    return out if changed else None


def edit_with_retry(path: str, edits: list[dict[str, str]], ctx: ToolContext) -> ToolResult:
    """Run the engine; on failure retry once with prefixes stripped; re-raise the original error."""
    try:
        return engine_edit(path, edits, ctx)
    except ToolAborted:
        raise
    except ToolError as original:
        if ctx.abort.is_set():
            raise
        stripped = strip_edits(edits)
        if stripped is None:
            raise
        try:
            result = engine_edit(path, stripped, ctx)
        except ToolAborted:
            raise
        except ToolError:
            raise original from None
    details = dict(result.details or {})
    details[DETAIL_PREFIXES_STRIPPED] = True
    return ToolResult(result.tool_name, result.content, details, result.is_error)


# -- replace_all (spec edit.4) -----------------------------------------------------------------------


def _expand_js_replacement(replacement: str, haystack: str, pos: int, matched: str) -> str:
    # JavaScript GetSubstitution for a string pattern: no captures exist, so $1, $<name> and a
    # lone $ stay literal; only $$, $&, $` and $' are patterns.
    out: list[str] = []
    i = 0
    while i < len(replacement):
        ch = replacement[i]
        nxt = replacement[i + 1] if i + 1 < len(replacement) else ""
        if ch == "$" and nxt in ("$", "&", "`", "'"):
            if nxt == "$":
                out.append("$")
            elif nxt == "&":
                out.append(matched)
            elif nxt == "`":
                out.append(haystack[:pos])
            else:
                out.append(haystack[pos + len(matched) :])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def replace_all_js_patterns(haystack: str, needle: str, replacement: str) -> str:
    """JavaScript ``haystack.replaceAll(needle, replacement)`` with a string replacement
    (``$&``, ``$$``, `` $` `` and ``$'`` expanded). ``needle`` must be non-empty."""
    out: list[str] = []
    pos = 0
    while True:
        idx = haystack.find(needle, pos)
        if idx < 0:
            break
        out.append(haystack[pos:idx])
        out.append(_expand_js_replacement(replacement, haystack, idx, needle))
        pos = idx + len(needle)
    out.append(haystack[pos:])
    return "".join(out)


REPLACE_ALL: Seam[Callable[[str, str, str], str]] = Seam(
    "edit.replace-all", SURFACE_WRAPPER, replace_all_js_patterns,
    "how replace_all writes new_string for each occurrence of old_string (spec edit.4)")


def replace_all_edit(file_path: str, old: str, new: str, ctx: ToolContext) -> ToolResult:
    """spec edit.4: read the raw file, replace every occurrence, hand the engine one whole-file edit."""
    abs_path = wrapper_base_resolve(file_path, ctx.root, ctx.home)
    if old == "":
        raise ToolError(
            f"replace_all: old_string must be non-empty (path={abs_path}).", code=CODE_OLD_STRING_EMPTY
        )
    try:
        with open(abs_path, "rb") as fh:
            raw = fh.read().decode("utf-8", "replace")
    except OSError as exc:
        reason = error_code(exc) or f"Error: {exc}"
        raise ToolError(
            f"Could not read file for replace_all: {abs_path}. {reason}.", code=CODE_READ_FAILED
        ) from exc
    if raw.find(old) < 0:
        raise ToolError(
            f"replace_all: old_string was not found in {abs_path}.", code=CODE_OLD_STRING_NOT_FOUND
        )
    replaced = REPLACE_ALL.of(ctx.profile)(raw, old, new)
    return edit_with_retry(abs_path, [{"oldText": raw, "newText": replaced}], ctx)


# -- entry point --------------------------------------------------------------------------------


def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Run one ``edit`` call on prepared, validated arguments (``TOOL.call`` is the host path);
    every failure raises (``ToolError`` / ``ToolAborted``)."""
    if not ctx.profile.wrapper or is_pi_form(args):
        # pi surface: the bare engine (no retry).
        return engine_edit(args["path"], args["edits"], ctx)
    file_path: str = args["file_path"]
    if args.get("replace_all") is True:
        return replace_all_edit(file_path, args["old_string"], args["new_string"], ctx)
    edits = [{"oldText": args["old_string"], "newText": args["new_string"]}]
    return edit_with_retry(file_path, edits, ctx)


TOOL = Tool(NAME, MODE_SEQUENTIAL, schema_for_args, prepare_call_arguments, execute)
