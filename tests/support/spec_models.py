"""Independent models of the spec's output-cap rules (spec limits.2), written from the spec text
alone, not from the implementation. The truncation tests compare the implementation's functions
with them, and the bash conformance checks derive expected tool output from them."""

from __future__ import annotations

import math

KIB24 = 24 * 1024  # the wrapper's output cap in bytes (spec limits.2)


def utf8(s: str) -> int:
    """UTF-8 byte length; a lone surrogate counts as the three bytes JavaScript would encode."""
    return len(s.encode("utf-8", "surrogatepass"))


def spec_utf8_prefix(data: bytes, limit: int) -> bytes:
    """The longest prefix of at most ``limit`` bytes that does not end inside a UTF-8 sequence."""
    cut = min(limit, len(data))
    while 0 < cut < len(data) and (data[cut] & 0xC0) == 0x80:
        cut -= 1
    return data[:cut]


def spec_utf8_suffix(data: bytes, limit: int) -> bytes:
    """The longest suffix of at most ``limit`` bytes that does not start inside a UTF-8 sequence."""
    start = max(0, len(data) - limit)
    while start < len(data) and (data[start] & 0xC0) == 0x80:
        start += 1
    return data[start:]


def spec_head_tail(text: str, max_bytes: int, notice: str) -> str | None:
    """The limits.2 head+tail strategy, step by step; None when the text is returned unchanged."""
    if utf8(text) <= max_bytes:
        return None
    stripped = text.rstrip("\n")
    lines = stripped.split("\n") if stripped else []
    note = spec_utf8_prefix(notice.encode(), max_bytes).decode()
    body_budget = max(0, max_bytes - utf8(note) - 4)
    head_budget = math.floor(body_budget * 0.45)
    tail_budget = body_budget - head_budget
    k = 0
    while k < len(lines) and utf8("\n".join(lines[: k + 1])) <= head_budget:
        k += 1
    head = "\n".join(lines[:k])
    if k == 0 and lines and utf8(lines[0]) > head_budget:
        head = spec_utf8_prefix(lines[0].encode(), head_budget).decode()
    rest = lines[k:]
    m = 0
    while m < len(rest) and utf8("\n".join(rest[len(rest) - m - 1:])) <= tail_budget:
        m += 1
    whole_tail = "\n".join(rest[len(rest) - m:]) if m else ""
    tail = whole_tail
    before = len(rest) - m - 1
    if before >= 0 and utf8(rest[before]) > tail_budget:
        remaining = tail_budget - utf8(whole_tail) - (1 if whole_tail else 0)
        if remaining > 0:
            piece = spec_utf8_suffix(rest[before].encode(), remaining).decode()
            tail = piece + "\n" + whole_tail if whole_tail else piece
    out = "\n\n".join(p for p in (head, note, tail) if p)
    if utf8(out) > max_bytes:
        out = spec_utf8_prefix(out.encode(), max_bytes).decode()
    return out
