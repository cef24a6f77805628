"""A minimatch-compatible glob → regular-expression translator (the subset the search tools need).

Owns: brace expansion (the ``brace-expansion`` package's rules: options, nested sets, numeric and
alphabetic sequences, ``\\{`` escapes), minimatch's per-segment translation (``*``, ``?``,
character classes with ``!``/``^`` negation, extglobs ``!( ?( +( *( @(``, the ``.``/``..``
traversal guard) and its ``makeRe`` assembly of globstar segments; plus the glob tool's own
pattern questions: ``has_magic``, ``validate_glob`` and ``is_broad_file_scan`` (spec glob.2).

Semantics follow minimatch 9 (``makeRe`` / ``minimatch(path, pattern)``) with the options the
reference tools use: ``dot: true`` and optionally ``nocase: true``. Known deviations, all in corners
no tool relies on: POSIX classes (``[[:alpha:]]``) are mapped to ASCII sets because Python's ``re``
has no ``\\p{…}``; an escaped non-special character inside a segment (``\\|``) is always literal.
Everything here is pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

GLOBSTAR = "**"
EXTGLOB_TYPES = frozenset("!?+*@")
# spec glob.2: the characters that make a pattern "magic" for the absolute-split / exactFile tests.
MAGIC_CHARS = frozenset("*?[{")
EXTGLOB_OPENERS = ("!(", "+(", "@(")
MAX_PATTERN_LENGTH = 64 * 1024

# JavaScript regex pieces rendered for Python's ``re``. ``$`` becomes ``\Z`` because Python's ``$``
# also matches before a trailing newline; JavaScript's ``.`` excludes the four line terminators.
END = r"\Z"
JS_DOT = "[^\n\r\u2028\u2029]"
QMARK = "[^/]"
STAR = QMARK + "*?"
STAR_NO_EMPTY = QMARK + "+?"
START_NO_TRAVERSAL = r"(?!(?:^|/)\.\.?(?:" + END + "|/))"
START_NO_DOT = r"(?!\.)"
TWO_STAR_DOT = r"(?:(?!(?:/|^)(?:\.{1,2})(?:" + END + "|/))" + JS_DOT + ")*?"
TWO_STAR_NO_DOT = r"(?:(?!(?:/|^)\.)" + JS_DOT + ")*?"
NEG_TAIL_END = "(?:" + END + "|/)"
NEVER = END + "."  # minimatch's ``$.``: a class that can match nothing poisons the segment

# POSIX bracket classes → ASCII approximations (deviation, see module docstring).
POSIX_CLASSES: dict[str, str] = {
    "[:alnum:]": "a-zA-Z0-9",
    "[:alpha:]": "a-zA-Z",
    "[:ascii:]": "\\x00-\\x7f",
    "[:blank:]": " \\t",
    "[:cntrl:]": "\\x00-\\x1f\\x7f",
    "[:digit:]": "0-9",
    "[:graph:]": "\\x21-\\x7e",
    "[:lower:]": "a-z",
    "[:print:]": "\\x20-\\x7e",
    "[:punct:]": "!-/:-@\\[-`{-~",
    "[:space:]": " \\t\\r\\n\\v\\f",
    "[:upper:]": "A-Z",
    "[:word:]": "a-zA-Z0-9_",
    "[:xdigit:]": "A-Fa-f0-9",
}


class InvalidGlob(ValueError):
    """The pattern is not a well-formed glob (unbalanced ``{}``/``[]`` or a bad character class)."""


# ---------------------------------------------------------------------------------------------
# Brace expansion


_ESC_TOKENS = {"\\": "\x00SLASH\x00", "{": "\x00OPEN\x00", "}": "\x00CLOSE\x00", ",": "\x00COMMA\x00",
               ".": "\x00PERIOD\x00"}
_NUMERIC_SEQ = re.compile(r"^-?\d+\.\.-?\d+(?:\.\.-?\d+)?$")
_ALPHA_SEQ = re.compile(r"^[a-zA-Z]\.\.[a-zA-Z](?:\.\.-?\d+)?$")
_HAS_BRACE_SET = re.compile(r"\{(?:(?!\{).)*\}", re.DOTALL)


def _escape_braces(s: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s) and s[i + 1] in _ESC_TOKENS:
            out.append(_ESC_TOKENS[s[i + 1]])
            i += 2
            continue
        out.append(s[i])
        i += 1
    return "".join(out)


def _unescape_braces(s: str) -> str:
    for char, token in _ESC_TOKENS.items():
        s = s.replace(token, char)
    return s


@dataclass(frozen=True)
class _Balanced:
    pre: str
    body: str
    post: str


def _balanced(s: str) -> _Balanced | None:
    """The first balanced ``{…}`` pair, with balanced-match's choice for unbalanced input."""
    opens = [i for i, c in enumerate(s) if c == "{"]
    if not opens or s.find("}", opens[0] + 1) < 0:
        return None
    stack: list[int] = []
    fallback: tuple[int, int] | None = None
    for i in range(opens[0], len(s)):
        c = s[i]
        if c == "{":
            stack.append(i)
        elif c == "}" and stack:
            beg = stack.pop()
            if not stack:
                return _Balanced(s[:beg], s[beg + 1 : i], s[i + 1 :])
            if fallback is None or beg < fallback[0]:
                fallback = (beg, i)
    if fallback is None:
        return None
    beg, end = fallback
    return _Balanced(s[:beg], s[beg + 1 : end], s[end + 1 :])


