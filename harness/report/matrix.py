"""The conformance matrix: several runs' JSON results (one per implementation, backend or profile)
combined into scenarios × runs, with each scenario's ``patch:<name>`` tags, per-run totals, the
rows where the runs disagree, and a patch view (how each run fares on the scenarios pinning a
patch). Owns the ``toolproof matrix`` command and its two reports: one self-contained HTML page
and a compact Markdown summary (docs/matrix.md).

The model (``build_matrix``) and the renderers (``to_html``, ``to_markdown``) are pure functions;
only ``harness.cli.matrix_commands`` touches files (results are read by ``report.results_files``).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.model.results import (
    ERROR,
    FAIL,
    PASS,
    SKIP,
    STALE,
    STATUSES,
    XFAIL,
    RunInfo,
    RunResult,
    ScenarioResult,
)
from harness.report.results_files import load_results as load_run  # noqa: F401  (the matrix's name for the shared reader)
from harness.report.writers import STATUS_ICONS

PATCH_TAG_PREFIX = "patch:"
UNGROUPED = "other"
NOT_RUN = "not run"
NOT_RUN_MARK = "—"
# A cell's statuses compared for "the runs disagree": a baseline only relabels an outcome
# (xfail is a listed failure, stale a listed pass), so it must not make identical behaviour differ.
OUTCOME = {PASS: PASS, STALE: PASS, FAIL: FAIL, XFAIL: FAIL, ERROR: ERROR, SKIP: SKIP}
FAILING_STEP_STATUSES = (FAIL, ERROR, STALE, XFAIL)
TOTAL_KEYS = (*STATUSES, NOT_RUN)

VERDICT_ALL_PASS = "all pass"
VERDICT_ALL_FAIL = "all fail"
VERDICT_MIXED = "mixed"
VERDICT_UNTESTED = "untested"

MARKDOWN_MAX_ROWS = 50
MARKDOWN_MAX_LABEL_CHARS = 60
HTML_MAX_MESSAGE_CHARS = 4000
HTML_MAX_MESSAGE_LINES = 60
TOOLTIP_MAX_CHARS = 300
HTML_TITLE = "toolproof conformance matrix"
MATRIX_STATUS_ICONS = {**STATUS_ICONS, NOT_RUN: NOT_RUN_MARK}
_CODE_SPAN_SAFE = re.compile(r"^[A-Za-z0-9._/:@+-]+$")


# -- model ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MatrixColumn:
    """One run: its label in the matrix, the file it came from and its run info."""

    label: str
    source: str
    info: RunInfo


@dataclass(frozen=True)
class CellStep:
    """One step of a scenario in one run: its status, every message (with diffs) and what the
    implementation answered (``output``: the result text, or ``raised: <error>``; None when the
    results carry no observation)."""

    id: str
    status: str
    messages: tuple[str, ...] = ()
    output: str | None = None

    @property
    def failing(self) -> bool:
        return self.status in FAILING_STEP_STATUSES


@dataclass(frozen=True)
class MatrixCell:
    """One scenario in one run. ``status`` is None when the run does not contain the scenario."""

    status: str | None
    failing_steps: tuple[str, ...] = ()
    message: str = ""  # the first failure message (scenario message, else the first failing step's)
    reason: str = ""   # skip reason, or the baseline reason of an xfail/stale
    steps: tuple[CellStep, ...] = ()

    def step(self, step_id: str) -> CellStep | None:
        return next((st for st in self.steps if st.id == step_id), None)

    @property
    def text(self) -> str:
        return self.status if self.status is not None else NOT_RUN_MARK

    @property
    def outcome(self) -> str | None:
        return OUTCOME.get(self.status) if self.status is not None else None

    @property
    def detail(self) -> str:
        """Everything a reader needs to see why: failing steps, first message, reason."""
        parts: list[str] = []
        if self.status is None:
            return "not run: this scenario is not in this run's results"
        if self.failing_steps:
            parts.append("failing steps: " + ", ".join(self.failing_steps))
        parts += [p for p in (self.message, self.reason_text) if p]
        return "\n".join(parts)

    @property
    def reason_text(self) -> str:
        if not self.reason:
            return ""
        return ("skipped: " if self.status == SKIP else "baseline: ") + self.reason


@dataclass(frozen=True)
class MatrixRow:
    id: str
    group: str
    title: str
    patches: tuple[str, ...]
    tags: tuple[str, ...]
    cells: tuple[MatrixCell, ...]
    skips_differ: bool = False

    @property
    def differs(self) -> bool:
        """The runs that ran this scenario disagree on its behaviour (see ``OUTCOME``). A skip is
        neutral (it says nothing about behaviour) unless ``skips_differ``."""
        outcomes = {c.outcome for c in self.cells if c.status is not None}
        if not self.skips_differ:
            outcomes.discard(SKIP)
        return len(outcomes) > 1

    @property
    def incomplete(self) -> bool:
        """Some run does not contain this scenario."""
        return any(c.status is None for c in self.cells)

    @property
    def needs_attention(self) -> bool:
        """The runs differ, some run lacks the scenario, or some run failed, errored, xfailed or
        has a stale baseline entry for it."""
        return self.differs or self.incomplete or any(c.status not in (PASS, SKIP) for c in self.cells)


@dataclass(frozen=True)
class PatchCell:
    """How one run fares on the scenarios that pin one patch."""

    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    not_run: int = 0

    @property
    def ran(self) -> int:
        return self.passed + self.failed

    @property
    def verdict(self) -> str:
        if self.ran == 0:
            return VERDICT_UNTESTED
        if self.errors == 0 and self.failed == 0:
            return VERDICT_ALL_PASS
        if self.errors == 0 and self.passed == 0:
            return VERDICT_ALL_FAIL
        return VERDICT_MIXED

    @property
    def text(self) -> str:
        """``all pass 3/3``; extras (errors, skips, not run) in parentheses."""
        extras = [f"{n} {word}" for n, word in ((self.errors, ERROR), (self.skipped, SKIP),
                                                 (self.not_run, NOT_RUN)) if n]
        core = self.verdict if self.ran == 0 else f"{self.verdict} {self.passed}/{self.ran}"
        return core + (f" ({', '.join(extras)})" if extras else "")


@dataclass(frozen=True)
class PatchRow:
    patch: str
    scenario_ids: tuple[str, ...]
    cells: tuple[PatchCell, ...]

    @property
    def differs(self) -> bool:
        return len({c.verdict for c in self.cells}) > 1


@dataclass(frozen=True)
class Matrix:
    columns: tuple[MatrixColumn, ...]
    rows: tuple[MatrixRow, ...]

    def totals(self) -> tuple[dict[str, int], ...]:
        """Per column: how many scenarios have each status, plus ``not run``."""
        out = []
        for i in range(len(self.columns)):
            counts = dict.fromkeys(TOTAL_KEYS, 0)
            for row in self.rows:
                counts[row.cells[i].status or NOT_RUN] += 1
            out.append(counts)
        return tuple(out)

    @property
    def differing(self) -> tuple[MatrixRow, ...]:
        return tuple(r for r in self.rows if r.differs)

    @property
    def groups(self) -> tuple[tuple[str, tuple[MatrixRow, ...]], ...]:
        out: dict[str, list[MatrixRow]] = {}
        for row in self.rows:
            out.setdefault(row.group, []).append(row)
        return tuple((g, tuple(rs)) for g, rs in out.items())

    def notes(self) -> tuple[str, ...]:
        """Mismatched corpora: which runs lack which scenarios (cells shown as ``—``)."""
        incomplete = [r for r in self.rows if r.incomplete]
        if not incomplete:
            return ()
        out = [f"{len(incomplete)} of {len(self.rows)} scenario(s) are not in every run; "
               f"their missing cells show {NOT_RUN_MARK} ({NOT_RUN})."]
        for i, col in enumerate(self.columns):
            missing = sum(1 for r in self.rows if r.cells[i].status is None)
            if missing:
                out.append(f"{col.label}: {missing} scenario(s) not run.")
        return tuple(out)

    def patch_rows(self) -> tuple[PatchRow, ...]:
        patches: dict[str, list[MatrixRow]] = {}
        for row in self.rows:
            for p in row.patches:
                patches.setdefault(p, []).append(row)
        out = []
        for patch in sorted(patches):
            rows = patches[patch]
            cells = []
            for i in range(len(self.columns)):
                n = dict.fromkeys((PASS, FAIL, ERROR, SKIP, NOT_RUN), 0)
                for row in rows:
                    n[row.cells[i].outcome or NOT_RUN] += 1
                cells.append(PatchCell(n[PASS], n[FAIL], n[ERROR], n[SKIP], n[NOT_RUN]))
            out.append(PatchRow(patch, tuple(r.id for r in rows), tuple(cells)))
        return tuple(out)


def where_it_ran(backend: str) -> str:
    """The backend part of a run's backend label: ``local``, ``docker``, ``docker:IMAGE`` — not
    the implementation's command line (``local --impl cmd:…``, or the ``cmd:…`` alias of local),
    which the implementation's name already stands for in a label."""
    if backend.startswith("cmd:"):
        return "local"
    return backend.split(" --impl ", 1)[0].strip()


