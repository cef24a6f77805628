"""The scenario loader reports every problem of a file as ``file:line: field: what was expected``."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from harness.corpus.loader import load_corpus, load_scenario, parse_scenario_text
from harness.errors import ScenarioError
from harness.model.scenario import encode_text
from tools_impl.core.profile import profile_from_json

VALID = """\
id: demo/ok
steps:
  - tool: read
    args: {path: a.txt}
"""


def problems_of(text: str, name: str = "s.yaml") -> list[str]:
    with pytest.raises(ScenarioError) as info:
        parse_scenario_text(textwrap.dedent(text), name)
    return info.value.problems


def test_valid_minimal_scenario_loads_with_defaults() -> None:
    s = parse_scenario_text(VALID, "s.yaml")
    assert s.id == "demo/ok"
    assert s.surface == "minimax"
    assert s.normalize == ("workspace",)
    assert [(st.id, st.tool, st.args, st.timeout) for st in s.steps] == [("step-1", "read", {"path": "a.txt"}, None)]  # None: the deadline follows the call


# One case per field: the YAML with a deliberate mistake and the exact message it must produce.
FIELD_CASES = {
    "id-missing": ("steps: [{tool: read}]\n", "s.yaml:1: id: required field is missing"),
    "id-pattern": ("id: Bad Id\nsteps: [{tool: read}]\n",
                   "s.yaml:1: id: expected an id matching [a-z0-9][a-z0-9._/-]*, got 'Bad Id'"),
    "title": ("id: a\ntitle: [x]\nsteps: [{tool: read}]\n", "s.yaml:2: title: expected a string, got a list"),
    "tags": ("id: a\ntags: edit\nsteps: [{tool: read}]\n", "s.yaml:2: tags: expected a list, got a string ('edit')"),
    "tags-item": ("id: a\ntags: [1]\nsteps: [{tool: read}]\n", "s.yaml:2: tags[1]: expected a string, got an integer (1)"),
    "requires-os": ("id: a\nrequires: {os: linx}\nsteps: [{tool: read}]\n",
                    "s.yaml:2: requires.os: expected one of linux, windows, macos; got 'linx' (did you mean 'linux'?)"),
    "requires-symlinks": ("id: a\nrequires: {symlinks: yes please}\nsteps: [{tool: read}]\n",
                          "s.yaml:2: requires.symlinks: expected a boolean (true or false), got a string ('yes please')"),
    "requires-tools": ("id: a\nrequires: {tools: [grpe]}\nsteps: [{tool: read}]\n",
                       "s.yaml:2: requires.tools[1]: expected one of read, write, edit, grep, glob, bash; got 'grpe' (did you mean 'grep'?)"),
    "requires-isolation": ("id: a\nrequires: {isolation: containers}\nsteps: [{tool: read}]\n",
                           "s.yaml:2: requires.isolation: expected one of container; got 'containers' (did you mean 'container'?)"),
    "surface": ("id: a\nsurface: pii\nsteps: [{tool: read}]\n",
                "s.yaml:2: surface: expected one of minimax, pi; got 'pii' (did you mean 'pi'?)"),
    "profile-base": ("id: a\nprofile: {base: upstreem}\nsteps: [{tool: read}]\n",
                     "s.yaml:2: profile.base: expected one of reference, upstream; got 'upstreem' (did you mean 'upstream'?)"),
    "profile-patch": ("id: a\nprofile:\n  patches: {edit.fuzzy-spam: true}\nsteps: [{tool: read}]\n",
                      "s.yaml:3: profile.patches: unknown patch toggle 'edit.fuzzy-spam' (did you mean 'edit.fuzzy-span'?)"),
    "profile-patch-value": ("id: a\nprofile:\n  patches:\n    edit.fuzzy-span: yes please\nsteps: [{tool: read}]\n",
                            "s.yaml:4: profile.patches.edit.fuzzy-span: expected a boolean, got 'yes please'"),
    "profile-field": ("id: a\nprofile:\n  engine_max_line: 5\nsteps: [{tool: read}]\n",
                      "s.yaml:3: profile.engine_max_line: unknown profile field (did you mean 'engine_max_lines'?)"),
    "profile-field-type": ("id: a\nprofile:\n  engine_max_lines:\n    - 5\nsteps: [{tool: read}]\n",
                           "s.yaml:4: profile.engine_max_lines: expected an integer, got [5]"),
    "profile-base-alias": ("id: a\nprofile: {base: pi-upstream}\nsteps: [{tool: read}]\n",
                           "s.yaml:2: profile.base: expected one of reference, upstream; got 'pi-upstream' (did you mean 'upstream'?)"),
    "env": ("id: a\nenv: {CI: true}\nsteps: [{tool: read}]\n",
            "s.yaml:2: env.CI: expected a string or null (quote numbers and booleans), got a boolean (true)"),
    "normalize": ("id: a\nnormalize: [workspaces]\nsteps: [{tool: read}]\n",
                  "s.yaml:2: normalize[1]: expected one of workspace, tmpfiles, task_ids, durations, home; got 'workspaces' (did you mean 'workspace'?)"),
    "workspace-path": ("id: a\nworkspace:\n  files:\n    - {path: ../x, text: a}\nsteps: [{tool: read}]\n",
                       "s.yaml:4: workspace.files[1].path: expected a relative path inside the workspace, got '../x'"),
    "workspace-path-missing": ("id: a\nworkspace:\n  files:\n    - {text: a}\nsteps: [{tool: read}]\n",
                               "s.yaml:4: workspace.files[1].path: required field is missing"),
    "workspace-encoding": ("id: a\nworkspace:\n  files:\n    - {path: a, text: a, encoding: utf-16}\nsteps: [{tool: read}]\n",
                           "s.yaml:4: workspace.files[1].encoding: expected one of utf-8, utf-16le; got 'utf-16' (did you mean 'utf-16le'?)"),
    "workspace-eol": ("id: a\nworkspace:\n  files:\n    - {path: a, text: a, eol: crlff}\nsteps: [{tool: read}]\n",
                      "s.yaml:4: workspace.files[1].eol: expected one of lf, crlf, cr; got 'crlff' (did you mean 'crlf'?)"),
    "workspace-bom": ("id: a\nworkspace:\n  files:\n    - {path: a, base64: AA==, bom: true}\nsteps: [{tool: read}]\n",
                      "s.yaml:4: workspace.files[1].bom: only allowed together with text"),
    "workspace-base64": ("id: a\nworkspace:\n  files:\n    - {path: a, base64: '!!'}\nsteps: [{tool: read}]\n",
                         "s.yaml:4: workspace.files[1].base64: expected base64 data"),
    "workspace-mode": ("id: a\nworkspace:\n  files:\n    - {path: a, text: a, mode: rwx}\nsteps: [{tool: read}]\n",
                       "s.yaml:4: workspace.files[1].mode: expected a permission mode (an integer such as 0o644 or a string such as \"0644\"), got a string ('rwx')"),
    "workspace-mtime": ("id: a\nworkspace:\n  files:\n    - {path: a, text: a, mtime: yesterday}\nsteps: [{tool: read}]\n",
                        "s.yaml:4: workspace.files[1].mtime: expected a number, got a string ('yesterday')"),
    "workspace-two-kinds": ("id: a\nworkspace:\n  files:\n    - {path: a, text: a, symlink: b}\nsteps: [{tool: read}]\n",
                            "s.yaml:4: workspace.files[1].symlink: expected only one of text, base64, symlink, fifo, dir"),
    "workspace-fifo": ("id: a\nworkspace:\n  files:\n    - {path: p, fifo: false}\nsteps: [{tool: read}]\n",
                       "s.yaml:4: workspace.files[1].fifo: expected true (omit the key for a regular file)"),
    "workspace-git": ("id: a\nworkspace: {git: 1}\nsteps: [{tool: read}]\n",
                      "s.yaml:2: workspace.git: expected a boolean (true or false), got an integer (1)"),
    "steps-missing": ("id: a\n", "s.yaml:1: steps: required field is missing"),
    "steps-empty": ("id: a\nsteps: []\n", "s.yaml:2: steps: expected at least one step"),
    "step-tool": ("id: a\nsteps:\n  - tool: reed\n",
                  "s.yaml:3: steps[1].tool: expected one of read, write, edit, grep, glob, bash; got 'reed' (did you mean 'read'?)"),
    "step-op": ("id: a\nsteps:\n  - op: task_stp\n",
                "s.yaml:3: steps[1].op: expected one of cancel, task_output, task_stop, task_query, classify, fs_read; got 'task_stp' (did you mean 'task_stop'?)"),
    "step-no-tool": ("id: a\nsteps:\n  - args: {}\n",
                     "s.yaml:3: steps[1].tool: required field is missing (a step needs tool or op)"),
    "step-id": ("id: a\nsteps:\n  - {id: Fix It, tool: read}\n",
                "s.yaml:3: steps[1].id: expected an id matching [a-z0-9][a-z0-9._/-]*, got 'Fix It'"),
    "step-id-duplicate": ("id: a\nsteps:\n  - {id: x, tool: read}\n  - {id: x, tool: read}\n",
                          "s.yaml:4: steps[2].id: duplicate step id 'x' (also steps[1])"),
    "step-args": ("id: a\nsteps:\n  - {tool: read, args: [a]}\n", "s.yaml:3: steps[1].args: expected a mapping, got a list"),
    "step-timeout": ("id: a\nsteps:\n  - {tool: read, timeout: -1}\n", "s.yaml:3: steps[1].timeout: expected a number >= 0, got -1"),
    "step-when": ("id: a\nsteps:\n  - {tool: read, when: {oss: linux}}\n",
                  "s.yaml:3: steps[1].when.oss: unknown key (did you mean 'os'?)"),
    "step-save": ("id: a\nsteps:\n  - {tool: read, save: {x: detail.task_id}}\n",
                  "s.yaml:3: steps[1].save.x: expected a path starting with one of details, text, result, error; got 'detail.task_id'"),
    "step-platform": ("id: a\nsteps:\n  - tool: read\n    platform: {win: {}}\n",
                      "s.yaml:4: steps[1].platform.win: unknown key (did you mean 'windows'?)"),
    "expect-unknown": ("id: a\nsteps:\n  - tool: read\n    expect: {txt: a}\n",
                       "s.yaml:4: steps[1].expect.txt: unknown key (did you mean 'text'?)"),
    "expect-status": ("id: a\nsteps:\n  - tool: read\n    expect: {status: raised}\n",
                      "s.yaml:4: steps[1].expect.status: expected one of result, error; got 'raised'"),
    "expect-is_error": ("id: a\nsteps:\n  - tool: read\n    expect: {is_error: 'no'}\n",
                        "s.yaml:4: steps[1].expect.is_error: expected a boolean (true or false), got a string ('no')"),
    "expect-text-matcher": ("id: a\nsteps:\n  - tool: read\n    expect:\n      text: {equal: x}\n",
                            "s.yaml:5: steps[1].expect.text.equal: unknown key (did you mean 'equals'?)"),
    "expect-text-regex": ("id: a\nsteps:\n  - tool: read\n    expect:\n      text: {regex: '(unclosed'}\n",
                          "s.yaml:5: steps[1].expect.text.regex: expected a valid regular expression (missing ), unterminated subpattern at position 0)"),
    "expect-text-lines": ("id: a\nsteps:\n  - tool: read\n    expect:\n      text: {lines: many}\n",
                          "s.yaml:5: steps[1].expect.text.lines: expected an integer, got a string ('many')"),
    "expect-error-with-result": ("id: a\nsteps:\n  - tool: read\n    expect: {error: x}\n",
                                 "s.yaml:4: steps[1].expect.error: only allowed with status: error"),
    "expect-error_kind": ("id: a\nsteps:\n  - tool: read\n    expect: {status: error, error_kind: tools}\n",
                          "s.yaml:4: steps[1].expect.error_kind: expected one of tool, aborted, validation, protocol, internal; got 'tools' (did you mean 'tool'?)"),
    "expect-details": ("id: a\nsteps:\n  - tool: read\n    expect: {details: [1]}\n",
                       "s.yaml:4: steps[1].expect.details: expected a mapping, got a list"),
    "expect-content_types": ("id: a\nsteps:\n  - tool: read\n    expect: {content_types: [txt]}\n",
                             "s.yaml:4: steps[1].expect.content_types[1]: expected one of text, image; got 'txt' (did you mean 'text'?)"),
    "expect-duration": ("id: a\nsteps:\n  - tool: read\n    expect: {duration: {max: soon}}\n",
                        "s.yaml:4: steps[1].expect.duration.max: expected a number, got a string ('soon')"),
    "expect-files-check": ("id: a\nsteps:\n  - tool: read\n    expect:\n      files: {a.txt: {txet: x}}\n",
                           "s.yaml:5: steps[1].expect.files.a.txt.txet: unknown key (did you mean 'text'?)"),
    "files-path": ("id: a\nsteps: [{tool: read}]\nfiles:\n  /etc/passwd: {absent: true}\n",
                   "s.yaml:4: files./etc/passwd: expected a relative path inside the workspace, got '/etc/passwd'"),
    "files-kind": ("id: a\nsteps: [{tool: read}]\nfiles:\n  a: {kind: link}\n",
                   "s.yaml:4: files.a.kind: expected one of file, dir, symlink, fifo, other; got 'link' (did you mean 'symlink'?)"),
    "files-absent-plus": ("id: a\nsteps: [{tool: read}]\nfiles:\n  a: {absent: true, text: x}\n",
                          "s.yaml:4: files.a: expected no other checks together with absent: true"),
    "processes": ("id: a\nsteps: [{tool: read}]\nprocesses: {left_behind: -1}\n",
                  "s.yaml:3: processes.left_behind: expected an integer >= 0, got -1"),
    "top-unknown": ("id: a\ntagz: [x]\nsteps: [{tool: read}]\n", "s.yaml:2: tagz: unknown key (did you mean 'tags'?)"),
    "duplicate-key": ("id: a\nid: b\nsteps: [{tool: read}]\n", "s.yaml:2: id: duplicate key (first at line 1)"),
}


@pytest.mark.parametrize("text,message", list(FIELD_CASES.values()), ids=list(FIELD_CASES))
def test_mistake_in_field_is_reported_with_file_line_and_field(text: str, message: str) -> None:
    assert problems_of(text) == [message]


def test_all_problems_of_a_file_are_reported_in_one_pass_sorted_by_line() -> None:
    text = "id: Bad\ntitle: [x]\nsteps:\n  - tool: reed\n    expect: {txt: a}\n"
    assert problems_of(text) == [
        "s.yaml:1: id: expected an id matching [a-z0-9][a-z0-9._/-]*, got 'Bad'",
        "s.yaml:2: title: expected a string, got a list",
        "s.yaml:4: steps[1].tool: expected one of read, write, edit, grep, glob, bash; got 'reed' (did you mean 'read'?)",
        "s.yaml:5: steps[1].expect.txt: unknown key (did you mean 'text'?)",
    ]


def test_unknown_key_without_close_match_lists_the_allowed_keys() -> None:
    assert problems_of("id: a\nsteps:\n  - tool: read\n    zzz: 1\n") == [
        "s.yaml:4: steps[1].zzz: unknown key; expected one of: id, tool, op, args, timeout, when, expect, reason, platform, save"
    ]


def test_yaml_syntax_error_is_a_located_problem_not_a_traceback() -> None:
    assert problems_of("id: a\nsteps: [\n") == ["s.yaml:3: (yaml): expected the node content, but found '<stream end>'"]


def test_empty_file_is_a_problem() -> None:
    assert problems_of("") == ["s.yaml:1: (document): expected a mapping, got an empty file"]


def test_unreadable_file_is_a_problem(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario(tmp_path / "nope.yaml")
    assert info.value.problems[0].startswith(f"{tmp_path / 'nope.yaml'}:1: (file): cannot read:")


def test_duplicate_scenario_ids_across_files_are_reported(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(VALID)
    (tmp_path / "b.yaml").write_text("# comment\n" + VALID)
    with pytest.raises(ScenarioError) as info:
        load_corpus([tmp_path])
    assert info.value.problems == [
        f"{tmp_path / 'b.yaml'}:2: id: duplicate scenario id 'demo/ok' (also {tmp_path / 'a.yaml'}:1)"
    ]


def test_platform_override_is_merged_over_expect() -> None:
    s = parse_scenario_text(textwrap.dedent("""\
        id: a
        steps:
          - tool: bash
            expect: {is_error: false, text: "unix\\n"}
            platform:
              windows: {text: "win\\r\\n"}
    """), "s.yaml")
    step = s.steps[0]
    assert step.expectation_for("linux").text.equals == "unix\n"  # type: ignore[union-attr]
    win = step.expectation_for("windows")
    assert (win.is_error, win.text.equals) == (False, "win\r\n")  # type: ignore[union-attr]


def test_file_checks_and_workspace_text_are_encoded_as_declared() -> None:
    s = parse_scenario_text(textwrap.dedent("""\
        id: a
        workspace:
          files:
            - {path: u.txt, text: "a\\nb\\n", encoding: utf-16le, bom: true, eol: crlf, mode: "0600", mtime: -60}
            - {path: d/, dir: true}
        steps: [{tool: read}]
        files:
          u.txt: {text: "a\\nb\\n", encoding: utf-16le, bom: true, eol: crlf}
          d/: {}
    """), "s.yaml")
    entry = s.workspace.entries[0]
    assert entry.data == b"\xff\xfea\x00\r\x00\n\x00b\x00\r\x00\n\x00"
    assert (entry.mode, entry.mtime) == (0o600, -60.0)
    assert s.workspace.entries[1].path == "d"
    assert s.files[0].expected_bytes() == entry.data
    assert (s.files[1].path, s.files[1].kind) == ("d", "dir")


def test_encode_text_cr_eol_and_utf8_bom() -> None:
    assert encode_text("a\nb", "utf-8", True, "cr") == b"\xef\xbb\xbfa\rb"


@pytest.mark.parametrize("overlay", [
    {"base": "reference"}, {"base": "minimax"}, {"base": "pi"}, {"patches": {"edit.diff-bounds": True}},
    {"patches": {"nope": True}}, {"bash_soft_yield_ms": 10}, {"bash_soft_yield_ms": "10"}, {"extra": {}},
])
def test_loader_and_server_accept_the_same_profiles(overlay: dict[str, object]) -> None:
    text = "id: a\nprofile: " + json.dumps(overlay) + "\nsteps: [{tool: read}]\n"
    try:
        parse_scenario_text(text, "s.yaml")
        loader_problems: list[str] = []
    except ScenarioError as exc:
        loader_problems = [p.split(": ", 1)[1] for p in exc.problems]
    try:
        profile_from_json(overlay)
        server_problems: list[str] = []
    except ValueError as exc:
        server_problems = [str(exc)]
    assert loader_problems == server_problems
