"""The table the server dispatches through: the six tools (each module's ``TOOL``, see
``core.tool``) and the operations that are not tool calls (``classify``, the Claude Code bash
permission profile; its parser dependency, tree-sitter, is imported only when a command is parsed).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tools_impl.bash.tool import TOOL as BASH
from tools_impl.classify.claude_code import classify
from tools_impl.core.profile import Profile
from tools_impl.core.tool import Tool
from tools_impl.edit.tool import TOOL as EDIT
from tools_impl.read.tool import TOOL as READ
from tools_impl.search.find_tool import TOOL as FIND
from tools_impl.search.glob_tool import TOOL as GLOB
from tools_impl.search.grep_tool import TOOL as GREP
from tools_impl.write.tool import TOOL as WRITE

TOOLS: dict[str, Tool] = {tool.name: tool for tool in (READ, WRITE, EDIT, GREP, GLOB, BASH, FIND)}
WRAPPER_ABSENT = ("find",)  # pi's own find: the wrapper surface offers glob instead

Classifier = Callable[[str, list[str], dict[str, Any]], dict[str, Any]]
NON_TOOL_OPS: dict[str, Classifier] = {"classify": classify}


def tool_names(profile: Profile | None = None) -> list[str]:
    """The tools ``profile``'s surface offers (every tool when no profile is given)."""
    if profile is None or not profile.wrapper:
        return list(TOOLS)
    return [name for name in TOOLS if name not in WRAPPER_ABSENT]