def column_label(info: RunInfo, source: str = "") -> str:
    """``<implementation> <version> [<backend>]`` from the run info (the file name if it has no
    implementation); the full backend label, command included, is in the runs table."""
    who = " ".join(p for p in (info.implementation, info.version) if p)
    where = where_it_ran(info.backend) if info.backend else ""
    if where:
        who = f"{who} [{where}]" if who else f"[{info.backend}]"
    return who or Path(source).name or "run"


def _unique_labels(labels: Sequence[str], sources: Sequence[str]) -> list[str]:
    """Equal labels (e.g. two profiles of one implementation) get their file name, then a number."""
    out = list(labels)
    for attempt in range(2):
        seen: dict[str, int] = {}
        for lab in out:
            seen[lab] = seen.get(lab, 0) + 1
        for i, lab in enumerate(out):
            if seen[lab] > 1:
                out[i] = f"{lab} ({Path(sources[i]).name})" if attempt == 0 else f"{lab} #{i + 1}"
    return out


def group_of(scenario_id: str) -> str:
    return scenario_id.split("/", 1)[0] if "/" in scenario_id else UNGROUPED


def patches_of(tags: Iterable[str]) -> tuple[str, ...]:
    return tuple(t[len(PATCH_TAG_PREFIX):] for t in tags if t.startswith(PATCH_TAG_PREFIX))


