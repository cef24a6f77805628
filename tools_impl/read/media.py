"""Non-text reads: images (spec read.7), Jupyter notebooks and PDFs (dispatch in spec read.2 step 5).

Images. ``detect_image_mime`` looks only at magic bytes (JPEG, PNG without an ``acTL`` chunk
before the first ``IDAT``, GIF, WebP). ``resize_image`` keeps an image within 2000x2000 and a
4.5 MiB base64 payload using Pillow (optional extra ``toolproof[images]``, imported lazily): PNG
and then JPEG at qualities 80, 85, 70, 55, 40 are tried, and the dimensions are scaled by 0.75
until a candidate fits. Without Pillow the read engine's ``read.image-without-processor`` seam
decides: the image is omitted (``omit_image``), or with patch ``read.image-fallback``
(``read/patches.py``) the original is returned when its header dimensions (parsed here, stdlib
only) and size are within the limits and ``ImageProcessorUnavailableError`` is raised otherwise.

Notebooks (``.ipynb``), a format of our own choosing (the spec leaves it open). Cells are
rendered in order, separated by a blank line::

    <cell id="a1" type="code" execution_count="3">
    print("hi")
    </cell>
    <output cell="a1" type="stream" name="stdout">
    hi
    </output>

``id`` is the cell's ``id`` field or ``cell-<index>`` (0-based) when absent; ``execution_count``
appears only when set. Outputs follow their code cell: ``stream`` text, ``execute_result`` /
``display_data`` as ``text/plain`` (else ``text/markdown``, else a line naming the MIME types),
``error`` as ``ename: evalue`` plus the traceback without ANSI colours. An ``image/png`` or
``image/jpeg`` output becomes ``<output cell="…" type="…" mime="image/png"/>`` in the text and an
image block at that position (text before it is closed into its own text block).

PDFs: text per page via pypdf (optional extra ``toolproof[pdf]``, imported lazily), rendered as
``<page number="N">`` … ``</page>`` blocks. ``pages`` is ``"N"`` or ``"N-M"`` (1-based,
inclusive), at most 20 pages per call; a PDF longer than 20 pages needs ``pages``.
"""

from __future__ import annotations

import base64
import io
import json
import math
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tools_impl.core.errors import ToolError
from tools_impl.core.profile import REFERENCE
from tools_impl.core.result import ContentBlock, ImageBlock, TextBlock, ToolResult
from tools_impl.js.node_errors import node_error_message
from tools_impl.js.text import js_to_fixed

TOOL_NAME = "read"

# --- images (spec read.7) ---------------------------------------------------------------------
IMAGE_SNIFF_BYTES = 4100
IMAGE_MAX_WIDTH = 2000
IMAGE_MAX_HEIGHT = 2000
IMAGE_MAX_BASE64_BYTES = int(4.5 * 1024 * 1024)
IMAGE_JPEG_QUALITY = 80
IMAGE_QUALITY_STEPS: tuple[int, ...] = (85, 70, 55, 40)
IMAGE_DOWNSCALE = 0.75

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
JPEG_MAGIC = b"\xff\xd8\xff"
JPEG_REJECTED_BYTE3 = 0xF7  # FF D8 FF F7 is JPEG-LS, which decoders do not take as JPEG
PILLOW_HINT = "pip install 'toolproof[images]'"

IMAGE_OMITTED_NOTE = "[Image omitted: could not be resized below the inline image size limit.]"

# --- PDFs -----------------------------------------------------------------------------------
PDF_MAX_PAGES = REFERENCE.pdf_max_pages
PDF_INSTALL_HINT = "pip install 'toolproof[pdf]'"
PAGES_RE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")

ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
NOTEBOOK_IMAGE_MIMES: tuple[str, ...] = ("image/png", "image/jpeg")


