"""Generated inputs for differential fuzzing: text, files, paths, malformed values, and the calls
of read, write and edit (grep and glob: ``trees.py``; bash: ``commands.py``; the case of each
index: ``cases.py``).

Input classes (each case's ``tag``): CJK, full-width forms, curly quotes, dashes, special spaces,
combining marks, non-BMP characters, ligatures and other compatibility characters, characters
whose NFKC changed in recent Unicode versions, NFD file names, every line-ending mix, BOM, long
lines, many lines, files over 50 KB, invalid UTF-8, path variants (absolute, ``./``, ``@``,
``file://`` URLs valid and malformed, special spaces, directories, missing files) and malformed
arguments (null, numbers as strings, booleans, wrapped objects, huge and tiny numbers, wrong types,
missing and extra properties).
"""

from __future__ import annotations

import functools
import json
import random
import unicodedata
from collections.abc import Callable
from typing import Any, Literal
from urllib.parse import quote

from harness.fuzz.execute import ROOT_TOKEN

ASCII_WORDS = ("alpha", "beta", "gamma", "delta", "value", "name", "x", "id", "TODO", "return 0;",
               "def f():", "    pass", "{", "}", "a = 1", "// note", "key: val", "'quoted'", '"dq"')
POOLS: dict[str, str] = {
    "cjk": "名称值备注旧新中文字符测试漢字かなカナ한국어",
    "fullwidth": "：，（）！？；［］ＡＢＣａｂｃ１２３＠＃％＆",
    "curly": "“”‘’„‟‚‛",
    "dashes": "‐‑‒–—―−",
    "special-spaces": "\u00a0\u2002\u2003\u2009\u200a\u202f\u205f\u3000",
    "combining": "e\u0301a\u0308n\u0303o\u0302\u0327",
    "non-bmp": "😀𝒜𠀀🎉𝟘🀄",
    "ligatures": "ﬁﬂﬀﬃ…™²³½㎏℃Ⅻ①",
    "invisible": "\u200b\u2032«»‹›\ufeff",
}
FANCY_TO_PLAIN = {
    "“": '"', "”": '"', "„": '"', "‟": '"', "‘": "'", "’": "'", "‚": "'", "‛": "'",
    "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "―": "-", "−": "-",
    "\u00a0": " ", "\u2002": " ", "\u2003": " ", "\u2009": " ", "\u202f": " ", "\u3000": " ",
    "：": ":", "，": ",", "（": "(", "）": ")", "！": "!", "ﬁ": "fi", "…": "...",
}
EOLS = ("\n", "\r\n", "\r")
TIMER_MAX_S = (2**31 - 1) / 1000
TEXT_CLASSES = ("ascii", "cjk", "fullwidth", "curly", "dashes", "special-spaces", "combining",
                "non-bmp", "ligatures", "invisible", "unicode-new", "mixed")
SHAPES = ("plain", "plain", "plain", "crlf", "cr", "mixed-eol", "bom", "bom-crlf", "long-line",
          "many-lines", "big", "huge-line", "invalid-utf8", "empty", "no-final-eol", "trailing-ws")


@functools.cache
def unicode_new_chars() -> str:
    """Characters whose NFKC form differs between this Python's ``unicodedata`` and Unicode 17
    (``unicodedata2``); empty when the two agree or ``unicodedata2`` is missing."""
    try:
        import unicodedata2  # type: ignore[import-not-found]
    except ImportError:
        return ""
    out = []
    for cp in range(0x80, 0x32000):
        ch = chr(cp)
        if 0xD800 <= cp <= 0xDFFF:
            continue
        if unicodedata.normalize("NFKC", ch) != unicodedata2.normalize("NFKC", ch):
            out.append(ch)
    return "".join(out)


