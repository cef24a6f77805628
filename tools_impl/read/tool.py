"""The ``read`` tool (spec read): the MiniMax wrapper pipeline around the pi engine read.

Pipeline (spec read.2): abort check → wrapper path resolution (spec read.3) → device guard → non-regular-file
guard (spec read.4) → video dispatch (no video reader is available here, so it always falls through) →
PDF / notebook readers → binary guard (spec read.5) → engine read on the caller's original path
(spec read.6–7) → line numbers, long-line cap and empty-file reminder (spec read.8) → 24 KiB prefix cap
(spec read.9). With ``profile.wrapper`` off only the engine runs (spec read.10).

``number_lines``, ``postprocess`` and ``apply_read_cap`` are pure and property-tested.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tools_impl.core.context import ToolContext
from tools_impl.core.errors import ToolError
from tools_impl.core.result import TextBlock, ToolResult, text_result
from tools_impl.core.tool import MODE_PARALLEL, Tool, by_surface, keep_arguments
from tools_impl.js.node_errors import node_error_message
from tools_impl.js.text import JS_WHITESPACE, js_number, utf8_len
from tools_impl.read.engine import IMAGE_WITHOUT_PROCESSOR, Number, engine_read
from tools_impl.read.guards import (
    binary_guard_message,
    device_guard_message,
    extension_of,
    non_regular_guard_message,
)
from tools_impl.read.media import read_notebook, read_pdf
from tools_impl.shared import paths
from tools_impl.shared.truncation import apply_desktop_text_limit, continuation_hint, prefix_lines

NAME = "read"
SCHEMA: dict[str, Any] = {
    "properties": {
        "path": {"type": "string"},
        "offset": {"type": "number"},
        "limit": {"type": "number"},
        "pages": {"type": "string"},
    },
    "required": ["path"],
}
UPSTREAM_SCHEMA: dict[str, Any] = {
    "properties": {k: v for k, v in SCHEMA["properties"].items() if k != "pages"},
    "required": ["path"],
}

EMPTY_FILE_REMINDER = "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"
ENGINE_NOTICE_RE = re.compile(
    r"\n\n\[(?:Showing lines [0-9]+-[0-9]+ of [0-9]+|[0-9]+ more lines in file\.)[^\n]*\]\Z"
)
LINE_TRUNCATED_SUFFIX = "... (line truncated)"
LINE_NUMBER_WIDTH = 6
LINE_NUMBER_ARROW = "→"
# JavaScript's \s is the same set as its trim set; \d is ASCII only.
NUMBERED_LINE_RE = re.compile("^[" + re.escape(JS_WHITESPACE) + "]*([0-9]+)" + LINE_NUMBER_ARROW)
NOTICE_START = "\n\n["
CAP_STRATEGY = "prefix_lines"
OFFSET_UNIT = "line"
PDF_EXTENSION = ".pdf"
NOTEBOOK_EXTENSION = ".ipynb"
# The video reader's own documentation names these; the full mapping is unverified (spec read.2).
VIDEO_MIME_BY_EXTENSION: dict[str, str] = {
    ".mp4": "video/mp4",
    ".avi": "video/x-msvideo",
    ".mov": "video/quicktime",
    ".mkv": "video/x-matroska",
}


# --- spec read.8 post-processing -------------------------------------------------------------------
def number_lines(body: str, start: Number, max_chars: int) -> tuple[str, list[Number]]:
    """Cap long lines to ``max_chars`` code points and prefix ``String(n).padStart(6) + '→'``.

    A final ``\\n`` gets no number and is restored. Returns the text and the absolute numbers of
    the cut lines.
    """
    trailing = body.endswith("\n")
    core = body[:-1] if trailing else body
    out: list[str] = []
    cut: list[Number] = []
    for i, line in enumerate(core.split("\n")):
        n = start + i
        if len(line) > max_chars:
            line = line[:max_chars] + LINE_TRUNCATED_SUFFIX
            cut.append(n)
        out.append(js_number(n).rjust(LINE_NUMBER_WIDTH) + LINE_NUMBER_ARROW + line)
    return "\n".join(out) + ("\n" if trailing else ""), cut


def _skips_wrapper_processing(result: ToolResult) -> bool:
    if any(not isinstance(b, TextBlock) for b in result.content):
        return True
    details = result.details or {}
    if details.get("media"):
        return True
    trunc = details.get("truncation")
    return isinstance(trunc, dict) and bool(trunc.get("firstLineExceedsLimit"))


def postprocess(result: ToolResult, offset: Number | None, max_line_chars: int) -> ToolResult:
    """Spec spec read.8: empty-file reminder, numbering, long-line cap and its notice."""
    if _skips_wrapper_processing(result):
        return result
    start: Number = offset if offset is not None and offset > 0 else 1
    blocks: list[TextBlock] = []
    cut_all: list[Number] = []
    for block in result.content:
        assert isinstance(block, TextBlock)
        text = block.text
        if text == "":
            blocks.append(TextBlock(EMPTY_FILE_REMINDER))
            continue
        m = ENGINE_NOTICE_RE.search(text)
        notice = m.group(0) if m else ""
        body = text[: m.start()] if m else text
        numbered, cut = number_lines(body, start, max_line_chars)
        cut_all.extend(cut)
        blocks.append(TextBlock(numbered + notice))
    details = dict(result.details or {})
    if cut_all:
        details["line_truncations"] = cut_all
        listed = ", ".join(js_number(n) for n in cut_all)
        last = blocks[-1]
        blocks[-1] = TextBlock(f"{last.text}\n\n[Lines [{listed}] were truncated to {max_line_chars} chars.]")
    return ToolResult(result.tool_name, tuple(blocks), details, result.is_error)


# --- spec read.9 24 KiB cap ------------------------------------------------------------------------
def next_offset_from_lines(lines: Sequence[str], requested_offset: Number | None) -> Number:
    """1 + the last numbered line's number; else the requested offset if > 0; else 1."""
    for line in reversed(lines):
        m = NUMBERED_LINE_RE.match(line)
        if m:
            return int(m.group(1)) + 1
    if requested_offset is not None and requested_offset > 0:
        return requested_offset
    return 1


