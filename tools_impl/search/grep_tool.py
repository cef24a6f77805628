"""The ``grep`` tool (spec grep): a ripgrep search with three output modes, paging by file or by
match, the 2000-char line cap, the 256 KB parser cap and the wrapper's 16 KiB prefix cap.

Pure pieces (argv builder, page formatters, the content-mode pager and cap) are kept apart from
the I/O in ``execute`` so they can be tested directly.

File ordering in ``files_with_matches`` mode: newest modification time first; ties (and the
``Profile.sort_by_name_only`` test switch) use ``locale_key``, a standard-library approximation of
JavaScript's ``localeCompare`` (ICU root collation): exact for printable ASCII, three levels
(base letters, then accents, then lower case before upper case); other characters sort after ASCII
letters by code point.
"""

from __future__ import annotations

import math
import os
import re
import stat
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tools_impl.core.context import ToolContext
from tools_impl.core.errors import ToolError
from tools_impl.core.profile import REFERENCE
from tools_impl.core.result import TextBlock, ToolResult, text_result
from tools_impl.core.tool import MODE_PARALLEL, Tool, by_surface, keep_arguments
from tools_impl.js.text import JS_WHITESPACE, cut_text_prefix, finite_float, js_number, js_trim, utf8_len
from tools_impl.search.pi_tools import PI_GREP_SCHEMA, pi_grep
from tools_impl.search.ripgrep import RgResult, run_rg
from tools_impl.search.scan_policy import is_sensitive_search_path, scan_exclude_args, sensitive_exclude_args
from tools_impl.shared.paths import search_root
from tools_impl.shared.truncation import (
    apply_desktop_text_limit,
    continuation,
    continuation_hint,
    prefix_lines,
)

NAME = "grep"
SCHEMA: dict[str, Any] = {
    "properties": {
        "pattern": {"type": "string"},
        "path": {"type": "string"},
        "glob": {"type": "string"},
        "output_mode": {"type": "string", "enum": ["files_with_matches", "content", "count"]},
        "ignoreCase": {"type": "boolean"},
        "literal": {"type": "boolean"},
        "context": {"type": "number"},
        "limit": {"type": "number"},
        "offset": {"type": "number"},
    },
    "required": ["pattern"],
}

DEFAULT_GREP_LIMIT = REFERENCE.grep_default_limit
MAX_FILESIZE_FLAG = "1M"
MAX_LINE_LENGTH = REFERENCE.grep_max_line_length
MAX_TOTAL_BYTES = REFERENCE.grep_max_total_bytes
STDERR_DETAIL_CHARS = 4 * 1024
NO_MATCHES = "No matches found"
BYTE_CAP_FOOTER = "\n\n[Output hit the byte safety cap; totals may be incomplete. Refine the pattern]"
FILES_PRESERVE_ARGS = ("pattern", "path", "glob", "ignoreCase", "literal", "output_mode", "limit")
CONTENT_PRESERVE_ARGS = ("pattern", "path", "glob", "ignoreCase", "literal", "context", "output_mode", "limit")
MODES = ("files_with_matches", "content", "count")
# JavaScript's /[,\s]+/: its \s is the JS whitespace set, not Python's (which adds \x1c-\x1f, \x85).
GLOB_SPLIT_RE = re.compile("[," + re.escape(JS_WHITESPACE) + "]+")
MATCH_LINE_RE = re.compile(r"^\d+:")
GROUP_SEPARATOR = "--"


@dataclass(frozen=True)
class GrepInputs:
    """Normalised arguments (spec grep.2)."""

    pattern: str
    path: str | None
    glob: str | None
    mode: str
    ignore_case: bool
    literal: bool
    context: int
    limit: int
    offset: int


