"""The read tool through the real protocol server: ``python -m tools_impl.server`` as a
subprocess, requests over stdin, exact response JSON on stdout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.repo import REPO


def serve(requests: list[dict]) -> dict[int, dict]:
    proc = subprocess.run(
        [sys.executable, "-m", "tools_impl.server"],
        input="".join(json.dumps(r, ensure_ascii=False) + "\n" for r in requests),
        capture_output=True, text=True, encoding="utf-8", cwd=REPO, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return {msg["id"]: msg for msg in map(json.loads, proc.stdout.splitlines())}


def test_read_calls_through_the_server_subprocess(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\nwörld\n", encoding="utf-8")
    out = serve([
        {"id": 1, "op": "workspace", "root": str(tmp_path)},
        {"id": 2, "op": "call", "tool": "read", "args": {"path": "a.txt"}},
        {"id": 3, "op": "call", "tool": "read", "args": {"path": "nope.txt"}},
        {"id": 4, "op": "call", "tool": "read", "args": {"path": "/dev/zero"}},
        {"id": 5, "op": "call", "tool": "read", "args": {"path": "a.txt", "offset": "2", "limit": 1}},
        {"id": 6, "op": "shutdown"},
    ])
    assert out[2] == {"id": 2, "ok": True, "result": {
        "content": [{"type": "text", "text": "     1→hello\n     2→wörld\n"}], "details": {}, "is_error": False}}
    assert out[3] == {"id": 3, "ok": False, "error": {
        "message": f"ENOENT: no such file or directory, access '{tmp_path / 'nope.txt'}'", "kind": "tool",
        "code": "ENOENT"}}
    assert out[4] == {"id": 4, "ok": True, "result": {
        "content": [{"type": "text",
                     "text": "Cannot read '/dev/zero': this device file would block or produce infinite output."}],
        "details": {}, "is_error": True}}
    assert out[5] == {"id": 5, "ok": True, "result": {
        "content": [{"type": "text", "text": "     2→wörld\n\n[1 more lines in file. Use offset=3 to continue.]"}],
        "details": {}, "is_error": False}}
