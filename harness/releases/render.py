"""The release report as a terminal table, Markdown and HTML (JSON is ``Report.to_json``).

The HTML page is a timeline: one row per change, one column per release, the cell of the first
release that shows the change marked, releases that do not install or load hatched; then patch
survival as a grid (toggles × releases, one verdict letter per cell, its evidence in the cell's
title and in the list below the grid). Self-contained, no script.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Sequence

from harness.releases.analysis import (
    ADOPTED,
    DIVERGED,
    NEEDED,
    UNTESTED,
    VERDICTS,
    WRAPPER_BROKEN,
    Change,
    Report,
    Survival,
)
from harness.releases.history import entry_key
from harness.releases.records import OK, ReleaseState

LETTER = {NEEDED: "N", ADOPTED: "A", DIVERGED: "D", WRAPPER_BROKEN: "W", UNTESTED: "·"}
ENTRY_CHARS = 110


def _short(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n - 1] + "…"


def release_line(releases: Sequence[ReleaseState]) -> str:
    counts = Counter(r.state for r in releases)
    parts = [f"{counts[OK]} run"] + [f"{n} {state}" for state, n in sorted(counts.items()) if state != OK]
    return f"{len(releases)} releases ({', '.join(parts)})"


def evidence_text(c: Change, limit: int = 3) -> str:
    names = sorted({s.scenario for s in c.scenarios})
    parts = names[:limit] + ([f"+{len(names) - limit} more"] if len(names) > limit else [])
    fuzz = [f"fuzz: {cls.key}" for cls in c.fuzz_classes]
    parts += fuzz[:1] + ([f"+{len(fuzz) - 1} fuzz classes"] if len(fuzz) > 1 else [])
    return ", ".join(parts)


def interval_text(c: Change) -> str:
    skipped = f" (between: {c.between_text()})" if c.between else ""
    return f"{c.last_release_without} → {c.first_release}{skipped}"


def counts_line(report: Report) -> str:
    unlisted = sum(1 for c in report.changes if not c.listed)
    reproduced = sum(1 for h in report.history if h.reproduced)
    return (f"{len(report.changes)} behaviour change(s), {unlisted} unlisted; {len(report.not_observed)} changelog "
            f"tool entr{'y' if len(report.not_observed) == 1 else 'ies'} not observed; history: {reproduced} of "
            f"{len(report.history)} pinned entries reproduced")


def to_text(report: Report) -> str:
    st = report.state
    out = [f"toolproof releases: {st.impl_template} {st.range_from}..{st.range_to}: {release_line(report.releases)}"]
    for r in report.releases:
        if r.state != OK:
            out.append(f"  {r.version:<8} {r.state}: {r.detail}")
    out.append(counts_line(report))
    if report.changes:
        table = [("tool", "last without → first", "listed", "evidence")]
        for c in report.changes:
            table.append((c.tool, interval_text(c), "yes" if c.listed else "UNLISTED", evidence_text(c)))
        widths = [max(len(row[i]) for row in table) for i in range(3)]
        for row in table:
            out.append(f"  {row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]:<{widths[2]}}  {row[3]}")
    for sid, versions in sorted(st.unstable.items()):
        out.append(f"  unstable: {sid} gave two outcomes at {', '.join(versions)} (stepped over there)")
    if report.survival:
        out.append("patch survival (N needed, A adopted, D diverged, W wrapper broken, · untested):")
        width = max(len(s.toggle) for s in report.survival)
        for s in report.survival:
            runs = "; ".join(f"{a}{'' if a == b else '–' + b} {cell.verdict}" for a, b, cell in s.runs())
            out.append(f"  {s.toggle:<{width}}  {''.join(LETTER[c.verdict] for c in s.cells)}  {runs}")
    stats = st.stats
    if stats:
        out.append(f"sweep: {stats.get('scenario_runs', 0)} scenario runs ({stats.get('scenario_runs_cached', 0)} "
                   f"cached), {stats.get('fuzz_pairs', 0)} fuzz pairs ({stats.get('fuzz_pairs_cached', 0)} cached), "
                   f"{stats.get('bisection_rounds', 0)} bisection rounds, {stats.get('seconds_total', 0)} s")
    return "\n".join(out) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(report: Report, *, title: str = "") -> str:
    st = report.state
    out = [f"# {title or f'pi releases {st.range_from} → {st.range_to}'}", "",
           f"`{st.impl_template}`, {release_line(report.releases)}. {counts_line(report)}.", ""]
    broken = [r for r in report.releases if r.state != OK]
    if broken:
        out += ["| release | state | why |", "| --- | --- | --- |"]
        out += [f"| {r.version} | {r.state} | {_md(r.detail)} |" for r in broken]
        out.append("")
    out += ["## Behaviour changes", "", "| tool | last release without | first release | listed | evidence | "
            "changelog entries in the interval |", "| --- | --- | --- | --- | --- | --- |"]
    for c in report.changes:
        first = c.first_release + (f" ({_md(c.between_text())} before it)" if c.between else "")
        entries = "; ".join(f"{e.version}: {_md(_short(e.summary, ENTRY_CHARS))}" for e in c.changelog_entries)
        listed = "yes" if c.listed else "**unlisted**"
        out.append(f"| {c.tool} | {c.last_release_without} | {first} | {listed} | {_md(evidence_text(c, 6))} | "
                   f"{entries or '—'} |")
    out += ["", "### Evidence", ""]
    for c in report.changes:
        out.append(f"- **{c.id}** ({c.last_release_without} → {c.first_release}"
                   f"{'' if c.bisected else ', not bisected to neighbours'}):")
        for s in c.scenarios:
            out.append(f"  - `{s.scenario}` {s.step}: {_md(s.before)} → {_md(s.after)}")
        for cls in c.fuzz_classes:
            out.append(f"  - fuzz `{_md(cls.key)}` ({cls.count} call(s)){': ' + _md(cls.example) if cls.example else ''}")
    if st.unstable:
        out += ["", "Unstable scenarios (two outcomes at one release, which is stepped over for them): "
                + "; ".join(f"`{sid}` at {', '.join(vs)}" for sid, vs in sorted(st.unstable.items())) + "."]
    if report.not_observed:
        out += ["", "## Changelog tool entries not observed", "", "| version | entry | why |", "| --- | --- | --- |"]
        for n in report.not_observed:
            out.append(f"| {n.entry.version} | {_md(_short(n.entry.summary, ENTRY_CHARS))} (`{entry_key(n.entry)}`) | "
                       f"{_md(n.reason)} |")
    if report.history:
        out += ["", "## Reviewed history (docs/pi-history.md) against this sweep", "",
                "| entry | tool | pinned by | reproduced |", "| --- | --- | --- | --- |"]
        for h in report.history:
            refs = ", ".join([f"`{s}`" for s in h.row.scenarios] + [f"fuzz `{_md(f)}`" for f in h.row.fuzz_classes])
            out.append(f"| `{h.row.key}` | {h.row.tool} | {refs} | {'yes: ' + h.detail if h.reproduced else 'no: ' + h.detail} |")
    out += ["", "## Patch survival", "", "N needed, A adopted, D diverged, W wrapper broken, · untested; each run of "
            "releases with the same verdict names its evidence.", "",
            "| toggle | " + " | ".join(r.version for r in report.releases) + " |",
            "| --- |" + " :-: |" * len(report.releases)]
    for surv in report.survival:
        out.append(f"| `{surv.toggle}` | " + " | ".join(LETTER[c.verdict] for c in surv.cells) + " |")
    out.append("")
    for surv in report.survival:
        out.append(f"- `{surv.toggle}` ({surv.layer}, {surv.tool}): " + "; ".join(
            f"{a}{'' if a == b else '–' + b} **{cell.verdict}** ({_md(cell.evidence)}"
            f"{', ' + _md(cell.note) if cell.note else ''})" for a, b, cell in surv.runs()))
    return "\n".join(out) + "\n"


CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:16px;color:#222;max-width:100%;box-sizing:border-box}
h1{font-size:20px} h2{font-size:17px;margin-top:28px}
.scroll{overflow-x:auto;max-width:100%;border:1px solid #ddd}
table.grid{border-collapse:collapse;font-size:12px}
table.grid th,table.grid td{border:1px solid #e3e3e3;padding:2px 4px;text-align:center;white-space:nowrap}
table.grid th.rel{writing-mode:vertical-rl;transform:rotate(180deg);font-weight:normal;height:64px}
table.grid td.name{text-align:left;position:sticky;left:0;background:#fff;z-index:1;max-width:260px;
  overflow:hidden;text-overflow:ellipsis}
td.before{background:#f4f4f4} td.after{background:#dbeafe} td.first{background:#2563eb;color:#fff;font-weight:bold}
td.gap,th.gap{background:repeating-linear-gradient(45deg,#fff,#fff 3px,#fca5a5 3px,#fca5a5 5px)}
td.unlisted{color:#b91c1c;font-weight:bold}
td.v-needed{background:#fef3c7} td.v-adopted{background:#bbf7d0} td.v-diverged{background:#fed7aa}
td.v-wrapper-broken{background:#fecaca} td.v-untested{background:#f4f4f4;color:#999}
ul.evidence li{margin:2px 0;overflow-wrap:anywhere} code{overflow-wrap:anywhere}
.legend span{display:inline-block;padding:0 6px;margin-right:6px;border:1px solid #ddd}
"""


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _timeline(report: Report) -> list[str]:
    releases = report.releases
    head = "".join(f'<th class="rel{" gap" if r.state != OK else ""}" title="{_esc(r.state + ": " + r.detail)}">'
                   f"{_esc(r.version)}</th>" for r in releases)
    rows = [f'<div class="scroll"><table class="grid timeline"><thead><tr><th>change</th><th>listed</th>{head}'
            "</tr></thead><tbody>"]
    index = {r.version: i for i, r in enumerate(releases)}
    for n, c in enumerate(report.changes):
        cells = []
        lo, hi = index.get(c.last_release_without, -1), index.get(c.first_release, -1)
        for i, r in enumerate(releases):
            cls = "gap" if r.state != OK else "before" if i <= lo else "first" if i == hi else "after" if i > hi else ""
            mark = "●" if i == hi else ""
            cells.append(f'<td class="{cls}" data-version="{_esc(r.version)}" title="{_esc(r.version)}">{mark}</td>')
        listed = "yes" if c.listed else "unlisted"
        rows.append(f'<tr class="change" id="change-{n}" data-first="{_esc(c.first_release)}" '
                    f'data-last-without="{_esc(c.last_release_without)}"><td class="name" title="{_esc(evidence_text(c, 20))}">'
                    f'<a href="#ev-{n}">{_esc(c.id)}</a></td><td class="{"" if c.listed else "unlisted"}">{listed}</td>'
                    + "".join(cells) + "</tr>")
    rows.append("</tbody></table></div>")
    return rows