def normalise_inputs(args: Mapping[str, Any], default_limit: int = DEFAULT_GREP_LIMIT) -> GrepInputs:
    mode = args.get("output_mode") or "files_with_matches"
    if mode not in MODES:
        mode = "files_with_matches"
    limit_raw = finite_float(args.get("limit"))
    limit = max(1, math.floor(limit_raw)) if limit_raw is not None else default_limit
    off_raw = finite_float(args.get("offset"))
    offset = math.floor(off_raw) if off_raw is not None and off_raw > 0 else 0
    ctx_raw = finite_float(args.get("context"))
    context = math.floor(ctx_raw) if mode == "content" and ctx_raw is not None and ctx_raw > 0 else 0
    path = args.get("path")
    glob = args.get("glob")
    return GrepInputs(
        pattern=str(args.get("pattern") or ""),
        path=path if isinstance(path, str) else None,
        glob=glob if isinstance(glob, str) else None,
        mode=mode,
        ignore_case=bool(args.get("ignoreCase")),
        literal=bool(args.get("literal")),
        context=context,
        limit=limit,
        offset=offset,
    )


def user_glob_args(glob: str | None) -> list[str]:
    """``{`` → one trimmed ``--glob``; otherwise one ``--glob`` per ``[,\\s]+``-separated piece."""
    if not glob:
        return []
    if "{" in glob:
        return [f"--glob={js_trim(glob)}"]
    return [f"--glob={g}" for g in GLOB_SPLIT_RE.split(glob) if g]


def build_grep_argv(inp: GrepInputs, search_path: str) -> list[str]:
    """The ripgrep argv of spec grep.3, in order (without the binary)."""
    argv = ["--no-config", "--no-messages", "--hidden", f"--max-filesize={MAX_FILESIZE_FLAG}"]
    if inp.mode == "count":
        argv += ["--count-matches", "--with-filename"]
    elif inp.mode == "content":
        argv += ["--with-filename", "--line-number", "--null", f"--max-count={inp.offset + inp.limit + 1}"]
    else:
        argv.append("-l")
    if inp.ignore_case:
        argv.append("--ignore-case")
    if inp.literal:
        argv.append("--fixed-strings")
    if inp.context > 0:
        argv.append(f"--context={inp.context}")
    argv += user_glob_args(inp.glob)
    argv += scan_exclude_args()
    argv += sensitive_exclude_args()
    argv += ["--", inp.pattern, search_path]
    return argv


def strip_dot_slash(p: str) -> str:
    return p[2:] if p.startswith("./") else p


def clean_lines(stdout: str) -> list[str]:
    """stdout lines with ``\\r`` removed, trimmed, non-empty."""
    out = []
    for line in stdout.split("\n"):
        line = js_trim(line.replace("\r", ""))
        if line:
            out.append(line)
    return out


# ICU root collation order of printable ASCII (upper-case letters share their lower-case letter's
# primary weight): space and punctuation before digits, digits before letters.
ICU_ASCII_ORDER = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz"
_ICU_PRIMARY = {c: i for i, c in enumerate(ICU_ASCII_ORDER)}
_NON_ASCII_PRIMARY_BASE = 0x10000  # after every ASCII weight
# ICU secondary order of the common combining accents (others follow by code point).
ICU_ACCENT_ORDER = "\u0301\u0300\u0306\u0302\u030c\u030a\u0308\u030b\u0303\u0307\u0327\u0328\u0304\u0323\u0331"
_ICU_SECONDARY = {c: i + 1 for i, c in enumerate(ICU_ACCENT_ORDER)}


def _primary_weight(c: str) -> int:
    if c in _ICU_PRIMARY:
        return _ICU_PRIMARY[c]
    if ord(c) < 0x20:
        return ord(c) - 0x20  # control characters sort before the space
    return _NON_ASCII_PRIMARY_BASE + ord(c)


