"""Console output of `toolproof run` for infrastructure failures: one cause, printed once."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.repo import REPO


def test_an_unstartable_backend_is_reported_once_with_the_scenarios_it_hit(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.yaml").write_text(
            f"id: t/{name}\ntitle: {name}\nsteps:\n  - tool: read\n    args: {{path: x}}\n")
    missing = tmp_path / "no-such-server"
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "run", str(tmp_path), "--backend", f"cmd:{missing}"],
                          cwd=REPO, capture_output=True, text=True, env={"CI": "true", "PATH": "/usr/bin:/bin"},
                          timeout=60)
    assert proc.returncode == 2
    lines = proc.stdout.splitlines()
    assert "ERROR 3 scenario(s): t/a, t/b, t/c" in lines
    assert lines.count(f"    infrastructure: cannot start implementation 'cmd:{missing}': "
                       f"[Errno 2] No such file or directory: '{missing}'") == 1
    assert lines[-1].startswith("toolproof: 3 error in ")


class _ClosedPipe(io.StringIO):
    """An output whose reader has gone away, like stdout piped into `head -1`."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_pipe_ends_the_command_quietly(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.cli import main

    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    assert main(["list", str(REPO / "scenarios" / "read")], out=_ClosedPipe()) == 2
