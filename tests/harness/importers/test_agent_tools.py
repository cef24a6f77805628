"""Other agents' tool names and edit formats: the built-in adapters (OpenHands, Anthropic's text
editor, Cline/Roo, Cursor, Gemini CLI, Copilot, Codex CLI), the apply_patch and SEARCH/REPLACE
parsers, and ``--tool-map``."""

from __future__ import annotations

from typing import Any

import pytest

from harness.importers.agent_tools import AGENT_TOOLS, AGENT_UNMAPPABLE
from harness.importers.mapping import Mapped, Skip, known_tool_names, map_call
from harness.importers.patches import FileEdit, FileWrite, PatchError, parse_apply_patch, parse_search_replace
from harness.importers.trace import RecordedResult, ToolCall
from tests.support.repo import REPO

OK = RecordedResult("ok", False, 2)


def _map(name: str, args: dict[str, Any], surface: str = "minimax", result: RecordedResult = OK,
         tool_map: dict[str, str] | None = None) -> Mapped | Skip:
    return map_call(ToolCall("c1", name, args, 1, result), surface, "/w", "openai", tool_map=tool_map)


def _steps(mapped: Mapped | Skip) -> list[tuple[str, dict[str, Any]]]:
    assert isinstance(mapped, Mapped), mapped
    return [(s.tool, s.args) for s in mapped.steps]


# -- str_replace_editor (OpenHands, Anthropic's text editor) -------------------------------------------

@pytest.mark.parametrize("name", ["str_replace_editor", "str_replace_based_edit_tool"])
def test_editor_sub_commands_map_to_different_tools(name: str) -> None:
    assert _steps(_map(name, {"command": "view", "path": "/w/a.py", "view_range": [3, 7]})) == [
        ("read", {"path": "a.py", "offset": 3, "limit": 5})]
    assert _steps(_map(name, {"command": "view", "path": "/w/a.py", "view_range": [3, -1]})) == [
        ("read", {"path": "a.py", "offset": 3})]
    assert _steps(_map(name, {"command": "create", "path": "/w/n.py", "file_text": "x\n"})) == [
        ("write", {"path": "n.py", "content": "x\n"})]
    assert _steps(_map(name, {"command": "str_replace", "path": "/w/a.py", "old_str": "a", "new_str": "b"})) == [
        ("edit", {"file_path": "a.py", "old_string": "a", "new_string": "b"})]
    assert _steps(_map(name, {"command": "str_replace", "path": "/w/a.py", "old_str": "a"}, "pi")) == [
        ("edit", {"path": "a.py", "edits": [{"oldText": "a", "newText": ""}]})]
    assert _map(name, {"command": "insert", "path": "/w/a.py", "insert_line": 2, "new_str": "x"}) == Skip(
        f"{name}: insert at a line number has no toolproof equivalent (edit replaces text it finds)")
    assert _map(name, {"command": "undo_edit", "path": "/w/a.py"}) == Skip(
        f"{name}: undo_edit restores the editor's own history; toolproof has no equivalent")


def test_viewing_a_directory_is_recognised_from_the_recorded_listing() -> None:
    listing = RecordedResult("Here's the files and directories up to 2 levels deep in /w, excluding hidden items:\n/w/",
                             False, 2)
    assert _map("str_replace_editor", {"command": "view", "path": "/w"}, result=listing) == Skip(
        "str_replace_editor: view of a directory (a two-level listing) has no toolproof equivalent")


# -- shells ------------------------------------------------------------------------------------------------

def test_codex_shell_argv_workdir_and_timeout_ms() -> None:
    assert _steps(_map("shell", {"command": ["bash", "-lc", "ls -la"], "workdir": "/w/src", "timeout_ms": 120000})) == [
        ("bash", {"command": "cd src && ls -la", "timeout": 120})]
    assert _steps(_map("shell", {"command": ["git", "log", "--format=%s"]})) == [
        ("bash", {"command": "git log --format=%s"})]
    assert _steps(_map("exec_command", {"cmd": "make", "yield_time_ms": 1000})) == [("bash", {"command": "make"})]