def locale_key(name: str) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], str]:
    """Sort key approximating JavaScript ``a.localeCompare(b)`` (ICU root collation)."""
    primary: list[int] = []
    secondary: list[int] = []
    tertiary: list[int] = []
    for c in unicodedata.normalize("NFD", name):
        if unicodedata.combining(c):
            secondary.append(_ICU_SECONDARY.get(c, len(ICU_ACCENT_ORDER) + ord(c)))
            continue
        folded = c.casefold()
        for f in folded:
            primary.append(_primary_weight(f))
            secondary.append(0)
            tertiary.append(1 if folded != c else 0)
    return (tuple(primary), tuple(secondary), tuple(tertiary), name)


name_key = locale_key


def sort_files(files: Sequence[str], mtime: Callable[[str], float], by_name_only: bool = False) -> list[str]:
    """Newest first, ties by ``name_key``; ``by_name_only`` ignores mtimes."""
    if by_name_only:
        return sorted(files, key=name_key)
    times = {f: mtime(f) for f in files}
    # The order of sorting by (-mtime, name_key), with name_key computed only where mtimes tie.
    by_time = sorted(files, key=lambda f: -times[f])
    out: list[str] = []
    i = 0
    while i < len(by_time):
        j = i + 1
        while j < len(by_time) and times[by_time[j]] == times[by_time[i]]:
            j += 1
        out.extend(by_time[i:j] if j - i == 1 else sorted(by_time[i:j], key=name_key))
        i = j
    return out


# ---------------------------------------------------------------------------------------------
# files_with_matches / count


def files_more_footer(next_offset: int) -> str:
    return (f"\n\n[More available. If the omitted remainder is needed, use offset={next_offset} "
            "with the same search arguments and output_mode.]")


def files_instruction(next_offset: int) -> str:
    return (f"If the omitted remainder is needed, call grep again with offset={next_offset}; "
            "preserve the same search arguments and output_mode.")


def format_files_page(files: Sequence[str], offset: int, limit: int) -> tuple[str, dict[str, Any]]:
    """Text and details of one ``files_with_matches`` page (files already sorted, ``./`` stripped)."""
    n = len(files)
    details: dict[str, Any] = {"files": n}
    if offset > 0 and offset >= n:
        return f"Found {n} files (offset {offset} is beyond the end)", details
    page = list(files[offset : offset + limit])
    more = offset + limit < n
    if offset == 0 and not more:
        header = f"Found {n} files"
    else:
        header = f"Found {n} files (showing {offset + 1}-{offset + len(page)})"
    text = header + "\n" + "\n".join(page)
    if more:
        nxt = offset + limit
        text += files_more_footer(nxt)
        details["truncated"] = True
        details["desktop_output_continuation"] = continuation(
            nxt, "file", continuation_hint("grep", FILES_PRESERVE_ARGS, files_instruction(nxt)))
    return text, details


COUNT_TAIL_RE = re.compile(r"^[+-]?\d+")


def _count_of(line: str) -> int:
    """``parseInt`` of the text after the last ``:`` (0 when it is not a number)."""
    m = COUNT_TAIL_RE.match(js_trim(line.rsplit(":", 1)[-1]))
    return int(m.group(0)) if m else 0


def format_count_page(lines: Sequence[str], offset: int, limit: int) -> tuple[str, dict[str, Any]]:
    """Text and details of one ``count`` page (lines in ripgrep order, ``./`` stripped)."""
    files = len(lines)
    total = sum(_count_of(line) for line in lines)
    page = list(lines[offset : offset + limit])
    occ = "occurrence" if total == 1 else "occurrences"
    noun = "file" if files == 1 else "files"
    text = "\n".join(page) + f"\n\nFound {total} total {occ} across {files} {noun}."
    details: dict[str, Any] = {"files": files, "matches": total}
    if offset + len(page) < files:
        text += f" [More entries — use offset={offset + len(page)}]"
        details["truncated"] = True
    return text, details


# ---------------------------------------------------------------------------------------------
# content


@dataclass(frozen=True)
class ContentLine:
    text: str  # rendered: NUL → ":", "./" removed, long lines cut
    is_match: bool
    is_separator: bool = False


