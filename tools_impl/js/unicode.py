"""Unicode normalisation with the character data of the emulated runtime (spec common.4).

JavaScript's ``String#normalize`` uses the Unicode version of the Node.js build (Node 22:
Unicode 17); Python's ``unicodedata`` carries the version of the Python build (3.11: Unicode 14).
For characters added or changed in between the two disagree, which changes fuzzy edit matches,
occurrence counts and the bytes written. ``Profile.unicode_version`` names the version the tools
must use; the data comes from the standard library when its version matches, else from the
``unicodedata2`` package (a dependency, pinned to the matching release).

The version of the current call is a context variable (``using``), so the edit engine's helpers
need no extra parameter; it defaults to ``DEFAULT_UNICODE_VERSION``.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import re
import unicodedata
from collections.abc import Iterator
from types import ModuleType

DEFAULT_UNICODE_VERSION = "17.0.0"
UNICODEDATA2_PIN = "unicodedata2==17.0.1"
_ACTIVE: contextvars.ContextVar[str] = contextvars.ContextVar("unicode_version", default=DEFAULT_UNICODE_VERSION)


class UnicodeDataUnavailable(RuntimeError):
    """No character data of the requested Unicode version is installed."""


@functools.cache
def data_for(version: str) -> ModuleType:
    """The ``unicodedata``-like module whose ``unidata_version`` is ``version``."""
    if unicodedata.unidata_version == version:
        return unicodedata
    found = [f"the standard library has {unicodedata.unidata_version}"]
    try:
        import unicodedata2  # type: ignore[import-not-found]
    except ImportError:
        found.append("unicodedata2 is not installed")
    else:
        if unicodedata2.unidata_version == version:
            return unicodedata2
        found.append(f"unicodedata2 has {unicodedata2.unidata_version}")
    raise UnicodeDataUnavailable(
        f"Unicode {version} character data is not available ({'; '.join(found)}); "
        f"install it with: pip install '{UNICODEDATA2_PIN}' (or set the profile's unicode_version "
        f"to {unicodedata.unidata_version})")


@contextlib.contextmanager
def using(version: str) -> Iterator[None]:
    """Normalise with Unicode ``version`` inside the block."""
    token = _ACTIVE.set(version)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def active_version() -> str:
    return _ACTIVE.get()


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split(".") if x.isdigit())


def _known_to_stdlib(s: str) -> bool:
    return not any(unicodedata.category(c) == "Cn" for c in s)


# Above this many distinct characters to map, mapping them one by one costs more than the
# library's own pass over the text.
MAPPED_CHARS_MAX = 32


@functools.cache
def _changed_chars(data: ModuleType, form: str) -> re.Pattern[str]:
    """The Basic Multilingual Plane characters that ``form`` maps to something else on their own
    (a character without a decomposition is its own normal form), as one character class."""
    changed = [c for c in range(0xA0, 0x10000) if data.decomposition(chr(c))
               and data.normalize(form, chr(c)) != chr(c)]
    ranges: list[str] = []
    start = prev = changed[0]
    for c in [*changed[1:], -1]:
        if c != prev + 1:
            ranges.append(re.escape(chr(start)) + ("" if prev == start else "-" + re.escape(chr(prev))))
            start = c
        prev = c
    return re.compile("[" + "".join(ranges) + "]")


def _normalize_with(data: ModuleType, form: str, s: str) -> str:
    """``data.normalize(form, s)``, faster for long text that only a few distinct characters
    change: each is replaced by its own normal form first (C-level ``str.replace``), after which
    the library's quick check usually finds the text normal and returns it as it is.

    Exact for any choice of replaced characters: the full decomposition of a character's normal
    form is that of the character (``NFKD(NFKC(c)) == NFKD(c)``, likewise for the canonical
    forms), and decomposition then canonical ordering works on the concatenated decompositions,
    so the replaced text has the same normal form as ``s``."""
    if len(s) < MAPPED_CHARS_MAX * 8:
        return str(data.normalize(form, s))
    changed = _changed_chars(data, form)
    pos = 0
    for _ in range(MAPPED_CHARS_MAX):
        # The standard library's quick check stops at the first character it doubts (a character
        # it does not know could still change, which the data's own quick check below sees).
        if unicodedata.is_normalized(form, s):  # type: ignore[arg-type]
            break
        # the first changed character from pos on, replaced everywhere: none is left before it,
        # and a normal form holds no changed character, so the search goes on from there
        found = changed.search(s, pos)
        if found is None:
            break  # what is left to do is in context (combining marks): the library's own pass
        ch = found.group()
        s = s.replace(ch, str(data.normalize(form, ch)))
        pos = found.start()
    return str(data.normalize(form, s))


def normalize(form: str, s: str) -> str:
    """``s.normalize(form)`` with the active Unicode version's data.

    Without that data, the standard library's answer is still exact for text whose characters
    it knows: Unicode's normalisation stability policy fixes the forms of assigned characters, so
    only characters assigned after the standard library's version can differ. Only text holding
    such a character raises ``UnicodeDataUnavailable``."""
    if s.isascii():
        return s
    version = _ACTIVE.get()
    try:
        data = data_for(version)
    except UnicodeDataUnavailable:
        if _version_tuple(unicodedata.unidata_version) < _version_tuple(version) and _known_to_stdlib(s):
            return _normalize_with(unicodedata, form, s)
        raise
    return _normalize_with(data, form, s)
