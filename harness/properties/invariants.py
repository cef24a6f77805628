"""The invariants ``toolproof properties`` checks: each has Hypothesis strategies for a workspace
and calls, and computes what the implementation must return from an oracle of
``harness.properties.oracles`` (the spec, never the implementation). Which invariants apply
depends on the implementation's ``hello``: its surface and tools. An invariant that belongs to a
patch (``patch``) is still run when the implementation does not declare that patch; a failure
there is reported as "patch absent", not as a regression.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from harness.backends.base import HelloInfo
from harness.properties import oracles

JsonObj = dict[str, Any]
DOLLAR_PIECES = ("$&", "$$", "$`", "$'", "$1", "\\1", "\\g<0>", "$<x>", "\\\\", "$")
PLAIN_ALPHABET = "abcdefgh xyz.;=(){}_-0123456789"


@dataclass(frozen=True)
class Step:
    """One call and what must come back: ``status`` result/error, exact ``text`` or ``error``
    (``None``: not checked), ``is_error`` for results. ``$WORKSPACE`` and the full-output token
    ``$TMP/pi-bash-XXXX.log`` are the normalised forms."""

    tool: str
    args: JsonObj
    status: str = "result"
    text: str | None = None
    error: str | None = None
    is_error: bool | None = False
    full_output: bytes | None = None  # bash: the full-output file must hold exactly these bytes


@dataclass(frozen=True)
class Example:
    files: tuple[tuple[str, bytes], ...]
    steps: tuple[Step, ...]
    final_files: tuple[tuple[str, bytes], ...] = ()  # expected bytes after the last step


@dataclass(frozen=True)
class Invariant:
    name: str
    rule: str
    title: str
    tools: tuple[str, ...]
    build: Callable[[HelloInfo], st.SearchStrategy[Example]]
    surfaces: tuple[str, ...] = ("minimax", "pi")
    patch: str | None = None
    examples_factor: float = 1.0
    notes: dict[str, str] = field(default_factory=dict)

    def applicability(self, hello: HelloInfo) -> str | None:
        """Why the invariant does not apply to this implementation (``None``: it applies)."""
        if hello.surface not in self.surfaces:
            return f"surface {hello.surface} has no such call (needs {' or '.join(self.surfaces)})"
        missing = [t for t in self.tools if t not in hello.tools]
        if missing:
            return f"the implementation has no {', '.join(missing)} tool"
        return None


# -- strategies -----------------------------------------------------------------------------------

def plain_lines(min_lines: int = 1, max_lines: int = 8, alphabet: str = PLAIN_ALPHABET) -> st.SearchStrategy[list[str]]:
    return st.lists(st.text(alphabet, max_size=24), min_size=min_lines, max_size=max_lines)


def plain_text() -> st.SearchStrategy[str]:
    return st.builds(lambda lines, eol: "\n".join(lines) + ("\n" if eol else ""), plain_lines(), st.booleans())


def replacement() -> st.SearchStrategy[str]:
    piece = st.one_of(st.sampled_from(DOLLAR_PIECES), st.text(PLAIN_ALPHABET + "\n", max_size=6),
                      st.sampled_from(("名称", "“q”", "é", "😀")))
    return st.lists(piece, max_size=6).map("".join)


def edit_args(hello: HelloInfo, path: str, old: str, new: str, replace_all: bool = False) -> JsonObj:
    if hello.surface == "minimax":
        args: JsonObj = {"file_path": path, "old_string": old, "new_string": new}
        if replace_all:
            args["replace_all"] = True
        return args
    return {"path": path, "edits": [{"oldText": old, "newText": new}]}


def success_text(hello: HelloInfo, path: str) -> str:
    return f"Successfully replaced 1 block(s) in {path}."


@st.composite
def _unique_substring(draw: st.DrawFn, text: str) -> str:
    """A substring of ``text`` that occurs once, also in fuzzy space, and is not blank."""
    assume(text)
    a = draw(st.integers(0, len(text) - 1))
    b = draw(st.integers(a + 1, min(len(text), a + 30)))
    old = text[a:b]
    assume(oracles.ascii_norm(old).strip() != "")
    assume(len(oracles.occurrences(text, old)) == 1)
    assume(len(oracles.occurrences(oracles.ascii_norm(text), oracles.ascii_norm(old))) == 1)
    assume(oracles.ascii_norm(text).find(oracles.ascii_norm(old)) == text.find(old))
    return old


@st.composite
def replace_all_examples(draw: st.DrawFn, hello: HelloInfo) -> Example:
    text = draw(plain_text())
    assume(text)
    a = draw(st.integers(0, len(text) - 1))
    old = text[a: draw(st.integers(a + 1, min(len(text), a + 6)))]
    new = draw(replacement())
    expected = oracles.split_join(text, old, new)
    assume(expected != text)
    step = Step("edit", edit_args(hello, "p.txt", old, new, replace_all=True),
                text="Successfully replaced 1 block(s) in $WORKSPACE/p.txt.")
    return Example((("p.txt", text.encode()),), (step,), (("p.txt", expected.encode()),))


@st.composite
def exact_unique_examples(draw: st.DrawFn, hello: HelloInfo) -> Example:
    text = draw(plain_text())
    old = draw(_unique_substring(text))
    new = draw(replacement())
    assume(oracles.edit_bytes(text.encode(), old, new) != text.encode())
    step = Step("edit", edit_args(hello, "u.txt", old, new), text=success_text(hello, "u.txt"))
    return Example((("u.txt", text.encode()),), (step,), (("u.txt", oracles.edit_bytes(text.encode(), old, new)),))


FANCY = {"“": '"', "”": '"', "‘": "'", "’": "'", "–": "-", "—": "-", "：": ":", "，": ",", "（": "(",
         "）": ")", "\u00a0": " ", "\u3000": " "}


@st.composite
def fuzzy_span_examples(draw: st.DrawFn, hello: HelloInfo) -> Example:
    """A line holds a span written with curly quotes, dashes, full-width punctuation or special
    spaces; ``old`` is its plain spelling. Other lines carry the same kinds of characters and
    trailing spaces, which a whole-file normalisation would rewrite."""
    fancy = st.sampled_from(sorted(FANCY))
    other_char = st.one_of(fancy, st.sampled_from("xyz "))
    other_line = st.lists(other_char, max_size=12).map("".join)
    before = draw(st.lists(other_line, max_size=3))
    after = draw(st.lists(other_line, max_size=3))
    letters = st.sampled_from("abc")
    middle = draw(st.lists(st.one_of(letters, fancy), min_size=1, max_size=8))
    span = draw(letters) + "".join(middle) + draw(letters)
    assume(any(c in FANCY for c in span))
    old = "".join(FANCY.get(c, c) for c in span)
    lead = draw(other_line)
    trail = draw(other_line) + draw(st.sampled_from(("", "  ", " \u3000")))
    new = draw(st.text("abcXYZ-", min_size=1, max_size=8))
    lines_before = "".join(x + "\n" for x in before)
    lines_after = "".join("\n" + x for x in after) + "\n"
    text = lines_before + lead + span + trail + lines_after
    expected = lines_before + lead + new + trail + lines_after
    step = Step("edit", edit_args(hello, "f.txt", old, new), text=success_text(hello, "f.txt"))
    return Example((("f.txt", text.encode()),), (step,), (("f.txt", expected.encode()),))


COMPAT = {"㎏": "kg", "ﬁ": "fi", "ﬂ": "fl", "…": "...", "™": "TM", "㎞": "km", "ﬃ": "ffi", "℡": "TEL"}


@st.composite
def fidelity_examples(draw: st.DrawFn, hello: HelloInfo) -> Example:
    """``old`` ends inside a compatibility character's NFKC expansion (``3k`` against ``3㎏``): the
    guard must refuse it as not found and leave the file alone."""
    char = draw(st.sampled_from(sorted(COMPAT)))
    expansion = COMPAT[char]
    cut = draw(st.integers(1, len(expansion) - 1))
    digits = draw(st.text("0123456789", min_size=1, max_size=4))
    around = st.text("xyz -", max_size=10)
    text = draw(around) + digits + char + draw(around) + "\n"
    old = digits + expansion[:cut]
    new = draw(st.text("qrs", min_size=1, max_size=4))
    with_hint = "edit.fuzzy-span" in hello.patches
    step = Step("edit", edit_args(hello, "g.txt", old, new), status="error",
                error=oracles.not_found_message("g.txt", with_hint), is_error=None)
    return Example((("g.txt", text.encode()),), (step,), (("g.txt", text.encode()),))


@st.composite
def eol_bom_edit_examples(draw: st.DrawFn, hello: HelloInfo) -> Example:
    lines = draw(plain_lines(min_lines=2))
    endings = draw(st.lists(st.sampled_from(("\n", "\r\n", "\r")), min_size=len(lines), max_size=len(lines)))
    lf = "\n".join(lines) + "\n"
    old = draw(_unique_substring(lf))
    assume("\n" not in old)
    raw_text = "".join(line + end for line, end in zip(lines, endings, strict=True))
    bom = draw(st.booleans())
    raw = (b"\xef\xbb\xbf" if bom else b"") + raw_text.encode()
    new = draw(st.lists(st.sampled_from(("a", "b", "\n", "\r\n", "zz", " ")), min_size=1, max_size=5).map("".join))
    assume(new != old)
    step = Step("edit", edit_args(hello, "e.txt", old, new), text=success_text(hello, "e.txt"))
    return Example((("e.txt", raw),), (step,), (("e.txt", oracles.edit_bytes(raw, old, new)),))


@st.composite
def eol_bom_write_examples(draw: st.DrawFn, hello: HelloInfo) -> Example:
    body = draw(st.lists(st.sampled_from(("a", "b c", "\n", "\r\n", "\r", "名", "")), max_size=8).map("".join))
    content = ("\ufeff" if draw(st.booleans()) else "") + body
    old_kind = draw(st.sampled_from(("none", "plain", "bom")))
    old = None if old_kind == "none" else (b"\xef\xbb\xbf" if old_kind == "bom" else b"") + b"old\r\ntext\n"
    files = () if old is None else (("w.txt", old),)
    step = Step("write", {"path": "w.txt", "content": content}, text=None)
    expected = oracles.write_bytes(content, old, wrapper=hello.surface == "minimax")
    return Example(files, (step,), (("w.txt", expected),))


@st.composite
def duplicate_examples(draw: st.DrawFn, hello: HelloInfo) -> Example:
    unit = draw(st.text("abcxyz=;", min_size=1, max_size=6))
    fillers = draw(st.lists(st.text("pq \n", max_size=8), min_size=3, max_size=7))
    copies = draw(st.integers(2, len(fillers) - 1))
    text = fillers[0] + "".join(unit + f for f in fillers[1: copies + 1]) + "".join(fillers[copies + 1:])
    count = len(oracles.occurrences(oracles.ascii_norm(text), oracles.ascii_norm(unit)))
    assume(count >= 2)
    with_lines = "edit.fuzzy-span" in hello.patches
    step = Step("edit", edit_args(hello, "d.txt", unit, unit + "!"), status="error",
                error=oracles.duplicate_message("d.txt", text, unit, with_lines), is_error=None)
    return Example((("d.txt", text.encode()),), (step,), (("d.txt", text.encode()),))


@st.composite
def read_pages_examples(draw: st.DrawFn, hello: HelloInfo) -> Example:
    """Read from ``offset`` with ``limit`` and follow every "Use offset=N" notice: each page
    matches the numbering model and the pages together are the file from ``offset`` on, with no
    gap and no overlap."""
    lines: list[str] = draw(plain_lines(min_lines=0, max_lines=30))
    final_newline: bool = draw(st.booleans())
    text = "\n".join(lines) + ("\n" if lines and final_newline else "")
    n = len(text.split("\n"))
    offset = draw(st.one_of(st.none(), st.integers(0, n)))
    limit = draw(st.one_of(st.none(), st.integers(1, n + 1)))
    wrapper = hello.surface == "minimax"
    steps: list[Step] = []
    pages: list[str] = []
    current = offset
    for _ in range(40):
        args: JsonObj = {"path": "r.txt"}
        if current is not None:
            args["offset"] = current
        if limit is not None:
            args["limit"] = limit
        body, nxt = oracles.engine_read(text, current, limit)
        shown = oracles.wrapper_number(body, current) if wrapper else body
        steps.append(Step("read", args, text=shown))
        pages.append(oracles.NOTICE_RE.sub("", body))
        if nxt is None:
            break
        current = nxt
    start = max(0, offset - 1) if offset else 0
    assert "\n".join(pages) == "\n".join(text.split("\n")[start:])  # the model itself: no gap, no overlap
    return Example((("r.txt", text.encode()),), tuple(steps))


# bash output sizes in lines, about a third each of few lines, around the 2000-line limit (listed
# twice) and well past it; one sorted list rather than one_of three ranges, so that a failure
# shrinks to the smallest count that shows it, across the regions
LINE_COUNTS = (*range(1, 41), *sorted(2 * list(range(1990, 2011))), *range(2400, 2601, 5))


def numbered_lines_command(count: int, suffix: str, final_newline: bool) -> str:
    """A shell command printing ``1<suffix>`` … ``<count><suffix>``, one per line (the last
    without its newline unless ``final_newline``): the output is written by the command, so a
    counterexample scenario holds one short line instead of the whole output as a file."""
    seq = f"seq -f '%.0f{suffix}' 1 {count}"
    return seq if final_newline else f'printf %s "$({seq})"'


@st.composite
def bash_truncation_examples(draw: st.DrawFn, hello: HelloInfo) -> Example:
    # The line's width is drawn before the line count: Hypothesis shrinks earlier draws first, so
    # a failure shrinks to the narrowest lines that still show it and then to the fewest of them
    # (2001 one-character lines past the line limit, not 1995 lines of 30 past the byte limit).
    width = draw(st.sampled_from((1, 10, 30)))
    fill = draw(st.sampled_from("abxyz"))
    count = draw(st.sampled_from(LINE_COUNTS))
    final_newline = draw(st.booleans())
    lines = [f"{i}{fill * width}" for i in range(1, count + 1)]
    output = "\n".join(lines) + ("\n" if final_newline else "")
    token = "$TMP/pi-bash-XXXX.log"
    truncated = oracles.truncate_tail(output)[3]
    text: str | None = oracles.bash_engine_text(output, token)
    if hello.surface == "minimax" and text is not None and len(text.encode()) > oracles.WRAPPER_BASH_MAX_BYTES:
        text = None  # the wrapper's head+tail cap (spec bash.10) applies; the full-output file is still checked
    step = Step("bash", {"command": numbered_lines_command(count, fill * width, final_newline)}, text=text,
                full_output=output.encode() if truncated else None)
    return Example((), (step,))


INVARIANTS: tuple[Invariant, ...] = (
    Invariant("edit.replace-all-split-join", "edit.4",
              "replace_all equals split/join, with $-sequences and backslashes written literally",
              ("edit",), replace_all_examples, surfaces=("minimax",), patch="wrap.replace-all-literal"),
    Invariant("edit.exact-unique-splice", "edit.6",
              "a unique exact match is spliced literally and nothing else changes",
              ("edit",), exact_unique_examples),
    Invariant("edit.fuzzy-span-only", "edit.7",
              "a fuzzy match rewrites only the matched span; every byte outside it is kept",
              ("edit",), fuzzy_span_examples, patch="edit.fuzzy-span"),
    Invariant("edit.fidelity-guard", "edit.7",
              "a match ending inside a compatibility character's expansion is refused as not found",
              ("edit",), fidelity_examples, patch="edit.fidelity-guard"),
    Invariant("edit.line-endings-and-bom", "edit.5",
              "edit keeps the BOM and the first line ending; new text takes the file's ending",
              ("edit",), eol_bom_edit_examples),
    Invariant("write.line-endings-and-bom", "write.3",
              "write keeps CR, CRLF and LF as given; the BOM follows the engine's rules",
              ("write",), eol_bom_write_examples),
    Invariant("edit.duplicates-refused", "edit.8",
              "a non-unique oldText is refused with the occurrence count (and start lines with the span patch)",
              ("edit",), duplicate_examples),
    Invariant("read.pages-continue", "read.6",
              "read offset/limit pages match the numbering model and continue with no gap or overlap",
              ("read",), read_pages_examples),
    Invariant("bash.tail-and-full-output", "bash.8",
              "bash keeps exactly the promised tail and the full-output file holds every byte",
              ("bash",), bash_truncation_examples, examples_factor=0.3),
)


def by_name(names: list[str]) -> list[Invariant]:
    known = {i.name: i for i in INVARIANTS}
    return [known[n] for n in names]
