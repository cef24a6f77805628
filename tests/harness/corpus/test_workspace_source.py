"""``workspace.from``: a scenario referencing its starting workspace (a directory, a tar
archive, a git revision) instead of inlining it — the members read, the pinned digest, the
loader's errors, and inline files layered over a reference."""

from __future__ import annotations

import io
import json
import os
import subprocess
import tarfile
from pathlib import Path

import jsonschema
import pytest

from harness.corpus.loader import parse_scenario_text
from harness.corpus.workspace_source import (
    WorkspaceLimits,
    WorkspaceSourceError,
    entries_digest,
    read_archive,
    read_directory,
    read_git,
    read_source,
)
from harness.errors import ScenarioError
from harness.model.scenario import WorkspaceEntry
from tests.support.repo import REPO

STEP = "steps:\n  - {tool: read, args: {path: a.txt}}\n"


def _scenario(tmp_path: Path, workspace: str) -> str:
    return f"id: t/ws\nworkspace:\n{workspace}{STEP}"


def _tree(root: Path) -> None:
    (root / "src").mkdir(parents=True)
    (root / "a.txt").write_text("alpha\n", encoding="utf-8")
    (root / "src" / "run.sh").write_text("#!/bin/sh\n", encoding="utf-8")
    os.chmod(root / "src" / "run.sh", 0o755)
    (root / "empty").mkdir()
    os.symlink("a.txt", root / "link")


def test_a_directory_is_read_with_modes_links_and_empty_dirs(tmp_path: Path) -> None:
    _tree(tmp_path / "ws")
    read = read_directory(str(tmp_path / "ws"))
    assert read.entries == (
        WorkspaceEntry("a.txt", "file", b"alpha\n"),
        WorkspaceEntry("empty", "dir"),
        WorkspaceEntry("link", "symlink", target="a.txt"),
        WorkspaceEntry("src/run.sh", "file", b"#!/bin/sh\n", mode=0o755),
    )


def test_an_archive_reads_to_the_same_members_and_digest_as_its_directory(tmp_path: Path) -> None:
    _tree(tmp_path / "ws")
    archive = tmp_path / "ws.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tmp_path / "ws", arcname=".")
    from_dir, from_tar = read_directory(str(tmp_path / "ws")), read_archive(str(archive))
    assert from_tar.entries == from_dir.entries
    assert entries_digest(from_tar.entries) == entries_digest(from_dir.entries)


def test_an_archive_member_outside_the_workspace_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "evil.tar"
    with tarfile.open(archive, "w") as tar:
        info = tarfile.TarInfo("../escape.txt")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(WorkspaceSourceError, match=r"member '\.\./escape\.txt' would land outside the workspace"):
        read_archive(str(archive))


def test_a_git_revision_is_read_as_committed(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _tree(repo)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "one"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)
    (repo / "a.txt").write_text("changed\n", encoding="utf-8")
    read = read_git(str(repo), "HEAD")
    assert [(e.path, e.data) for e in read.entries if e.kind == "file"] == [("a.txt", b"alpha\n"),
                                                                          ("src/run.sh", b"#!/bin/sh\n")]
    assert read.commit is not None and len(read.commit) == 40
    with pytest.raises(WorkspaceSourceError, match="git rev-parse failed"):
        read_git(str(repo), "no-such-rev")


def test_limits_and_excludes_apply(tmp_path: Path) -> None:
    _tree(tmp_path / "ws")
    kept = read_source("dir", str(tmp_path / "ws"), limits=WorkspaceLimits(excludes=("src",)))
    assert [e.path for e in kept.entries] == ["a.txt", "empty", "link"]
    with pytest.raises(WorkspaceSourceError) as exc:
        read_directory(str(tmp_path / "ws"), WorkspaceLimits(max_file_bytes=5))
    assert (str(exc.value), exc.value.limit) == (f"{tmp_path / 'ws'}: a.txt is 6 bytes, over the per-file limit of "
                                                 "5 bytes", "file")


