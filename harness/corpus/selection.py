"""Choosing which scenarios run: ``-k`` keyword expressions (pytest-like: words matched as
substrings of id, title and tags, combined with ``and``/``or``/``not`` and parentheses), ``--tag``
filters, and deterministic sharding ``--shard i/n`` (a stable hash of the id, so a scenario stays
in its shard when others are added or removed)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence

from harness.errors import UsageError
from harness.model.scenario import Scenario

TOKEN_RE = re.compile(r"\s*(\(|\)|[^\s()]+)")


def _tokens(expr: str) -> list[str]:
    pos, out = 0, []
    expr = expr.strip()
    while pos < len(expr):
        m = TOKEN_RE.match(expr, pos)
        if not m:
            break
        out.append(m.group(1))
        pos = m.end()
    return out


def compile_keyword(expr: str) -> Callable[[str], bool]:
    """Compile a ``-k`` expression into a predicate over a haystack string (case-insensitive)."""
    toks = _tokens(expr)
    if not toks:
        raise UsageError(f"-k: empty expression {expr!r}")
    pos = 0

    def peek() -> str | None:
        return toks[pos] if pos < len(toks) else None

    def take() -> str:
        nonlocal pos
        if pos >= len(toks):
            raise UsageError(f"-k: unexpected end of expression {expr!r}")
        pos += 1
        return toks[pos - 1]

    def p_or() -> Callable[[str], bool]:
        left = p_and()
        while peek() == "or":
            take()
            right = p_and()
            left = (lambda a, b: lambda h: a(h) or b(h))(left, right)
        return left

    def p_and() -> Callable[[str], bool]:
        left = p_not()
        while peek() == "and":
            take()
            right = p_not()
            left = (lambda a, b: lambda h: a(h) and b(h))(left, right)
        return left

    def p_not() -> Callable[[str], bool]:
        if peek() == "not":
            take()
            inner = p_not()
            return lambda h: not inner(h)
        tok = take()
        if tok == "(":
            inner = p_or()
            if take() != ")":
                raise UsageError(f"-k: expected ')' in {expr!r}")
            return inner
        if tok in (")", "and", "or"):
            raise UsageError(f"-k: unexpected {tok!r} in {expr!r}")
        word = tok.lower()
        return lambda h: word in h

    pred = p_or()
    if pos != len(toks):
        raise UsageError(f"-k: unexpected {toks[pos]!r} in {expr!r}")
    return pred


def haystack(s: Scenario) -> str:
    return " ".join([s.id, s.title, *s.tags]).lower()


def parse_shard(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"(\d+)/(\d+)", text.strip())
    if not m or not (1 <= int(m.group(1)) <= int(m.group(2))):
        raise UsageError(f"--shard: expected i/n with 1 <= i <= n, got {text!r}")
    return int(m.group(1)), int(m.group(2))


def shard_of(scenario_id: str, count: int) -> int:
    """The 1-based shard a scenario id belongs to out of ``count``."""
    digest = hashlib.sha256(scenario_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def select(scenarios: Sequence[Scenario], *, keyword: str | None = None, tags: Sequence[str] = (),
           shard: str | None = None) -> list[Scenario]:
    """Filter (keeping order): every ``tags`` entry must be a tag of the scenario."""
    out = list(scenarios)
    if keyword:
        pred = compile_keyword(keyword)
        out = [s for s in out if pred(haystack(s))]
    for tag in tags:
        out = [s for s in out if tag in s.tags]
    if shard:
        i, n = parse_shard(shard)
        out = [s for s in out if shard_of(s.id, n) == i]
    return out
