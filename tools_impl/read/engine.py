"""The pi engine's ``read`` (spec read.6 text, spec read.7 images): engine path resolution, access check,
image sniffing, UTF-8 decoding (BOM and CR kept), ``offset``/``limit`` selection with JavaScript
number semantics, ``truncateHead`` and the engine's three notices.

``select_text`` is the pure part (text in, result out) so it can be property-tested; ``engine_read``
adds the I/O. Without the wrapper this is the whole tool (upstream pi, spec read.10).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tools_impl.core.errors import ToolError
from tools_impl.core.result import TextBlock, ToolResult
from tools_impl.js.node_errors import EISDIR_READ_MESSAGE, error_code, node_code_message, node_error_message
from tools_impl.js.text import format_size, js_number, utf8_len
from tools_impl.read.media import IMAGE_SNIFF_BYTES, detect_image_mime, image_read_result
from tools_impl.shared import paths
from tools_impl.shared.truncation import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, truncate_head

TOOL_NAME = "read"
BYTE_LENGTH_UNDEFINED_MESSAGE = ('The "string" argument must be of type string or an instance of Buffer or '
                                 "ArrayBuffer. Received undefined")

Number = int | float


@dataclass(frozen=True)
class TextSelection:
    """What the engine returns for a text file: the model-visible text and ``details``."""

    text: str
    details: dict[str, Any] | None


def js_slice_bound(index: Number, length: int) -> int:
    """A JavaScript ``Array#slice`` bound: truncate toward zero, negative counts from the end, clamp."""
    if isinstance(index, float):
        if math.isnan(index):
            return 0
        if math.isinf(index):
            return length if index > 0 else 0
        index = math.trunc(index)
    if index < 0:
        return max(length + index, 0)
    return min(index, length)


def js_slice(items: list[str], start: Number, end: Number | None = None) -> list[str]:
    n = len(items)
    s = js_slice_bound(start, n)
    e = n if end is None else js_slice_bound(end, n)
    return items[s:e] if e > s else []


_NEWLINE_BLOCK = 1 << 16


class _TextLines:
    """``text.split("\\n")`` without building the list: the number of lines and joined slices,
    found with C-level counts over 64 KiB blocks (a read of 200 lines in the middle of a large
    file no longer splits every line of it).

    Over ``bytes`` (``newline=b"\\n"``, ``decode`` the UTF-8 decoder with replacement) the same
    view decodes only the lines it returns: a ``\\n`` byte is never part of a multi-byte
    sequence and always ends an invalid one, so decoding line by line gives the characters that
    decoding the whole file gives, and the line count is the same.
    """

    def __init__(self, data: Any, newline: Any = "\n", decode: Callable[[Any], str] = str) -> None:
        self.data = data
        self.newline = newline
        self.decode = decode
        self.count = data.count(newline) + 1

    def line_start(self, i: int) -> int:
        """Offset of line ``i`` (``0 <= i < count``): just after the ``i``-th newline."""
        data, nl, pos, remaining = self.data, self.newline, 0, i
        while remaining:
            found = data.count(nl, pos, pos + _NEWLINE_BLOCK)
            if found >= remaining:
                for _ in range(remaining):
                    pos = data.index(nl, pos) + 1
                break
            remaining -= found
            pos += _NEWLINE_BLOCK
        return pos

    def joined(self, start: int, end: int) -> str:
        """``"\\n".join(lines[start:end])`` for ``0 <= start < end <= count``."""
        first = self.line_start(start)
        if end == self.count:
            return self.decode(self.data[first:])
        return self.decode(self.data[first : self.line_start(end) - 1])

    def slice_text(self, start: Number, end: Number | None = None) -> str:
        """``"\\n".join(js_slice(lines, start, end))``."""
        s = js_slice_bound(start, self.count)
        e = self.count if end is None else js_slice_bound(end, self.count)
        return self.joined(s, e) if e > s else ""


