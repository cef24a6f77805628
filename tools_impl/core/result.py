"""The result model of a returned tool call (spec common.2).

A call ends either in a returned ``ToolResult`` (``is_error`` marks a recoverable error the
model sees as a failed call) or in a raised ``errors.ToolError``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

JsonDict = dict[str, Any]


@dataclass(frozen=True)
class TextBlock:
    text: str
    type: Literal["text"] = "text"

    def to_json(self) -> JsonDict:
        return {"type": "text", "text": self.text}


@dataclass(frozen=True)
class ImageBlock:
    data: str  # base64
    mime_type: str
    type: Literal["image"] = "image"

    def to_json(self) -> JsonDict:
        return {"type": "image", "data": self.data, "mimeType": self.mime_type}


ContentBlock = TextBlock | ImageBlock


@dataclass(frozen=True)
class ToolResult:
    """A returned result. ``details`` is model-invisible; ``None`` means absent."""

    tool_name: str
    content: tuple[ContentBlock, ...]
    details: JsonDict | None = None
    is_error: bool = False

    @property
    def text(self) -> str:
        """All text blocks joined with a newline."""
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock))

    def to_json(self) -> JsonDict:
        return {
            "content": [b.to_json() for b in self.content],
            "details": self.details,
            "is_error": self.is_error,
        }


def text_result(tool_name: str, text: str, details: JsonDict | None = None, *, is_error: bool = False) -> ToolResult:
    """A result with a single text block."""
    return ToolResult(tool_name, (TextBlock(text),), details, is_error)
