"""``toolproof images adapter``: a user's adapter in an image, without a Dockerfile or a registry.

Without an engine: which files land where, the build context (root-owned, read-only modes, the
Node runtime's place), the user mistakes. With one (skipped without, required under
TOOLPROOF_REQUIRE_DOCKER=1): both example adapters are built into images offline and a few
scenarios give the same verdicts on local and on ``docker:IMAGE``, the adapter resolved inside the
container, root-owned and unchangeable by the commands it runs."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import UsageError
from harness.images.adapter import (
    NODE_IN_IMAGE,
    AdapterImage,
    adapter_files,
    build_adapter_image,
    project_files,
    write_context,
)
from tests.support.docker import docker_engine, docker_image  # noqa: F401  (fixtures)
from tests.support.repo import REPO

EXAMPLES = REPO / "examples"
# a few scenarios of the shipped corpus: passes of every tool the examples offer, and one failure
SCENARIOS = ["read/missing-file.yaml", "read/content/crlf.yaml", "bash/cases/stderr-merged.yaml",
             "bash/cases/exit-bare.yaml", "write/new-file.yaml", "read/devices/dev-null.yaml"]
EXPECTED = {"read/missing-file": "pass", "read/content/crlf": "pass", "bash/cases/stderr-merged": "pass",
            "bash/cases/exit-bare": "pass", "write/new-file": "pass", "read/devices/dev-null": "fail"}
CONTAINED = """\
id: adapter-image/contained
title: In its image the adapter is root-owned and read-only, its commands run as uid 1000
steps:
  - tool: bash
    args: {command: "stat -c '%U %a' /opt/adapter/ADAPTER; (echo x >> /opt/adapter/ADAPTER) 2>/dev/null || echo refused; id -u; pwd"}
    expect:
      text: "root 644\\nrefused\\n1000\\n$WORKSPACE\\n"
