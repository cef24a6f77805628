"""The output limiters (spec limits): engine whole-line truncation and the wrapper byte caps."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given
from hypothesis import strategies as st

from tools_impl.core.result import ImageBlock, TextBlock, ToolResult
from tools_impl.shared.truncation import (
    apply_desktop_text_limit,
    head_tail_lines,
    prefix_lines,
    split_body_lines,
    split_lines_for_counting,
    truncate_head,
    truncate_tail,
)


def test_split_lines_for_counting_ignores_one_final_newline() -> None:
    assert split_lines_for_counting("") == []
    assert split_lines_for_counting("a\nb\n") == ["a", "b"]
    assert split_lines_for_counting("a\nb") == ["a", "b"]
    assert split_lines_for_counting("a\n\n") == ["a", ""]


def test_truncate_head_returns_content_unchanged_within_limits() -> None:
    r = truncate_head("a\nb\n", max_lines=2, max_bytes=10)
    assert (r.content, r.truncated, r.truncated_by, r.total_lines) == ("a\nb\n", False, None, 2)


def test_truncate_head_by_lines_keeps_whole_lines_without_trailing_newline() -> None:
    r = truncate_head("1\n2\n3\n4\n", max_lines=2, max_bytes=100)
    assert (r.content, r.truncated_by, r.output_lines, r.total_lines) == ("1\n2", "lines", 2, 4)


def test_truncate_head_by_bytes_stops_before_exceeding() -> None:
    r = truncate_head("aaa\nbbb\nccc", max_lines=10, max_bytes=7)
    assert (r.content, r.truncated_by, r.output_bytes) == ("aaa\nbbb", "bytes", 7)


def test_truncate_head_flags_a_first_line_longer_than_the_budget() -> None:
    r = truncate_head("x" * 20 + "\nshort", max_lines=10, max_bytes=10)
    assert (r.content, r.first_line_exceeds_limit, r.output_lines, r.truncated_by) == ("", True, 0, "bytes")


def test_truncate_tail_keeps_the_end_and_a_partial_last_line() -> None:
    r = truncate_tail("1\n2\n3\n4", max_lines=2, max_bytes=100)
    assert (r.content, r.truncated_by) == ("3\n4", "lines")
    r = truncate_tail("head\n" + "é" * 10, max_lines=10, max_bytes=5)
    assert r.last_line_partial is True
    assert r.content == "éé"  # 5-byte budget, cut moved forwards to a character boundary
    assert r.to_json()["lastLinePartial"] is True


def test_split_body_lines_strips_all_trailing_newlines() -> None:
    assert split_body_lines("a\nb\n\n\n") == ["a", "b"]
    assert split_body_lines("") == []


def _notice(kept: Sequence[str]) -> str:
    return f"[kept {len(kept)}]"


def test_prefix_lines_returns_text_unchanged_when_original_fits() -> None:
    out = prefix_lines("a\nb\n", 100, _notice)
    assert (out.text, out.truncated) == ("a\nb\n", False)


def test_prefix_lines_keeps_the_largest_prefix_that_fits_with_the_notice() -> None:
    text = "\n".join(f"line{i}" for i in range(10))
    out = prefix_lines(text, 30, _notice)
    assert out.text == "line0\nline1\nline2\n\n[kept 3]"
    assert out.retained == ("line0", "line1", "line2")


def test_prefix_lines_falls_back_to_the_notice_alone() -> None:
    out = prefix_lines("x" * 100, 12, _notice)
    assert out.text == "[kept 0]"


def test_head_tail_keeps_45_percent_head_and_rest_tail() -> None:
    lines = [f"{i:04d}" for i in range(100)]  # 5 bytes per line with newline
    out = head_tail_lines("\n".join(lines), 60, lambda kept: "[N]")
    head, note, tail = out.text.split("\n\n")
    # budget 60 - 3 - 4 = 53: head 23 bytes (4 lines = 19 bytes), tail 30 bytes (6 lines = 29 bytes)
    assert head == "0000\n0001\n0002\n0003"
    assert note == "[N]"
    assert tail == "\n".join(lines[-6:])


def test_head_tail_cuts_a_huge_single_line_on_both_sides() -> None:
    out = head_tail_lines("a" * 50 + "b" * 50, 40, lambda kept: "[N]")
    head, note, tail = out.text.split("\n\n")
    assert head == "a" * 14 and tail == "b" * 19 and note == "[N]"


def test_apply_desktop_text_limit_replaces_first_text_block_and_records_metadata() -> None:
    res = ToolResult("read", (TextBlock("one"), ImageBlock("AAAA", "image/png"), TextBlock("two")), {"x": 1})
    hint = {"tool": "read", "preserve_args": ["path"], "instruction": "go"}
    out = apply_desktop_text_limit(res, "LIMITED", strategy="prefix_lines", original_bytes=99, max_bytes=50,
                                   next_offset=7, offset_unit="line", hint=hint)
    assert [b.type for b in out.content] == ["text", "image"]
    assert out.text == "LIMITED"
    assert out.details == {
        "x": 1,
        "desktop_output_truncation": {"truncated": True, "has_more": True, "strategy": "prefix_lines",
                                      "original_bytes": 99, "returned_bytes": 7, "max_bytes": 50,
                                      "next_offset": 7, "offset_unit": "line", "continuation_hint": hint},
        "desktop_output_continuation": {"has_more": True, "next_offset": 7, "offset_unit": "line",
                                        "continuation_hint": hint},
    }


def test_apply_desktop_text_limit_without_hint_has_no_continuation() -> None:
    res = ToolResult("bash", (ImageBlock("AAAA", "image/png"),), None)
    out = apply_desktop_text_limit(res, "T", strategy="head_tail_lines", original_bytes=5, max_bytes=4)
    assert [b.type for b in out.content] == ["text", "image"]
    assert out.details is not None and "desktop_output_continuation" not in out.details


_texts = st.text(alphabet=st.sampled_from("ab\n é😀\u2192"), max_size=400)


@given(_texts, st.integers(min_value=0, max_value=120))
def test_limiters_never_exceed_their_byte_budget_or_split_utf8(text: str, budget: int) -> None:
    """Both wrapper strategies stay within max_bytes and always produce valid UTF-8 text that
    round-trips (no lone continuation bytes)."""
    must_cut = len(text.encode("utf-8")) > budget  # spec limits.2: unchanged only within the budget
    for strategy in (prefix_lines, head_tail_lines):
        out = strategy(text, budget, lambda kept: f"[notice {len(kept)} é]")
        assert out.truncated == must_cut
        if out.truncated:
            assert len(out.text.encode("utf-8")) <= budget
        else:
            assert out.text == text
        assert "\ufffd" not in out.text


@given(st.lists(st.text(alphabet=st.sampled_from("xyé😀"), max_size=30), max_size=60),
       st.integers(min_value=1, max_value=40), st.integers(min_value=1, max_value=200))
def test_engine_truncation_keeps_whole_lines_within_both_limits(lines: list[str], max_lines: int, max_bytes: int) -> None:
    """truncate_head/tail return whole lines (or the one partial last line), never more than
    max_lines lines or max_bytes bytes."""
    text = "\n".join(lines)
    counted = text.split("\n") if text else []  # spec limits.1: a final empty element is not a line
    if text.endswith("\n"):
        counted = counted[:-1]
    must_cut = len(counted) > max_lines or len(text.encode()) > max_bytes
    for fn in (truncate_head, truncate_tail):
        r = fn(text, max_lines=max_lines, max_bytes=max_bytes)
        assert r.truncated == must_cut
        if not r.truncated:
            assert r.content == text
            continue
        assert r.output_lines <= max_lines
        assert len(r.content.encode()) <= max_bytes
        if r.content and not r.last_line_partial:
            kept = r.content.split("\n")
            body = split_lines_for_counting(text)
            if fn is truncate_head:
                assert body[: len(kept)] == kept
            else:
                assert body[len(body) - len(kept):] == kept
