"""Workspace path resolution (spec common.3 engine resolution, spec read.3 wrapper candidates, spec ripgrep search roots).

Resolution is lexical (no realpath). The caller's string is never altered for messages; these
functions only compute absolute paths. Pure functions except where a name says ``probe``.
"""

from __future__ import annotations

import ntpath
import os
import posixpath
import re
import sys
from collections.abc import Callable
from urllib.parse import urlparse

from tools_impl.core.errors import ToolError
from tools_impl.js import unicode
from tools_impl.js.text import js_trim

SPECIAL_SPACES_RE = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
AM_PM_RE = re.compile(r" (AM|PM)\.", re.IGNORECASE)
NARROW_NBSP = "\u202f"
RIGHT_SINGLE_QUOTE = "\u2019"


def expand_tilde(p: str, home: str, *, windows: bool = False) -> str:
    """``~`` → home; ``~/rest`` (and ``~\\rest`` on Windows) → home joined with rest; else literal."""
    if p == "~":
        return home
    if p.startswith("~/") or (windows and p.startswith("~\\")):
        # Node joins: "~//etc" stays under home; os.path.join would restart at "/etc".
        rest = p[2:].lstrip("/\\" if windows else "/")
        return os.path.join(home, rest) if not windows else ntpath.join(home, rest)
    return p


def file_url_to_path(url: str) -> str:
    """Convert a ``file://`` URL the way Node's ``fileURLToPath`` does on POSIX. Invalid → ``ToolError``."""
    parsed = urlparse(url)
    if parsed.scheme != "file":
        raise ToolError("The URL must be of scheme file")
    if parsed.netloc not in ("", "localhost"):
        raise ToolError(f'File URL host must be "localhost" or empty on {sys.platform}')
    if re.search(r"%2f", parsed.path, re.IGNORECASE):
        raise ToolError("File URL path must not include encoded / characters")
    return decode_uri_component(parsed.path)


PERCENT_RUN_RE = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def decode_uri_component(text: str) -> str:
    """JavaScript's ``decodeURIComponent`` (what Node's ``fileURLToPath`` applies to the path): a
    ``%`` not followed by two hex digits, or escapes that do not form valid UTF-8, raise
    ``ToolError("URI malformed")`` (Node's ``URIError`` text) instead of decoding leniently."""
    out: list[str] = []
    pos = 0
    for m in PERCENT_RUN_RE.finditer(text):
        out.append(text[pos:m.start()])
        try:
            out.append(bytes.fromhex(m.group(0).replace("%", "")).decode("utf-8"))
        except UnicodeDecodeError:
            raise ToolError("URI malformed") from None
        pos = m.end()
    out.append(text[pos:])
    if "%" in "".join(out[i] for i in range(0, len(out), 2)):
        raise ToolError("URI malformed")
    return "".join(out)


def _posix_resolve_fix(p: str) -> str:
    # POSIX normpath keeps exactly two leading slashes; Node's path.resolve collapses them.
    return p[1:] if os.sep == "/" and p.startswith("//") else p


def _lexical_abs(p: str, root: str) -> str:
    if os.path.isabs(p):
        return _posix_resolve_fix(posixpath.normpath(p) if os.sep == "/" else os.path.normpath(p))
    return _posix_resolve_fix(os.path.normpath(os.path.join(root, p)))


def engine_resolve(path: str, root: str, home: str) -> str:
    """pi's ``resolveToCwd`` (spec common.3): special spaces → space, drop one ``@``, tilde, file URL, absolutise."""
    p = SPECIAL_SPACES_RE.sub(" ", path)
    if p.startswith("@"):
        p = p[1:]
    p = expand_tilde(p, home)
    if p.startswith("file://"):
        p = file_url_to_path(p)
    return _lexical_abs(p, root)


def variant_am_pm(p: str) -> str:
    return AM_PM_RE.sub(lambda m: NARROW_NBSP + m.group(1) + ".", p)


def variant_nfd(p: str) -> str:
    return unicode.normalize("NFD", p)


def variant_curly(p: str) -> str:
    return p.replace("'", RIGHT_SINGLE_QUOTE)


def macos_variants(resolved: str) -> list[str]:
    """AM/PM, NFD, curly quote, NFD + curly: the candidates probed after ``resolved`` (in order)."""
    nfd = variant_nfd(resolved)
    return [variant_am_pm(resolved), nfd, variant_curly(resolved), variant_curly(nfd)]


def first_existing_variant(resolved: str, exists: Callable[[str], bool]) -> str:
    """``resolved`` if it exists, else the first existing macOS variant of it, else ``resolved``."""
    if exists(resolved):
        return resolved
    for cand in macos_variants(resolved):
        if cand != resolved and exists(cand):
            return cand
    return resolved


def engine_resolve_read(path: str, root: str, home: str, exists: Callable[[str], bool] = os.path.exists) -> str:
    """Engine read resolution (spec read.6 step 2): resolved, else the first existing macOS variant."""
    return first_existing_variant(engine_resolve(path, root, home), exists)


def wrapper_base_resolve(p: str, root: str, home: str, *, windows: bool = False) -> str:
    """Wrapper base resolution: tilde, absolute unchanged, else against the root; lexical."""
    if p == "~":
        return home
    if p.startswith("~/") or (windows and p.startswith("~\\")):
        return _lexical_abs(os.path.join(home, p[2:].lstrip("/\\" if windows else "/")), root)
    if os.path.isabs(p):
        return p
    return os.path.normpath(os.path.join(root, p))


def wrapper_resolve(path: str, root: str, home: str, exists: Callable[[str], bool] = os.path.exists) -> str:
    """The wrapper's read resolution with its six candidates (spec read.3)."""
    literal = wrapper_base_resolve(path, root, home)
    if exists(literal):
        return literal
    norm = SPECIAL_SPACES_RE.sub(" ", path)
    if norm.startswith("@"):
        norm = norm[1:]
    if re.match(r"^file://", norm):
        norm = file_url_to_path(norm)
    return first_existing_variant(wrapper_base_resolve(norm, root, home), exists)


def search_root(path: str | None, root: str) -> str:
    """Search root of a grep/glob ``path`` (spec ripgrep): blank → root; absolute → normalised; else joined."""
    if path is None or js_trim(path) == "":
        return root
    if os.path.isabs(path):
        return os.path.normpath(path)
    return os.path.normpath(os.path.join(root, path))
