"""The two ways a tool call can fail by raising (spec common.2), plus the protocol server's error
for a malformed request.

``ToolError`` is a raised tool error: its ``str()`` is exactly the text the model sees.
``ToolAborted`` is cancellation through the abort signal; it is kept distinct so that callers
can tell a cancelled call from a failed one. ``ProtocolError`` lives here (not in ``server``) so
that modules serving protocol ops (``tasks``) raise the very class the server catches, also when
the server runs as ``python -m tools_impl.server`` (where its own module is ``__main__``).
"""

from __future__ import annotations

OPERATION_ABORTED = "Operation aborted"


class ToolError(Exception):
    """A raised tool error. ``message`` is the model-visible text, verbatim."""

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code

    def __str__(self) -> str:
        return self.message


class ToolAborted(ToolError):
    """Cancellation through the abort signal. Message defaults to ``Operation aborted``."""

    def __init__(self, message: str = OPERATION_ABORTED) -> None:
        super().__init__(message)


class ArgumentError(ToolError):
    """Arguments rejected by the host-side schema validation (spec common.7)."""


class ProtocolError(Exception):
    """A malformed protocol request; the server answers it with ``kind: protocol``."""