def observed_output(obs: dict[str, object] | None) -> str | None:
    """What an implementation answered in one step, from its observation JSON."""
    if not isinstance(obs, dict):
        return None
    if obs.get("status") == "error":
        return f"raised ({obs.get('error_kind') or 'error'}): {obs.get('error', '')}"
    text = obs.get("text")
    return text if isinstance(text, str) else None


def cell_for(res: ScenarioResult) -> MatrixCell:
    failing = tuple(st.id for st in res.steps if st.status in FAILING_STEP_STATUSES)
    message = res.message or next((m for st in res.steps if st.status in FAILING_STEP_STATUSES
                                   for m in st.messages if m), "")
    reason = res.reason or next((st.reason for st in res.steps if st.reason
                                 and st.status in (XFAIL, STALE)), "")
    steps = tuple(CellStep(st.id, st.status, st.messages, observed_output(st.observation)) for st in res.steps)
    return MatrixCell(res.status, failing, message, reason, steps)


def build_matrix(runs: Sequence[tuple[str, RunResult]], labels: Sequence[str | None] = (),
                 skips_differ: bool = False) -> Matrix:
    """Rows: every scenario id of any run, sorted by group (first id segment; ids without one
    last, as ``other``) then id. Columns: the runs in the order given; ``labels[i]`` (if given
    and not None) overrides run i's label. Title and tags come from the first run that has them.
    ``skips_differ``: a skip against a pass or fail counts as a difference (default: neutral)."""
    names: list[str] = []
    for i, (src, run) in enumerate(runs):
        given = labels[i] if i < len(labels) else None
        names.append(given or column_label(run.info, src))
    names = _unique_labels(names, [src for src, _ in runs])
    columns = tuple(MatrixColumn(name, src, run.info) for name, (src, run) in zip(names, runs, strict=True))
    by_run = [{s.id: s for s in run.scenarios} for _, run in runs]
    ids = sorted({sid for m in by_run for sid in m},
                 key=lambda sid: (group_of(sid) == UNGROUPED, group_of(sid), sid))
    rows = []
    for sid in ids:
        present = [m[sid] for m in by_run if sid in m]
        title = next((s.title for s in present if s.title), "")
        tags: list[str] = []
        for s in present:
            tags += [t for t in s.tags if t not in tags]
        cells = tuple(cell_for(m[sid]) if sid in m else MatrixCell(None) for m in by_run)
        rows.append(MatrixRow(sid, group_of(sid), title, patches_of(tags), tuple(tags), cells, skips_differ))
    return Matrix(columns, tuple(rows))