@dataclass(frozen=True)
class ContentPage:
    lines: tuple[ContentLine, ...]
    limit_reached: bool  # more matches exist after this page
    lines_truncated: bool
    total_cap_reached: bool


def _is_match_record(raw: str) -> bool:
    _, sep, rest = raw.partition("\0")
    return bool(sep) and bool(MATCH_LINE_RE.match(rest))


def _render_line(raw: str, max_line_length: int) -> tuple[str, bool]:
    text = strip_dot_slash(raw.replace("\0", ":", 1))
    units = text.encode("utf-16-le", "surrogatepass")
    if len(units) // 2 > max_line_length:
        return units[: max_line_length * 2].decode("utf-16-le", "replace") + "...", True
    return text, False


def page_content(stdout: str, offset: int, limit: int, max_total_bytes: int = MAX_TOTAL_BYTES,
                 max_line_length: int = MAX_LINE_LENGTH) -> ContentPage:
    """Keep matches with ordinal in ``(offset, offset + limit]`` with their context (spec grep.7)."""
    groups: list[list[str]] = [[]]
    for raw in stdout.split("\n"):
        if raw == GROUP_SEPARATOR:
            groups.append([])
        elif raw != "":
            groups[-1].append(raw)
    ordinal = 0
    kept_groups: list[list[tuple[str, bool]]] = []
    limit_reached = False
    for group in groups:
        flags = [_is_match_record(r) for r in group]
        kept_idx: list[int] = []
        for i, is_match in enumerate(flags):
            if is_match:
                ordinal += 1
                if offset < ordinal <= offset + limit:
                    kept_idx.append(i)
                elif ordinal > offset + limit:
                    limit_reached = True
        if not kept_idx:
            continue
        match_idx = [i for i, f in enumerate(flags) if f]
        first, last = kept_idx[0], kept_idx[-1]
        earlier = [i for i in match_idx if i < first]
        start = earlier[-1] + 1 if earlier else 0
        later = [i for i in match_idx if i > last]
        end = last + 1 if later else len(group)
        kept_groups.append([(group[i], flags[i]) for i in range(start, end)])

    lines: list[ContentLine] = []
    lines_truncated = False
    total = 0
    cap_reached = False
    for gi, group_lines in enumerate(kept_groups):
        block: list[ContentLine] = []
        if gi > 0:
            block.append(ContentLine(GROUP_SEPARATOR, False, True))
        for raw, is_match in group_lines:
            text, cut = _render_line(raw, max_line_length)
            lines_truncated = lines_truncated or cut
            block.append(ContentLine(text, is_match))
        for line in block:
            cost = utf8_len(line.text) + (1 if lines else 0)
            if total + cost > max_total_bytes:
                cap_reached = True
                break
            lines.append(line)
            total += cost
        if cap_reached:
            break
    while lines and (lines[-1].is_separator or lines[-1].text == ""):
        lines.pop()
    return ContentPage(tuple(lines), limit_reached, lines_truncated, cap_reached)


def content_notices(page: ContentPage, offset: int, limit: int) -> list[str]:
    notices = []
    if page.limit_reached:
        notices.append(f"{limit} matches limit reached. More available — use offset={offset + limit}, or refine pattern")
    if page.total_cap_reached:
        notices.append("256KB output limit reached")
    if page.lines_truncated:
        notices.append("Some lines truncated to 2000 chars. Use read tool for full lines")
    return notices


def cap_notice(original_bytes: int, capped: bool, warnings: Sequence[str], next_offset: int) -> str:
    warn = "".join(f"{w}; " for w in warnings)
    safety = "ripgrep byte safety cap was reached; " if capped else ""
    return (f"[desktop grep output truncated: original_bytes={original_bytes}; {safety}{warn}"
            f"if the omitted remainder is needed, continue with grep using offset={next_offset} "
            "and the same search arguments, or refine pattern/path/glob/context.]")


