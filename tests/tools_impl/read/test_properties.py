"""Hypothesis properties of the read pipeline (engine selection → spec read.8 post-processing → spec read.9 cap),
run on the pure functions so that many inputs are cheap."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from tools_impl.core.result import TextBlock, ToolResult
from tools_impl.js.text import utf8_len
from tools_impl.read.engine import select_text
from tools_impl.read.tool import apply_read_cap, postprocess

CAP = 24 * 1024
NUMBERED = re.compile(r"^ *([0-9]+)→(.*)$", re.S)
# Multi-byte and astral characters, CR, the arrow itself and digits: everything that could
# confuse byte counting, code-point counting or the number parser.
CHARS = ["a", "7", " ", "\r", "\t", "é", "€", "→", "\U0001F600", "\u00a0", "["]

runs = st.tuples(st.sampled_from(CHARS), st.integers(0, 1500)).map(lambda t: t[0] * t[1])
long_lines = st.lists(runs, min_size=1, max_size=3).map("".join)
short_lines = st.text(alphabet=st.sampled_from(CHARS), max_size=40)


def pipeline(text: str, offset: int | None, limit: int | None) -> tuple[ToolResult, ToolResult]:
    sel = select_text(text, "f.txt", offset, limit)
    engine = ToolResult("read", (TextBlock(sel.text),), sel.details)
    numbered = postprocess(engine, offset, 2000)
    return numbered, apply_read_cap(numbered, offset, CAP)


@given(st.lists(long_lines, min_size=12, max_size=80), st.booleans())
def test_read_cap_never_exceeds_24kib_and_never_cuts_inside_a_utf8_sequence(lines: list[str], final_nl: bool) -> None:
    """The capped text is at most 24 KiB, and its body is a whole-line prefix of the uncapped
    text (so no UTF-8 sequence, and no line, is ever split)."""
    text = "\n".join(lines) + ("\n" if final_nl else "")
    numbered, capped = pipeline(text, None, None)
    out = capped.text
    # spec read.9: the cap applies exactly when the numbered text is over 24 KiB
    assert bool(capped.details and "desktop_output_truncation" in capped.details) == (utf8_len(numbered.text) > CAP)
    assert "\ufffd" not in out
    out.encode("utf-8")  # no lone surrogates
    if capped.details and "desktop_output_truncation" in capped.details:
        assert utf8_len(out) <= CAP
        meta = capped.details["desktop_output_truncation"]
        assert meta["returned_bytes"] == utf8_len(out) and meta["original_bytes"] == utf8_len(numbered.text)
        cut = out.rfind("\n\n[desktop read output truncated:")
        if cut >= 0:
            assert numbered.text.startswith(out[:cut] + "\n")
    else:
        assert out == numbered.text


@given(st.lists(short_lines, min_size=1, max_size=60), st.booleans(), st.data())
def test_every_line_of_numbered_output_parses_back_to_the_original_file_line(
        lines: list[str], final_nl: bool, data: st.DataObject) -> None:
    """``String(n).padStart(6) + '→' + line`` is invertible: number and text give back the file line."""
    text = "\n".join(lines) + ("\n" if final_nl else "")
    all_lines = text.split("\n")
    offset = data.draw(st.one_of(st.none(), st.integers(-2, len(all_lines))))
    limit = data.draw(st.one_of(st.none(), st.integers(1, len(all_lines) + 2)))
    numbered, _ = pipeline(text, offset, limit)
    body = re.sub(r"\n\n\[[0-9]+ more lines in file\. Use offset=[0-9]+ to continue\.\]\Z", "", numbered.text)
    if body.startswith("<system-reminder>"):
        start = max(0, offset - 1) if offset else 0
        assert "\n".join(all_lines[start:(start + limit) if limit else None]) == ""
        return
    if body.endswith("\n"):
        body = body[:-1]
    seen = []
    for out_line in body.split("\n"):
        m = NUMBERED.match(out_line)
        assert m is not None, out_line
        n = int(m.group(1))
        assert all_lines[n - 1] == m.group(2)
        seen.append(n)
    first = offset if offset and offset > 0 else 1
    assert seen == list(range(first, first + len(seen)))
