"""The release report as text, Markdown, JSON and HTML; the HTML timeline in headless Chromium
(skipped, with the reason, where no Chromium is installed: ``apt-get install chromium``)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness.releases.analysis import Report
from harness.releases.render import to_html, to_markdown, to_text
from tests.harness.report.test_matrix_browser import CHROMIUM_FLAGS, chromium
from tests.support.releases import fake_report

WIDTH = 1280


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    return fake_report(tmp_path_factory.mktemp("releases"))


def test_the_terminal_table_names_each_change_its_interval_and_whether_it_is_listed(report: Report) -> None:
    text = to_text(report)
    assert "11 releases (8 run, 1 does not load, 2 not installable)" in text
    assert re.search(r"write +0\.84\.4 → 0\.85\.1 \(between: 0\.85\.0 does not load\) +yes", text)
    assert re.search(r"bash +0\.87\.1 → 1\.3\.0 \(between: 0\.99\.1 not installable, 1\.0\.3 not installable\) "
                     r"+UNLISTED +hist/bash-exit", text)
    assert "edit.fidelity-guard" in text and "0.84.0–0.84.4 needed" in text


def test_the_json_report_has_changes_and_patch_survival_per_toggle_and_release(report: Report) -> None:
    doc = json.loads(json.dumps(report.to_json()))
    bash = next(c for c in doc["changes"] if c["tool"] == "bash")
    assert {k: bash[k] for k in ("first_release", "last_release_without", "scenarios", "listed")} == \
        {"first_release": "1.3.0", "last_release_without": "0.87.1", "scenarios": ["hist/bash-exit"], "listed": False}
    assert bash["changelog_entries"] == [] and bash["changelog_versions"] == ["0.99.0", "1.0.0"]
    assert [r["state"] for r in bash["releases_between"]] == ["not installable", "not installable"]
    write = next(c for c in doc["changes"] if c["tool"] == "write")
    assert write["listed"] and write["changelog_entries"][0]["key"] == "0.85.0 #8979 Fixed the write"
    assert len(doc["patch_survival"]) == 14
    assert all(len(t["releases"]) == 11 and all(c["evidence"] for c in t["releases"]) for t in doc["patch_survival"])
    assert doc["state"]["format"] == 1  # what --merge reads back


def test_markdown_lists_changes_evidence_not_observed_and_survival(report: Report) -> None:
    md = to_markdown(report)
    assert "| bash | 0.87.1 | 1.3.0 (0.99.1 not installable, 1.0.3 not installable before it) | **unlisted** |" in md
    assert "`hist/bash-exit` step-1: pass [error:tool] 'Command exited with code 3' → fail [result:isError]" in md
    assert "## Changelog tool entries not observed" in md and "`0.85.0 #12020 Fixed the find`" in md
    assert "| `edit.fidelity-guard` | N | N | · | A |" in md


PROBE = """<script>
var out={clientWidth:document.documentElement.clientWidth, scrollWidth:document.documentElement.scrollWidth,
  changes:[], toggles:document.querySelectorAll('table.survival tr.toggle').length,
  survivalCells:document.querySelectorAll('table.survival td[data-version]').length, scrollers:[]};
document.querySelectorAll('tr.change').forEach(function(tr){
  var first=tr.querySelector('td.first'), gaps=tr.querySelectorAll('td.gap');
  out.changes.push({first:tr.dataset.first, marked:first?first.dataset.version:null,
    firstLeft:first?Math.round(first.getBoundingClientRect().left):null, gaps:gaps.length,
    listed:tr.children[1].textContent});});
document.querySelectorAll('.scroll').forEach(function(d){
  out.scrollers.push({client:d.clientWidth, scroll:d.scrollWidth, right:Math.round(d.getBoundingClientRect().right)});});
var head={}; document.querySelectorAll('table.timeline th.rel').forEach(function(th){
  head[th.textContent]=Math.round(th.getBoundingClientRect().left);}); out.head=head;
var pre=document.createElement('pre');pre.id='probe';pre.style.display='none';pre.textContent=JSON.stringify(out);
document.body.appendChild(pre);
</script>"""


def render(tmp_path: Path, page: str) -> tuple[dict[str, Any], Path]:
    browser = chromium()
    probe_page = tmp_path / "releases-probe.html"
    probe_page.write_text(page.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    common = [browser, *CHROMIUM_FLAGS, f"--window-size={WIDTH},1000"]
    dom = subprocess.run([*common, f"--user-data-dir={tmp_path / 'p1'}", "--dump-dom", probe_page.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r'<pre id="probe"[^>]*>(.*?)</pre>', dom.stdout, re.S)
    assert found, dom.stdout[-2000:]
    shot = tmp_path / "releases.png"
    done = subprocess.run([*common, f"--user-data-dir={tmp_path / 'p2'}", f"--screenshot={shot}", probe_page.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&")), shot


@pytest.mark.slow
def test_the_timeline_marks_each_first_release_in_its_column_and_fits_the_page(tmp_path: Path, report: Report) -> None:
    measures, shot = render(tmp_path, to_html(report))
    changes = measures["changes"]
    assert [(c["first"], c["marked"], c["listed"]) for c in changes] == [("0.85.1", "0.85.1", "yes"),
                                                                          ("1.3.0", "1.3.0", "unlisted")]
    for c in changes:  # the marked cell sits under its release's column head
        assert abs(c["firstLeft"] - measures["head"][c["first"]]) <= 2, measures
        assert c["gaps"] == 3  # the three releases that cannot run, hatched in every row
    assert measures["toggles"] == 14 and measures["survivalCells"] == 14 * 11
    # the page never scrolls sideways; a wide grid scrolls inside its own box
    assert measures["scrollWidth"] <= measures["clientWidth"], measures
    assert all(s["right"] <= measures["clientWidth"] for s in measures["scrollers"]), measures

    from PIL import Image

    with Image.open(shot) as image:
        assert image.size == (WIDTH, 1000)
        colours = image.convert("RGB").getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) > 20  # a rendered page, not a blank one