def test_terminal_tools_of_cursor_copilot_cline_and_gemini() -> None:
    assert _steps(_map("run_terminal_cmd", {"command": "npm run build", "is_background": True,
                                            "explanation": "build"})) == [
        ("bash", {"command": "npm run build", "run_in_background": True})]
    assert _steps(_map("run_in_terminal", {"command": "ls", "explanation": "x", "isBackground": False})) == [
        ("bash", {"command": "ls"})]
    assert _steps(_map("execute_command", {"command": "make", "requires_approval": False})) == [
        ("bash", {"command": "make"})]
    assert _steps(_map("run_shell_command", {"command": "ls", "directory": "src", "description": "list"})) == [
        ("bash", {"command": "cd src && ls"})]
    assert _map("execute_bash", {"command": "y", "is_input": "true"}) == Skip(
        "execute_bash: is_input sends keys to a running command; toolproof has no equivalent")


# -- reading, searching, listing ----------------------------------------------------------------------------

def test_read_file_dialects_convert_line_numbering() -> None:
    assert _steps(_map("read_file", {"target_file": "a.py", "start_line_one_indexed": 10,
                                     "end_line_one_indexed_inclusive": 19, "should_read_entire_file": False,
                                     "explanation": "look"})) == [("read", {"path": "a.py", "offset": 10, "limit": 10})]
    assert _steps(_map("read_file", {"absolute_path": "/w/a.py", "offset": 0, "limit": 5})) == [
        ("read", {"path": "a.py", "offset": 1, "limit": 5})]  # Gemini CLI counts from 0
    assert _steps(_map("read_file", {"filePath": "/w/a.py", "startLine": 2, "endLine": 3})) == [
        ("read", {"path": "a.py", "offset": 2, "limit": 2})]
    assert _steps(_map("read_file", {"path": "a.py"})) == [("read", {"path": "a.py"})]


def test_search_and_listing_tools() -> None:
    assert _steps(_map("grep_search", {"query": "TODO", "include_pattern": "*.py", "case_sensitive": False})) == [
        ("grep", {"pattern": "TODO", "glob": "*.py", "ignoreCase": True, "output_mode": "content"})]
    assert _steps(_map("grep_search", {"query": "a.b", "isRegexp": False})) == [
        ("grep", {"pattern": "a.b", "literal": True, "output_mode": "content"})]
    assert _steps(_map("search_files", {"path": "src", "regex": "def ", "file_pattern": "*.py"})) == [
        ("grep", {"pattern": "def ", "path": "src", "glob": "*.py", "output_mode": "content"})]
    assert _steps(_map("list_files", {"path": "src", "recursive": True})) == [
        ("glob", {"pattern": "**/*", "path": "src"})]
    assert _steps(_map("list_dir", {"relative_workspace_path": "src"})) == [("glob", {"pattern": "*", "path": "src"})]
    assert _map("grep_search", {"query": "x", "exclude_pattern": "*.md"}) == Skip(
        "grep_search: exclude_pattern has no toolproof equivalent")


def test_unreplayable_tools_of_other_agents_say_why() -> None:
    assert _map("edit_file", {"target_file": "a", "code_edit": "..."}) == Skip(
        "unmappable tool edit_file: the edit is a sketch another model applies; toolproof has no equivalent")
    assert _map("codebase_search", {"query": "x"}) == Skip(
        "unmappable tool codebase_search: semantic search has no toolproof equivalent")
    assert _map("frobnicate", {}) == Skip(
        "unmappable tool frobnicate: no toolproof equivalent (name it with --tool-map NAME=TOOL)")


# -- edit formats ----------------------------------------------------------------------------------------------

PATCH = """*** Begin Patch
*** Add File: docs/new.md
+# New
+
*** Update File: app.py
@@ def greet(name):
-    return "hello"
+    return "hi"
@@
 def main():
-    greet()
+    print(greet())
*** End of File
*** End Patch
"""


def test_apply_patch_becomes_writes_and_edits() -> None:
    assert parse_apply_patch(PATCH) == (
        FileWrite("docs/new.md", "# New\n\n"),
        FileEdit("app.py", (('    return "hello"', '    return "hi"'),
                            ("def main():\n    greet()", "def main():\n    print(greet())"))),
    )
    assert _steps(_map("apply_patch", {"input": PATCH})) == [
        ("write", {"path": "docs/new.md", "content": "# New\n\n"}),
        ("edit", {"file_path": "app.py", "old_string": '    return "hello"', "new_string": '    return "hi"'}),
        ("edit", {"file_path": "app.py", "old_string": "def main():\n    greet()",
                  "new_string": "def main():\n    print(greet())"}),
    ]
    assert _steps(_map("apply_patch", {"input": PATCH}, "pi"))[1] == ("edit", {"path": "app.py", "edits": [
        {"oldText": '    return "hello"', "newText": '    return "hi"'},
        {"oldText": "def main():\n    greet()", "newText": "def main():\n    print(greet())"}]})
    assert _steps(_map("shell", {"command": ["apply_patch", PATCH]}))[0][0] == "write"


