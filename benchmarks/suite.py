"""The measurements behind ``python -m benchmarks``: every figure is a ``Row`` of one table.

Per-call rows time the reference server (``python -m tools_impl.server --upstream``) and pi's
driver on identical workspaces, alternating which of the two goes first on every iteration so
that machine noise hits both alike. Files an edit changes are rewritten before every call,
outside the timed span.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import fixtures
from benchmarks.servers import REPO, BenchError, ToolServer
from benchmarks.stats import growth_exponent, median, percentile
from harness.backends.client import Response
from harness.model.observation import Observation
from harness.run.equivalence import comparable
from harness.run.normalise import NormalisationContext, normalize_observation

KB = 1024
MB = 1024 * 1024
CORPUS_TERM_GRACE_S = 30.0


@dataclass(frozen=True)
class Settings:
    """Sample counts and sizes of one run; ``smoke`` shrinks both to finish in seconds."""

    smoke: bool = False
    n_small: int = 100
    n_1mb: int = 30
    n_10mb: int = 10
    warmup: int = 3
    growth_cycles: int = 30
    base_files: int = 100
    corpus_paths: tuple[str, ...] = ("scenarios",)
    size_scale: float = 1.0
    corpus_timeout_s: float = 1800.0  # one `toolproof run` of the corpus, and the docker script

    @classmethod
    def for_smoke(cls) -> Settings:
        return cls(smoke=True, n_small=3, n_1mb=2, n_10mb=2, warmup=1, growth_cycles=2, base_files=10,
                   corpus_paths=("scenarios/read",), size_scale=0.01)

    def size(self, nominal: int) -> int:
        return max(1, int(nominal * self.size_scale))

    def samples(self, nominal_bytes: int) -> int:
        if nominal_bytes >= 10 * MB:
            return self.n_10mb
        if nominal_bytes >= MB:
            return self.n_1mb
        return self.n_small


@dataclass
class Row:
    """One line of the table. ``ratio`` is reference / other (lower is better for the reference);
    ``target`` is the ratio the issue asks for (met when ``ratio <= target``)."""

    id: str
    section: str
    label: str
    reference: str
    other: str
    ratio: float | None = None
    target: float | None = None
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def met(self) -> bool | None:
        if self.data.get("answers_differ"):
            return False  # a fast wrong answer never counts
        if self.ratio is None or self.target is None:
            return None
        return self.ratio <= self.target

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "section": self.section, "label": self.label, "reference": self.reference,
                "other": self.other, "ratio": self.ratio, "target": self.target, "met": self.met,
                "data": self.data}


def size_label(nbytes: int) -> str:
    if nbytes >= MB:
        return f"{nbytes / MB:.3g} MB"
    if nbytes >= KB:
        return f"{nbytes / KB:.3g} KB"
    return f"{nbytes} B"


def timing_cell(values: Sequence[float]) -> str:
    return f"{median(values):.2f} ms (p90 {percentile(values, 90):.2f})"


def timing_data(values: Sequence[float]) -> dict[str, float | int]:
    return {"median_ms": median(values), "p90_ms": percentile(values, 90), "n": len(values)}


# -- per-call cases ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One timed call shape. ``files`` are (re)written into the workspace before every call."""

    id: str
    label: str
    tool: str
    args: dict[str, Any]
    samples: int
    target: float | None = None
    files: dict[str, str] = field(default_factory=dict)
    # one of these is (re)written before call i (i mod their number): contents that differ in
    # every piece, so that no call reads what an earlier one did (nothing to reuse)
    variants: tuple[dict[str, str], ...] = ()
    other_args: dict[str, Any] | None = None
    other_missing: str | None = None  # why the other server cannot run this case
    # compared byte for byte between the two sides after every call (what a write or edit made)
    check_file: str | None = None


# What the two sides' answers are compared after: the workspace paths differ (one workspace each).
ANSWER_NORMALISERS = ("workspace",)


def answer_of(response: dict[str, Any], root: Path) -> dict[str, Any] | None:
    """One call's answer as the harness compares two runs of a step: the observation (text,
    details, error…) normalised with ``ANSWER_NORMALISERS``, then ``harness.run.equivalence``'s
    ``comparable`` (durations dropped, random values replaced)."""
    resp = Response(response.get("id"), bool(response.get("ok")), response.get("result"),
                    response.get("error") or {})
    ctx = NormalisationContext(roots=(str(root), os.path.realpath(root)))
    observation = normalize_observation(Observation.from_response(resp, 0.0), ANSWER_NORMALISERS, ctx)
    return comparable(observation.to_json())


