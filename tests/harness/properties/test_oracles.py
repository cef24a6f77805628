"""The property oracles against the spec's own examples and the shipped scenarios' values."""

from __future__ import annotations

import pytest

from harness.properties import oracles


def test_split_join_replaces_every_occurrence_literally() -> None:
    assert oracles.split_join("cost: X, tax: X\n", "X", "$&$$") == "cost: $&$$, tax: $&$$\n"
    assert oracles.split_join("aaa", "aa", "b") == "ba"  # non-overlapping, left to right


def test_duplicate_message_counts_in_fuzzy_space_and_lists_three_start_lines() -> None:
    text = "a\nx a  \na\nqa\n"
    assert oracles.duplicate_message("d.txt", text, "a", with_lines=True) == (
        "Found 4 occurrences of the text in d.txt. Matches start at lines 1, 2, 3, .... "
        "The text must be unique. Please provide more context to make it unique.")
    assert oracles.duplicate_message("d.txt", "ab ab", "ab", with_lines=False) == (
        "Found 2 occurrences of the text in d.txt. The text must be unique. "
        "Please provide more context to make it unique.")


@pytest.mark.parametrize(("raw", "expected"), [
    (b"a\r\nb\r\nc\r\n", b"a\r\nb1\r\nb2\r\nc\r\n"),  # scenarios/edit/crlf-roundtrip.yaml
    (b"\xef\xbb\xbfa\nb\n", b"\xef\xbb\xbfa\nb1\nb2\n"),
    (b"a\rb\rc", b"a\nb1\nb2\nc"),  # lone CR becomes LF (spec edit.5 step 8)
    (b"a\nb\r\nc\r\n", b"a\nb1\nb2\nc\n"),  # the first line ending decides
])
def test_edit_bytes_keeps_the_bom_and_the_first_line_ending(raw: bytes, expected: bytes) -> None:
    assert oracles.edit_bytes(raw, "b", "b1\nb2") == expected


def test_write_bytes_upstream_verbatim_wrapper_bom_rules() -> None:
    assert oracles.write_bytes("\ufeffa\r\n", None, wrapper=False) == b"\xef\xbb\xbfa\r\n"
    assert oracles.write_bytes("a\r", b"\xef\xbb\xbfold", wrapper=True) == b"\xef\xbb\xbfa\r"
    assert oracles.write_bytes("\ufeffa", b"old", wrapper=True) == b"\xef\xbb\xbfa"
    assert oracles.write_bytes("a", b"old", wrapper=True) == b"a"


def test_engine_read_notices_and_beyond_end() -> None:
    assert oracles.engine_read("1\n2\n3\n", 2, 1) == ("2\n\n[2 more lines in file. Use offset=3 to continue.]", 3)
    assert oracles.engine_read("1\n2\n3\n", 3, 5) == ("3\n", None)
    with pytest.raises(ValueError, match=r"^Offset 6 is beyond end of file \(4 lines total\)$"):
        oracles.engine_read("1\n2\n3\n", 6, None)


def test_wrapper_number_keeps_the_notice_and_the_final_newline_unnumbered() -> None:
    assert oracles.wrapper_number("b\n\n[1 more lines in file. Use offset=3 to continue.]", 2) == (
        "     2→b\n\n[1 more lines in file. Use offset=3 to continue.]")
    assert oracles.wrapper_number("x\n", None) == "     1→x\n"
    assert oracles.wrapper_number("", 4) == oracles.EMPTY_FILE_REMINDER


def test_bash_text_of_seq_2500_matches_the_shipped_scenario() -> None:
    """scenarios/bash/full-output-file.yaml: starts "501\\n502\\n", ends with the lines notice."""
    out = "".join(f"{i}\n" for i in range(1, 2501))
    text = oracles.bash_engine_text(out, "$TMP/pi-bash-XXXX.log")
    assert text.startswith("501\n502\n")
    assert text.endswith("2500\n\n[Showing lines 501-2500 of 2500. Full output: $TMP/pi-bash-XXXX.log]")


def test_bash_text_by_bytes_and_untruncated() -> None:
    wide = "".join("x" * 99 + "\n" for _ in range(600))  # 60000 bytes, 600 lines
    text = oracles.bash_engine_text(wide, "T")
    assert text.endswith("\n\n[Showing lines 89-600 of 600 (50.0KB limit). Full output: T]")
    assert oracles.bash_engine_text("a\n", "T") == "a\n"
    assert oracles.bash_engine_text("", "T") == "(no output)"
