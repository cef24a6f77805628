"""Argument mapping between the minimax and pi surfaces (harness/run/surface_map.py)."""

from __future__ import annotations

from typing import Any

import pytest

from harness.run.surface_map import map_call, target_surface

MAPPED: list[tuple[str, dict[str, Any], str, str, dict[str, Any]]] = [
    ("edit", {"file_path": "a", "old_string": "x", "new_string": "y"}, "minimax", "pi",
     {"path": "a", "edits": [{"oldText": "x", "newText": "y"}]}),
    ("edit", {"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": False}, "minimax", "pi",
     {"path": "a", "edits": [{"oldText": "x", "newText": "y"}]}),
    ("read", {"path": "a", "offset": 2, "limit": 3}, "minimax", "pi", {"path": "a", "offset": 2, "limit": 3}),
    ("write", {"path": "a", "content": "c"}, "minimax", "pi", {"path": "a", "content": "c"}),
    ("bash", {"command": "ls", "timeout": 1.5, "run_in_background": False}, "minimax", "pi",
     {"command": "ls", "timeout": 1.5}),
    ("edit", {"path": "a", "edits": [{"oldText": "x", "newText": "y"}]}, "pi", "minimax",
     {"file_path": "a", "old_string": "x", "new_string": "y"}),
    ("edit", {"path": "a", "oldText": "x", "newText": "y"}, "pi", "minimax",
     {"file_path": "a", "old_string": "x", "new_string": "y"}),
    ("read", {"path": "a", "offset": 1}, "pi", "pi", {"path": "a", "offset": 1}),
]


@pytest.mark.parametrize(("tool", "args", "source", "target", "want"), MAPPED)
def test_calls_map_between_the_surfaces(tool: str, args: dict[str, Any], source: str, target: str,
                                        want: dict[str, Any]) -> None:
    mapped = map_call(tool, args, source, target)
    assert mapped.ok and mapped.args == want and mapped.surface == target


UNMAPPABLE = [
    ("edit", {"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": True}, "minimax", "pi",
     "edit argument replace_all has no counterpart on the pi surface"),
    ("bash", {"command": "sleep 9", "run_in_background": True}, "minimax", "pi",
     "bash argument run_in_background has no counterpart on the pi surface"),
    ("read", {"path": "a.pdf", "pages": "1-2"}, "minimax", "pi", "read argument pages has no counterpart on the pi surface"),
    ("edit", {"file_path": "a", "old_string": "x"}, "minimax", "pi",
     "edit without new_string tests the minimax surface's own validation"),
    ("edit", {"path": "a", "edits": [{"oldText": "x", "newText": "y"}, {"oldText": "p", "newText": "q"}]}, "pi",
     "minimax", "the minimax surface's edit takes exactly one replacement (old_string, new_string); this call sends "
                "another form of edits"),
    ("edit", {"path": "a", "edits": [], "extra": 1}, "pi", "minimax",
     "edit argument extra has no counterpart on the minimax surface"),
    ("grep", {"pattern": "x"}, "minimax", "pi", "grep has no counterpart on the pi surface"),
]


@pytest.mark.parametrize(("tool", "args", "source", "target", "reason"), UNMAPPABLE)
def test_calls_without_a_counterpart_say_why(tool: str, args: dict[str, Any], source: str, target: str,
                                              reason: str) -> None:
    mapped = map_call(tool, args, source, target)
    assert not mapped.ok and mapped.reason == reason


def test_the_target_surface_is_the_scenario_s_own_when_spoken() -> None:
    assert target_surface("minimax", ("minimax", "pi")) == "minimax"
    assert target_surface("minimax", ("pi",)) == "pi"
    assert target_surface("pi", ("minimax",)) == "minimax"
    assert target_surface("pi", ("other",)) is None