def answer_difference(a: dict[str, Any] | None, b: dict[str, Any] | None) -> str:
    """Which fields of two comparable answers differ (``details.diff``, ``text``…), or ""."""
    if a == b:
        return ""
    if a is None or b is None:
        return "one side has no answer"
    fields: list[str] = []
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key), b.get(key)
        if va == vb:
            continue
        if isinstance(va, dict) and isinstance(vb, dict):
            fields += [f"{key}.{k}" for k in sorted(set(va) | set(vb)) if va.get(k) != vb.get(k)]
        else:
            fields.append(key)
    return ", ".join(fields)


class Bench:
    """Owns the servers and their workspaces for one run."""

    def __init__(self, settings: Settings, reference: ToolServer, other: ToolServer | None,
                 other_missing: str, workdir: Path, progress: Callable[[str], None]) -> None:
        self.settings = settings
        self.reference = reference
        self.other = other
        self.other_missing = other_missing
        self.workdir = workdir
        self.progress = progress
        self.roots: dict[str, Path] = {}
        self.rows: list[Row] = []
        self.fd_missing = ""  # why pi's find cannot run, or empty
        self.differences: dict[str, str] = {}  # case id -> the first difference of the two answers

    @property
    def servers(self) -> list[ToolServer]:
        return [self.reference] if self.other is None else [self.reference, self.other]

    def prepare_workspaces(self, name: str, build: Callable[[Path], None]) -> None:
        for server in self.servers:
            root = self.workdir / name / server.label.replace(" ", "-")
            root.mkdir(parents=True, exist_ok=True)
            build(root)
            server.workspace(root)
            self.roots[server.label] = root

    def _write_files(self, server: ToolServer, files: dict[str, str]) -> None:
        root = self.roots[server.label]
        for rel, text in files.items():
            with open(root / rel, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)

    def _answer(self, server: ToolServer, case: Case) -> tuple[dict[str, Any] | None, bytes | None]:
        root = self.roots[server.label]
        data = (root / case.check_file).read_bytes() if case.check_file else None
        return answer_of(server.last, root), data

    def run_case(self, case: Case) -> dict[str, list[float]]:
        """Interleaved A/B timing: the first server alternates every iteration. When both sides
        take the same arguments, their answers (and ``check_file``) are compared after every
        iteration, outside the timed span; the first difference is kept in ``differences``."""
        servers = self.servers if case.other_missing is None else [self.reference]
        compare = len(servers) == 2 and case.other_args is None
        times: dict[str, list[float]] = {s.label: [] for s in servers}
        for i in range(self.settings.warmup + case.samples):
            order = servers if i % 2 == 0 else servers[::-1]
            answers: dict[str, tuple[dict[str, Any] | None, bytes | None]] = {}
            for server in order:
                if case.files:
                    self._write_files(server, case.files)
                if case.variants:
                    self._write_files(server, case.variants[i % len(case.variants)])
                args = case.other_args if server is not self.reference and case.other_args else case.args
                elapsed = server.call(case.tool, args)
                if i >= self.settings.warmup:
                    times[server.label].append(elapsed)
                if compare:
                    answers[server.label] = self._answer(server, case)
            if compare and case.id not in self.differences:
                (a, fa), (b, fb) = (answers[s.label] for s in servers)
                what = answer_difference(a, b)
                if fa != fb:
                    what = ", ".join(x for x in (what, f"bytes of {case.check_file}") if x)
                if what:
                    self.differences[case.id] = what
        return times

    def add_ab_row(self, section: str, case: Case, meta: dict[str, Any] | None = None) -> dict[str, list[float]]:
        self.progress(f"{section}: {case.label}")
        times = self.run_case(case)
        ref = times[self.reference.label]
        row = Row(case.id, section, case.label, timing_cell(ref), "", target=case.target,
                  data={**(meta or {}), "reference": timing_data(ref)})
        if self.other is None:
            row.other = self.other_missing
        elif case.other_missing is not None:
            row.other = case.other_missing
        else:
            other = times[self.other.label]
            row.other = timing_cell(other)
            row.ratio = median(ref) / median(other)
            row.data["other"] = timing_data(other)
            if case.other_args is None:
                row.data["answers"] = "differ" if case.id in self.differences else "equal"
            if case.id in self.differences:
                row.data["answers_differ"] = self.differences[case.id]
        self.rows.append(row)
        return times