# -- HTML -----------------------------------------------------------------------------------------

def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _clip(text: str, max_chars: int, max_lines: int | None = None) -> str:
    lines = text.splitlines()
    if max_lines is not None and len(lines) > max_lines:
        text = "\n".join(lines[:max_lines]) + f"\n… ({len(lines) - max_lines} more lines)"
    if len(text) > max_chars:
        text = text[:max_chars] + f"… ({len(text) - max_chars} more characters)"
    return text


_CSS = """
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#fff;--head:#f6f8fa;--hl:#fff8c5;--hl-edge:#bf8700;
--pass-bg:#dafbe1;--pass-fg:#116329;--fail-bg:#ffebe9;--fail-fg:#a40e26;--error-bg:#fbefff;--error-fg:#6e40c9;
--skip-bg:#eff2f5;--skip-fg:#59636e;--xfail-bg:#fff8c5;--xfail-fg:#7d4e00;--stale-bg:#fff1e5;--stale-fg:#953800}
*{box-sizing:border-box}
html{overflow-x:auto}
body{margin:0 auto;padding:24px 32px;max-width:1400px;font:14px/1.45 -apple-system,BlinkMacSystemFont,"Segoe UI",Helvetica,Arial,sans-serif;
color:var(--fg);background:var(--bg)}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
p.lead{color:var(--muted);margin:0 0 16px}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
table{border-collapse:collapse;margin:0 0 8px;width:100%;table-layout:fixed}
th,td{border:1px solid var(--line);padding:5px 8px;text-align:left;vertical-align:top;overflow-wrap:anywhere}
thead th{background:var(--head);position:sticky;top:0;z-index:1}
tfoot th,tfoot td{background:var(--head)}
#runs th:first-child{width:16%}#runs td code{overflow-wrap:anywhere}
#matrix{table-layout:auto}#matrix thead th:first-child{width:240px}#matrix thead th:nth-child(2){width:1%;white-space:nowrap}
#patches thead th:first-child{width:280px}#patches thead th:nth-child(2){width:90px}
tfoot tr:first-child>*{border-top:2px solid #afb8c1}
td.num{text-align:right;font-variant-numeric:tabular-nums}
th.group{background:#eaeef2;font-size:13px;letter-spacing:.02em}
th.sid{font-weight:normal}
th.sid code{font-weight:600;font-size:13px}
.title{display:block;color:var(--muted);font-size:12px}
.tag{display:inline-block;border:1px solid var(--line);border-radius:10px;padding:0 7px;margin:1px 2px 1px 0;
font-size:11px;white-space:nowrap;background:var(--head)}
.st{display:inline-block;border-radius:4px;padding:1px 7px;font-weight:600;font-size:12px;white-space:nowrap}
.st-pass{background:var(--pass-bg);color:var(--pass-fg)}.st-fail{background:var(--fail-bg);color:var(--fail-fg)}
.st-error{background:var(--error-bg);color:var(--error-fg)}.st-skip{background:var(--skip-bg);color:var(--skip-fg)}
.st-xfail{background:var(--xfail-bg);color:var(--xfail-fg)}.st-stale{background:var(--stale-bg);color:var(--stale-fg)}
.st-notrun{color:var(--muted);font-weight:normal}
.st-all-pass{background:var(--pass-bg);color:var(--pass-fg)}.st-all-fail{background:var(--fail-bg);color:var(--fail-fg)}
.st-mixed{background:var(--xfail-bg);color:var(--xfail-fg)}.st-untested{background:var(--skip-bg);color:var(--skip-fg)}
tr.differs>th.sid{box-shadow:inset 4px 0 0 var(--hl-edge);background:var(--hl)}
.flag{display:inline-block;margin-left:6px;font-size:11px;font-weight:600;color:var(--hl-edge);
border:1px solid var(--hl-edge);border-radius:4px;padding:0 4px}
details>summary{cursor:pointer;list-style:none;white-space:nowrap}
details>summary::-webkit-details-marker{display:none}
details>summary::after{content:"▸";color:var(--muted);margin-left:5px;font-size:11px}
details[open]>summary::after{content:"▾"}
details .steps{margin:4px 0 2px;font-size:12px;color:var(--muted)}
details pre{margin:2px 0 0;padding:6px 8px;background:var(--head);border:1px solid var(--line);border-radius:4px;
white-space:pre-wrap;overflow-wrap:anywhere;max-height:320px;overflow:auto}
.fstep{margin:6px 0 4px}.sthead{font-size:12px;margin-bottom:2px}
.pair{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,300px),1fr));gap:6px}
.pair>div{min-width:0}.cap{font-size:11px;color:var(--muted);margin-top:4px}
pre .ddel{color:var(--fail-fg);background:var(--fail-bg)}
pre .dadd{color:var(--pass-fg);background:var(--pass-bg)}
pre .dhunk{color:#0550ae}pre .dh{color:var(--muted);font-weight:600}
pre.out{background:#fff}
.controls{display:flex;gap:18px;align-items:center;margin:8px 0 10px;flex-wrap:wrap}
.controls input[type=search]{padding:4px 8px;border:1px solid var(--line);border-radius:4px;min-width:260px;font:inherit}
.notes{border-left:4px solid var(--hl-edge);background:var(--hl);padding:8px 12px;margin:12px 0}
.notes p{margin:2px 0}
.muted{color:var(--muted)}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
@media print{thead th{position:static}.controls{display:none}}
"""

