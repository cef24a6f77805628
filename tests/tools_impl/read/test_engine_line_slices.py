"""``select_text`` takes its lines without splitting the whole file: the line count and every
joined slice equal ``"\\n".join(js_slice(text.split("\\n"), start, end))``, including slices whose
ends fall past 64 KiB block boundaries; ``select_bytes`` (what the engine runs) decodes only the
selected lines and gives exactly what ``select_text`` gives on the whole decoded file, also for
invalid UTF-8, whatever the size of the pieces it streams the file in and how many it keeps."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tools_impl.core.errors import ToolError
from tools_impl.read.engine import (
    _NEWLINE_BLOCK,
    _TextLines,
    engine_read,
    js_slice,
    select_bytes,
    select_text,
)

BOUND = st.one_of(st.integers(-30, 60), st.floats(-30, 60), st.sampled_from([math.inf, -math.inf, math.nan]))
TEXT = st.lists(st.sampled_from(["a", "bb", "", "\r", "\u00e9", "\U0001f600", " x "]), max_size=40).map("\n".join)


@settings(max_examples=500, deadline=None)
@given(TEXT, BOUND, st.one_of(st.none(), BOUND))
def test_slices_equal_split_then_join(text: str, start: float, end: float | None) -> None:
    lines = _TextLines(text)
    assert lines.count == len(text.split("\n"))
    assert lines.slice_text(start, end) == "\n".join(js_slice(text.split("\n"), start, end))


@pytest.mark.parametrize("line_len", [1, 37, _NEWLINE_BLOCK - 1, _NEWLINE_BLOCK, _NEWLINE_BLOCK + 5])
def test_slices_across_block_boundaries(line_len: int) -> None:
    split = [chr(97 + i % 26) * (line_len if i % 3 else 1) for i in range(max(8, 3 * _NEWLINE_BLOCK // line_len))]
    text = "\n".join(split)
    lines = _TextLines(text)
    n = len(split)
    for start, end in [(0, 1), (1, 2), (n // 2, n // 2 + 3), (n - 1, n), (0, n), (n - 3, n), (7, n - 2)]:
        assert lines.joined(start, end) == "\n".join(split[start:end]), (start, end)


BYTE_PIECES = [b"a", b"\n", b"\n", b"\r\n", b"\xc3\xa9", b"\xc3", b"\xa9", b"\xe2\x80", b"\xf0\x9f\x98\x80",
               b"\xf0\x9f", b"\xff", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"  ", b"x" * 40]
DATA = st.lists(st.sampled_from(BYTE_PIECES), max_size=60).map(b"".join)
OFFSET = st.one_of(st.none(), st.integers(-3, 40), st.floats(-3, 40))
LIMIT = st.one_of(st.none(), st.integers(-2, 40), st.floats(-2, 40))


CAPS = st.sampled_from([(2000, 50 * 1024), (3, 50 * 1024), (2000, 20), (5, 7), (1, 1), (2000, 3), (4, 40)])
# piece sizes and kept bytes: one piece, many, pieces that split multi-byte sequences, none kept
STREAMING = st.tuples(st.sampled_from([1, 2, 3, 5, 16, 1 << 16]), st.sampled_from([0, 7, 1 << 18]))


@settings(max_examples=1500, deadline=None)
@given(DATA, OFFSET, LIMIT, CAPS, STREAMING)
# files that end inside a UTF-8 sequence, streamed a byte at a time, within and over the caps
@example(b"\xef", None, None, (2000, 50 * 1024), (1, 0))
@example(b"\xef\xbb", None, None, (2000, 50 * 1024), (1, 0))
@example(b"x" * 40 + b"\n\xf0\x9f", None, None, (2000, 20), (1, 0))
@example(b"\n" * 5 + b"\xe2\x80", 2, None, (3, 50 * 1024), (2, 7))
def test_select_bytes_equals_select_text_on_the_decoded_file(data: bytes, offset: float | None,
                                                            limit: float | None, caps: tuple[int, int],
                                                            streaming: tuple[int, int]) -> None:
    max_lines, max_bytes = caps
    chunk, keep = streaming

    def run(fn, arg, **kw):  # type: ignore[no-untyped-def]
        try:
            sel = fn(arg, "f.txt", offset, limit, max_lines=max_lines, max_bytes=max_bytes, **kw)
        except ToolError as exc:
            return ("error", exc.message)
        return (sel.text, sel.details)

    assert run(select_bytes, data, chunk=chunk, keep=keep) == run(select_text, data.decode("utf-8", "replace"))


def test_a_file_that_ends_inside_a_character_reads_with_a_final_replacement_character(tmp_path: Path) -> None:
    """The end of the file flushes an incomplete sequence as one U+FFFD (3 bytes), on the whole
    read and on the streamed, truncated one (whose totalBytes counts it)."""
    f = tmp_path / "f.txt"
    f.write_bytes(b"a\nb\n\xe2\x82")

    def read(**caps: int) -> tuple[str, object]:
        res = engine_read(str(f), None, None, root=str(tmp_path), home=str(tmp_path), check_abort=lambda: None, **caps)
        return res.text, res.details

    assert read() == ("a\nb\n\ufffd", None)
    text, details = read(max_bytes=4)
    assert text == "a\nb\n\n[Showing lines 1-2 of 3 (4B limit). Use offset=3 to continue.]"
    assert isinstance(details, dict) and details["truncation"]["totalBytes"] == 7
    f.write_bytes(b"\xef")
    assert read() == ("\ufffd", None)