def _decode_utf8(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def select_text(
    text: str,
    path: str,
    offset: Number | None,
    limit: Number | None,
    *,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> TextSelection:
    """Steps 6–11 of spec read.6 on decoded ``text``. ``path`` is the caller's string (``sed`` hint).

    Raises ``ToolError`` ``Offset N is beyond end of file (M lines total)``.
    """
    return _select(_TextLines(text), path, offset, limit, max_lines=max_lines, max_bytes=max_bytes)


def select_bytes(
    data: bytes,
    path: str,
    offset: Number | None,
    limit: Number | None,
    *,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> TextSelection:
    """``select_text(data.decode("utf-8", "replace"), …)`` decoding only the selected lines."""
    lines = _TextLines(data, b"\n", _decode_utf8)
    return _select(lines, path, offset, limit, max_lines=max_lines, max_bytes=max_bytes)


def _select(
    all_lines: _TextLines,
    path: str,
    offset: Number | None,
    limit: Number | None,
    *,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> TextSelection:
    """Steps 6–11 of spec read.6 over the file's lines."""
    total_file_lines = all_lines.count
    start_line: Number = max(0, offset - 1) if offset else 0
    start_display = start_line + 1
    if start_line >= total_file_lines:
        raise ToolError(
            f"Offset {js_number(offset if offset is not None else 0)} is beyond end of file ({total_file_lines} lines total)"
        )
    user_limited: Number | None = None
    if limit is not None:
        end_line = min(start_line + limit, total_file_lines)
        selection = all_lines.slice_text(start_line, end_line)
        user_limited = end_line - start_line
    else:
        selection = all_lines.slice_text(start_line)
    trunc = truncate_head(selection, max_lines, max_bytes)
    limit_text = format_size(max_bytes)
    if trunc.first_line_exceeds_limit:
        if isinstance(start_line, float) and not start_line.is_integer():
            # pi measures allLines[startLine]: undefined at a fractional index, and Node's
            # Buffer.byteLength(undefined) throws
            raise ToolError(BYTE_LENGTH_UNDEFINED_MESSAGE)
        first_index = js_slice_bound(start_line, total_file_lines)
        first = all_lines.joined(first_index, first_index + 1)
        size = format_size(utf8_len(first))
        out = (
            f"[Line {js_number(start_display)} is {size}, exceeds {limit_text} limit. "
            f"Use bash: sed -n '{js_number(start_display)}p' {path} | head -c {max_bytes}]"
        )
        return TextSelection(out, {"truncation": trunc.to_json()})
    if trunc.truncated:
        end = start_display + trunc.output_lines - 1
        where = f"{js_number(start_display)}-{js_number(end)} of {total_file_lines}"
        if trunc.truncated_by == "lines":
            notice = f"[Showing lines {where}. Use offset={js_number(end + 1)} to continue.]"
        else:
            notice = f"[Showing lines {where} ({limit_text} limit). Use offset={js_number(end + 1)} to continue.]"
        return TextSelection(f"{trunc.content}\n\n{notice}", {"truncation": trunc.to_json()})
    if user_limited is not None and start_line + user_limited < total_file_lines:
        remaining = total_file_lines - (start_line + user_limited)
        next_offset = start_line + user_limited + 1
        return TextSelection(
            f"{trunc.content}\n\n[{js_number(remaining)} more lines in file. Use offset={js_number(next_offset)} to continue.]",
            None,
        )
    return TextSelection(trunc.content, None)


# Node's kIoMaxLength: the largest file fs.readFile reads.
NODE_MAX_READ_BYTES = 2**31 - 1


def _access_error(abs_path: str) -> ToolError | None:
    """Node's ``access(path, R_OK)`` failure, rendered; ``None`` when readable."""
    try:
        os.stat(abs_path)
    except OSError as exc:
        return ToolError(node_error_message(exc, "access", abs_path), code=error_code(exc))
    if not os.access(abs_path, os.R_OK):
        return ToolError(node_code_message("EACCES", "access", abs_path), code="EACCES")
    return None


def _node_size_error(abs_path: str) -> ToolError | None:
    """Node's ``fs.readFile`` refuses a regular file larger than 2 GiB - 1 byte before reading
    any of it (``ERR_FS_FILE_TOO_LARGE``); pi's read reports that message. Checking first also
    keeps a huge (e.g. sparse) file from being loaded into memory."""
    try:
        size = os.stat(abs_path).st_size
    except OSError:
        return None
    if size > NODE_MAX_READ_BYTES:
        return ToolError(f"File size ({size}) is greater than 2 GiB", code="ERR_FS_FILE_TOO_LARGE")
    return None


def _read_bytes(abs_path: str, limit: int | None = None) -> bytes:
    if os.path.isdir(abs_path):
        raise ToolError(EISDIR_READ_MESSAGE, code="EISDIR")
    try:
        with open(abs_path, "rb") as fh:
            return fh.read() if limit is None else fh.read(limit)
    except IsADirectoryError as exc:
        raise ToolError(EISDIR_READ_MESSAGE, code="EISDIR") from exc
    except OSError as exc:
        raise ToolError(node_error_message(exc, "open", abs_path)) from exc


def engine_read(
    path: str,
    offset: Number | None,
    limit: Number | None,
    *,
    root: str,
    home: str,
    check_abort: Callable[[], None],
    auto_resize_images: bool = True,
    image_fallback: bool = True,
    image_processor: bool = True,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> ToolResult:
    """pi's read on the caller's ``path`` string. Raises ``ToolError`` (OS errors in Node form,
    ``Offset … beyond end of file``) and ``ToolAborted`` via ``check_abort``.

    Text → one text block, ``details`` ``{"truncation": …}`` only when truncated, else ``None``.
    Images (by magic bytes) → ``[text, image]``, ``details`` ``None``.
    """
    check_abort()
    abs_path = paths.engine_resolve_read(path, root, home)
    err = _access_error(abs_path)
    if err is not None:
        raise err
    sample = _read_bytes(abs_path, IMAGE_SNIFF_BYTES)
    mime = detect_image_mime(sample)
    too_large = _node_size_error(abs_path)
    if too_large is not None:
        raise too_large
    data = _read_bytes(abs_path)
    check_abort()
    if mime is not None:
        return image_read_result(data, mime, auto_resize=auto_resize_images, image_fallback=image_fallback,
                                 processor=image_processor)
    sel = select_bytes(data, path, offset, limit, max_lines=max_lines, max_bytes=max_bytes)
    check_abort()
    return ToolResult(TOOL_NAME, (TextBlock(sel.text),), sel.details)
