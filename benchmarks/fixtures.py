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


# -- content classes (issue: performance on every kind of text) ------------------------------------

CONTENT_CLASSES = ("ascii", "latin", "cjk", "emoji", "mixed")
CLASS_LABELS = {
    "ascii": "ASCII",
    "latin": "Latin-1 + typographic punctuation",
    "cjk": "CJK",
    "emoji": "emoji (non-BMP)",
    "mixed": "mixed",
}
_LATIN_WORDS = ("café", "naïve", "résumé", "Ångström", "façade", "jalapeño", "Zürich", "señal", "œuvre", "déjà")
_CJK_WORDS = ("数值", "结果", "缓冲区", "索引", "計算", "変数", "関数", "데이터", "처리", "文字列")
_EMOJI = ("🚀", "🎉", "😀", "🔥", "✨", "🐍", "📦", "🧪", "👍🏽", "🇯🇵")


def latin_line(rng: random.Random, i: int) -> str:
    """Latin-1 letters and typographic punctuation: curly quotes, dashes, an ellipsis, a no-break
    space, guillemets."""
    a, b = rng.choice(_LATIN_WORDS), rng.choice(_LATIN_WORDS)
    return (f"    {a}_{i} = “{b}” — l’étape {rng.randint(0, 99999)}\u00a0: «{a}» ± {i % 97}…  "
            f"# ‘{b}’ – fin\n")


def cjk_line(rng: random.Random, i: int) -> str:
    """Chinese, Japanese and Korean comment text with full-width punctuation (which NFKC maps)."""
    a, b = rng.choice(_CJK_WORDS), rng.choice(_CJK_WORDS)
    return f"    # 第{i}步：计算{a}并返回{b}，これは説明です（{rng.randint(0, 99999)}）。한국어 주석\n"


def emoji_line(rng: random.Random, i: int) -> str:
    """Emoji outside the Basic Multilingual Plane (surrogate pairs in JavaScript), a skin-tone
    modifier and a flag among them."""
    a, b = rng.choice(_EMOJI), rng.choice(_EMOJI)
    return f"    label_{i} = \"{a} launch {rng.randint(0, 99999)} {b}\"  # {rng.choice(_EMOJI)} step {i}\n"


def mixed_line(rng: random.Random, i: int) -> str:
    """The other classes in turn, and now and then an ASCII line with trailing blanks."""
    kind = i % 5
    if kind == 4:
        return source_line(rng, i).rstrip("\n") + "   \n"
    return (source_line, latin_line, cjk_line, emoji_line)[kind](rng, i)


_LINE_MAKERS = {"ascii": source_line, "latin": latin_line, "cjk": cjk_line, "emoji": emoji_line,
                "mixed": mixed_line}
# The one line an exact edit replaces, per class: unique, also once normalised.
CLASS_EDIT_OLD = {
    "ascii": EXACT_OLD,
    "latin": "    bannière = «cible-d’édition» — “exacte”  # la seule ligne remplacée…",
    "cjk": "    标记 = \"编辑目标\"  # 唯一被替换的一行（精确）",
    "emoji": "    banner = \"🎯 edit-target 🎯\"  # 🧭 the one line the exact edit replaces",
    "mixed": "    banner = \"🎯 cible-d’édition 编辑目标\"  # mixed — the one line replaced",
}
CLASS_EDIT_NEW = {cls: old.replace("target", "done").replace("cible", "fait").replace("目标", "完成")
                  for cls, old in CLASS_EDIT_OLD.items()}
POSITIONS = ("start", "middle", "end")


def class_text(cls: str, nbytes: int, seed: int = 1) -> str:
    """About ``nbytes`` of UTF-8 (never less) in whole lines of content class ``cls``."""
    make = _LINE_MAKERS[cls]
    rng = random.Random(seed)
    lines: list[str] = []
    size = i = 0
    while size < nbytes:
        line = make(rng, i)
        lines.append(line)
        size += len(line.encode("utf-8"))
        i += 1
    return "".join(lines)


def with_line_at(text: str, line: str, where: str) -> str:
    """``text`` with ``line`` inserted as its first line, in the middle (on a line boundary) or
    as its last line."""
    if where == "start":
        return line + "\n" + text
    if where == "end":
        return text + line + "\n"
    return with_line(text, line)
