"""MiniMax's patch to pi's read engine, as a ``Patch`` object (spec patches) registered at the
engine's seam (``read/engine.py``; ``core/patches.py`` explains seams)."""

from __future__ import annotations

import base64

from tools_impl.core.patches import PATCHES, Patch, replace
from tools_impl.core.profile import PATCH_READ_IMAGE_FALLBACK
from tools_impl.core.result import ImageBlock, TextBlock, ToolResult
from tools_impl.read.engine import ENGINE_SEAMS, IMAGE_WITHOUT_PROCESSOR
from tools_impl.read.media import (
    PILLOW_HINT,
    TOOL_NAME,
    ImageLimits,
    ImageProcessorUnavailableError,
    header_dimensions,
    within_limits,
)


def pass_through_within_limits(data: bytes, mime: str, limits: ImageLimits) -> ToolResult:
    """No processor: the original image when its header dimensions and payload are already within
    ``limits``, else ``ImageProcessorUnavailableError`` (spec read.7)."""
    encoded = base64.b64encode(data).decode("ascii")
    dims = header_dimensions(data, mime)
    if dims is not None and within_limits(dims[0], dims[1], len(encoded), limits):
        return ToolResult(TOOL_NAME, (TextBlock(f"Read image file [{mime}]"), ImageBlock(encoded, mime)))
    what = "its dimensions could not be read from the header" if dims is None else (
        f"it is {dims[0]}x{dims[1]} with a {len(encoded)}-byte base64 payload")
    raise ImageProcessorUnavailableError(
        f"Cannot read this {mime} image: the image processor (Pillow) is not installed and {what}, "
        f"so it cannot be passed through unresized (limits: {limits.max_width}x{limits.max_height}, "
        f"base64 payload below {limits.max_base64_bytes} bytes). Install Pillow: {PILLOW_HINT}"
    )


READ_PATCHES: tuple[Patch, ...] = (
    Patch(PATCH_READ_IMAGE_FALLBACK, "Image reads without the image processor",
          (replace(IMAGE_WITHOUT_PROCESSOR, pass_through_within_limits),)),
)

PATCHES.register(ENGINE_SEAMS, READ_PATCHES)
