"""The ``write`` tool (spec write): engine write (resolution, mutation queue, ``mkdir -p``, write
through symlinks, abort checks, Node-style OS errors) and the wrapper's capture writer (BOM and
UTF-16LE preservation, byte counts, overwrite receipts with a unified patch).

Pure pieces (encoding detection, encoding, receipt building) are kept apart from the file I/O so
they can be property-tested.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Any, Literal

from tools_impl.core.context import ToolContext
from tools_impl.core.errors import ToolError
from tools_impl.core.profile import Profile
from tools_impl.core.result import ToolResult, text_result
from tools_impl.core.tool import MODE_SEQUENTIAL, Tool, by_surface, keep_arguments
from tools_impl.js.node_errors import error_code, node_error_message
from tools_impl.js.text import (
    BOM_CHAR,
    UTF8_BOM,
    UTF16LE_BOM,
    js_utf8,
    utf8_len,
    utf16_len,
    utf16_len_of_encoded,
)
from tools_impl.shared import paths
from tools_impl.shared.line_diff import (
    DiffBounds,
    DiffOmitted,
    diff_lines_bounded,
    numbered_diff_from_changes,
    patch_from_changes,
)
from tools_impl.shared.mutation_queue import MUTATIONS

NAME = "write"
SCHEMA: dict[str, Any] = {
    "properties": {
        "path": {"type": "string"},
        "content": {"type": "string"},
    },
    "required": ["path", "content"],
}

Encoding = Literal["utf-8", "utf16le"]
CaptureSkipped = Literal["too_large", "binary"]
PatchOmitted = Literal["too_large", "timeout"]

# Old files above the capture limit are only sampled, enough to see a BOM.
ENCODING_SAMPLE_BYTES = 4096
# A NUL within this prefix of a UTF-8 file marks it binary: no old text is captured.
BINARY_SNIFF_BYTES = 4096
OVERWROTE_SUFFIX = " (overwrote existing file)"


@dataclass(frozen=True)
class OldFile:
    """What the capture writer learned about the file before writing."""

    exists: bool
    encoding: Encoding = "utf-8"
    bom: bool = False
    text: str | None = None  # decoded old text without BOM; None when not captured
    capture_skipped: CaptureSkipped | None = None


NEW_FILE = OldFile(exists=False)


@dataclass(frozen=True)
class EncodedContent:
    data: bytes
    encoding: Encoding
    bom: bool
    body: str  # the content with a leading U+FEFF split off


# ---------------------------------------------------------------------------------------------
# Pure pieces


def detect_encoding(head: bytes) -> tuple[Encoding, bool]:
    """Encoding by BOM only: ``EF BB BF`` → UTF-8 with BOM, ``FF FE`` → UTF-16LE; ``FE FF`` is
    not detected."""
    if head.startswith(UTF8_BOM):
        return "utf-8", True
    if head.startswith(UTF16LE_BOM):
        return "utf16le", True
    return "utf-8", False


def decode_old(data: bytes, encoding: Encoding, bom: bool) -> str:
    """The old file's text without its BOM, decoded the way Node decodes it."""
    if encoding == "utf16le":
        body = data[len(UTF16LE_BOM) :] if bom else data
        if len(body) % 2:
            body = body[:-1]  # Node drops a trailing odd byte
        return body.decode("utf-16-le", "surrogatepass")
    body = data[len(UTF8_BOM) :] if bom else data
    return body.decode("utf-8", "replace")


def classify_old(data: bytes, size: int, capture_max_bytes: int) -> OldFile:
    """Classify an existing file from its bytes (a sample when ``size`` exceeds the limit)."""
    encoding, bom = detect_encoding(data)
    if size > capture_max_bytes:
        return OldFile(True, encoding, bom, None, "too_large")
    if encoding == "utf-8" and b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return OldFile(True, encoding, bom, None, "binary")
    return OldFile(True, encoding, bom, decode_old(data, encoding, bom))


def encode_content(content: str, old: OldFile) -> EncodedContent:
    """Encode ``content`` for the file: keep the old encoding, BOM if either side has one;
    UTF-16LE always carries a BOM."""
    new_bom = content.startswith(BOM_CHAR)
    body = content[1:] if new_bom else content
    bom = old.bom or new_bom
    if old.encoding == "utf16le":
        return EncodedContent(UTF16LE_BOM + body.encode("utf-16-le", "surrogatepass"), "utf16le", True, body)
    data = js_utf8(body)
    return EncodedContent(UTF8_BOM + data if bom else data, "utf-8", bom, body)


def engine_text(content: str, path: str, data: bytes | None = None) -> str:
    """pi's result text; the count is UTF-16 code units, not bytes (counted on ``data``, the
    UTF-8 written, when given)."""
    units = utf16_len(content) if data is None else utf16_len_of_encoded(content, data)
    return f"Successfully wrote {units} bytes to {path}"