class Gen:
    """Draws one case from its own random stream."""

    def __init__(self, seed: int, index: int) -> None:
        self.r = random.Random(f"toolproof-fuzz:{seed}:{index}")
        self.index = index
        self.tags: list[str] = []

    # -- text -------------------------------------------------------------------------------
    def pool(self, cls: str) -> str:
        if cls == "unicode-new":
            return unicode_new_chars() or POOLS["ligatures"]
        if cls == "mixed":
            return "".join(POOLS.values())
        return POOLS.get(cls, "")

    def word(self, cls: str) -> str:
        r = self.r
        if cls == "ascii" or r.random() < 0.35:
            return r.choice(ASCII_WORDS)
        pool = self.pool(cls)
        n = r.randint(1, 6)
        chars = [r.choice(pool) for _ in range(n)]
        if r.random() < 0.5:
            chars.insert(r.randrange(len(chars) + 1), r.choice("abc xyz_=:;.,'\"-"))
        return "".join(chars)

    def line(self, cls: str) -> str:
        r = self.r
        s = " ".join(self.word(cls) for _ in range(r.randint(0, 6)))
        if r.random() < 0.15:
            s += r.choice(("  ", "\t", " \u00a0", "\u3000"))
        return s

    def lines(self, cls: str, n: int) -> list[str]:
        return [self.line(cls) for _ in range(n)]

    def text(self, cls: str, shape: str) -> tuple[str, str]:
        """(text with "\\n" line ends, line-ending shape) — the caller encodes it."""
        r = self.r
        n = r.randint(1, 12)
        if shape == "many-lines":
            n = r.choice((1999, 2000, 2001, 2002, r.randint(2003, 3500)))
            lines = [f"{i} {self.word(cls)}" for i in range(n)]
        elif shape == "empty":
            return "", shape
        else:
            lines = self.lines(cls, n)
        if shape == "long-line":
            lines.insert(r.randrange(len(lines) + 1), "L" * r.choice((1999, 2000, 2001, 2500, 5000)) + self.word(cls))
        if shape == "huge-line":
            lines.insert(0 if r.random() < 0.6 else r.randrange(len(lines) + 1),
                         (self.word(cls) + " ") * r.randint(6000, 12000))
        if shape == "big":
            filler = self.line(cls) or "filler"
            size = sum(len(x.encode("utf-8", "surrogatepass")) + 1 for x in lines)
            while size < 52_000:
                lines.append(filler + " " + str(len(lines)))
                size += len(lines[-1].encode("utf-8", "surrogatepass")) + 1
        if shape == "trailing-ws":
            lines = [x + r.choice(("", " ", "  ", "\t")) for x in lines]
        text = "\n".join(lines)
        if shape != "no-final-eol" and r.random() < 0.85:
            text += "\n"
        return text, shape

    def encode(self, text: str, shape: str) -> bytes:
        r = self.r
        if shape in ("crlf", "bom-crlf"):
            text = text.replace("\n", "\r\n")
        elif shape == "cr":
            text = text.replace("\n", "\r")
        elif shape == "mixed-eol":
            parts = text.split("\n")
            text = "".join(p + (r.choice(EOLS) if i < len(parts) - 1 else "") for i, p in enumerate(parts))
        data = text.encode("utf-8", "surrogatepass")
        if shape.startswith("bom"):
            data = b"\xef\xbb\xbf" + data
        if shape == "invalid-utf8" and data:
            for _ in range(r.randint(1, 4)):
                at = r.randrange(len(data) + 1)
                data = data[:at] + r.choice((b"\xff", b"\xc3", b"\xe2\x80", b"\xed\xa0\x80", b"\xf0\x9f")) + data[at:]
        return data

    # -- paths ------------------------------------------------------------------------------
    def file_name(self, cls: str) -> str:
        r = self.r
        base = r.choice(("a.txt", "notes.md", "src/main.py", "dir/sub/file.txt", "data.json",
                         "名称.txt", "café.txt", "my file.txt", "it's.txt", "Screenshot 2024 at 10.00 AM.png.txt"))
        if cls == "nfd" or (r.random() < 0.1):
            base = unicodedata.normalize("NFD", base)
        return base

    def path_variant(self, name: str) -> str:
        r = self.r
        choice = r.choices(
            ("plain", "dot", "abs", "at", "file-url", "file-url-escaped", "file-url-malformed",
             "file-url-host", "special-space", "nfc", "curly", "missing", "dir", "trailing-slash", "empty",
             "double-slash"),
            (40, 4, 6, 3, 3, 2, 4, 1, 3, 2, 2, 4, 2, 1, 1, 1))[0]
        self.tags.append(f"path:{choice}")
        if choice == "dot":
            return "./" + name
        if choice == "abs":
            return f"{ROOT_TOKEN}/{name}"
        if choice == "at":
            return "@" + name
        if choice == "file-url":
            return f"file://{ROOT_TOKEN}/{name}"
        if choice == "file-url-escaped":

            return f"file://{ROOT_TOKEN}/{quote(name)}"
        if choice == "file-url-malformed":
            bad = r.choice(("%", "%Z", "%ZZ", "%E0%A4%A", "%C3", "%FF", "%2", "%e2%82"))
            return f"file://{ROOT_TOKEN}/{name}{bad}"
        if choice == "file-url-host":
            return f"file://example.com{ROOT_TOKEN}/{name}"
        if choice == "special-space":
            return name.replace(" ", r.choice(("\u00a0", "\u202f", "\u3000"))) if " " in name else "\u00a0" + name
        if choice == "nfc":
            return unicodedata.normalize("NFC", name)
        if choice == "curly":
            return name.replace("'", "\u2019")
        if choice == "missing":
            return "missing/" + name
        if choice == "dir":
            return "dir" if "/" in name else "."
        if choice == "trailing-slash":
            return name + "/"
        if choice == "empty":
            return ""
        return "." + "//" + name if choice == "double-slash" else name

    # -- numbers and malformed values -------------------------------------------------------
    def number_arg(self, good: Callable[[], Any]) -> tuple[bool, Any]:
        """(present, value): a proper number most of the time, else a malformed one."""
        r = self.r
        roll = r.random()
        if roll < 0.35:
            return False, None
        if roll < 0.75:
            return True, good()
        self.tags.append("malformed")
        return True, r.choice((
            None, "", " ", "2", " 3 ", "0x10", "1e1", "abc", "-1", "1.5", "Infinity", "NaN", "true",
            True, False, 0, -5, 1.5, 0.5, 2.9999, 1e-7, 5e-324, 2 ** 53 + 1, 10 ** 21, 123456789012345678901,
            10 ** 400, -(10 ** 400), [2], {"n": 2}, 1e21, 1.0, 100.0,
        ))

    def string_arg(self, good: Callable[[], Any]) -> Any:
        r = self.r
        if r.random() < 0.88:
            return good()
        self.tags.append("malformed")
        return r.choice((None, 0, 12, 1.5, -0.0, True, False, [], ["x"], {"a": 1}, 10 ** 400, 2 ** 60, 1e-7))