def _survival_grid(report: Report) -> list[str]:
    releases = report.releases
    head = "".join(f'<th class="rel{" gap" if r.state != OK else ""}">{_esc(r.version)}</th>' for r in releases)
    rows = ['<p class="legend">' + "".join(f'<span class="v-{v.replace(" ", "-")}">{LETTER[v]} {v}</span>'
                                           for v in VERDICTS) + "</p>",
            f'<div class="scroll"><table class="grid survival"><thead><tr><th>toggle</th>{head}</tr></thead><tbody>']
    for s in report.survival:
        cells = "".join(
            f'<td class="v-{c.verdict.replace(" ", "-")}" data-version="{_esc(c.version)}" '
            f'title="{_esc(c.version + ": " + c.verdict + " — " + c.evidence + ("; " + c.note if c.note else ""))}">'
            f"{LETTER[c.verdict]}</td>" for c in s.cells)
        rows.append(f'<tr class="toggle" data-toggle="{_esc(s.toggle)}"><td class="name">{_esc(s.toggle)}</td>{cells}</tr>')
    rows.append("</tbody></table></div>")
    return rows


def _survival_list(survival: Sequence[Survival]) -> list[str]:
    out = ['<ul class="evidence">']
    for s in survival:
        runs = "; ".join(f"{_esc(a)}{'' if a == b else '–' + _esc(b)} <b>{_esc(cell.verdict)}</b> "
                         f"(<code>{_esc(cell.evidence)}</code>{', ' + _esc(cell.note) if cell.note else ''})"
                         for a, b, cell in s.runs())
        out.append(f"<li><code>{_esc(s.toggle)}</code> ({_esc(s.layer)}, {_esc(s.tool)}): {runs}</li>")
    out.append("</ul>")
    return out