@dataclass(frozen=True)
class CappedContent:
    text: str
    truncated: bool
    original_bytes: int
    retained_matches: int


def cap_content(page: ContentPage, full_text: str, offset: int, limit: int, max_bytes: int,
                byte_cap_hit: bool) -> CappedContent:
    """The wrapper's 16 KiB prefix cap over the content body (spec grep.7 step 6).

    ``original_bytes`` is the UTF-8 size of the whole uncapped text (body plus notices); the
    step-5 notices reappear as warnings inside the cap notice.
    """
    original = utf8_len(full_text)
    if original <= max_bytes:
        return CappedContent(full_text, False, original, 0)
    base_warnings: list[str] = []
    if page.limit_reached:
        base_warnings.append(f"{limit} matches limit reached")
    if page.lines_truncated:
        base_warnings.append("some lines were truncated to 2000 chars; use read for full lines")
    if page.total_cap_reached:
        base_warnings.append("256KB parser limit reached")

    def attempt(lines: Sequence[ContentLine], warnings: list[str]) -> tuple[list[ContentLine], str]:
        texts = [ln.text for ln in lines]
        by_text_count: dict[int, int] = {}
        running = 0
        for i, ln in enumerate(lines):
            running += 1 if ln.is_match else 0
            by_text_count[i + 1] = running

        def notice(kept: Sequence[str]) -> str:
            return cap_notice(original, byte_cap_hit, warnings, offset + by_text_count.get(len(kept), 0))

        outcome = prefix_lines("\n".join(texts), max_bytes, notice, original_bytes=original)
        return list(lines[: len(outcome.retained)]), outcome.text

    kept, text = attempt(page.lines, base_warnings)
    warnings = base_warnings
    if not any(ln.is_match for ln in kept):
        first = next((i for i, ln in enumerate(page.lines) if ln.is_match), None)
        # Only when there is leading context to drop: the warning says it was omitted.
        if first is not None and first > 0:
            warnings = [*base_warnings, "leading context was omitted to keep pagination progressing"]
            kept, text = attempt(page.lines[first:], warnings)
    while kept and not kept[-1].is_match:
        kept.pop()
    retained = sum(1 for ln in kept if ln.is_match)
    notice = cap_notice(original, byte_cap_hit, warnings, offset + retained)
    if kept:
        text = "\n".join(ln.text for ln in kept) + "\n\n" + notice
    else:
        text = cut_text_prefix(notice, max_bytes)
    return CappedContent(text, True, original, retained)


def _first_chars(s: str, n: int) -> str:
    units = s.encode("utf-16-le", "surrogatepass")
    return units[: n * 2].decode("utf-16-le", "ignore")


def invalid_regex_result(res: RgResult) -> ToolResult:
    summary = "invalid regular expression"
    for line in res.stderr.split("\n"):
        if line.startswith("error:"):
            summary = js_trim(line[len("error:") :]) or summary
    text = (f"Invalid search pattern: {summary}. Escape regex special characters (for example, use `\\(` "
            "for a literal parenthesis) or use `literal=true` for one exact string.")
    details = {"error_code": "invalid_regex", "exit_code": res.exit_code,
               "stderr": _first_chars(res.stderr, STDERR_DETAIL_CHARS)}
    return text_result(NAME, text, details, is_error=True)


def _exit_text(code: int | None) -> str:
    return "null" if code is None else js_number(code)


# ---------------------------------------------------------------------------------------------
# execute


def _mtime(cwd: str) -> Callable[[str], float]:
    def get(name: str) -> float:
        try:
            return os.stat(os.path.join(cwd, name)).st_mtime_ns / 1e6
        except OSError:
            return 0.0

    return get


