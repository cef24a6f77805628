"""count_newlines is bytes.count(b"\n", start, end), with StringZilla and without."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tools_impl.shared import bytecount
from tools_impl.shared.bytecount import count_newlines


@pytest.fixture(params=["simd", "bytes.count"])
def counter(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "bytes.count":
        monkeypatch.setattr(bytecount, "_counter", None)
    return str(request.param)


def test_the_simd_count_is_installed_and_used() -> None:
    # a dependency in pyproject.toml and in the reference's container image
    assert bytecount.accelerated() is True


def test_counts_in_a_64_kib_piece(counter: str) -> None:
    piece = (b"x" * 72 + b"\n") * 897 + b"tail"
    assert count_newlines(piece) == 897
    assert count_newlines(piece, 73, 146) == 1
    assert count_newlines(piece, 0, 72) == 0
    assert count_newlines(piece, -77) == 1


def test_edges(counter: str) -> None:
    assert count_newlines(b"") == 0
    assert count_newlines(b"\n") == 1
    assert count_newlines(b"\r\n\r\r\n") == 2
    assert count_newlines(b"\n\n\n", 2, 1) == 0
    assert count_newlines(b"\n\n\n", 0, 100) == 3
    assert count_newlines("é\n€\n𝄞".encode()) == 2


@given(st.binary(max_size=5000), st.integers(-6000, 6000), st.integers(-6000, 6000) | st.none())
def test_same_as_bytes_count(data: bytes, start: int, end: int | None) -> None:
    expected = data.count(b"\n", start, len(data) if end is None else end)
    assert count_newlines(data, start, end) == expected
