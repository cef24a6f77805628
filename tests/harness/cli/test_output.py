"""Console output of `toolproof run` for infrastructure failures: one cause, printed once."""

from __future__ import annotations

import io
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from harness.cli.progress import status_printer
from harness.model.results import PASS, ScenarioResult
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


class _SlowWriter(io.StringIO):
    """An output that yields between writes, so two threads writing at once interleave."""

    def write(self, text: str) -> int:
        time.sleep(0.001)
        return super().write(text)


def test_status_lines_from_parallel_workers_are_written_whole() -> None:
    """With --jobs 2 the workers report from their own threads: `print` wrote the text and the
    newline apart, and CI logs showed `PASS  read/aPASS  read/b` followed by an empty line."""
    out = _SlowWriter()
    printer = status_printer(out)
    results = [ScenarioResult(id=f"t/{n}", title="", path="x.yaml", status=PASS) for n in range(64)]
    threads = [threading.Thread(target=lambda part=results[k::4]: [printer(r) for r in part]) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(out.getvalue().splitlines()) == sorted(f"PASS  t/{n}" for n in range(64))