# Filtering only hides rows; every row and message is in the page, so it reads the same without JS.
_JS = """
(function(){
var only=document.getElementById('only-diff'),q=document.getElementById('filter'),
rows=document.querySelectorAll('#matrix tbody tr.row'),groups=document.querySelectorAll('#matrix tbody'),
shown=document.getElementById('shown');
function apply(){var t=q.value.trim().toLowerCase(),n=0;
rows.forEach(function(r){var ok=(!only.checked||r.dataset.differs==='1')&&(!t||r.dataset.search.indexOf(t)>=0);
r.hidden=!ok;if(ok)n++;});
groups.forEach(function(g){g.hidden=!g.querySelector('tr.row:not([hidden])');});
shown.textContent=n+' of '+rows.length+' scenarios shown';}
only.addEventListener('change',apply);q.addEventListener('input',apply);apply();
})();
"""


def _status_badge(status: str | None) -> str:
    if status is None:
        return f'<span class="st st-notrun" title="not run">{NOT_RUN_MARK}<span class="sr"> not run</span></span>'
    return f'<span class="st st-{_e(status)}">{_e(status)}</span>'


def _diff_html(text: str) -> str:
    """A message with its unified diff coloured: removed (expected) lines red, added (actual)
    lines green, hunk headers blue; everything escaped."""
    out = []
    for line in text.split("\n"):
        if line.startswith(("--- ", "+++ ")):
            cls = "dh"
        elif line.startswith("@@"):
            cls = "dhunk"
        elif line.startswith("-"):
            cls = "ddel"
        elif line.startswith("+"):
            cls = "dadd"
        else:
            cls = ""
        out.append(f'<span class="{cls}">{_e(line)}</span>' if cls else _e(line))
    return "\n".join(out)


def _other_output(step_id: str, me: int, row: MatrixRow, columns: Sequence[MatrixColumn]) -> tuple[str, str] | None:
    """(label, output) of the same step in another run: a passing one first, else any."""
    others = [(columns[i].label, c.step(step_id)) for i, c in enumerate(row.cells) if i != me]
    found = [(label, st) for label, st in others if st is not None and st.output is not None]
    found.sort(key=lambda pair: pair[1].failing)
    return (found[0][0], found[0][1].output or "") if found else None


