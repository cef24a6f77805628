"""The server's dispatch table: every tool declares the whole contract (spec common.7 modes)."""

from __future__ import annotations

import pytest

from tools_impl.core.profile import REFERENCE, UPSTREAM_PI
from tools_impl.core.tool import EXECUTION_MODES, Tool
from tools_impl.edit import tool as edit_tool
from tools_impl.read import tool as read_tool
from tools_impl.server.tools import NON_TOOL_OPS, TOOLS, tool_names
from tools_impl.write import tool as write_tool

EXPECTED_MODES = {"read": "parallel", "write": "sequential", "edit": "sequential",
                  "grep": "parallel", "glob": "parallel", "bash": "sequential", "find": "parallel"}
# (MiniMax surface, pi surface) required arguments
EXPECTED_REQUIRED = {
    "read": (["path"], ["path"]),
    "write": (["path", "content"], ["path", "content"]),
    "edit": (["file_path", "old_string", "new_string"], ["path", "edits"]),
    "grep": (["pattern"], ["pattern"]),
    "glob": (["pattern"], ["pattern"]),
    "bash": (["command"], ["command"]),
    "find": (["pattern"], ["pattern"]),
}


def test_the_table_holds_the_six_tools_in_order_pi_find_on_the_pi_surface_and_classify() -> None:
    assert tool_names(REFERENCE) == ["read", "write", "edit", "grep", "glob", "bash"]
    assert tool_names(UPSTREAM_PI) == ["read", "write", "edit", "grep", "glob", "bash", "find"]
    assert tool_names() == tool_names(UPSTREAM_PI)
    assert list(NON_TOOL_OPS) == ["classify"]


@pytest.mark.parametrize("name", list(EXPECTED_MODES))
def test_every_tool_declares_mode_schema_prepare_and_execute(name: str) -> None:
    tool = TOOLS[name]
    assert isinstance(tool, Tool) and tool.name == name
    assert tool.mode in EXECUTION_MODES and tool.mode == EXPECTED_MODES[name]
    minimax, pi = EXPECTED_REQUIRED[name]
    assert tool.surface_schema(REFERENCE)["required"] == minimax
    assert tool.surface_schema(UPSTREAM_PI)["required"] == pi
    assert callable(tool.prepare) and callable(tool.execute)


def test_execution_modes_are_parallel_for_read_and_sequential_for_write_and_edit() -> None:
    assert read_tool.TOOL.mode == "parallel"
    assert write_tool.TOOL.mode == "sequential"
    assert edit_tool.TOOL.mode == "sequential"


def test_only_edit_prepares_arguments_and_only_outside_the_file_path_form() -> None:
    legacy = {"path": "a", "oldText": "x", "newText": "y"}
    for name, tool in TOOLS.items():
        if name != "edit":
            assert tool.prepare(dict(legacy)) == legacy
    assert TOOLS["edit"].prepare(dict(legacy)) == {"path": "a", "edits": [{"oldText": "x", "newText": "y"}]}
    wrapper_form = {"file_path": "a", "oldText": "x", "newText": "y"}
    assert TOOLS["edit"].prepare(dict(wrapper_form)) == wrapper_form
