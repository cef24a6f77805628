"""Engine truncation and the wrapper's caps as the spec words them (spec limits.1, limits.2):
pi's line counting, truncateHead/truncateTail, the prefix and head+tail caps, and properties that
compare truncateTail and the head+tail cap with independent step-by-step models of the spec."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.support.spec_models import KIB24, spec_head_tail, spec_utf8_suffix, utf8
from tools_impl.shared.truncation import (
    head_tail_lines,
    prefix_lines,
    split_lines_for_counting,
    truncate_head,
    truncate_tail,
)


def test_split_lines_for_counting_drops_only_the_element_after_a_final_newline() -> None:
    assert split_lines_for_counting("") == []
    assert split_lines_for_counting("a\nb\n") == ["a", "b"]
    assert split_lines_for_counting("a\nb") == ["a", "b"]
    assert split_lines_for_counting("\n") == [""]
    assert split_lines_for_counting("a\n\n") == ["a", ""]


def test_truncate_head_returns_fitting_content_unchanged_with_its_trailing_newline() -> None:
    r = truncate_head("a\nb\n", max_lines=2, max_bytes=100)
    assert (r.content, r.truncated, r.truncated_by, r.total_lines, r.total_bytes) == ("a\nb\n", False, None, 2, 4)
    assert (r.output_lines, r.output_bytes) == (2, 4)


def test_truncate_head_by_lines_keeps_whole_lines_without_trailing_newline() -> None:
    r = truncate_head("a\nb\nc\n", max_lines=2, max_bytes=100)
    assert (r.content, r.truncated, r.truncated_by, r.output_lines, r.output_bytes) == ("a\nb", True, "lines", 2, 3)
    assert (r.total_lines, r.max_lines, r.max_bytes) == (3, 2, 100)


def test_truncate_head_by_bytes_counts_joining_newlines() -> None:
    # "aaa" (3) + "\nbbb" (4) = 7 <= 7; "\nccc" would make 11.
    r = truncate_head("aaa\nbbb\nccc", max_lines=10, max_bytes=7)
    assert (r.content, r.truncated_by, r.output_lines, r.output_bytes) == ("aaa\nbbb", "bytes", 2, 7)
    r = truncate_head("aaa\nbbb\nccc", max_lines=10, max_bytes=6)
    assert (r.content, r.truncated_by, r.output_lines) == ("aaa", "bytes", 1)


def test_truncate_head_with_an_oversized_first_line_returns_nothing() -> None:
    r = truncate_head("é" * 4 + "\nb", max_lines=10, max_bytes=7)
    assert (r.content, r.truncated, r.truncated_by, r.first_line_exceeds_limit, r.output_lines) == (
        "", True, "bytes", True, 0)
    assert r.to_json()["firstLineExceedsLimit"] is True


def test_truncate_tail_keeps_the_end_and_cuts_an_oversized_last_line_forwards() -> None:
    r = truncate_tail("a\nb\nc", max_lines=2, max_bytes=100)
    assert (r.content, r.truncated_by, r.output_lines, r.last_line_partial) == ("b\nc", "lines", 2, False)
    r = truncate_tail("x\n" + "aé" * 3, max_lines=10, max_bytes=4)  # last line 9 bytes
    assert (r.content, r.truncated_by, r.last_line_partial) == ("aé", "bytes", True)
    r = truncate_tail("x\nééé", max_lines=10, max_bytes=5)  # cut at 1 lands inside é → moves forwards
    assert r.content == "éé"


def test_truncate_tail_keeps_whole_lines_from_the_end_and_counts_without_the_final_empty_line() -> None:
    r = truncate_tail("a\nb\nc\n", max_lines=2, max_bytes=100)
    assert (r.content, r.truncated, r.truncated_by) == ("b\nc", True, "lines")
    assert (r.total_lines, r.output_lines, r.total_bytes, r.output_bytes) == (3, 2, 6, 3)
    assert (r.last_line_partial, r.first_line_exceeds_limit, r.max_lines, r.max_bytes) == (False, False, 2, 100)


def test_truncate_tail_returns_content_unchanged_within_both_limits() -> None:
    r = truncate_tail("a\nb\n", max_lines=2, max_bytes=4)
    assert (r.content, r.truncated, r.truncated_by, r.total_lines) == ("a\nb\n", False, None, 2)


def test_truncate_tail_by_bytes_counts_joining_newlines() -> None:
    r = truncate_tail("aaa\nbbb\nccc", max_lines=10, max_bytes=7)
    assert (r.content, r.truncated_by, r.output_lines, r.output_bytes) == ("bbb\nccc", "bytes", 2, 7)


def test_truncate_tail_keeps_a_utf8_safe_suffix_of_an_oversized_last_line() -> None:
    r = truncate_tail("x\n" + "é" * 3, max_lines=10, max_bytes=3)
    # The last 3 bytes start on a continuation byte: the cut moves forwards to the next character.
    assert (r.content, r.last_line_partial, r.output_bytes, r.truncated_by) == ("é", True, 2, "bytes")


def spec_truncate_tail(content: str, max_lines: int, max_bytes: int) -> tuple[str, bool, int, bool, str | None]:
    """limits.1 truncateTail as the mirror image of truncateHead: (content, truncated, outputLines,
    lastLinePartial, truncatedBy when a limit stopped the walk, else None)."""
    lines = [] if content == "" else content.split("\n")
    if content.endswith("\n"):
        lines.pop()
    if len(lines) <= max_lines and utf8(content) <= max_bytes:
        return content, False, len(lines), False, None
    kept: list[str] = []
    used = 0
    stopped_by: str | None = None
    partial = False
    for line in reversed(lines):
        if len(kept) >= max_lines:
            stopped_by = "lines"
            break
        cost = utf8(line) + (1 if kept else 0)
        if used + cost > max_bytes:
            stopped_by = "bytes"
            if not kept:
                kept.insert(0, spec_utf8_suffix(line.encode(), max_bytes).decode())
                partial = True
            break
        kept.insert(0, line)
        used += cost
    return "\n".join(kept), True, len(kept), partial, stopped_by


@given(st.lists(st.text(alphabet="ab é€\t", max_size=12), max_size=10), st.booleans(),
       st.integers(min_value=1, max_value=6), st.integers(min_value=0, max_value=40))
def test_truncate_tail_is_the_mirror_image_of_truncate_head(lines: list[str], final_newline: bool, max_lines: int,
                                                             max_bytes: int) -> None:
    """Invariant: whole lines from the end within both limits, or a UTF-8-safe suffix of an oversized
    last line; the result never exceeds ``maxBytes`` nor ``maxLines``."""
    content = "\n".join(lines) + ("\n" if final_newline and lines else "")
    r = truncate_tail(content, max_lines=max_lines, max_bytes=max_bytes)
    text, truncated, out_lines, partial, stopped_by = spec_truncate_tail(content, max_lines, max_bytes)
    assert (r.content, r.truncated, r.output_lines, r.last_line_partial) == (text, truncated, out_lines, partial)
    if stopped_by is not None:
        assert r.truncated_by == stopped_by
    assert (r.total_bytes, r.output_bytes) == (utf8(content), utf8(r.content))
    if truncated:
        assert utf8(r.content) <= max_bytes and r.output_lines <= max_lines


def test_truncation_result_fields_have_pi_names() -> None:
    assert set(truncate_head("a").to_json()) == {
        "content", "truncated", "truncatedBy", "totalLines", "totalBytes", "outputLines", "outputBytes",
        "lastLinePartial", "firstLineExceedsLimit", "maxLines", "maxBytes",
    }


# limits.2 wrapper caps


def test_prefix_lines_leaves_text_at_or_under_the_cap_unchanged() -> None:
    out = prefix_lines("abc\n\n\n", 6, lambda kept: "N")
    assert (out.text, out.truncated) == ("abc\n\n\n", False)


def test_prefix_lines_keeps_the_largest_prefix_with_separator_and_notice() -> None:
    text = "aaaa\nbbbb\ncccc\n"
    out = prefix_lines(text, 12, lambda kept: f"[{len(kept)}]")
    # "aaaa\n\n[1]" = 9; "aaaa\nbbbb\n\n[2]" = 14 > 12
    assert (out.text, out.truncated) == ("aaaa\n\n[1]", True)
    out = prefix_lines("x" * 20, 8, lambda kept: "[notice-too-long]")
    assert out.text == "[notice-"


def test_head_tail_budgets_match_the_spec_example() -> None:
    notice = "N" * 180
    lines = ["x" * 99] * 400
    out = head_tail_lines("\n".join(lines), 24576, lambda kept: notice)
    # bodyBudget 24392, head 10976 → 109 lines (10899 bytes), tail 13416 → 134 lines (13399 bytes)
    expected = "\n".join(lines[:109]) + "\n\n" + notice + "\n\n" + "\n".join(lines[-134:])
    assert out.text == expected


def test_head_tail_cuts_a_single_oversized_line_into_byte_head_and_tail() -> None:
    text = "0123456789" * 10  # one 100-byte line
    out = head_tail_lines(text, 40, lambda kept: "NOTE")
    # bodyBudget = 40 - 4 - 4 = 32; head 14 bytes; tail 18 bytes of the same line.
    assert out.text == text[:14] + "\n\nNOTE\n\n" + text[-18:]


@given(st.lists(st.text(alphabet="ab é\t€", max_size=30), max_size=12), st.integers(min_value=0, max_value=120))
def test_head_tail_cap_equals_the_step_by_step_spec_model(lines: list[str], max_bytes: int) -> None:
    """Invariant: ``head_tail_lines`` is exactly limits.2's six steps, and never exceeds ``maxBytes``."""
    text = "\n".join(lines)
    notice = "[cut NOTICE]"
    got = head_tail_lines(text, max_bytes, lambda _kept: notice)
    expected = spec_head_tail(text, max_bytes, notice)
    if expected is None:
        assert not got.truncated and got.text == text
    else:
        assert got.truncated and got.text == expected
        assert utf8(got.text) <= max_bytes


def test_head_tail_budget_example_of_the_spec() -> None:
    # limits.2's own example: maxBytes 24576 and a 180-byte notice give head 10976 and tail 13416.
    notice = "N" * 180
    lines = [f"{i:010d}" for i in range(5000)]  # 10-byte lines, 50000 bytes with newlines
    out = head_tail_lines("\n".join(lines), KIB24, lambda _k: notice).text
    head, tail = out.split("\n\n" + notice + "\n\n")
    # Whole 10-byte lines joined with "\n": n lines cost 11n - 1 bytes.
    assert utf8(head) == 11 * ((10976 + 1) // 11) - 1
    assert utf8(tail) == 11 * ((13416 + 1) // 11) - 1