def _html_cell(cell: MatrixCell, column: str, row: MatrixRow | None = None, me: int = 0,
               columns: Sequence[MatrixColumn] = ()) -> str:
    detail = cell.detail
    if cell.status in (None, PASS) or not detail:
        return f"<td>{_status_badge(cell.status)}</td>"
    tip = _e(_clip(detail, TOOLTIP_MAX_CHARS, 6))
    parts: list[str] = []
    if cell.message and (not cell.steps or cell.message not in {m for st in cell.steps for m in st.messages}):
        parts.append(f'<pre class="msg">{_diff_html(_clip(cell.message, HTML_MAX_MESSAGE_CHARS, HTML_MAX_MESSAGE_LINES))}</pre>')
    for st in (s for s in cell.steps if s.failing):
        body = "\n".join(st.messages)
        mine = (f'<pre class="msg">{_diff_html(_clip(body, HTML_MAX_MESSAGE_CHARS, HTML_MAX_MESSAGE_LINES))}</pre>'
                if body else "")
        if st.output is not None:
            mine += (f'<div class="cap">{_e(column)} answered</div>'
                     f'<pre class="out">{_e(_clip(st.output, HTML_MAX_MESSAGE_CHARS, HTML_MAX_MESSAGE_LINES))}</pre>')
        other = _other_output(st.id, me, row, columns) if row is not None else None
        theirs = ""
        if other is not None:
            theirs = (f'<div class="theirs"><div class="cap">{_e(other[0])} answered</div>'
                      f'<pre class="out">{_e(_clip(other[1], HTML_MAX_MESSAGE_CHARS, HTML_MAX_MESSAGE_LINES))}</pre></div>')
        parts.append(f'<div class="fstep"><div class="sthead">step <code>{_e(st.id)}</code> '
                     f'{_status_badge(st.status)}</div><div class="pair"><div class="mine">{mine}</div>{theirs}</div></div>')
    if not cell.steps and cell.failing_steps:
        parts.insert(0, f'<div class="steps">failing steps: {_e(", ".join(cell.failing_steps))}</div>')
    if cell.reason_text:
        parts.append(f'<pre class="msg">{_e(_clip(cell.reason_text, HTML_MAX_MESSAGE_CHARS, HTML_MAX_MESSAGE_LINES))}</pre>')
    if not cell.steps and cell.message and not parts:
        parts.append(f'<pre class="msg">{_e(cell.message)}</pre>')
    return (f'<td title="{tip}"><details><summary>{_status_badge(cell.status)}'
            f'<span class="sr"> in {_e(column)}: details</span></summary>{"".join(parts)}</details></td>')


def _tags_html(names: Iterable[str]) -> str:
    return "".join(f'<span class="tag">{_e(n)}</span>' for n in names)


def _runs_table(m: Matrix, totals: Sequence[dict[str, int]]) -> list[str]:
    out = ['<table id="runs"><caption class="sr">Runs</caption><thead><tr>',
           '<th scope="col">Run</th><th scope="col">Implementation</th><th scope="col">Version</th>'
           '<th scope="col">Backend</th><th scope="col">Baseline</th><th scope="col">Started</th>'
           '<th scope="col">Results file</th><th scope="col">Summary</th></tr></thead><tbody>']
    for col, tot in zip(m.columns, totals, strict=True):
        summary = ", ".join(f"{n} {k}" for k, n in tot.items() if n) or "no scenarios"
        i = col.info
        out.append(f'<tr><th scope="row">{_e(col.label)}</th><td>{_e(i.implementation)}</td>'
                   f'<td>{_e(i.version)}</td><td><code>{_e(i.backend)}</code></td><td>{_e(i.baseline)}</td>'
                   f'<td>{_e(i.started)}</td><td><code>{_e(Path(col.source).name)}</code></td>'
                   f'<td>{_e(summary)}</td></tr>')
    out.append("</tbody></table>")
    return out