class ImageProcessorUnavailableError(ToolError):
    """Raised (patch ``read.image-fallback``) when Pillow is missing and the image is too large
    to be passed through unprocessed."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="ImageProcessorUnavailableError")


def jpeg_accepted(data: bytes) -> bool:
    # A missing byte 3 compares unequal to 0xF7 in JavaScript, so three bytes suffice.
    return data.startswith(JPEG_MAGIC) and (len(data) < 4 or data[3] != JPEG_REJECTED_BYTE3)


def png_is_still_image(data: bytes) -> bool:
    """PNG signature, an IHDR chunk of length 13 at offset 8, and no ``acTL`` before ``IDAT``."""
    if len(data) < 16 or not data.startswith(PNG_SIGNATURE):
        return False
    if struct.unpack(">I", data[8:12])[0] != 13 or data[12:16] != b"IHDR":
        return False
    pos = 8
    while pos + 8 <= len(data):
        length = struct.unpack(">I", data[pos:pos + 4])[0]
        kind = data[pos + 4:pos + 8]
        if kind == b"acTL":
            return False
        if kind == b"IDAT":
            return True
        pos += 12 + length
    return True


def detect_image_mime(data: bytes) -> str | None:
    """The engine-supported image MIME type of a leading byte sample, by magic bytes only."""
    if jpeg_accepted(data):
        return "image/jpeg"
    if png_is_still_image(data):
        return "image/png"
    if data.startswith(b"GIF"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _jpeg_dimensions(data: bytes) -> tuple[int, int] | None:
    pos = 2
    sof = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in (0x01, 0xD8) or 0xD0 <= marker <= 0xD7:
            pos += 2
            continue
        length = struct.unpack(">H", data[pos + 2:pos + 4])[0]
        if marker in sof:
            if pos + 9 > len(data):
                return None
            height, width = struct.unpack(">HH", data[pos + 5:pos + 9])
            return width, height
        pos += 2 + length
    return None


def _webp_dimensions(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and len(data) >= 30:
        w, h = struct.unpack("<HH", data[26:30])
        return w & 0x3FFF, h & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25:
        b = data[21:25]
        width = 1 + (b[0] | ((b[1] & 0x3F) << 8))
        height = 1 + ((b[1] >> 6) | (b[2] << 2) | ((b[3] & 0x0F) << 10))
        return width, height
    if chunk == b"VP8X" and len(data) >= 30:
        width = 1 + int.from_bytes(data[24:27], "little")
        height = 1 + int.from_bytes(data[27:30], "little")
        return width, height
    return None


def header_dimensions(data: bytes, mime: str) -> tuple[int, int] | None:
    """Width and height read from the file header (no decoding); ``None`` if unparseable."""
    if mime == "image/png" and len(data) >= 24:
        w, h = struct.unpack(">II", data[16:24])
        return w, h
    if mime == "image/gif" and len(data) >= 10:
        w, h = struct.unpack("<HH", data[6:10])
        return w, h
    if mime == "image/jpeg":
        return _jpeg_dimensions(data)
    if mime == "image/webp":
        return _webp_dimensions(data)
    return None


@dataclass(frozen=True)
class ImageLimits:
    max_width: int = IMAGE_MAX_WIDTH
    max_height: int = IMAGE_MAX_HEIGHT
    max_base64_bytes: int = IMAGE_MAX_BASE64_BYTES
    jpeg_quality: int = IMAGE_JPEG_QUALITY


@dataclass(frozen=True)
class ResizedImage:
    data: str  # base64
    mime_type: str
    original_width: int
    original_height: int
    width: int
    height: int
    was_resized: bool


def js_round(x: float) -> int:
    """JavaScript ``Math.round`` (halves round up)."""
    return math.floor(x + 0.5)


def target_dimensions(width: int, height: int, limits: ImageLimits) -> tuple[int, int]:
    """Scale down proportionally to fit ``max_width`` then ``max_height``."""
    if width > limits.max_width:
        height = js_round(height * limits.max_width / width)
        width = limits.max_width
    if height > limits.max_height:
        width = js_round(width * limits.max_height / height)
        height = limits.max_height
    return width, height


def quality_steps(limits: ImageLimits) -> list[int]:
    """The configured quality first, then the fixed steps, without repeats: [80, 85, 70, 55, 40]."""
    out: list[int] = []
    for q in (limits.jpeg_quality, *IMAGE_QUALITY_STEPS):
        if q not in out:
            out.append(q)
    return out


def next_downscale(width: int, height: int) -> tuple[int, int]:
    def shrink(n: int) -> int:
        return 1 if n == 1 else max(1, math.floor(n * IMAGE_DOWNSCALE))

    return shrink(width), shrink(height)


def within_limits(width: int, height: int, base64_len: int, limits: ImageLimits) -> bool:
    return width <= limits.max_width and height <= limits.max_height and base64_len < limits.max_base64_bytes


def pillow_available() -> bool:
    try:
        import PIL.Image  # noqa: F401  # optional dependency (the images extra): imported only to probe
    except ImportError:
        return False
    return True


def resize_image(data: bytes, mime: str, limits: ImageLimits = ImageLimits()) -> ResizedImage | None:
    """Fit an image into ``limits`` with Pillow; ``None`` if it cannot be decoded or made small enough.

    Raises ``ImportError`` when Pillow is not installed (callers decide what that means).
    """
    from PIL import Image  # optional dependency (the images extra), imported when an image is resized

    original_b64 = base64.b64encode(data).decode("ascii")
    try:
        img = Image.open(io.BytesIO(data))
        img.load()
    except Exception:
        return None
    ow, oh = img.size
    if within_limits(ow, oh, len(original_b64), limits):
        return ResizedImage(original_b64, mime, ow, oh, ow, oh, False)
    width, height = target_dimensions(ow, oh, limits)
    qualities = quality_steps(limits)
    rgba = img.convert("RGBA")
    while True:
        resized = rgba.resize((width, height), Image.Resampling.LANCZOS)
        for candidate_mime, quality in [("image/png", 0)] + [("image/jpeg", q) for q in qualities]:
            buf = io.BytesIO()
            if candidate_mime == "image/png":
                resized.save(buf, format="PNG")
            else:
                resized.convert("RGB").save(buf, format="JPEG", quality=quality)
            encoded = base64.b64encode(buf.getvalue()).decode("ascii")
            if len(encoded) < limits.max_base64_bytes:
                return ResizedImage(encoded, candidate_mime, ow, oh, width, height, True)
        if width == 1 and height == 1:
            return None
        nw, nh = next_downscale(width, height)
        if (nw, nh) == (width, height):
            return None
        width, height = nw, nh


def dimension_note(r: ResizedImage) -> str | None:
    if not r.was_resized:
        return None
    scale = js_to_fixed(r.original_width / r.width, 2)
    return (
        f"[Image: original {r.original_width}x{r.original_height}, displayed at {r.width}x{r.height}. "
        f"Multiply coordinates by {scale} to map to original image.]"
    )


# What an image read returns when there is no image processor: (data, mime, limits) -> result.
ImageWithoutProcessor = Callable[[bytes, str, ImageLimits], ToolResult]


def omit_image(data: bytes, mime: str, limits: ImageLimits) -> ToolResult:
    """No processor: the image is left out, as when it cannot be resized (pi's behaviour here is
    unverified; spec patch.read.image-fallback)."""
    return ToolResult(TOOL_NAME, (TextBlock(f"Read image file [{mime}]\n{IMAGE_OMITTED_NOTE}"),))


def image_read_result(
    data: bytes,
    mime: str,
    *,
    auto_resize: bool = True,
    without_processor: ImageWithoutProcessor = omit_image,
    limits: ImageLimits = ImageLimits(),
    processor: bool = True,
) -> ToolResult:
    """The engine's image result (spec read.7): ``[text, image]`` blocks, ``details`` absent.
    ``processor=False`` treats the image processor as missing (``Profile.image_processor``);
    ``without_processor`` is what is returned then."""
    header = f"Read image file [{mime}]"
    if not auto_resize:
        return ToolResult(TOOL_NAME, (TextBlock(header), ImageBlock(base64.b64encode(data).decode("ascii"), mime)))
    if not processor or not pillow_available():
        return without_processor(data, mime, limits)
    resized = resize_image(data, mime, limits)
    if resized is None:
        return ToolResult(TOOL_NAME, (TextBlock(f"{header}\n{IMAGE_OMITTED_NOTE}"),))
    text = f"Read image file [{resized.mime_type}]"
    note = dimension_note(resized)
    if note:
        text += f"\n{note}"
    return ToolResult(TOOL_NAME, (TextBlock(text), ImageBlock(resized.data, resized.mime_type)))


# --- notebooks ------------------------------------------------------------------------------
def _joined(src: Any) -> str:
    if isinstance(src, list):
        return "".join(str(s) for s in src)
    return "" if src is None else str(src)


def _output_text(out: dict[str, Any]) -> str:
    kind = out.get("output_type")
    if kind == "stream":
        return _joined(out.get("text"))
    if kind == "error":
        tb = "\n".join(ANSI_RE.sub("", str(line)) for line in out.get("traceback") or [])
        head = f"{out.get('ename', '')}: {out.get('evalue', '')}"
        return f"{head}\n{tb}" if tb else head
    data = out.get("data") or {}
    for mime in ("text/plain", "text/markdown"):
        if mime in data:
            return _joined(data[mime])
    return f"[output with MIME types: {', '.join(sorted(data))}]"


def render_notebook(nb: dict[str, Any], path: str) -> ToolResult:
    """Render a parsed notebook (format in the module docstring)."""
    cells = nb.get("cells")
    if not isinstance(cells, list):
        raise ToolError(f"Cannot read notebook '{path}': it has no 'cells' list.")
    blocks: list[ContentBlock] = []
    parts: list[str] = []
    images = 0

    def flush() -> None:
        if parts:
            blocks.append(TextBlock("\n".join(parts)))
            parts.clear()

    for index, cell in enumerate(cells):
        if not isinstance(cell, dict):
            continue
        cell_id = str(cell.get("id") or f"cell-{index}")
        cell_type = str(cell.get("cell_type", "code"))
        attrs = f'id="{cell_id}" type="{cell_type}"'
        if cell.get("execution_count") is not None:
            attrs += f' execution_count="{cell["execution_count"]}"'
        parts.append(f"<cell {attrs}>\n{_joined(cell.get('source')).rstrip(chr(10))}\n</cell>")
        for out in cell.get("outputs") or []:
            if not isinstance(out, dict):
                continue
            kind = str(out.get("output_type", ""))
            data = out.get("data") or {}
            image_mime = next((m for m in NOTEBOOK_IMAGE_MIMES if m in data), None)
            if image_mime is not None:
                parts.append(f'<output cell="{cell_id}" type="{kind}" mime="{image_mime}"/>')
                flush()
                payload = "".join(_joined(data[image_mime]).split())
                blocks.append(ImageBlock(payload, image_mime))
                images += 1
                continue
            name = f' name="{out["name"]}"' if kind == "stream" and out.get("name") else ""
            body = _output_text(out).rstrip("\n")
            parts.append(f'<output cell="{cell_id}" type="{kind}"{name}>\n{body}\n</output>')
    flush()
    if not blocks:
        blocks.append(TextBlock(f"Notebook '{path}' has no cells."))
    details = {"media": {"kind": "notebook", "cells": len(cells), "images": images}}
    return ToolResult(TOOL_NAME, tuple(blocks), details)


def read_notebook(abs_path: str, raw: bytes) -> ToolResult:
    try:
        nb = json.loads(raw.decode("utf-8", "replace"))
    except json.JSONDecodeError as exc:
        raise ToolError(f"Cannot read notebook '{abs_path}': invalid JSON ({exc}).") from exc
    if not isinstance(nb, dict):
        raise ToolError(f"Cannot read notebook '{abs_path}': the top level is not a JSON object.")
    return render_notebook(nb, abs_path)


# --- PDFs -----------------------------------------------------------------------------------
def parse_pages(pages: str, max_pages: int = PDF_MAX_PAGES) -> tuple[int, int]:
    """``"3"`` → (3, 3); ``"1-5"`` → (1, 5). Malformed, reversed or too long ranges raise ``ToolError``."""
    m = PAGES_RE.match(pages)
    if m is None:
        raise ToolError(f'Invalid pages parameter "{pages}": use a page number such as "3" or a range such as "1-5".')
    first = int(m.group(1))
    last = int(m.group(2)) if m.group(2) is not None else first
    if first < 1 or last < first:
        raise ToolError(f'Invalid pages parameter "{pages}": pages are numbered from 1 and a range must not be reversed.')
    if last - first + 1 > max_pages:
        raise ToolError(
            f'Page range "{pages}" spans {last - first + 1} pages; at most {max_pages} pages can be read per call.'
        )
    return first, last


def read_pdf(abs_path: str, pages: str | None, max_pages: int = PDF_MAX_PAGES) -> ToolResult:
    """Text of the requested pages. Missing pypdf, bad ranges and unreadable PDFs raise ``ToolError``."""
    try:
        from pypdf import PdfReader  # optional dependency (the pdf extra), imported when a PDF is read
    except ImportError as exc:
        raise ToolError(
            f"Reading PDF files needs the optional dependency pypdf, which is not installed: {PDF_INSTALL_HINT}"
        ) from exc
    requested = parse_pages(pages, max_pages) if pages is not None and pages.strip() != "" else None
    try:
        reader = PdfReader(abs_path)
        total = len(reader.pages)
    except OSError as exc:
        raise ToolError(node_error_message(exc, "open", abs_path)) from exc
    except Exception as exc:
        raise ToolError(f"Cannot read PDF '{abs_path}': {exc}") from exc
    if requested is None:
        if total > max_pages:
            raise ToolError(
                f"This PDF has {total} pages; at most {max_pages} pages can be read per call. "
                f'Use the pages parameter, e.g. pages="1-{max_pages}".'
            )
        first, last = 1, max(total, 1)
    else:
        first, last = requested
    if total == 0 or first > total:
        raise ToolError(f"Page {first} is beyond the end of this PDF ({total} pages).")
    last = min(last, total)
    parts = []
    for n in range(first, last + 1):
        try:
            text = reader.pages[n - 1].extract_text() or ""
        except Exception as exc:
            raise ToolError(f"Cannot extract text from page {n} of PDF '{abs_path}': {exc}") from exc
        parts.append(f'<page number="{n}">\n{text.rstrip()}\n</page>')
    details = {"media": {"kind": "pdf", "pages": [first, last], "total_pages": total}}
    return ToolResult(TOOL_NAME, (TextBlock("\n".join(parts)),), details)
