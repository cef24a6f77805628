"""Backends: where a scenario's workspace and the implementation under test live."""

from harness.backends.base import Backend, Capabilities, FileState, HelloInfo

__all__ = ["Backend", "Capabilities", "FileState", "HelloInfo"]
