"""Deterministic workspace contents: source-like files of a given size, files whose edit target
matches only after fuzzy normalisation, and trees of many small files for the search tools."""

from __future__ import annotations

import random
from pathlib import Path

EXACT_OLD = '    banner = "exact-edit-target"  # the one line the exact edit replaces'
EXACT_NEW = '    banner = "exact-edit-done"  # replaced'
# In the file: typographic quotes and trailing blanks; oldText uses ASCII quotes, so only the
# fuzzy (normalised) comparison finds it.
FUZZY_IN_FILE = "    greeting = \u201cfuzzy-edit-target\u201d  # smart quotes   "
FUZZY_OLD = '    greeting = "fuzzy-edit-target"  # smart quotes'
FUZZY_NEW = '    greeting = "fuzzy-edit-done"  # replaced'
GREP_NEEDLE = "needle_token"
# one file in this many of a tree contains GREP_NEEDLE
NEEDLE_EVERY = 100

_WORDS = ("alpha", "beta", "gamma", "delta", "value", "index", "result", "buffer", "count", "item")


def source_line(rng: random.Random, i: int) -> str:
    a, b = rng.choice(_WORDS), rng.choice(_WORDS)
    return f"    {a}_{i} = compute({b}, {rng.randint(0, 99999)})  # step {i} of the {a} pass\n"


def source_text(nbytes: int, seed: int = 1) -> str:
    """About ``nbytes`` of source-like ASCII lines (never less)."""
    rng = random.Random(seed)
    lines: list[str] = []
    size = i = 0
    while size < nbytes:
        line = source_line(rng, i)
        lines.append(line)
        size += len(line)
        i += 1
    return "".join(lines)


def with_line(text: str, line: str) -> str:
    """``text`` with ``line`` inserted in the middle (on a line boundary)."""
    mid = text.find("\n", len(text) // 2) + 1
    return text[:mid] + line + "\n" + text[mid:]


def exact_edit_text(nbytes: int) -> str:
    return with_line(source_text(nbytes), EXACT_OLD)


def fuzzy_edit_text(nbytes: int) -> str:
    return with_line(source_text(nbytes), FUZZY_IN_FILE)


def numbered_lines(count: int) -> str:
    rng = random.Random(count)
    return "".join(f"{i + 1}: " + source_line(rng, i).lstrip() for i in range(count))


def build_tree(root: Path, files: int, lines_per_file: int = 20) -> None:
    """``files`` small source files under ``root``, 100 per directory, half ``.py`` and half
    ``.txt``; every ``NEEDLE_EVERY``-th file mentions ``GREP_NEEDLE``."""
    rng = random.Random(files)
    for n in range(files):
        d = root / "src" / f"pkg{n // 100:03d}"
        if n % 100 == 0:
            d.mkdir(parents=True, exist_ok=True)
        body = [source_line(rng, i) for i in range(lines_per_file)]
        if n % NEEDLE_EVERY == 0:
            body[lines_per_file // 2] = f"    call({GREP_NEEDLE}, {n})\n"
        ext = "py" if n % 2 == 0 else "txt"
        (d / f"mod{n:05d}.{ext}").write_text("".join(body), encoding="utf-8")
