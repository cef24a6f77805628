"""The tool table: name → module. Each tool module defines ``NAME``, ``SCHEMA`` (parameter
schema, see ``params``) and ``execute(args, ctx) -> ToolResult`` (raising ``ToolError``).
Modules are imported lazily so one broken optional dependency cannot take the server down.
"""

from __future__ import annotations

import importlib
from types import ModuleType

TOOL_MODULES: dict[str, str] = {
    "read": "tools_impl.read.tool",
    "write": "tools_impl.write.tool",
    "edit": "tools_impl.edit.tool",
    "grep": "tools_impl.search.grep_tool",
    "glob": "tools_impl.search.glob_tool",
    "bash": "tools_impl.bash.tool",
}


def tool_names() -> list[str]:
    return list(TOOL_MODULES)


def load_tool(name: str) -> ModuleType:
    """Import the module of tool ``name``; ``KeyError`` for an unknown tool."""
    return importlib.import_module(TOOL_MODULES[name])