def test_the_loader_reads_a_referenced_directory_relative_to_the_scenario(tmp_path: Path) -> None:
    _tree(tmp_path / "ws")
    (tmp_path / "scenarios").mkdir()
    digest = entries_digest(read_directory(str(tmp_path / "ws")).entries)
    text = _scenario(tmp_path, f"  from: {{dir: ../ws, sha256: {digest}}}\n  files:\n    - {{path: a.txt, text: over}}\n"
                               "    - {path: new.txt, text: \"n\"}\n")
    scenario = parse_scenario_text(text, str(tmp_path / "scenarios" / "ws.yaml"))
    by_path = {e.path: e for e in scenario.workspace.entries}
    assert by_path["a.txt"].data == b"over"  # an inline file replaces the referenced one
    assert by_path["new.txt"].data == b"n" and by_path["src/run.sh"].mode == 0o755
    assert [e.path for e in scenario.workspace.entries].count("a.txt") == 1


def test_a_changed_reference_fails_its_pinned_digest(tmp_path: Path) -> None:
    _tree(tmp_path / "ws")
    digest = entries_digest(read_directory(str(tmp_path / "ws")).entries)
    (tmp_path / "ws" / "a.txt").write_text("tampered\n", encoding="utf-8")
    now = entries_digest(read_directory(str(tmp_path / "ws")).entries)
    path = str(tmp_path / "s.yaml")
    with pytest.raises(ScenarioError) as exc:
        parse_scenario_text(_scenario(tmp_path, f"  from: {{dir: ws, sha256: {digest}}}\n"), path)
    assert exc.value.problems == [f"{path}:3: workspace.from.sha256: the referenced workspace has changed (its sha256 "
                                  f"is now {now}); restore it, or update sha256 to accept the new content"]


@pytest.mark.parametrize(("workspace", "problem"), [
    ("  from: {dir: nope}\n", "3: workspace.from.dir: {tmp}/nope: not a directory"),
    ("  from: {dir: a, archive: b}\n", "3: workspace.from: expected exactly one of dir, archive, repo"),
    ("  from: {repo: .}\n", "3: workspace.from.rev: required with repo (the commit holding the starting files)"),
    ("  from: {dir: ., rev: HEAD}\n", "3: workspace.from.rev: only allowed together with repo"),
    ("  from: {archive: missing.tar}\n",
     "3: workspace.from.archive: {tmp}/missing.tar: cannot read the archive: No such file or directory"),
    ("  from: {dir: ., colour: red}\n",
     "3: workspace.from.colour: unknown key; expected one of: dir, archive, repo, rev, exclude, sha256"),
])
def test_bad_references_are_reported_with_file_line_and_field(tmp_path: Path, workspace: str, problem: str) -> None:
    path = str(tmp_path / "s.yaml")
    with pytest.raises(ScenarioError) as exc:
        parse_scenario_text(_scenario(tmp_path, workspace), path)
    assert exc.value.problems[0].startswith(f"{path}:" + problem.format(tmp=tmp_path))


def test_the_schema_accepts_each_source_kind_and_refuses_mixtures() -> None:
    schema = json.loads((REPO / "harness/schemas/scenario.schema.json").read_text(encoding="utf-8"))
    doc = {"id": "t/ws", "steps": [{"tool": "read", "args": {"path": "a"}}]}
    for ref in ({"dir": "ws", "exclude": [".git"], "sha256": "0" * 64}, {"archive": "ws.tar.gz"},
                {"repo": "../r", "rev": "4f2a9c1"}):
        jsonschema.validate({**doc, "workspace": {"from": ref, "git": True}}, schema)
    for bad in ({"dir": "a", "archive": "b"}, {"repo": "r"}, {"dir": "a", "rev": "x"}, {"dir": "a", "sha256": "xyz"},
                {}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**doc, "workspace": {"from": bad}}, schema)