"""


def test_files_and_directories_land_under_opt_adapter(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "lib").mkdir(parents=True)
    (tmp_path / "pkg" / "main.py").write_text("x\n")
    (tmp_path / "pkg" / "lib" / "util.py").write_text("y\n")
    (tmp_path / "pkg" / "__pycache__").mkdir()
    (tmp_path / "pkg" / "__pycache__" / "main.cpython-311.pyc").write_bytes(b"\0")
    (tmp_path / "run.sh").write_text("#!/bin/sh\n")
    files = adapter_files([tmp_path / "pkg", tmp_path / "run.sh"])
    assert files == {"/opt/adapter/pkg/lib/util.py": tmp_path / "pkg" / "lib" / "util.py",
                     "/opt/adapter/pkg/main.py": tmp_path / "pkg" / "main.py",
                     "/opt/adapter/run.sh": tmp_path / "run.sh"}


@pytest.mark.parametrize(("sources", "message"), [
    (["nope.py"], "images adapter: nope.py: no such file or directory"),
    (["a/x.py", "b/x.py"], "images adapter: b/x.py: /opt/adapter/x.py is already taken by a/x.py"),
    (["empty"], "images adapter: empty: the directory holds no files"),
])
def test_source_mistakes_are_usage_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          sources: list[str], message: str) -> None:
    monkeypatch.chdir(tmp_path)
    for d in ("a", "b", "empty"):
        (tmp_path / d).mkdir()
    (tmp_path / "a" / "x.py").write_text("")
    (tmp_path / "b" / "x.py").write_text("")
    with pytest.raises(UsageError) as info:
        adapter_files(list(sources))
    assert str(info.value) == message


def test_a_node_adapter_without_node_is_refused_before_any_build(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as info:
        build_adapter_image([EXAMPLES / "node-adapter" / "adapter.mjs"], "mine:1")
    assert str(info.value) == ("images adapter: /opt/adapter/adapter.mjs needs Node, which the linux-bash base lacks: "
                               "pass --node (the pinned runtime is copied in) or --base an image with node")
    with pytest.raises(UsageError) as info:
        build_adapter_image([EXAMPLES / "python-adapter" / "adapter.py"], "-x")
    assert str(info.value) == "images adapter: --tag '-x': expected an image name, e.g. my-adapter:1"


def test_the_build_context_is_root_owned_read_only_and_puts_node_on_path(tmp_path: Path) -> None:
    script = tmp_path / "adapter.py"
    script.write_text("print()\n")
    script.chmod(0o755)
    data = tmp_path / "table.json"
    data.write_text("{}\n")
    node = tmp_path / "node"
    node.write_bytes(b"\x7fELF")
    buf = io.BytesIO()
    write_context(buf, "toolproof/linux-bash:abc", {"/opt/adapter/adapter.py": script,
                                                     "/opt/adapter/table.json": data}, node)
    buf.seek(0)
    with tarfile.open(fileobj=buf) as tar:
        members = {m.name: m for m in tar.getmembers()}
        dockerfile = tar.extractfile("Dockerfile").read().decode()  # type: ignore[union-attr]
    assert dockerfile == ("FROM toolproof/linux-bash:abc\nCOPY opt/ /opt/\nCOPY usr/ /usr/\n"
                          "LABEL org.toolproof.adapter=1\n")
    assert {name: (oct(m.mode), m.uid, m.gid, m.isdir()) for name, m in members.items() if name != "Dockerfile"} == {
        "opt": ("0o755", 0, 0, True), "opt/adapter": ("0o755", 0, 0, True),
        "opt/adapter/adapter.py": ("0o755", 0, 0, False), "opt/adapter/table.json": ("0o644", 0, 0, False),
        "usr": ("0o755", 0, 0, True), "usr/local": ("0o755", 0, 0, True), "usr/local/bin": ("0o755", 0, 0, True),
        NODE_IN_IMAGE.lstrip("/"): ("0o755", 0, 0, False)}


def test_the_suggested_impl_runs_the_adapter_file_with_its_interpreter() -> None:
    assert AdapterImage("t", "b", ("/opt/adapter/adapter.py",), False, 0).suggested_impl() == \
        "cmd:python3 /opt/adapter/adapter.py"
    assert AdapterImage("t", "b", ("/opt/adapter/a.json", "/opt/adapter/adapter.mjs"), True, 0).suggested_impl() == \
        "cmd:node /opt/adapter/adapter.mjs"


def statuses(argv: list[str], results: Path) -> dict[str, str]:
    out = io.StringIO()
    code = main(["run", *(str(REPO / "scenarios" / s) for s in SCENARIOS), "--json", str(results), *argv], out)
    assert code == 1, out.getvalue()  # read/devices/dev-null fails on both examples (they refuse a non-regular file)
    return {s["id"]: s["status"] for s in json.loads(results.read_text(encoding="utf-8"))["scenarios"]}


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize(("example", "file", "node"), [
    ("python-adapter", "adapter.py", False),
    ("node-adapter", "adapter.mjs", True),
])
def test_each_example_adapter_gives_the_same_verdicts_on_local_and_in_its_image(
        docker_image: str, tmp_path: Path, example: str, file: str, node: bool) -> None:  # noqa: F811
    source = EXAMPLES / example / file
    if node and shutil.which("node") is None:
        pytest.skip("no node on PATH for the Node example adapter on the local backend")
    interpreter = "node" if node else "python3"
    local = statuses(["--impl", f"cmd:{interpreter} {source}"], tmp_path / "local.json")
    assert local == EXPECTED

    tag = f"toolproof-test/{example}:test"
    out = io.StringIO()
    assert main(["images", "adapter", str(source), "--tag", tag, *(["--node"] if node else [])], out) == 0
    impl = f"cmd:{interpreter} /opt/adapter/{file}"
    assert f'toolproof: gate it with: toolproof run --impl "{impl}" --backend docker:{tag}\n' in out.getvalue()
    assert statuses(["--impl", impl, "--backend", f"docker:{tag}"], tmp_path / "docker.json") == local

    scenario = tmp_path / "contained.yaml"
    scenario.write_text(CONTAINED.replace("ADAPTER", file), encoding="utf-8")
    out = io.StringIO()
    assert main(["run", str(scenario), "--impl", impl, "--backend", f"docker:{tag}"], out) == 0, out.getvalue()


def test_a_project_lands_as_opt_adapter_itself_with_what_git_would_commit(tmp_path: Path) -> None:
    """Issue 21 item 8: the docker job copied only adapter.py, so an adapter importing the user's
    package died in the container. ``--project DIR`` copies the project as /opt/adapter/."""
    import subprocess

    repo = tmp_path / "repo"
    for rel in ("toolproof/adapter.py", "mypkg/__init__.py", "mypkg/tools.py", ".gitignore", "build/junk.py",
                ".venv/lib/x.py", "mypkg/__pycache__/tools.cpython-311.pyc"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("build/\n.venv/\n" if rel == ".gitignore" else "x\n")
    outside_git = project_files(repo)
    assert sorted(outside_git) == ["/opt/adapter/.gitignore", "/opt/adapter/mypkg/__init__.py",
                                   "/opt/adapter/mypkg/tools.py", "/opt/adapter/toolproof/adapter.py"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "notes.txt").write_text("untracked, not ignored: git would commit it\n")
    assert sorted(project_files(repo)) == sorted([*outside_git, "/opt/adapter/notes.txt"])
    assert project_files(repo)["/opt/adapter/mypkg/tools.py"] == repo / "mypkg" / "tools.py"
    image = AdapterImage("t", "b", tuple(sorted(project_files(repo))), False, 0)
    assert image.suggested_impl() == "cmd:python3 /opt/adapter/toolproof/adapter.py"
    with pytest.raises(UsageError, match="--project nope: not a directory"):
        project_files("nope")


def test_images_adapter_needs_sources_or_a_project(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["images", "adapter", "--tag", "x:1"], io.StringIO()) == 2
    assert "name the adapter's files or directories, or --project DIR" in capsys.readouterr().err


def _user_repo(root: Path, adapter_tail: str) -> Path:
    """A user's repository: the example adapter as toolproof/adapter.py, importing ``mytools``."""
    (root / "toolproof").mkdir(parents=True)
    (root / "mytools").mkdir()
    (root / "mytools" / "__init__.py").write_text("GREETING = 'from my own package'\n", encoding="utf-8")
    text = (EXAMPLES / "python-adapter" / "adapter.py").read_text(encoding="utf-8")
    (root / "toolproof" / "adapter.py").write_text(text.replace('\nTOOLS = {"read"', adapter_tail + '\nTOOLS = {"read"'),
                                                   encoding="utf-8")
    return root


