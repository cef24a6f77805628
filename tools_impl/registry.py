"""The tool table: name → module. Each tool module defines ``NAME``, ``SCHEMA`` (parameter
schema, see ``params``) and ``execute(args, ctx) -> ToolResult`` (raising ``ToolError``).
Modules are imported lazily so one broken optional dependency cannot take the server down.
"""

from __future__ import annotations

import importlib
from types import ModuleType

TOOL_MODULES: dict[str, str] = {
    "read": "tools_impl.read",
    "write": "tools_impl.write",
    "edit": "tools_impl.edit",
    "grep": "tools_impl.grep",
    "glob": "tools_impl.glob",
    "bash": "tools_impl.bash",
}


def tool_names() -> list[str]:
    return list(TOOL_MODULES)


def load_tool(name: str) -> ModuleType:
    """Import the module of tool ``name``; ``KeyError`` for an unknown tool."""
    return importlib.import_module(TOOL_MODULES[name])
