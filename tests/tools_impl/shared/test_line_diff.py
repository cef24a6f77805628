"""The diff engine (tools_impl.shared.line_diff): jsdiff 8.0.4 alignment, unified patches, pi's numbered
diff and the ``edit.diff-bounds`` receipts.

Every golden ``diff_lines`` / ``create_two_files_patch`` value below was printed by jsdiff 8.0.4
itself (``diffLines`` and ``createTwoFilesPatch(p, p, a, b, undefined, undefined, {context: 4,
headerOptions: FILE_HEADERS_ONLY})``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tools_impl.shared.line_diff import (
    DEFAULT_DIFF_BOUNDS,
    OMITTED_TIMEOUT_TEXT,
    OMITTED_TOO_LARGE_TEXT,
    Change,
    DiffBounds,
    DiffOmitted,
    compute_receipts,
    create_two_files_patch,
    diff_lines,
    diff_lines_bounded,
    first_changed_line,
    numbered_diff,
    tokenize_lines,
)


def _parts(changes: list[Change]) -> list[tuple[str, str]]:
    return [(c.value, "+" if c.added else "-" if c.removed else "=") for c in changes]


# (name, old, new, jsdiff diffLines parts, jsdiff createTwoFilesPatch for path "src/f.txt")
JSDIFF_GOLDENS: list[tuple[str, str, str, list[tuple[str, str]], str]] = [
    (
        "myers_paper_abcabba",
        "a\nb\nc\na\nb\nb\na\n",
        "c\nb\na\nb\na\nc\n",
        [("a\nb\n", "-"), ("c\n", "="), ("b\n", "+"), ("a\nb\n", "="), ("b\n", "-"), ("a\n", "="), ("c\n", "+")],
        "--- src/f.txt\n+++ src/f.txt\n@@ -1,7 +1,6 @@\n-a\n-b\n c\n+b\n a\n b\n-b\n a\n+c\n",
    ),
    (
        "moved_line",
        "a\nb\nc\n",
        "a\nc\nb\n",
        [("a\n", "="), ("b\n", "-"), ("c\n", "="), ("b\n", "+")],
        "--- src/f.txt\n+++ src/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n c\n+b\n",
    ),
    (
        "final_newline_added",
        "a\nb",
        "a\nb\n",
        [("a\n", "="), ("b", "-"), ("b\n", "+")],
        "--- src/f.txt\n+++ src/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n",
    ),
    (
        "final_newline_removed",
        "a\nb\n",
        "a\nb",
        [("a\n", "="), ("b\n", "-"), ("b", "+")],
        "--- src/f.txt\n+++ src/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n",
    ),
    (
        "empty_to_one_line",
        "",
        "a\n",
        [("a\n", "+")],
        "--- src/f.txt\n+++ src/f.txt\n@@ -0,0 +1,1 @@\n+a\n",
    ),
    (
        "one_line_to_empty",
        "a",
        "",
        [("a", "-")],
        "--- src/f.txt\n+++ src/f.txt\n@@ -1,1 +0,0 @@\n-a\n\\ No newline at end of file\n",
    ),
    (
        "repeated_block_removed",
        "x\na\nb\na\nb\ny\n",
        "x\na\nb\ny\n",
        [("x\na\nb\n", "="), ("a\nb\n", "-"), ("y\n", "=")],
        "--- src/f.txt\n+++ src/f.txt\n@@ -1,6 +1,4 @@\n x\n a\n b\n-a\n-b\n y\n",
    ),
    (
        "crlf_and_lf_are_different_tokens",
        "a\r\nb\r\nc\r\n",
        "a\nb\r\nc\r\n",
        [("a\r\n", "-"), ("a\n", "+"), ("b\r\nc\r\n", "=")],
        "--- src/f.txt\n+++ src/f.txt\n@@ -1,3 +1,3 @@\n-a\r\n+a\n b\r\n c\r\n",
    ),
    (
        "swapped_pairs",
        "1\n2\n3\n4\n",
        "2\n1\n4\n3\n",
        [("1\n", "-"), ("2\n", "="), ("3\n", "-"), ("1\n", "+"), ("4\n", "="), ("3\n", "+")],
        "--- src/f.txt\n+++ src/f.txt\n@@ -1,4 +1,4 @@\n-1\n 2\n-3\n+1\n 4\n+3\n",
    ),
    (
        "two_separate_hunks",
        "".join(f"l{i}\n" for i in range(1, 21)),
        "".join(f"l{i}\n" for i in range(1, 21)).replace("l2\n", "L2\n").replace("l18\n", ""),
        [
            ("l1\n", "="),
            ("l2\n", "-"),
            ("L2\n", "+"),
            ("".join(f"l{i}\n" for i in range(3, 18)), "="),
            ("l18\n", "-"),
            ("l19\nl20\n", "="),
        ],
        "--- src/f.txt\n+++ src/f.txt\n@@ -1,6 +1,6 @@\n l1\n-l2\n+L2\n l3\n l4\n l5\n l6\n"
        "@@ -14,7 +14,6 @@\n l14\n l15\n l16\n l17\n-l18\n l19\n l20\n",
    ),
    (
        "eight_context_lines_join_hunks",
        "".join(f"l{i}\n" for i in range(1, 13)),
        "".join(f"l{i}\n" for i in range(1, 13)).replace("l2\n", "L2\n").replace("l11\n", "L11\n"),
        [
            ("l1\n", "="),
            ("l2\n", "-"),
            ("L2\n", "+"),
            ("l3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n", "="),
            ("l11\n", "-"),
            ("L11\n", "+"),
            ("l12\n", "="),
        ],
        "--- src/f.txt\n+++ src/f.txt\n@@ -1,12 +1,12 @@\n l1\n-l2\n+L2\n l3\n l4\n l5\n l6\n l7\n l8\n l9\n"
        " l10\n-l11\n+L11\n l12\n",
    ),
    (
        "context_without_final_newline",
        "a\nb\nc",
        "a\nb\nX\nc",
        [("a\nb\n", "="), ("X\n", "+"), ("c", "=")],
        "--- src/f.txt\n+++ src/f.txt\n@@ -1,3 +1,4 @@\n a\n b\n+X\n c\n\\ No newline at end of file\n",
    ),
    (
        "blank_lines",
        "\n\n\n",
        "\n\nx\n\n",
        [("\n\n", "="), ("x\n", "+"), ("\n", "=")],
        "--- src/f.txt\n+++ src/f.txt\n@@ -1,3 +1,4 @@\n \n \n+x\n \n",
    ),
    (
        "equal_run_kept_whole_add_before_remove",
        "y\n" * 8,
        "z\n" + "y\n" * 7,
        [("z\n", "+"), ("y\n" * 7, "="), ("y\n", "-")],
        "--- src/f.txt\n+++ src/f.txt\n@@ -1,8 +1,8 @@\n+z\n y\n y\n y\n y\n y\n y\n y\n-y\n",
    ),
    (
        "every_line_replaced",
        "a\nb\n",
        "c\nd\n",
        [("a\nb\n", "-"), ("c\nd\n", "+")],
        "--- src/f.txt\n+++ src/f.txt\n@@ -1,2 +1,2 @@\n-a\n-b\n+c\n+d\n",
    ),
]


@pytest.mark.parametrize(("name", "old", "new", "parts", "patch"), JSDIFF_GOLDENS, ids=[g[0] for g in JSDIFF_GOLDENS])
def test_diff_lines_alignment_equals_jsdiff_golden(
    name: str, old: str, new: str, parts: list[tuple[str, str]], patch: str
) -> None:
    assert _parts(diff_lines(old, new)) == parts


@pytest.mark.parametrize(("name", "old", "new", "parts", "patch"), JSDIFF_GOLDENS, ids=[g[0] for g in JSDIFF_GOLDENS])
def test_create_two_files_patch_equals_jsdiff_golden(
    name: str, old: str, new: str, parts: list[tuple[str, str]], patch: str
) -> None:
    assert create_two_files_patch("src/f.txt", "src/f.txt", old, new) == patch


def test_change_counts_are_line_tokens() -> None:
    assert diff_lines("a\nb\nc\n", "a\nc\n") == [
        Change("a\n", False, False, 1),
        Change("b\n", False, True, 1),
        Change("c\n", False, False, 1),
    ]


def test_identical_texts_give_one_common_change_and_a_header_only_patch() -> None:
    assert diff_lines("x\ny\n", "x\ny\n") == [Change("x\ny\n", False, False, 2)]
    assert diff_lines("", "") == []
    assert create_two_files_patch("a", "b", "same\n", "same\n") == "--- a\n+++ b\n"


def test_tokenizer_keeps_terminators_and_treats_lone_cr_as_text() -> None:
    assert tokenize_lines("a\r\nb\rc\n\nd") == ["a\r\n", "b\rc\n", "\n", "d"]
    assert tokenize_lines("") == []
    assert tokenize_lines("\n") == ["\n"]


def _lines(a: int, b: int) -> str:
    return "".join(f"line{i}\n" for i in range(a, b))


def test_numbered_diff_context_rules_before_between_and_after_changes() -> None:
    old = _lines(1, 31)
    new = old.replace("line7\n", "SEVEN\n").replace("line20\n", "").replace("line22\n", "line22\nNEW\n")
    diff, first = numbered_diff(old, new)
    assert diff == (
        "    ...\n  3 line3\n  4 line4\n  5 line5\n  6 line6\n- 7 line7\n+ 7 SEVEN\n"
        "  8 line8\n  9 line9\n 10 line10\n 11 line11\n    ...\n 16 line16\n 17 line17\n 18 line18\n"
        " 19 line19\n-20 line20\n 21 line21\n 22 line22\n+22 NEW\n 23 line23\n 24 line24\n"
        " 25 line25\n 26 line26\n    ..."
    )
    assert first == 7


def test_numbered_diff_shows_a_run_of_eight_between_changes_whole() -> None:
    diff, first = numbered_diff("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n", "A\nb\nc\nd\ne\nf\ng\nh\ni\nJ\n")
    assert diff == "- 1 a\n+ 1 A\n  2 b\n  3 c\n  4 d\n  5 e\n  6 f\n  7 g\n  8 h\n  9 i\n-10 j\n+10 J"
    assert first == 1


def test_numbered_diff_of_a_line_gaining_its_newline() -> None:
    assert numbered_diff("one\ntwo", "one\ntwo\nthree") == (" 1 one\n-2 two\n+2 two\n+3 three", 2)


def test_numbered_diff_of_identical_texts_is_empty_without_first_changed_line() -> None:
    assert numbered_diff("x\n", "x\n") == ("", None)


def test_compute_receipts_unbounded_has_diff_patch_and_first_changed_line() -> None:
    assert compute_receipts("notes.txt", "a\nb\n", "a\nB\n", bounded=False) == {
        "diff": " 1 a\n-2 b\n+2 B",
        "patch": "--- notes.txt\n+++ notes.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n",
        "firstChangedLine": 2,
    }


def test_compute_receipts_bounded_within_limits_equals_unbounded() -> None:
    old, new = _lines(1, 50), _lines(1, 50).replace("line9\n", "nine\n")
    assert compute_receipts("f", old, new, bounded=True) == compute_receipts("f", old, new, bounded=False)


def test_compute_receipts_bounded_omits_a_diff_of_more_than_1000_changed_lines() -> None:
    old = "".join(f"old{i}\n" for i in range(501))
    new = "keep\n" + "".join(f"new{i}\n" for i in range(500))
    receipts = compute_receipts("big.txt", old, new, bounded=True)
    assert receipts == {
        "diff": "(diff omitted: more than 1000 lines changed)",
        "firstChangedLine": 1,
        "diffOmitted": "too_large",
    }
    assert "patch" not in receipts


def test_exactly_1000_changed_lines_is_not_omitted() -> None:
    old = "".join(f"old{i}\n" for i in range(500))
    new = "".join(f"new{i}\n" for i in range(500))
    receipts = compute_receipts("f", old, new, bounded=True)
    assert "diffOmitted" not in receipts
    assert receipts["firstChangedLine"] == 1


def _jumping_clock(step_s: float) -> Callable[[], float]:
    """A clock that advances ``step_s`` seconds each time it is read."""
    ticks = itertools.count()
    return lambda: next(ticks) * step_s


def test_compute_receipts_bounded_reports_a_timeout() -> None:
    receipts = compute_receipts(
        "f", "keep\na\n", "keep\nb\n", bounded=True, bounds=DEFAULT_DIFF_BOUNDS, clock=_jumping_clock(6.0)
    )
    assert receipts == {
        "diff": "(diff omitted: computing it exceeded 5000 ms)",
        "firstChangedLine": 2,
        "diffOmitted": "timeout",
    }


def test_a_slow_clock_below_the_timeout_does_not_omit() -> None:
    receipts = compute_receipts("f", "a\n", "b\n", bounded=True, clock=_jumping_clock(1.0))
    assert receipts["diff"] == "-1 a\n+1 b"


def test_omission_texts_are_the_spec_constants() -> None:
    assert OMITTED_TOO_LARGE_TEXT == "(diff omitted: more than 1000 lines changed)"
    assert OMITTED_TIMEOUT_TEXT == "(diff omitted: computing it exceeded 5000 ms)"


def test_bounded_diff_gives_up_only_past_the_max_edit_length() -> None:
    assert diff_lines_bounded("a\nb\n", "c\nd\n", DiffBounds(3, None)) == DiffOmitted("too_large")
    assert _parts(diff_lines_bounded("a\nb\n", "c\nd\n", DiffBounds(4, None))) == [  # type: ignore[arg-type]
        ("a\nb\n", "-"),
        ("c\nd\n", "+"),
    ]


# ---------------------------------------------------------------------------------------------
# Properties

_LINE = st.sampled_from(["a", "b", "c", "", "x y", "a\r", "\u00e9\u4e2d"])
_TEXT = st.builds(
    lambda lines, seps, tail: "".join(line + sep for line, sep in zip(lines, seps, strict=False)) + tail,
    st.lists(_LINE, max_size=14),
    st.lists(st.sampled_from(["\n", "\n", "\r\n"]), min_size=14, max_size=14),
    st.sampled_from(["", "", "z", "a"]),
)


@given(_TEXT, _TEXT)
def test_diff_lines_reconstructs_both_texts(old: str, new: str) -> None:
    """Joining the non-added values gives the old text, the non-removed values the new text."""
    changes = diff_lines(old, new)
    assert "".join(c.value for c in changes if not c.added) == old
    assert "".join(c.value for c in changes if not c.removed) == new
    assert all(c.count == len(tokenize_lines(c.value)) for c in changes)
    assert all(not (a.added == b.added and a.removed == b.removed) for a, b in itertools.pairwise(changes))


def _apply_patch(old: str, patch: str) -> str:
    """Apply a single-file unified patch the way `patch` would (a test oracle, not product code)."""
    old_lines = tokenize_lines(old)
    body = patch.split("\n")[2:-1]
    out: list[str] = []
    pos = 0
    i = 0
    while i < len(body):
        header = body[i]
        assert header.startswith("@@ -")
        old_start = int(header[4:].split(",")[0])
        old_count = int(header.split(" ")[1].split(",")[1])
        start = old_start - 1 if old_count else old_start
        out.extend(old_lines[pos:start])
        pos = start
        i += 1
        while i < len(body) and not body[i].startswith("@@ "):
            line = body[i]
            no_newline = i + 1 < len(body) and body[i + 1] == "\\ No newline at end of file"
            text = line[1:] + ("" if no_newline else "\n")
            if line[0] == " ":
                assert old_lines[pos] == text
                out.append(text)
                pos += 1
            elif line[0] == "-":
                assert old_lines[pos] == text
                pos += 1
            else:
                out.append(text)
            i += 2 if no_newline else 1
    out.extend(old_lines[pos:])
    return "".join(out)


@given(_TEXT, _TEXT)
def test_numbered_diff_and_patch_are_consistent_with_the_line_changes(old: str, new: str) -> None:
    """The patch applies to old and yields new; its +/- lines and the numbered diff's +/- lines
    are the added/removed lines of diff_lines; firstChangedLine follows the common prefix."""
    changes = diff_lines(old, new)
    added = sum(c.count for c in changes if c.added)
    removed = sum(c.count for c in changes if c.removed)
    patch = create_two_files_patch("f", "f", old, new)
    assert _apply_patch(old, patch) == new
    patch_body = patch.split("\n")[2:]
    assert sum(1 for line in patch_body if line.startswith("+")) == added
    assert sum(1 for line in patch_body if line.startswith("-")) == removed
    diff, first = numbered_diff(old, new)
    diff_lines_out = diff.split("\n") if diff else []
    assert sum(1 for line in diff_lines_out if line.startswith("+")) == added
    assert sum(1 for line in diff_lines_out if line.startswith("-")) == removed
    assert first == first_changed_line(old, new)
    assert (first is None) == (added + removed == 0)