# -- sections ---------------------------------------------------------------------------------------


def per_call_section(bench: Bench) -> None:
    s = bench.settings
    section = "per call"
    small = fixtures.numbered_lines(50)
    large = fixtures.numbered_lines(500 if s.smoke else 20000)
    small_exact = fixtures.exact_edit_text(2 * KB)
    small_fuzzy = fixtures.fuzzy_edit_text(2 * KB)

    def build(root: Path) -> None:
        fixtures.build_tree(root, s.base_files * 2)
        (root / "small.txt").write_text(small, encoding="utf-8")
        (root / "large.txt").write_text(large, encoding="utf-8")

    bench.prepare_workspaces("per-call", build)
    large_lines = large.count("\n")
    content = "".join(f"line {i}: {'x' * 40}\n" for i in range(12))[:600]
    edit = {"exact": (fixtures.EXACT_OLD, fixtures.EXACT_NEW), "fuzzy": (fixtures.FUZZY_OLD, fixtures.FUZZY_NEW)}
    cases = [
        Case("read.small", "read, 50-line file", "read", {"path": "small.txt"}, s.n_small, 0.5),
        Case("read.large", f"read, 200 lines at offset {large_lines // 2} of a {large_lines}-line file", "read",
             {"path": "large.txt", "offset": large_lines // 2, "limit": 200}, s.n_small, 0.5),
        Case("read.large.new", "read, the same, with new file content before every call (nothing carries over)", "read",
             {"path": "large-new.txt", "offset": large_lines // 2, "limit": 200}, s.n_small, 0.5,
             variants=({"large-new.txt": large}, {"large-new.txt": large.replace(": ", ":\t")})),
        Case("write.small", f"write, {len(content)} bytes", "write", {"path": "out.txt", "content": content},
             s.n_small, 0.5, check_file="out.txt"),
    ]
    for kind in ("exact", "fuzzy"):
        old, new = edit[kind]
        text = small_exact if kind == "exact" else small_fuzzy
        cases.append(Case(f"edit.{kind}.small", f"edit, {kind}, {text.count(chr(10))}-line file", "edit",
                          {"path": "edit.py", "edits": [{"oldText": old, "newText": new}]}, s.n_small, 1.0,
                          files={"edit.py": text}, check_file="edit.py"))
    glob_missing = f"n/a (pi's find: {bench.fd_missing})" if bench.fd_missing else None
    cases += [
        Case("grep.content", f"grep content, {s.base_files * 2}-file tree", "grep",
             {"pattern": fixtures.GREP_NEEDLE, "output_mode": "content"}, s.n_small,
             other_args={"pattern": fixtures.GREP_NEEDLE}),
        Case("grep.files", f"grep files_with_matches, {s.base_files * 2}-file tree", "grep",
             {"pattern": fixtures.GREP_NEEDLE, "output_mode": "files_with_matches"}, s.n_small,
             other_missing="n/a (pi's grep has no files mode)"),
        Case("glob", f"glob **/*.py, {s.base_files * 2}-file tree (pi: find)", "glob",
             {"pattern": "**/*.py"}, s.n_small, other_args={"pattern": "*.py"}, other_missing=glob_missing),
        Case("bash.true", "bash `true`", "bash", {"command": "true"}, s.n_small, 0.5),
    ]
    for case in cases:
        bench.add_ab_row(section, case)


EDIT_SIZES = (100 * KB, MB, 10 * MB)


def edit_size_section(bench: Bench) -> None:
    s = bench.settings
    section = "edit vs size"
    bench.prepare_workspaces("edit-size", lambda root: None)
    medians: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for kind in ("exact", "fuzzy"):
        old, new = (fixtures.EXACT_OLD, fixtures.EXACT_NEW) if kind == "exact" else (fixtures.FUZZY_OLD, fixtures.FUZZY_NEW)
        for nominal in EDIT_SIZES:
            nbytes = s.size(nominal)
            text = fixtures.exact_edit_text(nbytes) if kind == "exact" else fixtures.fuzzy_edit_text(nbytes)
            case = Case(f"edit.{kind}.{size_label(nominal).replace(' ', '')}", f"edit, {kind}, {size_label(nbytes)} file",
                        "edit", {"path": "big.py", "edits": [{"oldText": old, "newText": new}]},
                        s.samples(nominal), 1.0, files={"big.py": text}, check_file="big.py")
            times = bench.add_ab_row(section, case)
            for label, values in times.items():
                medians.setdefault((kind, label), []).append((nbytes, median(values)))
    for kind in ("exact", "fuzzy"):
        exps: dict[str, float] = {}
        for server in bench.servers:
            points = medians[(kind, server.label)]
            (sa, ta), (sb, tb) = points[0], points[-1]
            exps[server.label] = growth_exponent(sa, ta, sb, tb)
        first, last = size_label(s.size(EDIT_SIZES[0])), size_label(s.size(EDIT_SIZES[-1]))
        ref_k = exps[bench.reference.label]
        row = Row(f"edit.{kind}.growth", section, f"edit, {kind}: growth exponent {first} → {last} (1 = linear)",
                  f"{ref_k:.2f}", bench.other_missing, data={"reference": ref_k})
        if bench.other is not None:
            row.other = f"{exps[bench.other.label]:.2f}"
            row.data["other"] = exps[bench.other.label]
        # the target is on the reference's own exponent, not a ratio: shown as "≤ 1.00"
        row.data["exponent_target"] = 1.0
        row.data["exponent_met"] = ref_k <= 1.0
        bench.rows.append(row)
    bench.rows.append(calibration_row(section, s.size(EDIT_SIZES[0]), s.size(EDIT_SIZES[-1])))


CONTENT_SIZES = (KB, 100 * KB, MB, 10 * MB)
CONTENT_SECTION = "content"
READ_WINDOW = 200  # lines of a ranged read


def content_section(bench: Bench) -> None:
    """read, write and edit on every content class (``fixtures.CONTENT_CLASSES``) at every size
    of ``CONTENT_SIZES``: reads of the first page (no offset), of 200 lines in the middle and of
    the last 200 lines; a write of the whole text; one exact edit of a line at the start, in the
    middle or at the end. Both sides' answers and the bytes written are compared on every call.
    Targets: read and write ≤ 0.5; edit ≤ 1.0, and ≤ 0.5 from 1 MB on."""
    s = bench.settings
    bench.prepare_workspaces("content", lambda root: None)
    for cls in fixtures.CONTENT_CLASSES:
        for nominal in CONTENT_SIZES:
            nbytes = s.size(nominal)
            text = fixtures.class_text(cls, nbytes)
            size = size_label(nominal).replace(" ", "")
            what = f"{fixtures.CLASS_LABELS[cls]}, {size_label(len(text.encode('utf-8')))}"
            meta = {"class": cls, "size": size, "size_label": size_label(nbytes if s.smoke else nominal), "bytes": len(text.encode("utf-8"))}
            read_path = f"read-{cls}-{size}.txt"
            for server in bench.servers:
                bench._write_files(server, {read_path: text})
            lines = text.count("\n") + 1
            windows = {"start": {}, "middle": {"offset": lines // 2, "limit": READ_WINDOW},
                       "end": {"offset": max(1, lines - READ_WINDOW + 1), "limit": READ_WINDOW}}
            for pos, window in windows.items():
                shown = "first page" if not window else f"{READ_WINDOW} lines at offset {window['offset']}"
                bench.add_ab_row(CONTENT_SECTION, Case(
                    f"content.read.{cls}.{size}.{pos}", f"read, {what}, {shown}", "read",
                    {"path": read_path, **window}, s.samples(nominal), 0.5), {"tool": "read", "position": pos, **meta})
            for server in bench.servers:
                (bench.roots[server.label] / read_path).unlink()
            bench.add_ab_row(CONTENT_SECTION, Case(
                f"content.write.{cls}.{size}", f"write, {what}", "write", {"path": "write.txt", "content": text},
                s.samples(nominal), 0.5, check_file="write.txt"), {"tool": "write", "position": "", **meta})
            old, new = fixtures.CLASS_EDIT_OLD[cls], fixtures.CLASS_EDIT_NEW[cls]
            for pos in fixtures.POSITIONS:
                bench.add_ab_row(CONTENT_SECTION, Case(
                    f"content.edit.{cls}.{size}.{pos}", f"edit, exact, {what}, line at the {pos}", "edit",
                    {"path": "edit.txt", "edits": [{"oldText": old, "newText": new}]}, s.samples(nominal),
                    0.5 if nominal >= MB else 1.0, files={"edit.txt": fixtures.with_line_at(text, old, pos)},
                    check_file="edit.txt"), {"tool": "edit", "position": pos, **meta})
            for server in bench.servers:
                for name in ("write.txt", "edit.txt"):
                    (bench.roots[server.label] / name).unlink(missing_ok=True)


CALIBRATION_REPEATS = 7


def calibration_row(section: str, small: int, large: int) -> Row:
    """How one plain linear pass (``str.replace`` over the same edit text, in this process) grows
    between the two sizes on this machine: the floor that cache and allocator effects set."""
    times = []
    for nbytes in (small, large):
        text = fixtures.exact_edit_text(nbytes)
        best = math.inf
        for _ in range(CALIBRATION_REPEATS):
            t0 = time.perf_counter()
            text.replace("a", "b")
            best = min(best, time.perf_counter() - t0)
        times.append(best)
    k = growth_exponent(small, times[0], large, times[1])
    return Row("edit.calibration.growth", section,
               f"calibration: one `str.replace` pass over the same text, growth exponent {size_label(small)} → "
               f"{size_label(large)}", f"{k:.2f}", "", data={"reference": k})


def _mix_cases(bench: Bench) -> list[Case]:
    text = fixtures.exact_edit_text(2 * KB)
    cases = [
        Case("mix.read", "read", "read", {"path": "small.txt"}, 1),
        Case("mix.edit", "edit", "edit", {"path": "edit.py", "edits": [
            {"oldText": fixtures.EXACT_OLD, "newText": fixtures.EXACT_NEW}]}, 1, files={"edit.py": text}),
        Case("mix.grep", "grep", "grep", {"pattern": fixtures.GREP_NEEDLE, "output_mode": "content"}, 1,
             other_args={"pattern": fixtures.GREP_NEEDLE}),
    ]
    if not bench.fd_missing:
        cases.append(Case("mix.glob", "glob", "glob", {"pattern": "**/*.py"}, 1, other_args={"pattern": "*.py"}))
    return cases


def growth_section(bench: Bench, trees: dict[int, Path]) -> None:
    """Calls per second of a fixed mix (read, edit, grep, glob) as the workspace grows."""
    s = bench.settings
    section = "workspace growth"
    small = fixtures.numbered_lines(50)
    mix = _mix_cases(bench)
    names = "+".join(c.label for c in mix)
    base_rates: dict[str, float] = {}
    for factor in (1, 10, 100):
        files = s.base_files * factor
        tree = trees[files]
        bench.progress(f"{section}: {files} files")
        for server in bench.servers:
            root = tree / server.label.replace(" ", "-")
            (root / "small.txt").write_text(small, encoding="utf-8")
            server.workspace(root)
            bench.roots[server.label] = root
        totals: dict[str, float] = {srv.label: 0.0 for srv in bench.servers}
        for cycle in range(s.warmup + s.growth_cycles):
            order = bench.servers if cycle % 2 == 0 else bench.servers[::-1]
            for server in order:
                for case in mix:
                    if case.files:
                        bench._write_files(server, case.files)
                    args = case.other_args if server is not bench.reference and case.other_args else case.args
                    elapsed = server.call(case.tool, args)
                    if cycle >= s.warmup:
                        totals[server.label] += elapsed
        calls = s.growth_cycles * len(mix)
        rates = {label: calls / (total / 1000.0) for label, total in totals.items()}

        def cell(label: str, rates: dict[str, float] = rates, factor: int = factor) -> str:
            base = base_rates.setdefault(label, rates[label])
            return f"{rates[label]:.0f} calls/s" + ("" if factor == 1 else f" (×{rates[label] / base:.2f} of base)")

        label = f"calls/s, {names} mix, {files} files" + ("" if factor == 1 else f" ({factor}× files)")
        row = Row(f"growth.x{factor}", section, label, cell(bench.reference.label), bench.other_missing,
                  data={"files": files, "reference_calls_per_s": rates[bench.reference.label]})
        if bench.other is not None:
            row.other = cell(bench.other.label)
            row.ratio = rates[bench.other.label] / rates[bench.reference.label]
            row.data["other_calls_per_s"] = rates[bench.other.label]
        bench.rows.append(row)


def rg_section(bench: Bench, tree: Path, files: int, rg_binary: str) -> None:
    """The reference's grep against ``rg`` run alone with the argv the tool builds."""
    from tools_impl.search.grep_tool import build_grep_argv, normalise_inputs

    s = bench.settings
    section = "grep vs rg"
    root = tree / bench.reference.label.replace(" ", "-")
    bench.reference.workspace(root)
    for mode in ("content", "files_with_matches"):
        args = {"pattern": fixtures.GREP_NEEDLE, "output_mode": mode}
        argv = [rg_binary, *build_grep_argv(normalise_inputs(args), ".")]
        label = f"grep {mode}, {files}-file tree (other: bare rg, same argv)"
        bench.progress(f"{section}: {mode}")
        ref: list[float] = []
        bare: list[float] = []
        for i in range(s.warmup + s.n_small):
            order = ("ref", "rg") if i % 2 == 0 else ("rg", "ref")
            for who in order:
                if who == "ref":
                    elapsed = bench.reference.call("grep", args)
                else:
                    t0 = time.perf_counter()
                    proc = subprocess.run(argv, cwd=root, capture_output=True, check=False)
                    elapsed = (time.perf_counter() - t0) * 1000.0
                    if proc.returncode != 0:
                        raise BenchError(f"bare rg exited {proc.returncode}: {proc.stderr[:300]!r}")
                if i >= s.warmup:
                    (ref if who == "ref" else bare).append(elapsed)
        bench.rows.append(Row(f"rg.{mode}", section, label, timing_cell(ref), timing_cell(bare),
                              ratio=median(ref) / median(bare), target=1.2,
                              data={"reference": timing_data(ref), "other": timing_data(bare), "argv": argv[1:]}))


STATUS_LINE_RE = re.compile(r"^(PASS|FAIL|ERROR|SKIP|XFAIL|STALE) +\S")
SUMMARY_LINE_RE = re.compile(r"^toolproof: \d+ [a-z]+.* in [0-9.]+ s ")
CORPUS_PROGRESS_EVERY = 25


@dataclass
class CorpusRun:
    """One ``toolproof run`` timed from start to exit."""

    wall_s: float
    returncode: int | None  # None: stopped at the timeout
    done: int  # scenarios that printed their status line
    summary: str  # the final ``toolproof:`` line
    stderr_tail: str
    failing: list[str] = field(default_factory=list)  # ids of scenarios that failed or errored


def run_corpus(argv: Sequence[str], timeout_s: float, progress: Callable[[str], None], what: str) -> CorpusRun:
    """Run ``argv`` (a ``toolproof run``) in the repository, passing on how many scenarios are
    done every ``CORPUS_PROGRESS_EVERY`` and stopping it (SIGTERM to its process group: the
    harness removes its containers, then SIGKILL) at ``timeout_s``."""
    stderr = tempfile.TemporaryFile()
    t0 = time.perf_counter()
    proc = subprocess.Popen(list(argv), cwd=REPO, stdout=subprocess.PIPE, stderr=stderr, text=True,
                            start_new_session=True)
    timed_out = threading.Event()

    def stop() -> None:
        timed_out.set()
        for sig, grace in ((signal.SIGTERM, CORPUS_TERM_GRACE_S), (signal.SIGKILL, 0.0)):
            try:
                os.killpg(proc.pid, sig)
            except OSError:
                return
            try:
                proc.wait(grace)
                return
            except subprocess.TimeoutExpired:
                continue

    timer = threading.Timer(timeout_s, stop)
    timer.daemon = True
    timer.start()
    done = 0
    summary = ""
    failing: list[str] = []
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            if STATUS_LINE_RE.match(line):
                done += 1
                if line.startswith(("FAIL", "ERROR")):
                    failing.append(line.split()[1])
                if done % CORPUS_PROGRESS_EVERY == 0:
                    progress(f"{what}: {done} scenarios done ({time.perf_counter() - t0:.0f} s)")
            elif SUMMARY_LINE_RE.match(line):
                # the counts line (`toolproof: 95 pass, 3 skip in 1.2 s [...]`), not the level or
                # baseline lines printed after it
                summary = line.strip().removeprefix("toolproof: ")
        returncode = proc.wait()
    finally:
        timer.cancel()
    wall = time.perf_counter() - t0
    stderr.seek(0)
    tail = stderr.read().decode("utf-8", "replace").strip()[-400:]
    stderr.close()
    return CorpusRun(wall, None if timed_out.is_set() else returncode, done, summary, tail, failing)


def corpus_section(bench: Bench, docker_ok: bool, docker_note: str) -> None:
    """Wall time of ``toolproof run`` over the corpus with one and two workers."""
    s = bench.settings
    section = "corpus"
    if s.smoke and docker_ok:
        docker_ok, docker_note = False, "skipped in a smoke run"
    backends = [("local", "local")] + ([("docker", "docker")] if docker_ok else [])
    corpus = " ".join(s.corpus_paths)
    for name, spec in backends:
        runs: dict[int, CorpusRun] = {}
        for jobs in (1, 2):
            what = f"{section}: {name} --jobs {jobs}"
            bench.progress(what)
            argv = [sys.executable, "-m", "harness.cli", "run", *s.corpus_paths, "--backend", spec, "--jobs", str(jobs)]
            run = run_corpus(argv, s.corpus_timeout_s, bench.progress, what)
            if run.returncode is not None and (run.returncode not in (0, 1) or not run.summary):
                raise BenchError(f"`{' '.join(argv[1:])}` exited {run.returncode}: {run.stderr_tail}")
            runs[jobs] = run
        for jobs in (1, 2):
            run = runs[jobs]
            label = f"`toolproof run {corpus}`, {name}, --jobs {jobs}"
            data: dict[str, Any] = {"wall_s": run.wall_s, "summary": run.summary, "scenarios_done": run.done,
                                    "failing": run.failing}
            if run.returncode is None:
                data["timed_out_after_s"] = s.corpus_timeout_s
                bench.rows.append(Row(f"corpus.{name}.j{jobs}", section, label, f"> {s.corpus_timeout_s:.0f} s",
                                      f"stopped at the time limit after {run.done} scenarios", data=data))
                continue
            data["scenarios_per_s"] = run.done / run.wall_s if run.wall_s else 0.0
            row = Row(f"corpus.{name}.j{jobs}", section, label,
                      f"{run.wall_s:.1f} s ({run.done / run.wall_s:.1f} scenarios/s)",
                      run.summary.split(" in ")[0] + (f" ({', '.join(run.failing[:3])})" if run.failing else ""),
                      data=data)
            if jobs == 2 and runs[1].returncode is not None:
                row.ratio = run.wall_s / runs[1].wall_s
                row.label += " (ratio: vs --jobs 1)"
            bench.rows.append(row)
    if not docker_ok:
        for jobs in (1, 2):
            bench.rows.append(Row(f"corpus.docker.j{jobs}", section,
                                  f"`toolproof run`, docker, --jobs {jobs}", "skipped", docker_note))


def docker_section(bench: Bench, docker_ok: bool, docker_note: str) -> None:
    """The Docker backend figures of ``benchmarks/docker_bench.py`` (read from its ``--json``): per
    tool the persistent in-container server against the cheapest one-``docker exec``-per-call
    equivalent, a fresh workspace in a prepared sandbox (target: median <= 20 ms), the container's
    CPU per sandbox (target: median <= 30 ms) and the start of a worker's container."""
    section = "docker backend"
    if not docker_ok or bench.settings.smoke:
        note = docker_note if not docker_ok else "skipped in a smoke run"
        bench.rows.append(Row("docker", section, "benchmarks/docker_bench.py", "skipped", note))
        return
    bench.progress(f"{section}: benchmarks/docker_bench.py")
    out = bench.workdir / "docker-bench.json"
    try:
        proc = subprocess.run([sys.executable, "benchmarks/docker_bench.py", "--json", str(out)], cwd=REPO,
                              capture_output=True, text=True, check=False, timeout=bench.settings.corpus_timeout_s)
    except subprocess.TimeoutExpired:
        bench.rows.append(Row("docker", section, "benchmarks/docker_bench.py", "failed",
                              f"no answer within {bench.settings.corpus_timeout_s:.0f} s"))
        return
    if not out.is_file():
        last = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"
        bench.rows.append(Row("docker", section, "benchmarks/docker_bench.py", "failed", last))
        return
    figures = json.loads(out.read_text(encoding="utf-8"))
    impl = figures["implementation"]
    for tool in figures["tools"]:
        name = tool["tool"]
        bench.rows.append(Row(
            f"docker.{name.replace(' ', '-')}", section,
            f"{name}: persistent server in the container ({impl}) vs one `docker exec` per call "
            f"(`{tool['exec_equivalent']}`)",
            f"{tool['persistent_ms']:.2f} ms ({tool['exec_ms'] / tool['persistent_ms']:.0f}× faster)",
            f"{tool['exec_ms']:.1f} ms",
            ratio=tool["persistent_ms"] / tool["exec_ms"], data=tool))
    ws = figures["workspace"]
    bench.rows.append(Row(
        "docker.workspace", section, f"fresh {ws['files']}-file workspace in a prepared sandbox, median of {ws['n']}",
        f"{ws['median_ms']:.2f} ms (p90 {ws['p90_ms']:.2f})", "",
        data={**ws, "value_target": ws["target_ms"], "value_unit": "ms", "value_met": ws["met"]}))
    cpu = figures["sandbox_cpu"]
    bench.rows.append(Row(
        "docker.sandbox", section, "making one scenario's sandbox (namespaces, mounts, a fresh implementation), "
        f"the container's CPU, median of {cpu['batches']} batches of {cpu['batch']} (made ahead, off the critical path)",
        f"{cpu['median_ms']:.1f} ms", "",
        data={**cpu, "value_target": cpu["target_ms"], "value_unit": "ms", "value_met": cpu["met"]}))
    bench.rows.append(Row(
        "docker.container", section, "starting a worker's container up to hello (once per worker)",
        f"{figures['container_start_median_ms']:.0f} ms", "",
        data={"container_start_median_ms": figures["container_start_median_ms"],
              "first_start_ms": figures["first_start_ms"]}))


def docker_engine() -> tuple[bool, str]:
    docker = shutil.which("docker")
    if docker is None:
        return False, "no docker client"
    try:
        proc = subprocess.run([docker, "info", "--format", "{{.ServerVersion}}"], capture_output=True,
                              text=True, timeout=15, check=False)
    except subprocess.TimeoutExpired:
        return False, "docker engine did not answer"
    if proc.returncode != 0:
        return False, "no docker engine answers"
    return True, proc.stdout.strip()


def build_trees(bench: Bench, sizes: Sequence[int]) -> dict[int, Path]:
    """One tree per size, one copy per server (a server may write into its workspace)."""
    trees: dict[int, Path] = {}
    for files in sizes:
        bench.progress(f"building a {files}-file tree")
        tree = bench.workdir / f"tree-{files}"
        for server in bench.servers:
            root = tree / server.label.replace(" ", "-")
            root.mkdir(parents=True)
            fixtures.build_tree(root, files)
        trees[files] = tree
    return trees


SHM_DIR = "/dev/shm"


def default_workdir() -> str | None:
    """Where workspaces go: a RAM file system when the host has one, so that the figures measure
    the tool layers rather than the disk (a truncating write on ext4 alone can take milliseconds)."""
    if os.path.isdir(SHM_DIR) and os.access(SHM_DIR, os.W_OK):
        return SHM_DIR
    return None  # the system temporary directory


def run_all(settings: Settings, reference: ToolServer, other: ToolServer | None, other_missing: str,
            rg_binary: str, fd_missing: str, progress: Callable[[str], None],
            sections: Sequence[str], workdir: str | None = None) -> list[Row]:
    docker_ok, docker_note = docker_engine() if ("corpus" in sections or "docker" in sections) else (False, "")
    with tempfile.TemporaryDirectory(prefix="toolproof-bench-", dir=workdir) as tmp:
        bench = Bench(settings, reference, other, other_missing, Path(tmp), progress)
        bench.fd_missing = fd_missing
        if "per-call" in sections:
            per_call_section(bench)
        if "edit-size" in sections:
            edit_size_section(bench)
        if CONTENT_SECTION in sections:
            content_section(bench)
        if "growth" in sections or "rg" in sections:
            sizes = [settings.base_files * f for f in ((1, 10, 100) if "growth" in sections else (100,))]
            trees = build_trees(bench, sizes)
            if "growth" in sections:
                growth_section(bench, trees)
            if "rg" in sections:
                top = settings.base_files * 100
                rg_section(bench, trees[top], top, rg_binary)
        if "corpus" in sections:
            corpus_section(bench, docker_ok, docker_note)
        if "docker" in sections:
            docker_section(bench, docker_ok, docker_note)
    return bench.rows


def rows_json(rows: Sequence[Row]) -> str:
    return json.dumps([r.to_json() for r in rows], indent=2, default=lambda o: None if isinstance(o, float)
                      and not math.isfinite(o) else str(o))


def machine_description() -> dict[str, str]:
    import platform

    info: dict[str, str] = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    info["cpu"] = f"{cpu}, {os.cpu_count()} logical cores"
    try:
        pages, page = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        info["memory"] = f"{pages * page / 2**30:.1f} GiB"
    except (ValueError, OSError, AttributeError):
        pass
    info["os"] = f"{platform.system()} {platform.release()}"
    info["python"] = platform.python_version()
    try:
        info["load average at start"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        pass
    return info
