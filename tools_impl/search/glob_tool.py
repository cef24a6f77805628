"""The ``glob`` tool (spec glob): ``rg --files`` filtered through the pattern's minimatch regex, with
the absolute-pattern split and escape check, the sensitive-root and ``include_ignored`` rules,
broad-scan media excludes, and offset paging.

Pure pieces (pattern split, scope facts, argv builder, page formatter) are kept apart from the
I/O in ``execute``.
"""

from __future__ import annotations

import math
import ntpath
import os
import posixpath
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tools_impl.core.context import ToolContext
from tools_impl.core.errors import ToolError
from tools_impl.core.profile import REFERENCE
from tools_impl.core.result import ToolResult, text_result
from tools_impl.core.tool import MODE_PARALLEL, Tool, by_surface, keep_arguments
from tools_impl.js.text import finite_float, js_trim
from tools_impl.search.minimatch import InvalidGlob, first_magic_index, has_magic, is_broad_file_scan, make_re
from tools_impl.search.ripgrep import run_rg
from tools_impl.search.scan_policy import (
    DEFAULT_SCAN_DIRECTORY_NAMES,
    broad_exclude_args,
    is_sensitive_search_path,
    scan_exclude_args,
    sensitive_exclude_args,
)
from tools_impl.shared.paths import search_root
from tools_impl.shared.truncation import continuation, continuation_hint

NAME = "glob"
SCHEMA: dict[str, Any] = {
    "properties": {
        "pattern": {"type": "string"},
        "path": {"type": "string"},
        "include_ignored": {"type": "boolean"},
        "limit": {"type": "number"},
        "offset": {"type": "number"},
        "sort": {"type": "string", "enum": ["none", "modified"]},
    },
    "required": ["pattern"],
}

DEFAULT_GLOB_LIMIT = REFERENCE.glob_default_limit
NO_FILES = "No files matched"
PRESERVE_ARGS = ("pattern", "path", "include_ignored", "limit", "sort")
INCLUDE_IGNORED_NEEDS_SCOPE = (
    "include_ignored requires a narrow path, pattern prefix, or exact filename; "
    "narrow the search scope before inspecting ignored artifacts"
)
TRUNCATED_BEFORE_PAGE = (
    "\n\n[Output was truncated before this page could be reached. Refine path/pattern or reduce offset]"
)
NEVER_MATCHES = re.compile(r"(?!)")
DRIVE_RE = re.compile(r"^[A-Za-z]:$")


@dataclass(frozen=True)
class GlobInputs:
    pattern: str
    path: str | None
    include_ignored: bool
    limit: int
    offset: int
    sort: str


def normalise_inputs(args: Mapping[str, Any], default_limit: int = DEFAULT_GLOB_LIMIT) -> GlobInputs:
    limit_raw = finite_float(args.get("limit"))
    off_raw = finite_float(args.get("offset"))
    path = args.get("path")
    return GlobInputs(
        pattern=str(args.get("pattern") or ""),
        path=path if isinstance(path, str) else None,
        include_ignored=bool(args.get("include_ignored")),
        limit=max(1, math.floor(limit_raw)) if limit_raw is not None else default_limit,
        offset=math.floor(off_raw) if off_raw is not None and off_raw > 0 else 0,
        sort="modified" if args.get("sort") == "modified" else "none",
    )


def is_absolute_pattern(pattern: str) -> bool:
    if pattern.startswith("/"):
        return True
    return sys.platform == "win32" and ntpath.isabs(pattern)


def split_absolute_pattern(pattern: str) -> tuple[str, str]:
    """(root, relative pattern) of an absolute pattern (spec glob.2 step 2)."""
    if not has_magic(pattern):
        # Node's path.dirname / path.basename: trailing separators are not part of the name.
        norm = pattern.replace("\\", "/")
        stripped = norm.rstrip("/") or "/"
        cut = stripped.rfind("/")
        root = stripped[:cut] if cut > 0 else "/"
        if DRIVE_RE.match(root):
            root += "/"
        return root, stripped[cut + 1 :]
    magic = first_magic_index(pattern)
    cut = max(pattern.rfind("/", 0, magic), pattern.rfind("\\", 0, magic))
    if cut <= 0:
        return "/", pattern[cut + 1 :] if cut == 0 else pattern
    root = pattern[:cut]
    if DRIVE_RE.match(root):
        root += "/"
    return root, pattern[cut + 1 :]


def static_dir_prefix(pattern: str) -> str:
    """The directory part of the pattern before any magic (``src/**/*.ts`` → ``src``)."""
    magic = first_magic_index(pattern)
    head = pattern if magic < 0 else pattern[:magic]
    cut = head.rfind("/")
    return head[:cut] if cut > 0 else ""


def is_exact_file(pattern: str) -> bool:
    return bool(pattern) and not has_magic(pattern) and pattern not in (".", "..") and not pattern.endswith("/")


def _inside(child: str, parent: str) -> str | None:
    """``child`` relative to ``parent`` with ``/`` separators, or ``None`` when it escapes."""
    try:
        rel = os.path.relpath(child, parent)
    except ValueError:  # different drives
        return None
    if rel == ".":
        return ""
    if rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel):
        return None
    return rel.replace(os.sep, "/")


def scan_exclude_names(requested_rel: str) -> tuple[str, ...]:
    """The scan-exclude names minus those that are a segment of the requested root."""
    segments = set(requested_rel.split("/")) if requested_rel else set()
    return tuple(n for n in DEFAULT_SCAN_DIRECTORY_NAMES if n not in segments)


