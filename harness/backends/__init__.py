"""Backends: where a scenario's workspace and the implementation under test live."""

from harness.backends.base import Backend, Capabilities, HelloInfo
from harness.model.file_state import FileState

__all__ = ["Backend", "Capabilities", "FileState", "HelloInfo"]