def _patch_table(m: Matrix) -> list[str]:
    prows = m.patch_rows()
    if not prows:
        return ['<p class="muted">No scenario carries a <code>patch:</code> tag.</p>']
    out = ['<p class="lead">For each patch, the scenarios tagged <code>patch:&lt;name&gt;</code>: '
           '<em>all pass 3/3</em> means the run passes every one of them it ran; a run that lacks '
           'the patch fails them. Rows where the runs disagree are highlighted.</p>',
           '<table id="patches"><caption class="sr">Patch view</caption><thead><tr>'
           '<th scope="col">Patch</th><th scope="col">Scenarios</th>']
    out.append("".join(f'<th scope="col">{_e(c.label)}</th>' for c in m.columns) + "</tr></thead><tbody>")
    for pr in prows:
        flag = '<span class="flag">differs</span>' if pr.differs else ""
        cls = ' class="differs"' if pr.differs else ""
        ids = "\n".join(pr.scenario_ids)
        out.append(f'<tr{cls}><th scope="row" class="sid"><code>{_e(pr.patch)}</code>{flag}</th>'
                   f'<td class="num" title="{_e(ids)}">{len(pr.scenario_ids)}</td>'
                   + "".join(f'<td><span class="st st-{c.verdict.replace(" ", "-")}">{_e(c.text)}</span></td>'
                             for c in pr.cells)
                   + "</tr>")
    out.append("</tbody></table>")
    return out


def to_html(m: Matrix) -> str:
    """One self-contained page (inline CSS and a few lines of JS; nothing fetched). Every text
    that comes from results (ids, titles, tags, messages, labels) is HTML-escaped."""
    totals = m.totals()
    ndiff = len(m.differing)
    ncols = len(m.columns)
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>{_e(HTML_TITLE)}</title><style>{_CSS}</style></head><body>",
           f"<h1>{_e(HTML_TITLE)}</h1>",
           f'<p class="lead">{len(m.rows)} scenarios × {ncols} run(s); '
           f"{ndiff} scenario(s) where the runs disagree.</p>"]
    notes = m.notes()
    if notes:
        out.append('<div class="notes" role="note">' + "".join(f"<p>{_e(n)}</p>" for n in notes) + "</div>")
    out.append('<h2 id="runs-h">Runs</h2>')
    out += _runs_table(m, totals)
    out.append('<h2 id="patches-h">Patches</h2>')
    out += _patch_table(m)
    out += ['<h2 id="matrix-h">Scenarios</h2>',
            '<div class="controls"><label><input type="checkbox" id="only-diff"> Only differences '
            f"({ndiff})</label>",
            '<label>Filter <input type="search" id="filter" placeholder="id, title or tag"></label>',
            '<span id="shown" class="muted" aria-live="polite"></span></div>',
            '<table id="matrix"><caption class="sr">Scenario results by run</caption><thead><tr>'
            '<th scope="col">Scenario</th><th scope="col">Patches</th>']
    out.append("".join(f'<th scope="col">{_e(c.label)}</th>' for c in m.columns) + "</tr></thead>")
    for group, rows in m.groups:
        out.append(f'<tbody><tr><th scope="rowgroup" class="group" colspan="{ncols + 2}">{_e(group)} '
                   f'<span class="muted">({len(rows)})</span></th></tr>')
        for row in rows:
            search = " ".join(p for p in (row.id, row.title, *row.tags) if p).lower()
            cls = "row differs" if row.differs else "row"
            flag = '<span class="flag">differs</span>' if row.differs else ""
            title = f'<span class="title">{_e(row.title)}</span>' if row.title else ""
            out.append(f'<tr class="{cls}" data-differs="{int(row.differs)}" data-search="{_e(search)}">'
                       f'<th scope="row" class="sid"><code>{_e(row.id)}</code>{flag}{title}</th>'
                       f"<td>{_tags_html(row.patches)}</td>"
                       + "".join(_html_cell(c, col.label, row, i, m.columns)
                                 for i, (c, col) in enumerate(zip(row.cells, m.columns, strict=True)))
                       + "</tr>")
        out.append("</tbody>")
    out.append("<tfoot>")
    for key in TOTAL_KEYS:
        if not any(t[key] for t in totals):
            continue
        badge = _status_badge(key) if key != NOT_RUN else f'<span class="st st-notrun">{NOT_RUN_MARK} {NOT_RUN}</span>'
        out.append(f'<tr><th scope="row" colspan="2">{badge}</th>'
                   + "".join(f'<td class="num">{t[key]}</td>' for t in totals) + "</tr>")
    out.append('<tr><th scope="row" colspan="2">total</th>'
               + "".join(f'<td class="num">{len(m.rows)}</td>' for _ in totals) + "</tr>")
    out += ["</tfoot></table>", f"<script>{_JS}</script>", "</body></html>"]
    return "\n".join(out) + "\n"