def build_glob_argv(*, include_ignored: bool, sort: str, narrow: bool, exact_file: bool,
                    requested_rel: str, broad: bool) -> list[str]:
    """The ripgrep argv of spec glob.2 step 9 (the pattern itself is not passed)."""
    argv = ["--no-config", "--no-messages", "--files", "--hidden"]
    if include_ignored:
        argv.append("--no-ignore")
    if sort == "modified":
        argv.append("--sortr=modified")
    if not (include_ignored and narrow and not exact_file):
        argv += scan_exclude_args(scan_exclude_names(requested_rel))
    if broad:
        argv += broad_exclude_args()
    argv += sensitive_exclude_args()
    return argv


def line_regex(pattern: str) -> re.Pattern[str]:
    """minimatch ``makeRe`` with ``dot: true``, prefixed with ``**/`` when there is no ``/``."""
    rx = make_re(pattern if "/" in pattern else "**/" + pattern, dot=True)
    return rx if rx is not None else NEVER_MATCHES


def results_footer(n: int, offset: int) -> str:
    return (f"\n\n[Results truncated: showing {n} paths from offset {offset}. If the omitted remainder is "
            f"needed, use offset={offset + n} with the same search arguments. Refine path/pattern or pass "
            'sort="modified" to surface recently changed files]')


def instruction(next_offset: int) -> str:
    return (f"If the omitted remainder is needed, call glob again with offset={next_offset}; "
            "preserve the same search arguments.")


def format_page(paths: Sequence[str], offset: int, limit: int, stdout_truncated: bool) -> tuple[str, dict[str, Any]]:
    """Text and details of one page (spec glob.2 step 12)."""
    total = len(paths)
    page = list(paths[offset : offset + limit])
    n = len(page)
    truncated = total > offset + n or stdout_truncated
    details: dict[str, Any] = {"matched": total, "limit": limit, "offset": offset}
    if n == 0:
        text = f"No more files matched at offset {offset}" if offset > 0 else NO_FILES
        if truncated:
            details["truncated"] = True
            text += TRUNCATED_BEFORE_PAGE
        return text, details
    text = "\n".join(page)
    if truncated:
        nxt = offset + n
        text += results_footer(n, offset)
        details["truncated"] = True
        details["next_offset"] = nxt
        details["desktop_output_continuation"] = continuation(
            nxt, "file", continuation_hint("glob", PRESERVE_ARGS, instruction(nxt)))
    return text, details


def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    ctx.check_abort()
    inp = normalise_inputs(args, ctx.profile.glob_default_limit)
    if not inp.pattern:
        raise ToolError("glob pattern is required")
    pattern = inp.pattern
    # "blank" is JavaScript's trim() set (paths.search_root strips Python's set).
    base = search_root(None if inp.path is None or js_trim(inp.path) == "" else inp.path, ctx.root)
    search = base
    if is_absolute_pattern(pattern):
        pattern_root, pattern = split_absolute_pattern(pattern)
        try:
            real_base = os.path.realpath(base, strict=True)
            real_root = os.path.realpath(pattern_root, strict=True)
        except OSError:
            raise ToolError(f"glob path does not exist: {inp.path if inp.path is not None else pattern_root}") from None
        rel = _inside(real_root, real_base)
        if rel is None:
            raise ToolError(
                f"glob absolute pattern escapes the approved search path ({base}); "
                'pass the directory via "path" so the permission gate can review it'
            )
        search = real_base
        if rel:
            pattern = posixpath.join(rel, pattern)
    try:
        os.stat(search)
    except OSError:
        raise ToolError(f"glob path does not exist: {inp.path if inp.path is not None else search}") from None
    probe = ctx.profile.sensitive_root_probe
    if is_sensitive_search_path(search, probe) or is_sensitive_search_path(os.path.realpath(search), probe):
        return text_result(NAME, NO_FILES, {})

    prefix = static_dir_prefix(pattern)
    requested = os.path.normpath(os.path.join(search, prefix)) if prefix else search
    requested_rel = _inside(requested, search)
    if requested_rel is None:
        requested, requested_rel = search, ""
    narrow = os.path.realpath(requested) != os.path.realpath(ctx.root)
    exact = is_exact_file(pattern)
    if inp.include_ignored and not narrow and not exact:
        raise ToolError(INCLUDE_IGNORED_NEEDS_SCOPE)
    try:
        broad = is_broad_file_scan(pattern) and not narrow
    except InvalidGlob:
        raise ToolError(f"invalid glob pattern: {pattern}") from None

    argv = build_glob_argv(include_ignored=inp.include_ignored, sort=inp.sort, narrow=narrow,
                           exact_file=exact, requested_rel=requested_rel, broad=broad)
    res = run_rg(argv, search, ctx, line_regex=line_regex(pattern),
                 max_stdout_lines=inp.offset + inp.limit + 1)
    if res.timed_out:
        raise ToolError("glob timed out")
    if res.exit_code not in (0, 1) and not res.stdout_truncated:
        code = "null" if res.exit_code is None else str(res.exit_code)
        raise ToolError(f"glob failed: {js_trim(res.stderr) or f'ripgrep exited with code {code}'}")
    paths = [line for line in res.stdout.split("\n") if line]
    text, details = format_page(paths, inp.offset, inp.limit, res.stdout_truncated)
    return text_result(NAME, text, details)


TOOL = Tool(NAME, MODE_PARALLEL, by_surface(SCHEMA, SCHEMA), keep_arguments, execute)