def make_file(g: Gen, name: str | None = None) -> tuple[str, bytes, str, str]:
    """(path, bytes, text class, shape)."""
    r = g.r
    cls = r.choice(TEXT_CLASSES)
    shape = r.choice(SHAPES)
    text, shape = g.text(cls, shape)
    path = name or g.file_name(cls)
    return path, g.encode(text, shape), cls, shape


def gen_read(g: Gen) -> tuple[Any, list[tuple[str, bytes]], str]:
    r = g.r
    path, data, cls, shape = make_file(g)
    lines = data.count(b"\n") + 1
    args: dict[str, Any] = {"path": g.string_arg(lambda: g.path_variant(path))}
    present, off = g.number_arg(lambda: r.choice((0, 1, 2, r.randint(1, lines + 2), lines, lines + 1, -1)))
    if present:
        args["offset"] = off
    present, lim = g.number_arg(lambda: r.choice((1, 2, r.randint(1, lines + 2), 2000, 0)))
    if present:
        args["limit"] = lim
    args = malformed_object(g, args, ("path",))
    return args, [(path, data)], f"{cls}/{shape}"


def gen_write(g: Gen) -> tuple[Any, list[tuple[str, bytes]], str]:
    r = g.r
    files: list[tuple[str, bytes]] = []
    cls = r.choice(TEXT_CLASSES)
    shape = r.choice(SHAPES)
    text, shape = g.text(cls, shape)
    name = g.file_name(cls)
    if r.random() < 0.4:  # overwrite an existing file (maybe with a BOM or CRLF)
        old_path, old, _, oshape = make_file(g, name)
        files.append((old_path, old))
        shape = f"{shape}+over-{oshape}"
    content_bytes = g.encode(text, shape.split("+")[0])
    content = content_bytes.decode("utf-8", "replace")
    args: dict[str, Any] = {"path": g.string_arg(lambda: g.path_variant(name)),
                            "content": g.string_arg(lambda: content)}
    args = malformed_object(g, args, ("path", "content"))
    return args, files, f"{cls}/{shape}"