def _comma_parts(s: str) -> list[str]:
    if not s:
        return [""]
    m = _balanced(s)
    if m is None:
        return s.split(",")
    parts = m.pre.split(",")
    parts[-1] += "{" + m.body + "}"
    if m.post:
        rest = _comma_parts(m.post)
        parts[-1] += rest.pop(0)
        parts.extend(rest)
    return parts


def _sequence(parts: list[str], alpha: bool) -> list[str]:
    x = ord(parts[0]) if alpha else int(parts[0])
    y = ord(parts[1]) if alpha else int(parts[1])
    step = abs(int(parts[2])) if len(parts) == 3 else 1
    step = step or 1
    width = max(len(parts[0]), len(parts[1]))
    pad = not alpha and any(re.match(r"^-?0\d", p) for p in parts)
    out: list[str] = []
    i = x
    reverse = y < x
    while (i >= y) if reverse else (i <= y):
        if alpha:
            c = chr(i)
            out.append("" if c == "\\" else c)
        else:
            c = str(i)
            if pad and len(c) < width:
                zeros = "0" * (width - len(c))
                c = "-" + zeros + c[1:] if i < 0 else zeros + c
            out.append(c)
        i = i - step if reverse else i + step
    return out


def _expand(s: str, is_top: bool) -> list[str]:
    m = _balanced(s)
    if m is None:
        return [s]
    post = _expand(m.post, False) if m.post else [""]
    if m.pre.endswith("$"):
        return [m.pre + "{" + m.body + "}" + p for p in post]
    numeric = bool(_NUMERIC_SEQ.match(m.body))
    alpha = bool(_ALPHA_SEQ.match(m.body))
    is_seq = numeric or alpha
    if not is_seq and "," not in m.body:
        if re.search(r",(?!,).*\}", m.post, re.DOTALL):
            return _expand(m.pre + "{" + m.body + _ESC_TOKENS["}"] + m.post, False)
        return [s]
    if is_seq:
        items = _sequence(m.body.split(".."), alpha)
    else:
        pieces = _comma_parts(m.body)
        if len(pieces) == 1:
            inner = ["{" + e + "}" for e in _expand(pieces[0], False)]
            if len(inner) == 1:
                return [m.pre + inner[0] + p for p in post]
            pieces = inner
        items = [e for piece in pieces for e in _expand(piece, False)]
    out: list[str] = []
    for item in items:
        for p in post:
            expansion = m.pre + item + p
            if not is_top or is_seq or expansion:
                out.append(expansion)
    return out


