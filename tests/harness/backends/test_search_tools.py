"""``harness.backends.search_tools``: the rg and fd the local pi-surface implementations find."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from harness.backends import search_tools


def test_the_bin_dir_holds_the_packaged_rg_and_comes_first_on_path() -> None:
    directory = search_tools.search_bin_dir()
    assert directory is not None
    rg = Path(directory) / "rg"
    assert rg.exists() and b"ripgrep" in subprocess.run([str(rg), "--version"], capture_output=True).stdout
    env = search_tools.search_env()
    assert env is not None and env["PATH"].split(os.pathsep)[0] == directory


@pytest.mark.skipif(search_tools.host_fd() is None, reason="no fd or fdfind on this host")
def test_fd_takes_pis_arguments_even_where_it_predates_no_require_git(tmp_path: Path) -> None:
    directory = search_tools.search_bin_dir()
    assert directory is not None
    (tmp_path / "a.py").write_text("x\n", encoding="utf-8")
    proc = subprocess.run([str(Path(directory) / "fd"), "--glob", "--color=never", "--hidden", "--no-require-git",
                           "--max-results", "5", "--", "*.py", str(tmp_path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{tmp_path}/a.py\n"
