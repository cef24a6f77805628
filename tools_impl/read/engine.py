"""The pi engine's ``read`` (spec read.6 text, spec read.7 images): engine path resolution, access check,
image sniffing, UTF-8 decoding (BOM and CR kept), ``offset``/``limit`` selection with JavaScript
number semantics, ``truncateHead`` and the engine's three notices.

``select_text`` is the pure part (text in, result out) so it can be property-tested; ``engine_read``
adds the I/O. Without the wrapper this is the whole tool (upstream pi, spec read.10).

One seam (``core/patches.py``): ``read.image-without-processor``, what an image read returns
when the image processor is missing — the image is omitted (``media.omit_image``); patch
``read.image-fallback`` (``read/patches.py``) passes a small enough original through. The read
tool resolves it for its profile and hands it to ``engine_read``.
"""

from __future__ import annotations

import bisect
import codecs
import math
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from tools_impl.core.errors import ToolError
from tools_impl.core.patches import SURFACE_ENGINE, Seam
from tools_impl.core.result import TextBlock, ToolResult
from tools_impl.js.node_errors import EISDIR_READ_MESSAGE, error_code, node_code_message, node_error_message
from tools_impl.js.text import format_size, js_number, utf8_len
from tools_impl.read.media import (
    IMAGE_SNIFF_BYTES,
    ImageWithoutProcessor,
    detect_image_mime,
    image_read_result,
    omit_image,
)
from tools_impl.shared import paths
from tools_impl.shared.bytecount import count_newlines
from tools_impl.shared.truncation import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    TruncatedBy,
    TruncationResult,
    truncate_head,
)

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
    text does not split every line of it). ``select_text`` runs over it; the engine itself
    streams the file (``_FileLines``)."""

    def __init__(self, text: str) -> None:
        self.data = text
        self.count = text.count("\n") + 1

    def advance(self, pos: int, n: int) -> int:
        """Offset of the line ``n`` lines after the one starting at ``pos``."""
        data, remaining = self.data, n
        while remaining:
            found = data.count("\n", pos, pos + _NEWLINE_BLOCK)
            if found >= remaining:
                for _ in range(remaining):
                    pos = data.index("\n", pos) + 1
                break
            remaining -= found
            pos += _NEWLINE_BLOCK
        return pos

    def joined(self, start: int, end: int) -> str:
        """``"\\n".join(lines[start:end])`` for ``0 <= start < end <= count``."""
        first = self.advance(0, start)
        if end == self.count:
            return self.data[first:]
        return self.data[first : self.advance(first, end - start) - 1]

    def slice_text(self, start: Number, end: Number | None = None) -> str:
        """``"\\n".join(js_slice(lines, start, end))``."""
        s = js_slice_bound(start, self.count)
        e = self.count if end is None else js_slice_bound(end, self.count)
        return self.joined(s, e) if e > s else ""

    def truncated_selection(self, start: int, end: int, max_lines: int, max_bytes: int) -> TruncationResult:
        """``truncate_head`` of lines ``start:end`` joined."""
        return truncate_head(self.joined(start, end) if end > start else "", max_lines, max_bytes)

    def line_bytes(self, i: int) -> int:
        """UTF-8 length of line ``i``."""
        return utf8_len(self.joined(i, i + 1))


# The engine reads a file in pieces of this size; it keeps at most KEEP_BYTES of them from the
# counting pass (a small file is read once) and otherwise reads again only the pieces it returns.
READ_CHUNK = 1 << 16
KEEP_BYTES = 1 << 18
_SUB_BLOCK = 4096

ReadAt = Callable[[int, int], bytes]


def _nth_newline(data: bytes, n: int) -> int:
    """Index of the ``n``-th (1-based) newline of ``data``, which has at least ``n``."""
    pos = 0
    while True:
        found = count_newlines(data, pos, pos + _SUB_BLOCK)
        if found >= n:
            break
        n -= found
        pos += _SUB_BLOCK
    for _ in range(n - 1):
        pos = data.index(b"\n", pos) + 1
    return data.index(b"\n", pos)


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


class _FileLines:
    """The lines of a file's bytes, streamed: one pass over ``READ_CHUNK`` pieces counts the
    newlines (per piece, so that a line is found again without a scan), then only the bytes of
    the selected lines are read again and decoded, and of a selection longer than the byte cap
    only its first ``max_bytes + 1`` bytes are kept (its decoded length is counted piece by
    piece). Memory stays within ``KEEP_BYTES`` plus what the read returns, whatever the file's size.

    Decoding the selected bytes gives the characters that decoding the whole file gives, and the
    line count is the same: a ``\\n`` byte is never part of a multi-byte sequence and always ends an
    invalid one. Decoded text is never shorter in UTF-8 than its bytes (U+FFFD, 3 bytes, replaces
    at most 3 bytes), which is what lets a long selection be judged from its first bytes.
    """

    def __init__(self, read_at: ReadAt, check_abort: Callable[[], None] = lambda: None,
                 chunk: int = READ_CHUNK, keep: int = KEEP_BYTES, first: bytes | None = None,
                 wanted: tuple[int, ...] = ()) -> None:
        self._read_at = read_at
        self._check_abort = check_abort
        self._chunk = chunk
        self._pieces: dict[int, bytes] = {}
        # file offsets of the newlines numbered in ``wanted`` (1-based), found while counting, so
        # that the selection's bounds need no second read of their pieces
        self._known: dict[int, int] = {}
        pending = sorted(n for n in set(wanted) if n > 0)
        marks = [0]  # newlines before piece i
        kept = offset = total = 0
        while True:
            if first is not None and offset == 0:
                piece, first = first, None
            else:
                check_abort()
                piece = read_at(offset, chunk)
            if not piece:
                break
            if kept + len(piece) <= keep:
                self._pieces[len(marks) - 1] = piece
                kept += len(piece)
            found = count_newlines(piece)
            while pending and pending[0] <= total + found:
                n = pending.pop(0)
                self._known[n] = offset + _nth_newline(piece, n - total)
            total += found
            marks.append(total)
            offset += len(piece)
            if len(piece) < chunk:
                break
        self._marks = marks
        self.size = offset
        self.count = total + 1

    def _piece(self, i: int) -> bytes:
        piece = self._pieces.get(i)
        return self._read_at(i * self._chunk, self._chunk) if piece is None else piece

    def _newline_at(self, n: int) -> int:
        """File offset of the ``n``-th (1-based) newline."""
        known = self._known.get(n)
        if known is not None:
            return known
        i = bisect.bisect_left(self._marks, n) - 1
        return i * self._chunk + _nth_newline(self._piece(i), n - self._marks[i])

    def _bounds(self, start: int, end: int) -> tuple[int, int]:
        """Byte range of lines ``start:end`` joined (``0 <= start < end <= count``)."""
        first = 0 if start == 0 else self._newline_at(start) + 1
        last = self.size if end == self.count else self._newline_at(end)
        return first, last

    def _read(self, first: int, last: int) -> bytes:
        lo, hi = first // self._chunk, (last - 1) // self._chunk
        if last <= first:
            return b""
        if all(i in self._pieces for i in range(lo, hi + 1)):
            joined = b"".join(self._pieces[i] for i in range(lo, hi + 1))
            return joined[first - lo * self._chunk : last - lo * self._chunk]
        return self._read_at(first, last - first)

    def _stream(self, first: int, last: int) -> Iterator[bytes]:
        while first < last:
            self._check_abort()
            piece = self._read(first, min(last, first + self._chunk))
            if not piece:
                return
            yield piece
            first += len(piece)

    def _decoded_len(self, first: int, last: int) -> int:
        """UTF-8 length of ``bytes[first:last]`` decoded, counted piece by piece."""
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        total = 0
        for piece in self._stream(first, last):
            if piece.isascii() and not decoder.getstate()[0]:
                total += len(piece)
                continue
            total += utf8_len(decoder.decode(piece))
        return total + utf8_len(decoder.decode(b"", True))

    def _first_newline(self, first: int, last: int) -> int:
        """Offset of the first newline in ``[first, last)``, else ``last``."""
        pos = first
        for piece in self._stream(first, last):
            found = piece.find(b"\n")
            if found >= 0:
                return pos + found
            pos += len(piece)
        return last

    def line_bytes(self, i: int) -> int:
        """UTF-8 length of line ``i`` decoded."""
        first, last = self._bounds(i, i + 1)
        return self._decoded_len(first, last)

    def truncated_selection(self, start: int, end: int, max_lines: int, max_bytes: int) -> TruncationResult:
        """``truncate_head`` of lines ``start:end`` joined and decoded, keeping no more of them
        than the cap needs."""
        if end <= start:
            return truncate_head("", max_lines, max_bytes)
        first, last = self._bounds(start, end)
        keep = max_bytes + 1
        if last - first <= keep:
            return truncate_head(_decode(self._read(first, last)), max_lines, max_bytes)
        # Longer than the cap in bytes, so longer once decoded: truncated. A line that does not
        # end within the first max_bytes + 1 bytes cannot be kept.
        head = self._read(first, first + keep)
        total_bytes = self._decoded_len(first, last)
        ends_with_newline = self._read(last - 1, last) == b"\n"
        total_lines = end - start - (1 if ends_with_newline else 0)
        newline = head.find(b"\n")
        first_len = (utf8_len(_decode(head[:newline])) if newline >= 0
                     else self._decoded_len(first, self._first_newline(first, last)))
        if first_len > max_bytes:
            return TruncationResult("", True, "bytes", total_lines, total_bytes, 0, 0, False, True,
                                    max_lines, max_bytes)
        text = _decode(head[: head.rfind(b"\n")])
        if "\ufffd" not in text:
            # Every byte decoded as itself, so each line's UTF-8 length is its length in the
            # file: the complete lines of the head all end within max_bytes, and all fit.
            complete_lines = head.count(b"\n")
            if max_lines >= complete_lines:
                out = text
            else:
                out = "\n".join(text.split("\n", max_lines)[:max_lines])
            shown = min(max_lines, complete_lines)
            return TruncationResult(out, True, "lines" if max_lines <= complete_lines else "bytes", total_lines,
                                    total_bytes, shown, utf8_len(out), False, False, max_lines, max_bytes)
        complete = text.split("\n")
        kept: list[str] = []
        used = 0
        truncated_by: TruncatedBy = "bytes"
        for i in range(len(complete) + 1):
            if i >= max_lines:
                truncated_by = "lines"
                break
            if i == len(complete):
                break  # the next line ends past the first max_bytes + 1 bytes: it does not fit
            cost = utf8_len(complete[i]) + (1 if i > 0 else 0)
            if used + cost > max_bytes:
                break
            kept.append(complete[i])
            used += cost
        out = "\n".join(kept)
        return TruncationResult(out, True, truncated_by, total_lines, total_bytes, len(kept), utf8_len(out),
                                False, False, max_lines, max_bytes)


class _Lines(Protocol):
    count: int

    def truncated_selection(self, start: int, end: int, max_lines: int, max_bytes: int) -> TruncationResult: ...

    def line_bytes(self, i: int) -> int: ...


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
    chunk: int = READ_CHUNK,
    keep: int = KEEP_BYTES,
) -> TextSelection:
    """``select_text(data.decode("utf-8", "replace"), …)`` the way the engine reads a file:
    streamed in ``chunk``-byte pieces (keeping ``keep`` bytes of them), decoding only the
    selected lines, the selection's bounds noted while counting."""
    lines = _FileLines(lambda at, n: data[at : at + n], chunk=chunk, keep=keep, wanted=_wanted_newlines(offset, limit))
    return _select(lines, path, offset, limit, max_lines=max_lines, max_bytes=max_bytes)