# -- Markdown -------------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def md_text(text: str) -> str:
    """Plain text safe inside a GitHub Markdown table cell (no HTML, no emphasis, no cell breaks)."""
    flat = " ".join(text.split())
    return _MD_SPECIAL.sub(r"\\\1", html.escape(flat, quote=False))


def md_code(text: str) -> str:
    return f"`{text}`" if _CODE_SPAN_SAFE.match(text) else md_text(text)


def _md_cell(cell: MatrixCell) -> str:
    if cell.status is None:
        return NOT_RUN_MARK
    word = f"{MATRIX_STATUS_ICONS[cell.status]} {cell.status}"
    if cell.failing_steps:
        word += " (" + ", ".join(md_text(s) for s in cell.failing_steps) + ")"
    return word


def _md_label(label: str) -> str:
    return md_text(label if len(label) <= MARKDOWN_MAX_LABEL_CHARS else label[:MARKDOWN_MAX_LABEL_CHARS - 1] + "…")


def to_markdown(m: Matrix, max_rows: int = MARKDOWN_MAX_ROWS) -> str:
    """Compact enough for ``$GITHUB_STEP_SUMMARY``: totals, the patch view, and the scenarios
    that need attention (``MatrixRow.needs_attention``), capped at ``max_rows`` with the number
    omitted."""
    totals = m.totals()
    labels = [_md_label(c.label) for c in m.columns]
    head = "| " + " | ".join(labels) + " |"
    rule = "| " + " | ".join("---:" for _ in labels) + " |"
    lines = ["## toolproof conformance matrix", "",
             f"{len(m.rows)} scenarios × {len(m.columns)} run(s); "
             f"{len(m.differing)} scenario(s) where the runs disagree.", ""]
    lines += [f"> {md_text(n)}" for n in m.notes()]
    if m.notes():
        lines.append("")
    lines += ["| status " + head, "| --- " + rule]
    for key in TOTAL_KEYS:
        if any(t[key] for t in totals):
            lines.append(f"| {MATRIX_STATUS_ICONS[key]} {key} | " + " | ".join(str(t[key]) for t in totals) + " |")
    prows = m.patch_rows()
    if prows:
        lines += ["", "### Patches", "", "| patch | scenarios " + head,
                  "| --- | ---: " + rule.replace("---:", "---")]
        for pr in prows:
            name = md_code(pr.patch) + (" ≠" if pr.differs else "")
            lines.append(f"| {name} | {len(pr.scenario_ids)} | " + " | ".join(c.text for c in pr.cells) + " |")
    shown = [r for r in m.rows if r.needs_attention]
    lines += ["", "### Scenarios", ""]
    if not shown:
        lines.append(f"All {len(m.rows)} scenarios pass or are skipped alike in every run." if m.rows
                     else "No scenarios in these results.")
        return "\n".join(lines) + "\n"
    lines += ["| scenario | patches " + head, "| --- | --- " + rule.replace("---:", "---")]
    for row in shown[:max_rows]:
        sid = md_code(row.id) + (" ≠" if row.differs else "")
        patches = ", ".join(md_code(p) for p in row.patches)
        lines.append(f"| {sid} | {patches} | " + " | ".join(_md_cell(c) for c in row.cells) + " |")
    lines.append("")
    if len(shown) > max_rows:
        lines.append(f"… {len(shown) - max_rows} more scenario(s) omitted (see the HTML report).")
    hidden = len(m.rows) - len(shown)
    if hidden:
        lines.append(f"{hidden} scenario(s) that every run passes (or every run skips) are not listed.")
    lines.append("≠ marks a scenario (or patch) on which the runs disagree.")
    return "\n".join(lines) + "\n"