def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    ctx.check_abort()
    inp = normalise_inputs(args, ctx.profile.grep_default_limit)
    if not inp.pattern:
        raise ToolError("grep pattern is required")
    # "blank" is JavaScript's trim() set (paths.search_root strips Python's set).
    resolved = search_root(None if inp.path is None or js_trim(inp.path) == "" else inp.path, ctx.root)
    try:
        st = os.stat(resolved)
    except OSError:
        raise ToolError(f"grep path does not exist: {resolved}") from None
    if stat.S_ISDIR(st.st_mode):
        cwd, target = resolved, "."
    elif stat.S_ISREG(st.st_mode):
        cwd, target = os.path.dirname(resolved), os.path.basename(resolved)
    else:
        raise ToolError(f"grep path must be a file or directory: {resolved}")
    probe = ctx.profile.sensitive_root_probe
    if is_sensitive_search_path(resolved, probe) or is_sensitive_search_path(os.path.realpath(resolved), probe):
        return text_result(NAME, NO_MATCHES, {})

    res = run_rg(build_grep_argv(inp, target), cwd, ctx)
    if res.timed_out:
        raise ToolError("grep timed out")
    if res.exit_code == 1:
        return text_result(NAME, NO_MATCHES, {})
    if res.exit_code != 0 and not res.stdout_truncated:
        if "regex parse error:" in res.stderr.lower():
            return invalid_regex_result(res)
        message = js_trim(res.stderr) or f"ripgrep exited with code {_exit_text(res.exit_code)}"
        raise ToolError(f"grep failed: {message}")

    result = _render(inp, res, cwd, ctx)
    if res.stdout_truncated and result.text != NO_MATCHES:
        details = dict(result.details or {})
        details["stdoutTruncated"] = True
        result = ToolResult(NAME, (TextBlock(result.text + BYTE_CAP_FOOTER),), details, result.is_error)
    return result


def _render(inp: GrepInputs, res: RgResult, cwd: str, ctx: ToolContext) -> ToolResult:
    if inp.mode == "files_with_matches":
        files = sort_files(clean_lines(res.stdout), _mtime(cwd), ctx.profile.sort_by_name_only)
        files = [strip_dot_slash(f) for f in files]
        if not files:
            return text_result(NAME, NO_MATCHES, {})
        text, details = format_files_page(files, inp.offset, inp.limit)
        return text_result(NAME, text, details)
    if inp.mode == "count":
        lines = [strip_dot_slash(line) for line in clean_lines(res.stdout)]
        if not lines:
            return text_result(NAME, NO_MATCHES, {})
        text, details = format_count_page(lines, inp.offset, inp.limit)
        return text_result(NAME, text, details)

    page = page_content(res.stdout, inp.offset, inp.limit, ctx.profile.grep_max_total_bytes,
                        ctx.profile.grep_max_line_length)
    body = "\n".join(ln.text for ln in page.lines).rstrip("\n")
    if js_trim(body) == "":
        return text_result(NAME, NO_MATCHES, {})
    notices = content_notices(page, inp.offset, inp.limit)
    full = body + (f"\n\n[{'. '.join(notices)}]" if notices else "")
    capped = cap_content(page, full, inp.offset, inp.limit, ctx.profile.grep_content_max_bytes,
                         res.stdout_truncated)
    result = text_result(NAME, full, {})
    if not capped.truncated:
        return result
    nxt = inp.offset + capped.retained_matches
    hint = continuation_hint("grep", CONTENT_PRESERVE_ARGS, files_instruction(nxt))
    return apply_desktop_text_limit(
        result, capped.text, strategy="prefix_lines", original_bytes=capped.original_bytes,
        max_bytes=ctx.profile.grep_content_max_bytes, next_offset=nxt, offset_unit="match", hint=hint,
    )


def execute_on_surface(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """MiniMax's desktop grep with the wrapper; pi's own grep without it (spec grep.8)."""
    return execute(args, ctx) if ctx.profile.wrapper else pi_grep(args, ctx)


TOOL = Tool(NAME, MODE_PARALLEL, by_surface(SCHEMA, PI_GREP_SCHEMA), keep_arguments, execute_on_surface)