def brace_expand(pattern: str) -> list[str]:
    """Expand ``{a,b}`` / ``{1..3}`` sets the way minimatch does (duplicates kept, order kept)."""
    if not _HAS_BRACE_SET.search(pattern):
        return [pattern]
    s = pattern
    if s.startswith("{}"):
        s = "\\{\\}" + s[2:]
    return [_unescape_braces(e) for e in _expand(_escape_braces(s), True)]


# ---------------------------------------------------------------------------------------------
# Segment AST (one path portion, no ``/``)


@dataclass(eq=False)
class _Node:
    """A sequence (``kind is None``) of literal chunks and extglobs, or an extglob whose parts are
    its alternatives (each a sequence)."""

    kind: str | None
    parent: _Node | None = None
    index: int = 0
    parts: list[str | _Node] = field(default_factory=list)
    empty_ext: bool = False

    def push(self, *items: str | _Node) -> None:
        for item in items:
            if item != "":
                self.parts.append(item)

    def clone(self, parent: _Node) -> _Node:
        copy = _Node(self.kind, parent, len(parent.parts))
        for p in self.parts:
            copy.push(p if isinstance(p, str) else p.clone(copy))
        return copy  # minimatch does not carry the empty-extglob flag into clones

    def text(self) -> str:
        inner = [p if isinstance(p, str) else p.text() for p in self.parts]
        return "".join(inner) if self.kind is None else self.kind + "(" + "|".join(inner) + ")"

    def is_start(self) -> bool:
        if self.parent is None:
            return True
        if not self.parent.is_start():
            return False
        return all(isinstance(p, _Node) and p.kind == "!" for p in self.parent.parts[: self.index])

    def is_end(self) -> bool:
        if self.parent is None or self.parent.kind == "!":
            return True
        if not self.parent.is_end():
            return False
        if self.kind is None:
            return True
        return self.index == len(self.parent.parts) - 1


@dataclass
class _ClassScan:
    """minimatch's "inside ``[...]``" state while splitting a segment into extglob parts: an
    extglob opener or ``|``/``)`` inside a class is plain text."""

    open_at: int = -1
    negated: bool = False

    def consume(self, s: str, j: int) -> bool:
        """Whether the character at ``j`` belongs to a class (and so is plain text)."""
        c = s[j]
        if self.open_at >= 0:
            if j == self.open_at + 1:
                self.negated = c in "^!"
            elif c == "]" and not (j == self.open_at + 2 and self.negated):
                self.open_at = -1
            return True
        if c == "[":
            self.open_at = j
            self.negated = False
            return True
        return False


def _parse(s: str, node: _Node, pos: int, negs: list[_Node]) -> int:
    escaping = False
    bracket = _ClassScan()
    if node.kind is None:
        acc = ""
        i = pos
        while i < len(s):
            c = s[i]
            if escaping or c == "\\":
                escaping = not escaping
                acc += c
                i += 1
                continue
            if bracket.consume(s, i):
                acc += c
                i += 1
                continue
            if c in EXTGLOB_TYPES and s[i + 1 : i + 2] == "(":
                node.push(acc)
                acc = ""
                ext = _Node(c, node, len(node.parts))
                if c == "!":
                    negs.append(ext)
                i = _parse(s, ext, i + 1, negs)
                node.push(ext)
                continue
            acc += c
            i += 1
        node.push(acc)
        return i

    i = pos + 1  # pos is at the "("
    part = _Node(None, node, 0)
    alternatives: list[_Node] = []
    acc = ""
    while i < len(s):
        c = s[i]
        i += 1
        if escaping or c == "\\":
            escaping = not escaping
            acc += c
            continue
        if bracket.consume(s, i - 1):
            acc += c
            continue
        if c in EXTGLOB_TYPES and s[i : i + 1] == "(":
            part.push(acc)
            acc = ""
            ext = _Node(c, part, len(part.parts))
            if c == "!":
                negs.append(ext)
            part.push(ext)
            i = _parse(s, ext, i, negs)
            continue
        if c == "|":
            part.push(acc)
            acc = ""
            alternatives.append(part)
            part = _Node(None, node, 0)
            continue
        if c == ")":
            if acc == "" and not node.parts:  # minimatch quirk: also true for "!(a|)"
                node.empty_ext = True
            part.push(acc)
            node.push(*alternatives, part)
            return i
        acc += c
    # An unterminated extglob is literal text from its type character on.
    node.kind = None
    node.parts = [s[pos - 1 :]]
    return i


