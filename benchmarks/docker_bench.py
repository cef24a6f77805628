"""Docker backend benchmark (a script, not a test). Prints, per tool, the median wall time of one
call through the persistent in-container server next to the cheapest equivalent that runs one
``docker exec`` per call as the tool uid (``cat FILE`` for read, ``sh -c true`` for bash, ..., on
a copy of the workspace in the container: the sandbox cannot be entered from outside), and the
cost of a
fresh workspace: taking a prepared sandbox plus delivering a ten-file workspace (target: median
<= 20 ms), and, separately, the CPU the container spends to make one sandbox (the namespaces, the
mounts, a fresh implementation process; target: median <= 30 ms) and the start of the worker's
container (once per worker).

    python benchmarks/docker_bench.py [--image linux-bash] [--impl reference] [--calls 200] [--exec-calls 20] [--workspaces 20] [--json FILE]

``--json FILE`` also writes every figure as JSON (what ``python -m benchmarks`` reads).

Needs a Docker engine and the image (``python -m harness.images.build linux-bash``).
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.backends.docker.backend import DockerBackend, cleanup
from harness.backends.impl import parse_impl

WORKSPACE_FILES = 10
FILE_BYTES = 2048
WORKSPACE_TARGET_MS = 20.0
SANDBOX_CPU_TARGET_MS = 30.0
SANDBOX_BATCH = 10
RUN_ID = "bench"


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


def exec_copy(docker: str, container: str, archive: bytes) -> str:
    """A copy of the workspace in the container's own ``/work`` for the one-exec-per-call side:
    the scenario's sandbox cannot be entered from outside (its init and the implementation are
    non-dumpable), and where the files are makes no difference to what an exec costs."""
    target = "/work/exec-copy"
    subprocess.run([docker, "exec", "-i", "-u", "1000:1000", container, "sh", "-c",
                    f"mkdir -p {target} && tar -x -C {target} && echo v0 > {target}/edit.txt"],
                   input=archive, capture_output=True, check=True)
    return target


def container_cpu_s(backend: DockerBackend) -> float:
    """CPU seconds the backend's container has used (the engine's accounting, any cgroup version)."""
    stats = backend.engine.client.containers.get(backend.container_id).stats(stream=False)
    return float(stats["cpu_stats"]["cpu_usage"]["total_usage"]) / 1e9


def median_ms(fn: Callable[[], object], n: int, warmup: int = 3) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


# What the one-exec-per-call equivalent of each tool runs (printed with the figures).
EXEC_EQUIVALENTS = {
    "read": "cat FILE", "write": "sh -c 'cat > FILE'", "edit": "sed -i s/…/…/ FILE", "grep": "grep -rn PATTERN DIR",
    "glob": "find DIR -name '*.txt'", "bash true": "sh -c true",
}


def tool_calls(root: str) -> dict[str, tuple[dict[str, object], list[str], bytes | None]]:
    """Per tool: (protocol call, equivalent one-exec command run as the tool uid, its stdin)."""
    f = f"{root}/src/file0.txt"
    return {
        "read": ({"tool": "read", "args": {"path": "src/file0.txt"}}, ["cat", f], None),
        "write": ({"tool": "write", "args": {"path": "out.txt", "content": "x" * 100}},
                  ["sh", "-c", f"cat > {root}/out.txt"], b"x" * 100),
        "edit": ({"tool": "edit", "args": {"path": "edit.txt"}},
                 ["sed", "-i", "s/^v[0-9]*$/v1/", f"{root}/edit.txt"], None),
        "grep": ({"tool": "grep", "args": {"pattern": "line 3", "path": "src"}},
                 ["grep", "-rn", "line 3", f"{root}/src"], None),
        "glob": ({"tool": "glob", "args": {"pattern": "src/*.txt"}},
                 ["find", f"{root}/src", "-name", "*.txt"], None),
        "bash true": ({"tool": "bash", "args": {"command": "true"}}, ["sh", "-c", "true"], None),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--image", default=None, help="recipe name or image reference (default linux-bash)")
    parser.add_argument("--impl", default="reference", help="implementation (default reference)")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--exec-calls", type=int, default=20)
    parser.add_argument("--workspaces", type=int, default=20)
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)

    docker = shutil.which("docker") or "docker"
    archive = ten_file_archive()
    backend = DockerBackend(args.image, run_id=RUN_ID, impl=parse_impl(args.impl))
    rows: list[tuple[str, float, float]] = []
    try:
        t0 = time.perf_counter()
        hello = backend.start()
        first_start_ms = (time.perf_counter() - t0) * 1000
        root = backend.new_workspace(archive, {}, None)
        container = str(backend.container_id)
        exec_root = exec_copy(docker, container, archive)
        backend.request("call", {"tool": "write", "args": {"path": "edit.txt", "content": "v0"}}, deadline_s=30)
        commands = tool_calls(exec_root)
        for name, (call, _command, _stdin) in tool_calls(root).items():
            command, stdin = commands[name][1], commands[name][2]
            if call["tool"] not in hello.tools:
                continue

            counter = itertools.count()

            def persistent(call: dict[str, object] = call, counter: Iterator[int] = counter) -> None:
                if call["tool"] == "edit":  # a different replacement each time, so every edit applies
                    i = next(counter)
                    call = {"tool": "edit", "args": {"path": "edit.txt", "oldText": f"v{i}", "newText": f"v{i + 1}"}}
                resp = backend.request("call", call, deadline_s=30)
                assert resp.ok, resp.error

            def one_exec(command: list[str] = command, stdin: bytes | None = stdin) -> None:
                argv = [docker, "exec", *(["-i"] if stdin is not None else []), "-u", "1000:1000", container, *command]
                subprocess.run(argv, input=stdin, capture_output=True, check=True)

            rows.append((name, median_ms(persistent, args.calls), median_ms(one_exec, args.exec_calls)))
        backend.drop_workspace(root)

        ready: list[float] = []
        worker = backend._worker
        assert worker is not None
        for _ in range(args.workspaces):
            # With no sandbox active, the supervisor answers hello once the next one is ready.
            worker.proto.request("hello", {}, deadline_s=60)
            t0 = time.perf_counter()
            root = backend.new_workspace(archive, {"CI": "true"}, None)
            ready.append((time.perf_counter() - t0) * 1000)
            backend.drop_workspace(root)
        sandbox_cpu = []  # the container's CPU per sandbox made, in batches of SANDBOX_BATCH
        for _ in range(max(3, args.workspaces // SANDBOX_BATCH)):
            worker.proto.request("hello", {}, deadline_s=60)
            before = container_cpu_s(backend)
            for _ in range(SANDBOX_BATCH):  # each start ends the last sandbox and has the next one made
                backend._begin_sandbox()
            backend._end_sandbox()
            worker.proto.request("hello", {}, deadline_s=60)
            time.sleep(0.5)  # the ones made ahead finish starting
            sandbox_cpu.append((container_cpu_s(backend) - before) * 1000 / SANDBOX_BATCH)
        starts: list[float] = []
        for _ in range(3):
            other = DockerBackend(args.image, run_id=RUN_ID, impl=parse_impl(args.impl))
            t0 = time.perf_counter()
            other.start()  # a worker's container, up to its first sandbox's hello
            starts.append((time.perf_counter() - t0) * 1000)
            other.close()
    finally:
        backend.close()
        cleanup(RUN_ID)

    print(f"implementation: {hello.implementation} {hello.version} ({args.impl}); first container + hello "
          f"{first_start_ms:.0f} ms")
    print(f"{'tool':<10} {'persistent ms/call':>19} {'docker exec ms/call':>20} {'ratio':>7}")
    for name, fast, slow in rows:
        print(f"{name:<10} {fast:>19.2f} {slow:>20.1f} {slow / fast:>6.1f}x")
    ws = statistics.median(ready)
    print(f"fresh {WORKSPACE_FILES}-file workspace in a prepared sandbox, median: {ws:.2f} ms "
          f"(p90 {statistics.quantiles(ready, n=10)[-1]:.2f} ms; target <= {WORKSPACE_TARGET_MS:g} ms)")
    cpu = statistics.median(sandbox_cpu)
    print(f"making one sandbox, the container's CPU, median of {len(sandbox_cpu)} batches of {SANDBOX_BATCH}: "
          f"{cpu:.1f} ms (target <= {SANDBOX_CPU_TARGET_MS:g} ms)")
    print(f"starting a worker's container up to hello (once per worker), median: {statistics.median(starts):.0f} ms")
    ok = ws <= WORKSPACE_TARGET_MS
    cpu_ok = cpu <= SANDBOX_CPU_TARGET_MS
    print("workspace target met" if ok else "WORKSPACE TARGET MISSED")
    print("sandbox target met" if cpu_ok else "SANDBOX TARGET MISSED")
    if args.json:
        figures = {
            "implementation": f"{hello.implementation} {hello.version} ({args.impl})",
            "first_start_ms": first_start_ms,
            "tools": [{"tool": name, "persistent_ms": fast, "exec_ms": slow, "exec_equivalent": EXEC_EQUIVALENTS[name],
                       "calls": args.calls, "exec_calls": args.exec_calls} for name, fast, slow in rows],
            "workspace": {"median_ms": ws, "p90_ms": statistics.quantiles(ready, n=10)[-1], "n": len(ready),
                          "files": WORKSPACE_FILES, "target_ms": WORKSPACE_TARGET_MS, "met": ok},
            "sandbox_cpu": {"median_ms": cpu, "batches": len(sandbox_cpu), "batch": SANDBOX_BATCH,
                            "target_ms": SANDBOX_CPU_TARGET_MS, "met": cpu_ok},
            "container_start_median_ms": statistics.median(starts),
        }
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0 if ok and cpu_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
