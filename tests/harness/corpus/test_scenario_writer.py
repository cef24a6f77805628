"""``harness.corpus.scenario_writer``: a ``Scenario`` built by a program, written as YAML and read
back by the loader, is the same scenario."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from harness.corpus.loader import load_corpus
from harness.corpus.scenario_writer import bytes_fields, dump_scenario
from harness.model.scenario import (
    Expectation,
    FileCheck,
    Scenario,
    Step,
    TextMatch,
    Workspace,
    WorkspaceEntry,
)

AWKWARD = [b"plain\n", "名称\r\n\ufeffx".encode(), b"\xff\xfe invalid", b"", b"tab\there\x00nul",
           "\u2028line sep\x85".encode(), b"0123", b"true", b"- a: b\n"]


@pytest.mark.parametrize("data", AWKWARD)
def test_bytes_are_text_only_when_yaml_gives_them_back(data: bytes) -> None:
    fields = bytes_fields(data)
    assert ("text" in fields) != ("base64" in fields)


def test_a_written_scenario_loads_back_the_same(tmp_path: Path) -> None:
    files = tuple(WorkspaceEntry(f"f{i}.bin", "file", data) for i, data in enumerate(AWKWARD))
    steps = (
        Step("call", 1, 0, "read", None, {"path": "${WORKSPACE}/f0.bin", "offset": 2.5},
             expect=Expectation(is_error=False, text=TextMatch(equals="x\r\n\ufeff  "),
                                files=(FileCheck("f1.bin", 0, sha256="ab" * 32, mode=0o644),
                                       FileCheck("gone", 0, absent=True)),
                                details_absent=("truncation",), content_types=("text",))),
        Step("step-2", 2, 0, "write", None, [1, None, "x"],
             expect=Expectation(status="error", error=TextMatch(equals="Validation failed"), error_kind="validation")),
        Step("step-3", 3, 0, "find", None, {"pattern": "*"}, reason="setup"),
    )
    scenario = Scenario("fuzz/written", "", 0, title="a: b # not a comment", tags=("fuzz", "cjk/crlf"), surface="pi",
                        env={"A": "名称", "B": None}, normalize=("workspace", "tmpfiles", "home"),
                        workspace=Workspace((*files, WorkspaceEntry("d", "dir"),
                                             WorkspaceEntry("l", "symlink", target="f0.bin")), git=True),
                        steps=steps, files=(FileCheck("f2.bin", 0, data=b"\xff"),))
    path = tmp_path / "written.yaml"
    path.write_text(dump_scenario(scenario, "found by a test\nsecond line"), encoding="utf-8")
    assert path.read_text(encoding="utf-8").startswith("# found by a test\n# second line\nid: fuzz/written\n")
    (loaded,) = load_corpus([path])

    def plain(s: Scenario) -> Scenario:
        return replace(s, path="", line=0, steps=tuple(replace(st, line=0, raw_expect={}, expect=replace(
            st.expect, files=tuple(replace(f, line=0) for f in st.expect.files))) for st in s.steps),
            files=tuple(replace(f, line=0) for f in s.files))

    assert plain(loaded) == plain(scenario)