def _select(
    all_lines: _Lines,
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
    first_index = js_slice_bound(start_line, total_file_lines)
    if limit is not None:
        end_line = min(start_line + limit, total_file_lines)
        end_index = js_slice_bound(end_line, total_file_lines)
        user_limited = end_line - start_line
    else:
        end_index = total_file_lines
    trunc = all_lines.truncated_selection(first_index, end_index, max_lines, max_bytes)
    limit_text = format_size(max_bytes)
    if trunc.first_line_exceeds_limit:
        if isinstance(start_line, float) and not start_line.is_integer():
            # pi measures allLines[startLine]: undefined at a fractional index, and Node's
            # Buffer.byteLength(undefined) throws
            raise ToolError(BYTE_LENGTH_UNDEFINED_MESSAGE)
        size = format_size(all_lines.line_bytes(first_index))
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


IMAGE_WITHOUT_PROCESSOR: Seam[ImageWithoutProcessor] = Seam(
    "read.image-without-processor", SURFACE_ENGINE, omit_image,
    "what an image read returns when the image processor is missing (spec read.7)")
ENGINE_SEAMS = (IMAGE_WITHOUT_PROCESSOR,)

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


def _open_regular(abs_path: str) -> tuple[int, int] | None:
    """A regular file that opens for reading: its descriptor and size. ``None`` leaves the
    judgement to the checks one by one (a missing file, its macOS variants, access, a directory,
    a FIFO): what opens here passes all of them."""
    try:
        st = os.stat(abs_path)
        if not stat.S_ISREG(st.st_mode):
            return None
        return os.open(abs_path, os.O_RDONLY), st.st_size
    except OSError:
        return None


def _open_checked(path: str, root: str, home: str) -> int:
    """Steps 2–4 of spec read.6 one by one, in pi's order, for what ``_open_regular`` refuses;
    the descriptor of the file found."""
    abs_path = paths.engine_resolve_read(path, root, home)
    err = _access_error(abs_path)
    if err is not None:
        raise err
    _read_bytes(abs_path, IMAGE_SNIFF_BYTES)  # a directory fails here, as in pi's image sniffing
    too_large = _node_size_error(abs_path)
    if too_large is not None:
        raise too_large
    try:
        return os.open(abs_path, os.O_RDONLY)
    except IsADirectoryError as exc:
        raise ToolError(EISDIR_READ_MESSAGE, code="EISDIR") from exc
    except OSError as exc:
        raise ToolError(node_error_message(exc, "open", abs_path)) from exc


def _read_all(fd: int) -> bytes:
    pieces = []
    while piece := os.read(fd, READ_CHUNK):
        pieces.append(piece)
    return b"".join(pieces)


def _read_from(read_at: ReadAt, first: bytes) -> bytes:
    """The whole file, given its first piece."""
    pieces = [first]
    at = len(first)
    while first and (piece := read_at(at, READ_CHUNK)):
        pieces.append(piece)
        at += len(piece)
    return b"".join(pieces)


def _wanted_newlines(offset: Number | None, limit: Number | None) -> tuple[int, ...]:
    """The newlines that bound the selection ``offset``/``limit`` asks for (spec read.6): the
    one before its first line and the one after its last, when they are whole numbers (a hint:
    any other bound is found by reading its piece again)."""
    start: Number = max(0, offset - 1) if offset else 0
    bounds = [start] if limit is None else [start, start + limit]
    return tuple(int(b) for b in bounds if isinstance(b, int) or (isinstance(b, float) and b.is_integer()))


def engine_read(
    path: str,
    offset: Number | None,
    limit: Number | None,
    *,
    root: str,
    home: str,
    check_abort: Callable[[], None],
    auto_resize_images: bool = True,
    without_processor: ImageWithoutProcessor = omit_image,
    image_processor: bool = True,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> ToolResult:
    """pi's read on the caller's ``path`` string. Raises ``ToolError`` (OS errors in Node form,
    ``Offset … beyond end of file``) and ``ToolAborted`` via ``check_abort``.

    Text → one text block, ``details`` ``{"truncation": …}`` only when truncated, else ``None``.
    Images (by magic bytes) → ``[text, image]``, ``details`` ``None``; without an image processor
    (none installed, or ``image_processor`` false) what ``without_processor`` returns.

    A regular file is streamed (``_FileLines``): the read holds no more of it than it returns
    plus the byte cap and a fixed number of pieces. Anything else (a FIFO, a device) is read whole.
    """
    check_abort()
    opened = _open_regular(paths.engine_resolve(path, root, home))
    if opened is not None:
        fd, size = opened
        regular = True
    else:
        fd = _open_checked(path, root, home)
        try:
            st = os.fstat(fd)
            regular, size = stat.S_ISREG(st.st_mode), st.st_size
        except OSError:
            regular, size = False, 0
    try:
        if regular and size > NODE_MAX_READ_BYTES:
            raise ToolError(f"File size ({size}) is greater than 2 GiB", code="ERR_FS_FILE_TOO_LARGE")
        if regular:
            def read_at(at: int, n: int) -> bytes:
                return os.pread(fd, n, at)
        else:
            whole = _read_all(fd)

            def read_at(at: int, n: int) -> bytes:
                return whole[at : at + n]
        first = read_at(0, READ_CHUNK)
        mime = detect_image_mime(first[:IMAGE_SNIFF_BYTES])
        if mime is not None:  # an image is decoded whole
            data = _read_from(read_at, first)
            check_abort()
            return image_read_result(data, mime, auto_resize=auto_resize_images,
                                     without_processor=without_processor, processor=image_processor)
        lines = _FileLines(read_at, check_abort, first=first, wanted=_wanted_newlines(offset, limit))
        sel = _select(lines, path, offset, limit, max_lines=max_lines, max_bytes=max_bytes)
    finally:
        os.close(fd)
    check_abort()
    return ToolResult(TOOL_NAME, (TextBlock(sel.text),), sel.details)