def to_html(report: Report) -> str:
    st = report.state
    title = f"pi releases {st.range_from} → {st.range_to}"
    body = [f"<h1>{_esc(title)}</h1>",
            f"<p><code>{_esc(st.impl_template)}</code>, {_esc(release_line(report.releases))}. "
            f"{_esc(counts_line(report))}.</p>",
            "<h2>Behaviour changes</h2>"]
    body += _timeline(report)
    body.append('<ul class="evidence">')
    for n, c in enumerate(report.changes):
        items = [f"<code>{_esc(s.scenario)}</code> {_esc(s.step)}: {_esc(s.before)} → {_esc(s.after)}"
                 for s in c.scenarios]
        items += [f"fuzz <code>{_esc(cls.key)}</code> ({cls.count}): {_esc(cls.example)}" for cls in c.fuzz_classes]
        entries = [f"{_esc(e.version)}: {_esc(_short(e.summary, 200))}" for e in c.changelog_entries]
        between = f"; not run between them: {_esc(c.between_text())}" if c.between else ""
        body.append(f'<li id="ev-{n}"><b>{_esc(c.id)}</b> (last without {_esc(c.last_release_without)}, first '
                    f"{_esc(c.first_release)}{between}; {'listed' if c.listed else '<b>unlisted</b>'})<ul>"
                    + "".join(f"<li>{i}</li>" for i in items)
                    + (f"<li>changelog: {'<br>'.join(entries)}</li>" if entries else "") + "</ul></li>")
    body.append("</ul>")
    if report.not_observed:
        body.append("<h2>Changelog tool entries not observed</h2><ul class=\"evidence\">")
        body += [f"<li>{_esc(n.entry.version)}: {_esc(_short(n.entry.summary, 200))} — <i>{_esc(n.reason)}</i></li>"
                 for n in report.not_observed]
        body.append("</ul>")
    body.append("<h2>Patch survival</h2>")
    body += _survival_grid(report)
    body += _survival_list(report.survival)
    return ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>" + _esc(title) + "</title><style>" + CSS
            + "</style></head><body>" + "\n".join(body) + "</body></html>\n")