def cap_notice(original_bytes: int, next_offset: Number) -> str:
    return (
        f"[desktop read output truncated: original_bytes={original_bytes}; if the omitted remainder is "
        f"needed, continue with read using offset={js_number(next_offset)} and the same path.]"
    )


def apply_read_cap(result: ToolResult, requested_offset: Number | None, max_bytes: int) -> ToolResult:
    """Spec spec read.9: the prefix strategy with ``next_offset`` metadata; unchanged when it fits."""
    if _skips_wrapper_processing(result):
        return result
    text = result.text
    original = utf8_len(text)
    outcome = prefix_lines(
        text, max_bytes, lambda kept: cap_notice(original, next_offset_from_lines(kept, requested_offset)),
        original_bytes=original,
    )
    if not outcome.truncated:
        return result
    limited = outcome.text
    cut_at = limited.rfind(NOTICE_START)
    retained = limited[:cut_at].split("\n") if cut_at >= 0 else []
    next_offset = next_offset_from_lines(retained, requested_offset)
    hint = continuation_hint(
        NAME, ["path"],
        f"If the omitted remainder is needed, call read again with offset={js_number(next_offset)}; "
        "preserve the same path.",
    )
    return apply_desktop_text_limit(
        result, limited, strategy=CAP_STRATEGY, original_bytes=original, max_bytes=max_bytes,
        next_offset=next_offset,  # type: ignore[arg-type]  # a JS number: may be fractional
        offset_unit=OFFSET_UNIT, hint=hint,
    )


# --- pipeline -------------------------------------------------------------------------------
def video_reader_available(ctx: ToolContext) -> bool:
    """No model with video input is attached to the reference tools."""
    return False


def video_mime(abs_path: str) -> str | None:
    return VIDEO_MIME_BY_EXTENSION.get(extension_of(abs_path))


def dispatch_video(abs_path: str, ctx: ToolContext) -> ToolResult | None:
    """Step 4: hand a video to the video reader. ``None`` = continue with step 5, which is what
    happens when the reader is unavailable (no video model) or reports ENOENT."""
    if not video_reader_available(ctx) or video_mime(abs_path) is None:
        return None
    # A video reader would be called here; none exists in the reference tools.
    return None


def _read_raw(abs_path: str) -> bytes:
    try:
        with open(abs_path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise ToolError(node_error_message(exc, "open", abs_path)) from exc


def _number_arg(args: dict[str, Any], name: str) -> Number | None:
    value = args.get(name)
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def _engine(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    profile = ctx.profile
    return engine_read(
        str(args["path"]), _number_arg(args, "offset"), _number_arg(args, "limit"),
        root=ctx.root, home=ctx.home, check_abort=ctx.check_abort,
        without_processor=IMAGE_WITHOUT_PROCESSOR.of(profile), image_processor=profile.image_processor,
        max_lines=profile.engine_max_lines, max_bytes=profile.engine_max_bytes,
    )


def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Run one read call. Guards return ``is_error`` results with ``details: {}``; engine
    failures raise ``ToolError``; cancellation raises ``ToolAborted``."""
    ctx.check_abort()
    profile = ctx.profile
    if not profile.wrapper:
        return _engine(args, ctx)
    path = str(args["path"])
    read_abs = paths.wrapper_resolve(path, ctx.root, ctx.home)
    guard = device_guard_message(read_abs) or non_regular_guard_message(read_abs)
    if guard is not None:
        return text_result(NAME, guard, {}, is_error=True)
    video = dispatch_video(read_abs, ctx)
    if video is not None:
        return video
    ext = extension_of(read_abs)
    if ext == PDF_EXTENSION:
        pages = args.get("pages")
        return read_pdf(read_abs, pages if isinstance(pages, str) else None, profile.pdf_max_pages)
    if ext == NOTEBOOK_EXTENSION:
        return read_notebook(read_abs, _read_raw(read_abs))
    video_ok = video_reader_available(ctx)
    binary = binary_guard_message(
        read_abs, sniff_bytes=profile.binary_sniff_bytes,
        video_recognises=lambda p: video_ok and video_mime(p) is not None,
    )
    if binary is not None:
        return text_result(NAME, binary, {}, is_error=True)
    offset = _number_arg(args, "offset")
    result = _engine(args, ctx)
    result = postprocess(result, offset, profile.read_max_line_chars)
    return apply_read_cap(result, offset, profile.read_text_max_bytes)


# Upstream pi has no ``pages`` parameter.
TOOL = Tool(NAME, MODE_PARALLEL, by_surface(SCHEMA, UPSTREAM_SCHEMA), keep_arguments, execute)