def _fill_negs(negs: list[_Node]) -> None:
    """Append to each alternative of every ``!(…)`` whatever follows it up to the segment end,
    because a negative lookahead must see the rest of the pattern."""
    for neg in reversed(negs):
        if neg.kind != "!":
            continue
        child: _Node = neg
        parent = child.parent
        while parent is not None:
            if parent.kind is None:
                for follower in parent.parts[child.index + 1 :]:
                    for alt in neg.parts:
                        assert isinstance(alt, _Node)
                        alt.push(follower if isinstance(follower, str) else follower.clone(alt))
            child = parent
            parent = child.parent


def _class_escape(c: str) -> str:
    return c if c.isalnum() else "\\" + c


@dataclass(frozen=True)
class _Class:
    src: str
    consumed: int  # 0: not a class (the "[" is literal)
    magic: bool
    literal: str = ""


def _parse_class(s: str, pos: int) -> _Class:
    ranges: list[str] = []
    i = pos + 1
    saw_start = False
    escaping = False
    negate = False
    end = pos
    range_start = ""
    while i < len(s):
        c = s[i]
        if c in "!^" and i == pos + 1:
            negate = True
            i += 1
            continue
        if c == "]" and saw_start and not escaping:
            end = i + 1
            break
        saw_start = True
        if c == "\\" and not escaping:
            escaping = True
            i += 1
            continue
        if c == "[" and not escaping:
            cls = next((k for k in POSIX_CLASSES if s.startswith(k, i)), None)
            if cls is not None:
                if range_start:
                    return _Class(NEVER, len(s) - pos, True)
                ranges.append(POSIX_CLASSES[cls])
                i += len(cls)
                continue
        escaping = False
        if range_start:
            if c > range_start:
                ranges.append(_class_escape(range_start) + "-" + _class_escape(c))
            elif c == range_start:
                ranges.append(_class_escape(c))
            range_start = ""
            i += 1
            continue
        if s.startswith("-]", i + 1):
            ranges.append(_class_escape(c) + _class_escape("-"))
            i += 2
            continue
        if s.startswith("-", i + 1):
            range_start = c
            i += 2
            continue
        ranges.append(_class_escape(c))
        i += 1
    if end < i:
        return _Class("", 0, False)
    if not ranges:
        return _Class(NEVER, len(s) - pos, True)
    if len(ranges) == 1 and not negate and re.fullmatch(r"\\?.", ranges[0], re.DOTALL):
        char = ranges[0][-1]
        return _Class(re.escape(char), end - pos, False, char)
    return _Class("[" + ("^" if negate else "") + "".join(ranges) + "]", end - pos, True)


@dataclass(frozen=True)
class _Chunk:
    src: str
    literal: str
    magic: bool


def _chunk(glob: str, no_empty: bool) -> _Chunk:
    src: list[str] = []
    lit: list[str] = []
    magic = False
    escaping = False
    i = 0
    while i < len(glob):
        c = glob[i]
        if escaping:
            escaping = False
            src.append(re.escape(c))
            lit.append(c)
        elif c == "\\":
            if i == len(glob) - 1:
                src.append(re.escape("\\"))
                lit.append("\\")
            else:
                escaping = True
        elif c == "[" and (cls := _parse_class(glob, i)).consumed:
            src.append(cls.src)
            lit.append(cls.literal if not cls.magic else glob[i : i + cls.consumed])
            magic = magic or cls.magic
            i += cls.consumed
            continue
        elif c == "*":
            src.append(STAR_NO_EMPTY if no_empty and glob == "*" else STAR)
            lit.append(c)
            magic = True
        elif c == "?":
            src.append(QMARK)
            lit.append(c)
            magic = True
        else:
            src.append(re.escape(c))
            lit.append(c)
        i += 1
    return _Chunk("".join(src), "".join(lit), magic)


