"""pi's own search tools, ``grep`` and ``find``, as the published pi v0.79.1 runs them (spec
grep.8, glob.3): the pi surface's (the upstream emulation's) ``grep`` and its ``find``. MiniMax's
desktop grep and glob (``grep_tool.py``, ``glob_tool.py``) are the wrapper surface's.

grep runs ``rg --json`` (the same ripgrep the desktop grep resolves) and formats each match as
``path:line: text``; find runs ``fd`` (``fd`` or Debian's ``fdfind`` on the tools' ``PATH``) with
pi's arguments and relativises what it prints. Neither sorts: ripgrep and fd walk directories in
parallel, so the order of files in their output is not fixed (pi's own runs differ).
"""

from __future__ import annotations

import json
import os
import posixpath
import shutil
import stat
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tools_impl.core.context import ToolContext
from tools_impl.core.errors import ArgumentError, ToolError
from tools_impl.core.result import ToolResult, text_result
from tools_impl.js.text import format_size, js_number, js_trim
from tools_impl.search.ripgrep import RG_BINARIES
from tools_impl.shared import paths
from tools_impl.shared.truncation import DEFAULT_MAX_BYTES, truncate_head

ABORTED = "Operation aborted"
GREP_DEFAULT_LIMIT = 100
GREP_MAX_LINE_LENGTH = 500
FIND_DEFAULT_LIMIT = 1000
MAX_SAFE_INTEGER = 2**53 - 1
FD_NAMES = ("fd", "fdfind")  # pi's lookup order on PATH (Debian installs fd as fdfind)
KILL_WAIT_S = 5.0

PI_GREP_SCHEMA: dict[str, Any] = {
    "properties": {
        "pattern": {"type": "string"},
        "path": {"type": "string"},
        "glob": {"type": "string"},
        "ignoreCase": {"type": "boolean"},
        "literal": {"type": "boolean"},
        "context": {"type": "number"},
        "limit": {"type": "number"},
    },
    "required": ["pattern"],
}
PI_FIND_SCHEMA: dict[str, Any] = {
    "properties": {
        "pattern": {"type": "string"},
        "path": {"type": "string"},
        "limit": {"type": "number"},
    },
    "required": ["pattern"],
}


@dataclass
class _Run:
    code: int | None
    stderr: str
    killed: bool


def _spawn_lines(argv: list[str], ctx: ToolContext, on_line: Callable[[bytes], bool], missing: str) -> _Run:
    """Run ``argv`` (stdin closed), feeding each stdout line (without its ``\\n``) to ``on_line``;
    ``on_line`` returning ``True`` kills the child (SIGTERM, as Node's ``child.kill()``). The
    call's abort kills it too and raises ``Operation aborted``."""
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=ctx.env, cwd=ctx.root if os.path.isdir(ctx.root) else None)
    except OSError as exc:
        raise ToolError(f"{missing}: {exc.strerror or exc}") from None
    assert proc.stdout is not None and proc.stderr is not None
    stderr: list[bytes] = []
    reader = threading.Thread(target=lambda: stderr.append(proc.stderr.read() if proc.stderr else b""), daemon=True)
    reader.start()
    killed = False
    done = threading.Event()

    def watch_abort() -> None:
        while not done.is_set():
            if ctx.abort.wait(0.05):
                proc.terminate()
                return

    watcher = threading.Thread(target=watch_abort, daemon=True)
    watcher.start()
    try:
        for raw in proc.stdout:
            if killed:
                continue
            if on_line(raw.rstrip(b"\n")):
                killed = True
                proc.terminate()
        code = proc.wait(KILL_WAIT_S if killed else None)
    finally:
        done.set()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
    reader.join(KILL_WAIT_S)
    proc.stderr.close()
    if ctx.abort.is_set():
        raise ToolError(ABORTED)
    text = b"".join(stderr).decode("utf-8", "replace")
    return _Run(None if code is not None and code < 0 else code, text, killed)


def _is_directory(path: str) -> bool:
    """Node's ``(await stat(p)).isDirectory()``; raises ``OSError`` when ``stat`` fails."""
    return stat.S_ISDIR(os.stat(path).st_mode)


def _utf16_slice(s: str, n: int) -> str:
    """``s.slice(0, n)`` in UTF-16 code units (a pair cut in half leaves a lone surrogate)."""
    units = s.encode("utf-16-le", "surrogatepass")
    return units[: 2 * n].decode("utf-16-le", "surrogatepass")


