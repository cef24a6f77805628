"""The optimised line diff equals the straightforward one it replaced, on generated inputs.

``tools_impl.shared.line_diff`` keys tokens with one ``str.split``, walks long snakes with slice
comparisons and splits only the shown context of common runs; ``line_diff_straightforward`` is the
previous token-by-token implementation (itself checked against jsdiff 8.0.4 by
test_line_diff_jsdiff.py). Every public value must agree byte for byte: components, unified patch,
numbered diff, ``firstChangedLine`` and the bounded variants.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.tools_impl.shared import line_diff_straightforward as slow
from tools_impl.shared import line_diff as fast

LINES = ["a", "b", "c", "", "x y", "a\r", "\r", "\u00e9", "\U0001f600", "  indented", "\t"]


def _line_texts() -> st.SearchStrategy[str]:
    line = st.sampled_from(LINES)
    end = st.sampled_from(["\n", "\n", "\r\n", ""])
    return st.lists(st.tuples(line, end), max_size=40).map(lambda ps: "".join(a + b for a, b in ps))


def _as_tuples(changes: list[fast.Change] | list[slow.Change]) -> list[tuple[str, bool, bool, int]]:
    return [(c.value, c.added, c.removed, c.count) for c in changes]


def assert_same(old: str, new: str) -> None:
    fast_changes = fast.diff_lines(old, new)
    slow_changes = slow.diff_lines(old, new)
    assert _as_tuples(fast_changes) == _as_tuples(slow_changes)
    assert fast.tokenize_lines(old) == slow.tokenize_lines(old)
    for context in (0, 1, 4):
        assert fast.create_two_files_patch("f", "f", old, new, context) == slow.create_two_files_patch(
            "f", "f", old, new, context)
        assert fast.numbered_diff_from_changes(old, new, fast_changes, context) == slow.numbered_diff_from_changes(
            old, new, slow_changes, context)
    assert fast.first_changed_line(old, new) == slow.first_changed_line(old, new)


@settings(max_examples=400, deadline=None)
@given(_line_texts(), _line_texts())
def test_random_texts_diff_identically(old: str, new: str) -> None:
    assert_same(old, new)


@settings(max_examples=300, deadline=None)
@given(_line_texts(), _line_texts(), _line_texts(), st.integers(0, 3))
def test_edits_inside_long_common_runs_diff_identically(middle_a: str, middle_b: str, ends: str, reps: int) -> None:
    # long common prefix and suffix around the change: the snakes the slice walk takes
    rng = random.Random(len(middle_a) * 31 + len(middle_b))
    block = "".join(f"line {rng.randint(0, 5)}\n" for _ in range(rng.randint(0, 300)))
    prefix, suffix = block * reps, ends + block
    assert_same(prefix + middle_a + suffix, prefix + middle_b + suffix)


@pytest.mark.parametrize("seed", range(6))
def test_large_files_with_scattered_edits_diff_identically(seed: int) -> None:
    rng = random.Random(seed)
    lines = [f"row {rng.randint(0, 40)}" for _ in range(3000)]
    edited = list(lines)
    for _ in range(rng.randint(1, 12)):
        i = rng.randrange(len(edited))
        op = rng.random()
        if op < 0.4:
            edited[i] = f"changed {rng.randint(0, 9)}"
        elif op < 0.7:
            edited.insert(i, "inserted")
        else:
            del edited[i]
    end_old, end_new = rng.choice(["\n", ""]), rng.choice(["\n", ""])
    assert_same("\n".join(lines) + end_old, "\n".join(edited) + end_new)


@settings(max_examples=200, deadline=None)
@given(_line_texts(), _line_texts(), st.integers(0, 6))
def test_bounded_diffs_give_up_identically(old: str, new: str, max_edit: int) -> None:
    bounds_fast = fast.DiffBounds(max_edit, None)
    bounds_slow = slow.DiffBounds(max_edit, None)
    a = fast.diff_lines_bounded(old, new, bounds_fast)
    b = slow.diff_lines_bounded(old, new, bounds_slow)
    if isinstance(b, slow.DiffOmitted):
        assert isinstance(a, fast.DiffOmitted) and a.reason == b.reason
    else:
        assert not isinstance(a, fast.DiffOmitted) and _as_tuples(a) == _as_tuples(b)