def _source(node: _Node, dot: bool) -> tuple[str, bool]:
    """The regex source of ``node`` and whether it contains magic."""
    if node.kind is None:
        no_empty = node.is_start() and node.is_end()
        pieces: list[str] = []
        magic = False
        for p in node.parts:
            if isinstance(p, str):
                ch = _chunk(p, no_empty)
                pieces.append(ch.src)
                magic = magic or ch.magic
            else:
                sub, sub_magic = _source(p, dot)
                pieces.append(sub)
                magic = magic or sub_magic
        src = "".join(pieces)
        start = ""
        if node.is_start() and node.parts and isinstance(node.parts[0], str):
            if not (len(node.parts) == 1 and node.parts[0] in (".", "..")):
                opener = ("[", ".")

                def at(k: int) -> str:
                    return src[k : k + 1]

                no_trav = (dot and at(0) in opener and at(0) != "") or (
                    src.startswith("\\.") and at(2) in opener and at(2) != ""
                ) or (src.startswith("\\.\\.") and at(4) in opener and at(4) != "")
                no_dot = not dot and at(0) in opener and at(0) != ""
                start = START_NO_TRAVERSAL if no_trav else START_NO_DOT if no_dot else ""
        end = NEG_TAIL_END if node.is_end() and node.parent is not None and node.parent.kind == "!" else ""
        return start + src + end, magic

    alts = [_source(p, dot)[0] for p in node.parts if isinstance(p, _Node)]
    whole = node.is_start() and node.is_end()
    if whole:
        alts = [a for a in alts if a]
    body = "|".join(alts)
    if whole and not body and node.kind != "!":
        text = node.text()
        node.kind = None
        node.parts = [text]
        return text, False
    if node.kind == "!" and node.empty_ext:
        return (START_NO_DOT if node.is_start() and not dot else "") + STAR_NO_EMPTY, True
    if node.kind == "!":
        lead = START_NO_DOT if node.is_start() and not dot else ""
        return "(?:(?!(?:" + body + "))" + lead + STAR + ")", True
    close = ")" if node.kind == "@" else ")" + str(node.kind)
    return "(?:" + body + close, True


@dataclass(frozen=True)
class SegmentPattern:
    """One compiled path portion: a literal (no magic) or a regex source."""

    literal: str | None
    src: str


def compile_segment(segment: str, *, dot: bool = True, nocase: bool = False) -> SegmentPattern:
    root = _Node(None)
    negs: list[_Node] = []
    _parse(segment, root, 0, negs)
    _fill_negs(negs)
    src, magic = _source(root, dot)
    text = root.text()
    if not magic and nocase and text.upper() != text.lower():
        magic = True
    if not magic:
        literal = _literal_of(root)
        return SegmentPattern(literal, re.escape(literal))
    return SegmentPattern(None, src)


def _literal_of(node: _Node) -> str:
    out: list[str] = []
    for p in node.parts:
        out.append(_chunk(p, False).literal if isinstance(p, str) else p.text())
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# makeRe


def _split_negation(pattern: str) -> tuple[str, bool]:
    count = len(pattern) - len(pattern.lstrip("!"))
    return pattern[count:], count % 2 == 1


def _level_one(parts: list[str]) -> list[str]:
    out: list[str] = []
    for part in parts:
        prev = out[-1] if out else None
        if part == GLOBSTAR and prev == GLOBSTAR:
            continue
        if part == ".." and prev and prev not in ("..", ".", GLOBSTAR):
            out.pop()
            continue
        out.append(part)
    return out or [""]