def _utf16_len(s: str) -> int:
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_LENGTH) -> tuple[str, bool]:
    """pi's ``truncateLine``."""
    if _utf16_len(line) <= max_chars:
        return line, False
    return f"{_utf16_slice(line, max_chars)}... [truncated]", True


def _json_text(field: Any) -> str | None:
    """An ``rg --json`` data field's ``text``; a ``bytes`` field (not UTF-8) is ``undefined`` to pi."""
    if isinstance(field, dict) and isinstance(field.get("text"), str):
        return field["text"]
    return None


def _number(value: Any) -> Any:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def pi_grep(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """pi's grep (spec grep.8)."""
    pattern = args["pattern"]
    rg = RG_BINARIES.resolve(ctx.profile.rg_binary, ctx.env.get("PATH", ""))
    search_path = paths.engine_resolve(args.get("path") or ".", ctx.root, ctx.home)
    try:
        is_directory = _is_directory(search_path)
    except OSError:
        raise ToolError(f"Path not found: {search_path}") from None
    context = _number(args.get("context"))
    context_value = context if context and context > 0 else 0
    limit = _number(args.get("limit"))
    effective_limit = max(1, GREP_DEFAULT_LIMIT if limit is None else limit)

    def format_path(file_path: str) -> str:
        if is_directory:
            relative = posixpath.relpath(file_path, search_path) if file_path != search_path else ""
            if relative and not relative.startswith(".."):
                return relative.replace("\\", "/")
        return posixpath.basename(file_path)

    argv = [rg, "--json", "--line-number", "--color=never", "--hidden"]
    if args.get("ignoreCase"):
        argv.append("--ignore-case")
    if args.get("literal"):
        argv.append("--fixed-strings")
    if args.get("glob"):
        argv += ["--glob", args["glob"]]
    argv += ["--", pattern, search_path]
    matches: list[tuple[str, Any, str | None]] = []
    count = [0]

    def on_line(raw: bytes) -> bool:
        line = raw.decode("utf-8", "replace")
        if not js_trim(line) or count[0] >= effective_limit:
            return False
        try:
            event = json.loads(line)
        except ValueError:
            return False
        if not isinstance(event, dict) or event.get("type") != "match":
            return False
        count[0] += 1
        data: dict[str, Any] = event["data"] if isinstance(event.get("data"), dict) else {}
        file_path = _json_text(data.get("path"))
        number = data.get("line_number")
        if file_path and isinstance(number, (int, float)) and not isinstance(number, bool):
            matches.append((file_path, number, _json_text(data.get("lines"))))
        return count[0] >= effective_limit

    run = _spawn_lines(argv, ctx, on_line, "Failed to run ripgrep")
    if not run.killed and run.code not in (0, 1):
        raise ToolError(js_trim(run.stderr) or f"ripgrep exited with code {run.code}")
    if count[0] == 0:
        return text_result("grep", "No matches found")
    lines_truncated = False
    cache: dict[str, list[str]] = {}

    def file_lines(file_path: str) -> list[str]:
        if file_path not in cache:
            try:
                with open(file_path, "rb") as fh:
                    text = fh.read().decode("utf-8", "replace")  # Node's readFile(p, "utf-8"): BOM kept
                cache[file_path] = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
            except OSError:
                cache[file_path] = []
        return cache[file_path]

    output: list[str] = []
    for file_path, number, line_text in matches:
        relative = format_path(file_path)
        if context_value == 0 and line_text is not None:
            sanitized = line_text.replace("\r\n", "\n").replace("\r", "")
            sanitized = sanitized[:-1] if sanitized.endswith("\n") else sanitized
            text, cut = truncate_line(sanitized)
            lines_truncated = lines_truncated or cut
            output.append(f"{relative}:{js_number(number)}: {text}")
            continue
        lines = file_lines(file_path)
        if not lines:
            output.append(f"{relative}:{js_number(number)}: (unable to read file)")
            continue
        start = max(1, number - context_value) if context_value > 0 else number
        end = min(len(lines), number + context_value) if context_value > 0 else number
        current = start
        while current <= end:
            index = current - 1
            whole = isinstance(index, int) or (isinstance(index, float) and index.is_integer())
            text_line = lines[int(index)] if whole and 0 <= index < len(lines) else ""
            text, cut = truncate_line(text_line.replace("\r", ""))
            lines_truncated = lines_truncated or cut
            sep = ":" if current == number else "-"
            output.append(f"{relative}{sep}{js_number(current)}{sep} {text}")
            current += 1
    truncation = truncate_head("\n".join(output), max_lines=MAX_SAFE_INTEGER)
    out = truncation.content
    details: dict[str, Any] = {}
    notices = []
    if count[0] >= effective_limit:
        notices.append(f"{js_number(effective_limit)} matches limit reached. Use limit={js_number(effective_limit * 2)} "
                       "for more, or refine pattern")
        details["matchLimitReached"] = effective_limit
    if truncation.truncated:
        notices.append(f"{format_size(DEFAULT_MAX_BYTES)} limit reached")
        details["truncation"] = truncation.to_json()
    if lines_truncated:
        notices.append(f"Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines")
        details["linesTruncated"] = True
    if notices:
        out += f"\n\n[{'. '.join(notices)}]"
    return text_result("grep", out, details or None)


def fd_binary(env: dict[str, str]) -> str | None:
    """pi's ``ensureTool("fd")`` without the download: ``fd``, then ``fdfind``, on ``PATH``."""
    for name in FD_NAMES:
        found = shutil.which(name, path=env.get("PATH", os.defpath))
        if found:
            return found
    return None


def pi_find(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """pi's find (spec glob.3)."""
    if ctx.profile.wrapper:
        raise ArgumentError("Tool find not found")  # the wrapper surface has glob instead
    pattern: str = args["pattern"]
    search_path = paths.engine_resolve(args.get("path") or ".", ctx.root, ctx.home)
    limit = _number(args.get("limit"))
    effective_limit = FIND_DEFAULT_LIMIT if limit is None else limit
    fd = fd_binary(ctx.env)
    if ctx.abort.is_set():
        raise ToolError(ABORTED)
    if fd is None:
        raise ToolError("fd is not available and could not be downloaded")
    argv = [fd, "--glob", "--color=never", "--hidden", "--no-require-git", "--max-results", js_number(effective_limit)]
    effective_pattern = pattern
    if "/" in pattern:
        argv.append("--full-path")
        if not pattern.startswith("/") and not pattern.startswith("**/") and pattern != "**":
            effective_pattern = f"**/{pattern}"
    argv += ["--", effective_pattern, search_path]
    lines: list[str] = []

    def on_line(raw: bytes) -> bool:
        lines.append(raw.decode("utf-8", "replace"))
        return False

    run = _spawn_lines(argv, ctx, on_line, "Failed to run fd")
    output = "\n".join(lines)
    if run.code != 0 and not output:
        raise ToolError(js_trim(run.stderr) or f"fd exited with code {run.code}")
    if not output:
        return text_result("find", "No files found matching pattern")
    relativized = []
    for raw_line in lines:
        line = js_trim(raw_line[:-1] if raw_line.endswith("\r") else raw_line)
        if not line:
            continue
        trailing = line.endswith("/") or line.endswith("\\")
        if line.startswith(search_path):
            relative = line[len(search_path) + 1:]
        else:
            relative = posixpath.relpath(line, search_path) if line != search_path else ""
        if trailing and not relative.endswith("/"):
            relative += "/"
        relativized.append(relative.replace(os.sep, "/"))
    truncation = truncate_head("\n".join(relativized), max_lines=MAX_SAFE_INTEGER)
    out = truncation.content
    details: dict[str, Any] = {}
    notices = []
    if len(relativized) >= effective_limit:
        notices.append(f"{js_number(effective_limit)} results limit reached. "
                       f"Use limit={js_number(effective_limit * 2)} for more, or refine pattern")
        details["resultLimitReached"] = effective_limit
    if truncation.truncated:
        notices.append(f"{format_size(DEFAULT_MAX_BYTES)} limit reached")
        details["truncation"] = truncation.to_json()
    if notices:
        out += f"\n\n[{'. '.join(notices)}]"
    return text_result("find", out, details or None)


__all__ = ["PI_FIND_SCHEMA", "PI_GREP_SCHEMA", "fd_binary", "pi_find", "pi_grep", "truncate_line"]
