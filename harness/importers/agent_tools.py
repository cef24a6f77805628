"""Tool names of other agents, built in: each adapter turns one recorded call of that agent
into one or more calls of a toolproof tool (``read``, ``write``, ``edit``, ``grep``, ``glob``,
``bash``) with the argument names the mapper understands (docs/importers.md lists them).
Pure functions.

Adapters rename arguments, convert units and line numbering, parse edit formats (``patches``),
and raise ``Unmappable`` (with the reason) for an operation toolproof has no tool for. Arguments
an adapter does not know are passed on, so the mapper refuses them by name instead of dropping
them silently.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from typing import Any

from harness.importers.patches import FileEdit, FileWrite, PatchError, parse_apply_patch, parse_search_replace
from harness.importers.trace import JsonObj, RecordedResult

CanonicalCall = tuple[str, JsonObj]
Adapter = Callable[[JsonObj, "RecordedResult | None"], list[CanonicalCall]]

CANONICAL_TOOLS: tuple[str, ...] = ("read", "write", "edit", "multiedit", "grep", "glob", "bash")
# Shells whose "-c"/"-lc" script is the command (Codex passes argv lists).
SHELLS = ("bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh", "/usr/bin/bash", "/usr/bin/zsh")
SHELL_SCRIPT_FLAGS = ("-c", "-lc", "-ic")
# Directory listings an editor's ``view`` returns instead of a file's content.
DIRECTORY_VIEW_RE = re.compile(r"files and directories up to \d+ levels? deep|\bis a directory\b", re.IGNORECASE)


class Unmappable(Exception):
    """The recorded call has no faithful toolproof equivalent; the message says why."""


def _rename(args: JsonObj, names: dict[str, str], drop: tuple[str, ...] = ()) -> JsonObj:
    """``args`` with keys renamed (``names``: theirs → ours) and cosmetic keys dropped."""
    return {names.get(k, k): v for k, v in args.items() if k not in drop}


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value:
        raise Unmappable(f"argument {what} is not a whole number ({value!r})")
    return int(value)


def _line_range(out: JsonObj, first: Any, last: Any, what: str) -> None:
    """Set ``offset``/``limit`` from a 1-based inclusive line range (``last`` -1 or None: to the end)."""
    if first is not None:
        out["offset"] = _int(first, f"{what} start")
    if last is not None and _int(last, f"{what} end") != -1:
        start = out.get("offset", 1)
        end = _int(last, f"{what} end")
        if end < start:
            raise Unmappable(f"{what} ends ({end}) before it starts ({start})")
        out["limit"] = end - start + 1


# -- reading -----------------------------------------------------------------------------------------

def _read_file(args: JsonObj, result: RecordedResult | None) -> list[CanonicalCall]:
    """Cline/Roo, Gemini CLI, Cursor, Copilot, Continue ``read_file``."""
    out = _rename(args, {"target_file": "file_path", "absolute_path": "file_path", "filePath": "file_path",
                         "filepath": "file_path", "path": "file_path"},
                  ("explanation", "should_read_entire_file"))
    if "absolute_path" in args and "offset" in out:  # Gemini CLI: 0-based offset
        out["offset"] = _int(out["offset"], "offset") + 1
    for first, last in (("start_line_one_indexed", "end_line_one_indexed_inclusive"),
                        ("start_line_one_indexed", "end_line_one_indexed"),
                        ("startLine", "endLine"), ("start_line", "end_line")):
        if first in out or last in out:
            _line_range(out, out.pop(first, None), out.pop(last, None), "the line range")
    return [("read", out)]


def _view_range(out: JsonObj, view_range: Any) -> None:
    if not isinstance(view_range, list) or len(view_range) != 2:
        raise Unmappable(f"view_range is not [start, end] ({view_range!r})")
    _line_range(out, view_range[0], view_range[1], "view_range")


# -- editing -----------------------------------------------------------------------------------------

def _str_replace_editor(args: JsonObj, result: RecordedResult | None) -> list[CanonicalCall]:
    """OpenHands ``str_replace_editor`` and Anthropic's text editor tool: one tool whose
    ``command`` picks the operation."""
    rest = {k: v for k, v in args.items() if k not in ("command", "security_risk", "impl_source")}
    command = args.get("command")
    if command == "view":
        if result is not None and DIRECTORY_VIEW_RE.search(result.text):
            raise Unmappable("view of a directory (a two-level listing) has no toolproof equivalent")
        out = _rename(rest, {"path": "file_path"})
        if "view_range" in out:
            _view_range(out, out.pop("view_range"))
        return [("read", out)]
    if command == "create":
        return [("write", _rename(rest, {"path": "file_path", "file_text": "content"}))]
    if command == "str_replace":
        out = _rename(rest, {"path": "file_path", "old_str": "old_string", "new_str": "new_string"})
        out.setdefault("new_string", "")  # an omitted new_str deletes the old text
        return [("edit", out)]
    if command == "insert":
        raise Unmappable(LINE_INSERT)
    if command == "undo_edit":
        raise Unmappable("undo_edit restores the editor's own history; toolproof has no equivalent")
    raise Unmappable(f"command {command!r} (expected view, create, str_replace, insert or undo_edit)")


def _search_replace_blocks(args: JsonObj, result: RecordedResult | None) -> list[CanonicalCall]:
    """Cline ``replace_in_file`` and Roo ``apply_diff``: ``diff`` holds SEARCH/REPLACE blocks."""
    rest = _rename(args, {"path": "file_path"})
    diff = rest.pop("diff", None)
    if not isinstance(diff, str):
        raise Unmappable("argument diff is missing or not a string")
    try:
        pairs = parse_search_replace(diff)
    except PatchError as exc:
        raise Unmappable(f"malformed SEARCH/REPLACE diff: {exc}") from None
    rest["edits"] = [{"old_string": o, "new_string": n} for o, n in pairs]
    return [("multiedit", rest)]


def _search_and_replace(args: JsonObj, result: RecordedResult | None) -> list[CanonicalCall]:
    """Roo ``search_and_replace``: every occurrence of a literal ``search``."""
    for key in ("use_regex", "ignore_case"):
        if args.get(key):
            raise Unmappable(f"{key} has no toolproof equivalent (edit replaces literal text)")
    for key in ("start_line", "end_line"):
        if key in args:
            raise Unmappable(f"{key} has no toolproof equivalent (edit searches the whole file)")
    rest = _rename(args, {"path": "file_path", "search": "old_string", "replace": "new_string"},
                   ("use_regex", "ignore_case"))
    rest["replace_all"] = True
    return [("edit", rest)]


def _replace(args: JsonObj, result: RecordedResult | None) -> list[CanonicalCall]:
    """Gemini CLI ``replace`` (``expected_replacements``: how many occurrences it replaces)."""
    out = dict(args)
    count = out.pop("expected_replacements", None)
    if count is not None and _int(count, "expected_replacements") > 1:
        out["replace_all"] = True
    return [("edit", out)]


def _patch_calls(text: Any) -> list[CanonicalCall]:
    if not isinstance(text, str):
        raise Unmappable("the patch is missing or not a string")
    try:
        ops = parse_apply_patch(text)
    except PatchError as exc:
        raise Unmappable(f"patch not replayable: {exc}") from None
    calls: list[CanonicalCall] = []
    for op in ops:
        if isinstance(op, FileWrite):
            calls.append(("write", {"file_path": op.path, "content": op.content}))
        elif isinstance(op, FileEdit):
            calls.append(("multiedit", {"file_path": op.path,
                                        "edits": [{"old_string": o, "new_string": n} for o, n in op.edits]}))
    return calls


def _apply_patch(args: JsonObj, result: RecordedResult | None) -> list[CanonicalCall]:
    """Codex CLI ``apply_patch`` (``input`` or ``patch``: the ``*** Begin Patch`` envelope)."""
    extra = [k for k in args if k not in ("input", "patch")]
    if extra:
        raise Unmappable(f"apply_patch argument {extra[0]!r} has no toolproof equivalent")
    return _patch_calls(args.get("input", args.get("patch")))


# -- shells ------------------------------------------------------------------------------------------

def _argv_command(argv: Any) -> str:
    if isinstance(argv, str):
        return argv
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise Unmappable(f"command is neither a string nor a list of strings ({argv!r})")
    if len(argv) == 3 and argv[0] in SHELLS and argv[1] in SHELL_SCRIPT_FLAGS:
        return str(argv[2])
    return shlex.join(argv)


def _shell(args: JsonObj, result: RecordedResult | None) -> list[CanonicalCall]:
    """Codex CLI ``shell``/``local_shell``/``shell_command``/``exec_command``: ``command`` (an
    argv list or a string) or ``cmd``, ``workdir``, ``timeout_ms``; an argv starting with
    ``apply_patch`` is a patch."""
    out = _rename(args, {"cmd": "command", "working_directory": "workdir"},
                  ("with_escalated_permissions", "justification", "sandbox_permissions", "yield_time_ms",
                   "max_output_tokens", "login"))
    argv = out.get("command")
    if isinstance(argv, list) and argv and argv[0] in ("apply_patch", "applypatch") and len(argv) == 2:
        return _patch_calls(argv[1])
    out["command"] = _argv_command(argv)
    return [("bash", out)]


def _execute_bash(args: JsonObj, result: RecordedResult | None) -> list[CanonicalCall]:
    """OpenHands ``execute_bash``/``bash`` (``is_input``: keys sent to a running command)."""
    if args.get("is_input") in (True, "true"):
        raise Unmappable("is_input sends keys to a running command; toolproof has no equivalent")
    out = _rename(args, {}, ("is_input", "security_risk", "thought"))
    return [("bash", out)]


def _terminal(args: JsonObj, result: RecordedResult | None) -> list[CanonicalCall]:
    """Cursor ``run_terminal_cmd``, Copilot ``run_in_terminal``, Cline ``execute_command``,
    Gemini CLI ``run_shell_command``, Continue ``run_terminal_command``."""
    out = _rename(args, {"is_background": "run_in_background", "isBackground": "run_in_background",
                         "directory": "workdir", "cwd": "workdir"},
                  ("explanation", "require_user_approval", "requires_approval", "description", "waitForCompletion"))
    if out.get("run_in_background") is False:
        del out["run_in_background"]
    return [("bash", out)]


# -- searching and listing ----------------------------------------------------------------------------

def _grep_search(args: JsonObj, result: RecordedResult | None) -> list[CanonicalCall]:
    """Cursor and Copilot ``grep_search``, Cline ``search_files``, Gemini ``search_file_content``."""
    out = _rename(args, {"query": "pattern", "regex": "pattern", "include_pattern": "glob", "includePattern": "glob",
                         "file_pattern": "glob", "include": "glob"}, ("explanation",))
    if "exclude_pattern" in out:
        raise Unmappable("exclude_pattern has no toolproof equivalent")
    if "case_sensitive" in out:
        out["-i"] = out.pop("case_sensitive") is False
    if "isRegexp" in out:
        if out.pop("isRegexp") is False:
            out["literal"] = True
    out.setdefault("output_mode", "content")
    return [("grep", out)]


def _list_dir(args: JsonObj, result: RecordedResult | None) -> list[CanonicalCall]:
    """Cline ``list_files``, Cursor ``list_dir``, Gemini ``list_directory``, Copilot ``list_dir``,
    OpenCode ``list``: the files under a directory (``glob`` lists files, not directories)."""
    out = _rename(args, {"relative_workspace_path": "path", "dir_path": "path"}, ("explanation",))
    recursive = out.pop("recursive", False)
    if "ignore" in out:
        raise Unmappable("ignore patterns of a directory listing have no toolproof equivalent")
    out["pattern"] = "**/*" if recursive in (True, "true") else "*"
    return [("glob", out)]


def _file_search(args: JsonObj, result: RecordedResult | None) -> list[CanonicalCall]:
    """Copilot ``file_search`` (``query`` is a glob)."""
    return [("glob", _rename(args, {"query": "pattern"}, ("explanation",)))]


def _canonical(tool: str, names: dict[str, str] | None = None, drop: tuple[str, ...] = ()) -> Adapter:
    def adapter(args: JsonObj, result: RecordedResult | None) -> list[CanonicalCall]:
        return [(tool, _rename(args, names or {}, drop))]
    return adapter


SKETCH = "the edit is a sketch another model applies; toolproof has no equivalent"
LINE_INSERT = "insert at a line number has no toolproof equivalent (edit replaces text it finds)"
SEMANTIC = "semantic search has no toolproof equivalent"
# Lower-cased names of other agents' tools that toolproof cannot replay, with why.
AGENT_UNMAPPABLE: dict[str, str] = {
    "edit_file": SKETCH,
    "insert_edit_into_file": SKETCH,
    "edit_existing_file": SKETCH,
    "insert_content": LINE_INSERT,
    "delete_file": "toolproof has no delete tool",
    "codebase_search": SEMANTIC,
    "semantic_search": SEMANTIC,
    "list_code_definition_names": "code-definition listing has no toolproof equivalent",
    "read_many_files": "reading many files in one call has no toolproof equivalent",
    "update_plan": "planning tool",
    "view_image": "image viewer",
}
# Lower-cased tool name → adapter. The agents each name comes from are listed in docs/importers.md.
AGENT_TOOLS: dict[str, Adapter] = {
    "read_file": _read_file,
    "write_to_file": _canonical("write", {"path": "file_path"}, ("line_count",)),
    "create_file": _canonical("write", {"filePath": "file_path"}, ("explanation",)),
    "create_new_file": _canonical("write", {"filepath": "file_path", "contents": "content"}),
    "replace_in_file": _search_replace_blocks,
    "apply_diff": _search_replace_blocks,
    "search_and_replace": _search_and_replace,
    "replace": _replace,
    "search_replace": _canonical("edit", {}, ("explanation",)),
    "replace_string_in_file": _canonical("edit", {"filePath": "file_path", "oldString": "old_string",
                                                  "newString": "new_string"}, ("explanation",)),
    "str_replace_editor": _str_replace_editor,
    "str_replace_based_edit_tool": _str_replace_editor,
    "apply_patch": _apply_patch,
    "shell": _shell,
    "local_shell": _shell,
    "shell_command": _shell,
    "exec_command": _shell,
    "container.exec": _shell,
    "execute_bash": _execute_bash,
    "execute_command": _terminal,
    "run_terminal_cmd": _terminal,
    "run_in_terminal": _terminal,
    "run_shell_command": _terminal,
    "run_terminal_command": _terminal,
    "search_files": _grep_search,
    "grep_search": _grep_search,
    "search_file_content": _grep_search,
    "list_files": _list_dir,
    "list_dir": _list_dir,
    "list_directory": _list_dir,
    "list": _list_dir,
    "file_search": _file_search,
    "file_glob_search": _file_search,
}
