"""``sort_files`` computes the locale key only where modification times tie; the order must be
exactly that of sorting by ``(-mtime, locale_key)``."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tools_impl.search.grep_tool import locale_key, sort_files

NAMES = ["a", "B", "b", "\u00e9", "a.txt", "A.txt", "z", "_x", "x1", "x10", "e\u0301"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from([1.0, 2.0, 2.5, 3.0])), max_size=12,
                unique_by=lambda t: t[0]))
def test_sort_files_equals_sorting_by_time_then_locale_key(entries: list[tuple[str, float]]) -> None:
    times = dict(entries)
    files = [name for name, _ in entries]
    assert sort_files(files, times.__getitem__) == sorted(files, key=lambda f: (-times[f], locale_key(f)))


def test_newest_first_and_ties_by_name() -> None:
    times = {"b": 5.0, "a": 5.0, "c": 9.0, "B": 5.0}
    assert sort_files(list(times), times.__getitem__) == ["c", "a", "b", "B"]