def make_re_source(pattern: str, *, dot: bool = True, nocase: bool = False) -> str | None:
    """minimatch ``makeRe(pattern, {dot, nocase})`` as Python regex source; ``None`` where
    minimatch returns ``false`` (empty pattern, ``#`` comment)."""
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise InvalidGlob("pattern is too long")
    if not pattern or pattern.startswith("#"):
        return None
    body, negate = _split_negation(pattern)
    seen: dict[str, None] = {}
    for alt in brace_expand(body):
        seen.setdefault(alt, None)
    two_star = TWO_STAR_DOT if dot else TWO_STAR_NO_DOT
    alternatives: list[str] = []
    for alt in seen:
        parts = _level_one(re.split(r"/+", alt))
        pp: list[str | None] = []  # None marks a globstar
        for seg in parts:
            if seg == GLOBSTAR:
                pp.append(None)
            elif seg == "":
                pp.append("")
            else:
                pp.append(compile_segment(seg, dot=dot, nocase=nocase).src)
        for i, p in enumerate(pp):
            prev = pp[i - 1] if i > 0 else ""
            if p is not None or (i > 0 and prev is None):
                continue
            nxt = pp[i + 1] if i + 1 < len(pp) else ""
            has_next = i + 1 < len(pp)
            if i == 0:
                if has_next and nxt is not None:
                    pp[i + 1] = "(?:/|" + two_star + "/)?" + nxt
                else:
                    pp[i] = two_star
            elif not has_next:
                pp[i - 1] = str(prev) + "(?:/|" + two_star + ")?"
            elif nxt is not None:
                pp[i - 1] = str(prev) + "(?:/|/" + two_star + "/)" + nxt
                pp[i + 1] = None
        alternatives.append("/".join(p for p in pp if p is not None))
    joined = "|".join(alternatives)
    src = "^" + ("(?:" + joined + ")" if len(alternatives) > 1 else joined) + END
    if negate:
        src = "^(?!" + src + ")" + JS_DOT + "+" + END
    return src


@lru_cache(maxsize=512)
def make_re(pattern: str, *, dot: bool = True, nocase: bool = False) -> re.Pattern[str] | None:
    """Compiled ``make_re_source``; ``None`` matches nothing."""
    src = make_re_source(pattern, dot=dot, nocase=nocase)
    if src is None:
        return None
    return re.compile(src, re.IGNORECASE if nocase else 0)


def regex_match(path: str, pattern: str, *, dot: bool = True, nocase: bool = False) -> bool:
    """``makeRe(pattern).test(path)`` — what the glob tool's stream filter does. Note that this
    differs from ``minimatch`` in corners: ``**/.git/**`` as a regex also accepts ``.github``."""
    rx = make_re(pattern, dot=dot, nocase=nocase)
    return bool(rx and rx.search(path))


_Part = str | re.Pattern[str] | None  # None is a globstar


@lru_cache(maxsize=512)
def _match_set(pattern: str, dot: bool, nocase: bool) -> tuple[tuple[tuple[_Part, ...], ...], bool]:
    body, negate = _split_negation(pattern)
    seen: dict[str, None] = {}
    for alt in brace_expand(body):
        seen.setdefault(alt, None)
    flags = re.IGNORECASE if nocase else 0
    sets: list[tuple[_Part, ...]] = []
    for alt in seen:
        parts: list[_Part] = []
        for seg in _level_one(re.split(r"/+", alt)):
            if seg == GLOBSTAR:
                parts.append(None)
            elif seg == "":
                parts.append("")
            else:
                compiled = compile_segment(seg, dot=dot, nocase=nocase)
                parts.append(compiled.literal if compiled.literal is not None
                             else re.compile("^" + compiled.src + END, flags))
        sets.append(tuple(parts))
    return tuple(sets), negate


def _match_one(file: Sequence[str], pattern: Sequence[_Part], dot: bool) -> bool:
    fi = pi = 0
    fl, pl = len(file), len(pattern)
    while fi < fl and pi < pl:
        p = pattern[pi]
        f = file[fi]
        if p is None:
            if pi + 1 == pl:
                # a trailing ** swallows the rest, but never "." / ".." (nor dotfiles without dot)
                return all(seg not in (".", "..") and (dot or not seg.startswith(".")) for seg in file[fi:])
            fr = fi
            while fr < fl:
                if _match_one(file[fr:], pattern[pi + 1 :], dot):
                    return True
                swallowee = file[fr]
                if swallowee in (".", "..") or (not dot and swallowee.startswith(".")):
                    break
                fr += 1
            return False
        hit = f == p if isinstance(p, str) else bool(p.search(f))
        if not hit:
            return False
        fi += 1
        pi += 1
    if fi == fl and pi == pl:
        return True
    if fi == fl:
        return False
    return fi == fl - 1 and file[fi] == ""