def capture_text(bytes_written: int, path: str, existed: bool) -> str:
    return f"Successfully wrote {bytes_written} bytes to {path}" + (OVERWROTE_SUFFIX if existed else "")


def overwrite_receipt(path: str, old_text: str, new_body: str, profile: Profile) -> dict[str, Any]:
    """``patch`` + ``firstChangedLine``, or ``patch_omitted`` (spec write.3)."""
    if utf8_len(new_body) > profile.write_capture_max_bytes:
        return {"patch_omitted": "too_large"}
    changes = diff_lines_bounded(old_text, new_body, DiffBounds(None, profile.write_diff_timeout_ms))
    if isinstance(changes, DiffOmitted):
        return {"patch_omitted": "timeout"}
    patch = patch_from_changes(path, path, changes)
    if utf16_len(patch) > profile.write_patch_max_chars:
        return {"patch_omitted": "too_large"}
    receipt: dict[str, Any] = {"patch": patch}
    _, first = numbered_diff_from_changes(old_text, new_body, changes)
    if first is not None:
        receipt["firstChangedLine"] = first
    return receipt


def capture_details(
    path: str, old: OldFile, encoded: EncodedContent, profile: Profile
) -> dict[str, Any]:
    details: dict[str, Any] = {
        "created": not old.exists,
        "bytes_written": len(encoded.data),
        "encoding": encoded.encoding,
        "bom": encoded.bom,
    }
    if old.capture_skipped is not None:
        details["capture_skipped"] = old.capture_skipped
    if old.exists and old.text is not None:
        details.update(overwrite_receipt(path, old.text, encoded.body, profile))
    return details


# ---------------------------------------------------------------------------------------------
# File I/O


class ProbeFailed(Exception):
    """The old file could not be inspected; the write falls back to plain UTF-8."""


def probe_old_file(abs_path: str, capture_max_bytes: int) -> OldFile:
    """Inspect the file about to be overwritten. ENOENT → ``NEW_FILE``; any other failure raises
    ``ProbeFailed``."""
    try:
        size = os.stat(abs_path).st_size
        with open(abs_path, "rb") as f:
            if size > capture_max_bytes:
                data = f.read(min(ENCODING_SAMPLE_BYTES, size))
            else:
                data = f.read()
    except FileNotFoundError:
        return NEW_FILE
    except OSError as exc:
        raise ProbeFailed(str(exc)) from exc
    return classify_old(data, size, capture_max_bytes)


def mkdir_parents(dir_path: str) -> None:
    """``fs.mkdir(dir, {recursive: true})`` with Node's error text: ``EEXIST`` when ``dir`` itself
    is a file, ``ENOTDIR`` when a component above it is; the path shown is always ``dir``."""
    try:
        if stat.S_ISDIR(os.stat(dir_path).st_mode):
            return  # what makedirs would find after its own probes
    except OSError:
        pass
    try:
        os.makedirs(dir_path, exist_ok=True)
    except OSError as exc:
        raise ToolError(node_error_message(exc, "mkdir", dir_path), code=error_code(exc)) from exc


def write_bytes(abs_path: str, data: bytes) -> None:
    """``fs.writeFile``: create or truncate, following symlinks."""
    try:
        fd = os.open(abs_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    except OSError as exc:
        raise ToolError(node_error_message(exc, "open", abs_path), code=error_code(exc)) from exc
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    except OSError as exc:
        raise ToolError(node_error_message(exc, "write"), code=error_code(exc)) from exc
    finally:
        os.close(fd)


def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    path: str = args["path"]
    content: str = args["content"]
    profile = ctx.profile
    ctx.check_abort()
    abs_path = paths.engine_resolve(path, ctx.root, ctx.home)
    with MUTATIONS.hold(abs_path):
        ctx.check_abort()
        mkdir_parents(os.path.dirname(abs_path))
        ctx.check_abort()
        if not profile.wrapper:
            data = js_utf8(content)
            write_bytes(abs_path, data)
            ctx.check_abort()
            return text_result(NAME, engine_text(content, path, data))
        try:
            old = probe_old_file(abs_path, profile.write_capture_max_bytes)
        except ProbeFailed:
            write_bytes(abs_path, js_utf8(content))
            ctx.check_abort()
            return text_result(NAME, engine_text(content, path), {})
        encoded = encode_content(content, old)
        write_bytes(abs_path, encoded.data)
        ctx.check_abort()
    details = capture_details(path, old, encoded, profile)
    return text_result(NAME, capture_text(len(encoded.data), path, old.exists), details)


TOOL = Tool(NAME, MODE_SEQUENTIAL, by_surface(SCHEMA, SCHEMA), keep_arguments, execute)
