"""The workspace tar builder and the scenario JSON Schema."""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import subprocess
import tarfile
from pathlib import Path

import jsonschema
import pytest
import yaml

from harness.backends.process import extract_on_host
from harness.corpus.loader import find_scenario_files, load_scenario
from harness.model.scenario import Workspace, WorkspaceEntry
from harness.run.workspace_archive import GIT_DATE, build_archive
from tests.support.repo import REPO

BASE = 1_700_000_000.0


def members(archive: bytes) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        return {m.name: m for m in tar.getmembers()}


def test_archive_holds_files_dirs_links_fifos_with_modes_and_relative_mtimes(tmp_path: Path) -> None:
    ws = Workspace((
        WorkspaceEntry("a/b/c.txt", "file", b"x\r\n", mode=0o600, mtime=-3600),
        WorkspaceEntry("link", "symlink", target="/outside/target"),
        WorkspaceEntry("pipe", "fifo"),
        WorkspaceEntry("empty", "dir"),
    ))
    m = members(build_archive(ws, BASE))
    assert list(m) == ["a", "a/b", "a/b/c.txt", "link", "pipe", "empty"]
    assert (m["a/b/c.txt"].mode, m["a/b/c.txt"].mtime) == (0o600, BASE - 3600)
    assert m["link"].issym() and m["link"].linkname == "/outside/target"
    assert m["pipe"].isfifo()
    assert m["empty"].isdir() and m["a"].isdir()
    extract_on_host(str(tmp_path), build_archive(ws, BASE))
    assert (tmp_path / "a/b/c.txt").read_bytes() == b"x\r\n"
    assert stat.S_IMODE(os.lstat(tmp_path / "a/b/c.txt").st_mode) == 0o600
    assert os.lstat(tmp_path / "a/b/c.txt").st_mtime == BASE - 3600
    assert stat.S_ISFIFO(os.lstat(tmp_path / "pipe").st_mode)
    assert os.readlink(tmp_path / "link") == "/outside/target"


def test_archive_of_same_workspace_and_base_time_is_byte_identical() -> None:
    ws = Workspace((WorkspaceEntry("a.txt", "file", b"a"), WorkspaceEntry("p", "fifo")))
    assert build_archive(ws, BASE) == build_archive(ws, BASE)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed on this host")
def test_git_workspace_has_reproducible_initial_commit(tmp_path: Path) -> None:
    ws = Workspace((WorkspaceEntry("src/a.txt", "file", b"hello\n"), WorkspaceEntry("x", "symlink", target="src/a.txt")),
                   git=True)
    heads = []
    for name in ("one", "two"):
        root = tmp_path / name
        root.mkdir()
        extract_on_host(str(root), build_archive(ws, BASE))
        out = subprocess.run(["git", "log", "--format=%H %an %aI %s", "--name-only"], cwd=root,
                             capture_output=True, text=True, check=True).stdout
        status = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True,
                                check=True).stdout
        heads.append(out)
        assert status == ""
    assert heads[0] == heads[1]
    first = heads[0].splitlines()
    assert first[0].split(" ", 1)[1] == f"toolproof {GIT_DATE} initial"
    assert sorted(first[2:]) == ["src/a.txt", "x"]


def test_scenario_schema_is_valid_and_accepts_every_example() -> None:
    schema = json.loads((REPO / "harness/schemas/scenario.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    files = find_scenario_files([REPO / "docs/examples/scenarios"])
    assert files
    for f in files:
        load_scenario(f)
        jsonschema.validate(yaml.safe_load(Path(f).read_text(encoding="utf-8")), schema)


def test_scenario_schema_rejects_unknown_keys_like_the_loader() -> None:
    schema = json.loads((REPO / "harness/schemas/scenario.schema.json").read_text())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"id": "a", "steps": [{"tool": "read"}], "tagz": []}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"id": "a", "steps": [{"tool": "read", "expect": {"txt": "x"}}]}, schema)