@pytest.mark.parametrize(("patch", "why"), [
    ("*** Begin Patch\n*** Delete File: a\n*** End Patch", "it deletes a and toolproof has no delete tool"),
    ("*** Begin Patch\n*** Update File: a\n*** Move to: b\n@@\n-x\n+y\n*** End Patch",
     "it renames a to b and toolproof has no rename tool"),
    ("*** Begin Patch\n*** Update File: a\n@@ def f():\n+new line\n*** End Patch",
     "hunk 1 of a only adds lines at the place its @@ header names; an edit needs text to replace"),
    ("*** Begin Patch\n*** Update File: a\n@@\n?x\n*** End Patch",
     "hunk 1 of a: line '?x' starts with neither ' ', '-' nor '+'"),
    ("--- a\n+++ b\n", "the patch does not start with '*** Begin Patch'"),
    ("*** Begin Patch\n*** Add File: a\n+x\n", "the patch does not end with '*** End Patch'"),
])
def test_patches_toolproof_cannot_replay_are_refused_with_the_reason(patch: str, why: str) -> None:
    with pytest.raises(PatchError) as exc:
        parse_apply_patch(patch)
    assert str(exc.value) == why
    assert _map("apply_patch", {"input": patch}) == Skip(f"apply_patch: patch not replayable: {why}")


def test_a_failed_patch_over_several_files_is_not_split() -> None:
    failed = RecordedResult("error: hunk failed", True, 2)
    assert _map("apply_patch", {"input": PATCH}, result=failed) == Skip(
        "apply_patch: a failed call that changes several files cannot be split into steps (it applied nothing)")


def test_search_replace_blocks_of_cline_and_roo() -> None:
    cline = "------- SEARCH\nold one\n=======\nnew one\n+++++++ REPLACE\n\n------- SEARCH\nb\n=======\nc\n+++++++ REPLACE\n"
    assert parse_search_replace(cline) == (("old one", "new one"), ("b", "c"))
    roo = "<<<<<<< SEARCH\n:start_line:3\n-------\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE"
    assert parse_search_replace(roo) == (("x = 1", "x = 2"),)
    assert _steps(_map("replace_in_file", {"path": "a.py", "diff": cline})) == [
        ("edit", {"file_path": "a.py", "old_string": "old one", "new_string": "new one"}),
        ("edit", {"file_path": "a.py", "old_string": "b", "new_string": "c"})]
    assert _map("apply_diff", {"path": "a.py", "diff": "<<<<<<< SEARCH\nx\n"}) == Skip(
        "apply_diff: malformed SEARCH/REPLACE diff: a SEARCH block has no ======= divider")


def test_roo_search_and_replace_and_gemini_replace() -> None:
    assert _steps(_map("search_and_replace", {"path": "a", "search": "x", "replace": "y"})) == [
        ("edit", {"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": True})]
    assert _map("search_and_replace", {"path": "a", "search": "x", "replace": "y", "use_regex": True}) == Skip(
        "search_and_replace: use_regex has no toolproof equivalent (edit replaces literal text)")
    assert _steps(_map("replace", {"file_path": "/w/a", "old_string": "x", "new_string": "y",
                                   "expected_replacements": 3})) == [
        ("edit", {"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": True})]


# -- --tool-map ------------------------------------------------------------------------------------------------

def test_tool_map_names_a_tool_the_trace_calls_otherwise() -> None:
    assert isinstance(_map("run", {"command": "ls"}), Skip)
    assert _steps(_map("run", {"command": "ls"}, tool_map={"run": "bash"})) == [("bash", {"command": "ls"})]
    assert _steps(_map("Cat", {"target_file": "a"}, tool_map={"cat": "read_file"})) == [("read", {"path": "a"})]
    # a mapping overrides a built-in name too
    assert _steps(_map("ls", {"pattern": "*"}, tool_map={"ls": "glob"})) == [("glob", {"pattern": "*"})]
    assert {"read", "bash", "str_replace_editor", "apply_patch", "list_files"} <= set(known_tool_names())


def test_every_built_in_agent_tool_name_is_documented() -> None:
    doc = (REPO / "docs" / "importers.md").read_text(encoding="utf-8")
    missing = [n for n in (*AGENT_TOOLS, *AGENT_UNMAPPABLE) if f"`{n}`" not in doc]
    assert missing == []
