"""Docker backend benchmark (a script, not a test): tool calls per second through the persistent
in-container server versus one ``docker exec`` per call, and the median cost of a fresh ten-file
scenario workspace in a warm container.

    python benchmarks/docker_bench.py [--image linux-bash] [--calls 300] [--exec-calls 15] [--workspaces 50]

Needs a Docker engine and the image (``python -m harness.images.build linux-bash``).
Targets (DESIGN §3): persistent ≥ 100× the exec-per-call rate; median workspace < 20 ms.
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.backends.docker.backend import DockerBackend, cleanup

AGENT_DIR = "/opt/toolproof"

WORKSPACE_FILES = 10
FILE_BYTES = 2048
THROUGHPUT_TARGET = 100.0
WORKSPACE_TARGET_MS = 20.0


def ten_file_archive() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for i in range(WORKSPACE_FILES):
            data = (f"line {i}\n" * (FILE_BYTES // 7))[:FILE_BYTES].encode()
            info = tarfile.TarInfo(f"src/file{i}.txt")
            info.size = len(data)
            info.mode = 0o644
            info.mtime = 1_700_000_000
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def persistent_rate(backend: DockerBackend, calls: int) -> float:
    args = {"tool": "read", "args": {"path": "src/file0.txt"}}
    for _ in range(5):
        backend.request("call", args, deadline_s=30)
    t0 = time.perf_counter()
    for _ in range(calls):
        resp = backend.request("call", args, deadline_s=30)
        assert resp.ok, resp.error
    return calls / (time.perf_counter() - t0)


def exec_per_call_rate(container_id: str, root: str, calls: int) -> float:
    """Each call: a fresh ``docker exec -i`` of the server (code already in the container),
    pointed at the same workspace, one ``read`` call, then shutdown."""
    docker = shutil.which("docker") or "docker"
    lines = "".join(json.dumps(r) + "\n" for r in (
        {"id": 1, "op": "workspace", "root": root},
        {"id": 2, "op": "call", "tool": "read", "args": {"path": "src/file0.txt"}},
        {"id": 3, "op": "shutdown"},
    )).encode()
    argv = [docker, "exec", "-i", "-e", f"PYTHONPATH={AGENT_DIR}", container_id,
            "python3", "-m", "tools_impl.server"]
    t0 = time.perf_counter()
    for _ in range(calls):
        out = subprocess.run(argv, input=lines, capture_output=True, check=True).stdout
        assert b'"id": 2, "ok": true' in out, out[:300]
    return calls / (time.perf_counter() - t0)


def bare_exec_ms(container_id: str, calls: int) -> float:
    """Median wall time of ``docker exec <id> true``: the floor of any exec-per-call design."""
    docker = shutil.which("docker") or "docker"
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        subprocess.run([docker, "exec", container_id, "true"], capture_output=True, check=True)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def workspace_costs(backend: DockerBackend, archive: bytes, count: int) -> tuple[list[float], list[float]]:
    """(new_workspace ms, drop_workspace ms incl. reaping) for ``count`` fresh workspaces."""
    creates, drops = [], []
    for _ in range(count):
        t0 = time.perf_counter()
        root = backend.new_workspace(archive, {"CI": "true"}, None)
        t1 = time.perf_counter()
        backend.drop_workspace(root)
        t2 = time.perf_counter()
        creates.append((t1 - t0) * 1000)
        drops.append((t2 - t1) * 1000)
    return creates, drops


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--image", default=None, help="recipe name or image reference (default linux-bash)")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--exec-calls", type=int, default=15)
    parser.add_argument("--workspaces", type=int, default=50)
    args = parser.parse_args(argv)

    archive = ten_file_archive()
    backend = DockerBackend(args.image, run_id="bench")
    try:
        t0 = time.perf_counter()
        backend.start()
        start_s = time.perf_counter() - t0
        root = backend.new_workspace(archive, {}, None)
        fast = persistent_rate(backend, args.calls)
        slow = exec_per_call_rate(str(backend.container_id), root, args.exec_calls)
        bare = bare_exec_ms(str(backend.container_id), args.exec_calls)
        backend.drop_workspace(root)
        backend.new_workspace(archive, {}, None)  # warm-up
        creates, drops = workspace_costs(backend, archive, args.workspaces)
    finally:
        backend.close()
        cleanup("bench")

    ratio = fast / slow
    ws_median = statistics.median(creates)
    print(f"container start + server hello:        {start_s * 1000:8.0f} ms")
    print(f"persistent server, read calls/s:       {fast:8.1f}  ({1000 / fast:.2f} ms/call, n={args.calls})")
    print(f"docker exec per call, read calls/s:    {slow:8.1f}  ({1000 / slow:.1f} ms/call, n={args.exec_calls})")
    print(f"bare `docker exec true`, median:       {bare:8.1f} ms")
    print(f"throughput ratio:                      {ratio:8.1f}x  (target >= {THROUGHPUT_TARGET:g}x)")
    print(f"fresh {WORKSPACE_FILES}-file workspace, median:       {ws_median:8.2f} ms  "
          f"(p90 {statistics.quantiles(creates, n=10)[-1]:.2f} ms, target < {WORKSPACE_TARGET_MS:g} ms)")
    print(f"drop + reap, median:                   {statistics.median(drops):8.2f} ms")
    ok = ratio >= THROUGHPUT_TARGET and ws_median < WORKSPACE_TARGET_MS
    print("targets met" if ok else "TARGETS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