@pytest.mark.docker
@pytest.mark.slow
def test_a_project_image_runs_an_adapter_that_imports_the_projects_own_package(
        docker_image: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    repo = _user_repo(tmp_path / "repo", "\nimport mytools\nVERSION = mytools.GREETING\n")
    monkeypatch.chdir(repo)
    tag = "toolproof-test/project-adapter:test"
    out = io.StringIO()
    assert main(["images", "adapter", "--project", ".", "--tag", tag, "--quiet"], out) == 0, out.getvalue()
    results = tmp_path / "r.json"
    out = io.StringIO()
    code = main(["run", str(REPO / "scenarios" / "read" / "missing-file.yaml"), "--json", str(results),
                 "--impl", "cmd:python3 /opt/adapter/toolproof/adapter.py", "--backend", f"docker:{tag}"], out)
    assert code == 0, out.getvalue()
    run = json.loads(results.read_text(encoding="utf-8"))["run"]
    assert run["version"] == "from my own package"


@pytest.mark.docker
@pytest.mark.slow
def test_a_failed_start_in_the_container_shows_the_adapters_stderr(
        docker_image: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Issue 21 item 8: the docker backend said only that the implementation exited; local showed
    the traceback. Now both do."""
    repo = _user_repo(tmp_path / "repo", "\nimport no_such_package_of_mine\n")
    monkeypatch.chdir(repo)
    tag = "toolproof-test/broken-adapter:test"
    assert main(["images", "adapter", "toolproof/adapter.py", "--tag", tag, "--quiet"], io.StringIO()) == 0
    out = io.StringIO()
    code = main(["run", str(REPO / "scenarios" / "read" / "missing-file.yaml"),
                 "--impl", "cmd:python3 /opt/adapter/adapter.py", "--backend", f"docker:{tag}"], out)
    assert code == 2
    assert "ModuleNotFoundError: No module named 'no_such_package_of_mine'" in out.getvalue(), out.getvalue()