def fuzzy_variant(g: Gen, s: str) -> str:
    """``s`` with compatibility characters replaced by plain ones, or trailing spaces dropped, or
    composed/decomposed: text that matches only fuzzily."""
    r = g.r
    how = r.choice(("plain", "nfkc", "nfc", "nfd", "rstrip", "plain"))
    g.tags.append(f"fuzzy:{how}")
    if how == "plain":
        return "".join(FANCY_TO_PLAIN.get(c, c) for c in s)
    if how == "rstrip":
        return "\n".join(x.rstrip(" \t") for x in s.split("\n"))
    form: Literal["NFKC", "NFC", "NFD"] = "NFKC" if how == "nfkc" else ("NFC" if how == "nfc" else "NFD")
    return unicodedata.normalize(form, s)


def pick_old_text(g: Gen, text: str) -> str:
    r = g.r
    mode = r.choices(("substring", "line", "fuzzy", "duplicate", "missing", "empty", "whitespace", "whole"),
                     (30, 20, 25, 8, 6, 3, 3, 5))[0]
    g.tags.append(f"old:{mode}")
    lines = text.split("\n")
    if mode == "missing":
        return "no such text " + g.word("mixed")
    if mode == "empty":
        return ""
    if mode == "whitespace":
        return r.choice((" ", "\n", "  \n", "\u3000"))
    if mode == "whole":
        return text
    if mode == "duplicate":
        words = [w for w in (x.strip() for x in lines) if w and text.count(w) > 1]
        return r.choice(words) if words else (lines[0] or "x")
    if mode == "line":
        start = r.randrange(len(lines))
        span = "\n".join(lines[start:start + r.randint(1, 3)])
        return span or "x"
    if not text:
        return "x"
    a = r.randrange(len(text))
    b = min(len(text), a + r.randint(1, 40))
    sub = text[a:b]
    return fuzzy_variant(g, sub) if mode == "fuzzy" else sub


def gen_edit(g: Gen) -> tuple[Any, list[tuple[str, bytes]], str]:
    r = g.r
    path, data, cls, shape = make_file(g)
    if shape in ("big", "many-lines", "huge-line") and r.random() < 0.7:
        path, data, cls, shape = make_file(g)  # big files are costly; keep them rarer here
    text = data.decode("utf-8", "replace").lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    n_edits = r.choices((1, 2, 3), (70, 20, 10))[0]
    edits: list[Any] = []
    for _ in range(n_edits):
        old = pick_old_text(g, text)
        new = r.choice((old + g.word(cls), g.line(cls), "", "$&$$$`$'\\1\\g<0>$1", old.upper(),
                        old.replace("\n", "\r\n"), g.word("mixed"), old))
        edits.append({"oldText": old, "newText": new})
    args: dict[str, Any] = {"path": g.string_arg(lambda: g.path_variant(path)), "edits": edits}
    roll = r.random()
    if roll < 0.04:
        g.tags.append("malformed")
        args["edits"] = edits[0]  # a single object instead of an array
    elif roll < 0.07:
        g.tags.append("malformed")
        args["edits"] = json.dumps(edits, ensure_ascii=False)  # the legacy JSON-string form
    elif roll < 0.10:
        g.tags.append("malformed")
        args = {"path": args["path"], "oldText": edits[0]["oldText"], "newText": edits[0]["newText"]}
    elif roll < 0.16:
        g.tags.append("malformed")
        e = dict(edits[0])
        key = r.choice(("oldText", "newText"))
        mutation = r.choice(("drop", "null", "number", "bool", "extra"))
        if mutation == "drop":
            e.pop(key)
        elif mutation == "null":
            e[key] = None
        elif mutation == "number":
            e[key] = r.choice((0, 42, 1.5, 10 ** 400))
        elif mutation == "bool":
            e[key] = r.choice((True, False))
        else:
            e["extra"] = 1
        args["edits"] = [e, *edits[1:]]
    elif roll < 0.18:
        g.tags.append("malformed")
        args["edits"] = r.choice(([], None, "", "[]", 0, "not json"))
    args = malformed_object(g, args, ("path", "edits"))
    return args, [(path, data)], f"{cls}/{shape}"


def malformed_object(g: Gen, args: dict[str, Any], required: tuple[str, ...]) -> Any:
    r = g.r
    roll = r.random()
    if roll > 0.08:
        return args
    g.tags.append("malformed")
    if roll < 0.025:
        out = dict(args)
        out.pop(r.choice(required), None)
        return out
    if roll < 0.05:
        return {**args, r.choice(("extra", "file_path", "pages", "description")): r.choice((1, "x", None))}
    if roll < 0.06:
        return {k: None for k in args}
    if roll < 0.07:
        return {}
    return r.choice(([], "string", 0, None, [args]))
