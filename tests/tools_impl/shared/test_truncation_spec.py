"""Engine truncation and the wrapper's caps as the spec words them (spec limits.1, limits.2):
pi's line counting, truncateHead/truncateTail, the prefix and head+tail caps."""

from __future__ import annotations

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