def minimatch(path: str, pattern: str, *, dot: bool = True, nocase: bool = False) -> bool:
    """minimatch's ``minimatch(path, pattern, {dot, nocase})``: segment-wise matching, where
    ``**`` swallows whole segments (so ``**/.git/**`` does not match ``.github``)."""
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise InvalidGlob("pattern is too long")
    if pattern.startswith("#"):
        return False
    if not pattern:
        return path == ""
    sets, negate = _match_set(pattern, dot, nocase)
    file = re.split(r"/+", path)
    for parts in sets:
        if _match_one(file, parts, dot):
            return not negate
    return negate


# ---------------------------------------------------------------------------------------------
# The glob tool's own pattern questions (spec glob.2)


def has_magic(pattern: str) -> bool:
    """True when the pattern has ``*``, ``?``, ``[``, ``{`` or an extglob opener ``!( +( @(``."""
    return first_magic_index(pattern) >= 0


def first_magic_index(pattern: str) -> int:
    """Index of the first magic character (spec glob.2 step 2), or -1."""
    for i, c in enumerate(pattern):
        if c in MAGIC_CHARS or pattern.startswith(EXTGLOB_OPENERS, i):
            return i
    return -1


def validate_glob(pattern: str) -> None:
    """Raise ``InvalidGlob`` for unbalanced ``{}``, unbalanced ``[]`` or a bad character class
    (empty, or a range whose ends are out of order)."""
    depth = 0
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                raise InvalidGlob(pattern)
        elif c == "]":
            raise InvalidGlob(pattern)
        elif c == "[":
            i = _validate_class(pattern, i)
            continue
        i += 1
    if depth != 0:
        raise InvalidGlob(pattern)


def _validate_class(pattern: str, pos: int) -> int:
    """Check the class opening at ``pos``; return the index after its ``]``."""
    i = pos + 1
    if pattern[i : i + 1] in ("!", "^"):
        i += 1
    members: list[str] = []
    first = True
    while i < len(pattern):
        c = pattern[i]
        if c == "]" and not first:
            break
        first = False
        if c == "\\" and i + 1 < len(pattern):
            members.append(pattern[i + 1])
            i += 2
            continue
        if c == "[":
            cls = next((k for k in POSIX_CLASSES if pattern.startswith(k, i)), None)
            if cls is not None:
                members.append(cls)
                i += len(cls)
                continue
        members.append(c)
        i += 1
    else:
        raise InvalidGlob(pattern)
    if not members:
        raise InvalidGlob(pattern)
    for k in range(1, len(members) - 1):
        if members[k] == "-" and len(members[k - 1]) == 1 and len(members[k + 1]) == 1:
            if members[k - 1] > members[k + 1]:
                raise InvalidGlob(pattern)
    return i + 1


_BROAD_EXT_RE = re.compile(r"^[*?]*$")


def is_broad_file_scan(pattern: str) -> bool:
    """Whether the pattern would list (nearly) every file: it starts with ``!``, or some
    brace-expanded alternative's leaf has ``*``, ``?`` or ``[`` and its part after the last ``.``
    is missing, empty or only ``*``/``?``. Raises ``InvalidGlob`` for a malformed pattern."""
    validate_glob(pattern)
    if pattern.startswith("!"):
        return True
    for alt in brace_expand(pattern):
        leaf = re.split(r"[/\\]", alt)[-1] if "/" in alt else alt
        if not any(c in leaf for c in "*?["):
            continue
        dot = leaf.rfind(".")
        if dot < 0:
            return True
        if _BROAD_EXT_RE.match(leaf[dot + 1 :]):
            return True
    return False
