"""JavaScript-compatible text helpers (spec common.4): UTF-16 lengths, JS whitespace trimming,
``Number#toString``, ``toFixed`` rounding, ``formatSize``, Node's UTF-8 encoding (``js_utf8``)
and UTF-8-safe byte cuts.

The reference tool layer runs on Node.js; every observable count and number must be computed
the way JavaScript computes it, not the way Python does by default.
"""

from __future__ import annotations

import math
import re
import sys
from decimal import ROUND_HALF_UP, Decimal

# Byte order marks: the character as text, and its UTF-8, UTF-16LE and UTF-16BE encodings.
BOM_CHAR = "\ufeff"
UTF8_BOM = b"\xef\xbb\xbf"
UTF16LE_BOM = b"\xff\xfe"
UTF16BE_BOM = b"\xfe\xff"

# The JavaScript String.prototype.trim set (not Python's str.isspace set).
JS_WHITESPACE = (
    "\u0009\u000a\u000b\u000c\u000d\u0020\u00a0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_LONE_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def js_trim_end(s: str) -> str:
    """JavaScript ``trimEnd``: ``str.rstrip`` over exactly the JS whitespace set."""
    return s.rstrip(JS_WHITESPACE)


def js_trim_start(s: str) -> str:
    """JavaScript ``trimStart``: ``str.lstrip`` over exactly the JS whitespace set."""
    return s.lstrip(JS_WHITESPACE)


def js_trim(s: str) -> str:
    return js_trim_start(js_trim_end(s))


# PEP 393 (CPython): a str is stored with 1, 2 or 4 bytes per character, the fewest its largest
# code point needs, so a str stored with 4 holds an astral character and one stored with fewer
# holds none. ``sys.getsizeof`` tells the width in O(1) instead of scanning megabytes; it is
# trusted only where it gives the widths of known strings right.
def _wide_header_size() -> int | None:
    if sys.implementation.name != "cpython":
        return None
    header = sys.getsizeof("\u0100") - 2 * 2
    for sample, width in (("\u0100" * 9, 2), ("\U00010000", 4), ("\U00010000" * 5 + "a", 4)):
        if sys.getsizeof(sample) != header + width * (len(sample) + 1):
            return None
    return header


_WIDE_HEADER = _wide_header_size()
_ASTRAL_RE = re.compile("[\U00010000-\U0010ffff]")


def is_narrow(s: str) -> bool:
    """True when ``s`` holds no code point above U+FFFF: each of its characters is one UTF-16
    code unit (a surrogate code point too), so its JavaScript form is itself."""
    if s.isascii():
        return True
    if _WIDE_HEADER is not None:
        return sys.getsizeof(s) != _WIDE_HEADER + 4 * (len(s) + 1)
    return _ASTRAL_RE.search(s) is None


def utf16_len(s: str) -> int:
    """JavaScript ``string.length``: UTF-16 code units."""
    if is_narrow(s):
        return len(s)
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


# Lead bytes of four-byte UTF-8 sequences: F0 starts U+10000-U+3FFFF (emoji, CJK extensions),
# F1-F4 the planes above, rare enough to look for (memchr) before counting.
_UTF8_F0 = b"\xf0"
_UTF8_RARE_FOUR_BYTE_LEADS = (b"\xf1", b"\xf2", b"\xf3", b"\xf4")


def utf16_len_of_encoded(s: str, data: bytes) -> int:
    """``utf16_len(s)`` given ``data == js_utf8(s)``: each astral character is one four-byte
    sequence there (a lone surrogate became U+FFFD, one unit either way)."""
    if is_narrow(s):
        return len(s)
    astral = data.count(_UTF8_F0)
    for lead in _UTF8_RARE_FOUR_BYTE_LEADS:
        if lead in data:
            astral += data.count(lead)
    return len(s) + astral


def utf8_len(s: str) -> int:
    return len(s.encode("utf-8", "surrogatepass"))


def js_utf8(text: str) -> bytes:
    """``Buffer.from(text, 'utf8')``: every surrogate code point left in ``text`` becomes U+FFFD."""
    try:
        return text.encode("utf-8")  # the common case: no surrogate, one C-level pass
    except UnicodeEncodeError:
        return _LONE_SURROGATE_RE.sub("\ufffd", text).encode("utf-8")


def js_number(x: float | int) -> str:
    """JavaScript ``Number#toString`` for a finite or special number."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    if x.is_integer() and abs(x) <= 2**53:  # beyond, JavaScript prints the shortest digits, zero-padded
        return str(int(x))
    r = repr(abs(x))  # shortest round-trip digits
    sign = "-" if x < 0 else ""
    if "e" in r or "E" in r:
        mant, exp_s = r.lower().split("e")
        exp = int(exp_s)
    else:
        mant, exp = r, 0
    digits = mant.replace(".", "")
    point = mant.index(".") if "." in mant else len(mant)
    # normalise: digits with decimal point after position `point` then * 10**exp
    stripped = digits.lstrip("0")
    lead_zeros = len(digits) - len(stripped)
    digits = stripped.rstrip("0") or "0"
    n = point + exp - lead_zeros  # position of the decimal point relative to first significant digit
    k = len(digits)
    if k <= n <= 21:
        out = digits + "0" * (n - k)
    elif 0 < n <= 21:
        out = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        es = f"+{e}" if e >= 0 else str(e)
        out = (digits[0] + ("." + digits[1:] if k > 1 else "")) + "e" + es
    return sign + out


def finite_number(value: object) -> int | float | None:
    """``value`` when it is a finite JSON number (``typeof v === 'number' && isFinite(v)``;
    booleans are not numbers), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if math.isfinite(value) else None


def finite_float(value: object) -> float | None:
    """``finite_number`` as a double, the way JavaScript holds every number."""
    number = finite_number(value)
    return None if number is None else float(number)


def js_to_fixed(x: float, digits: int) -> str:
    """JavaScript ``Number#toFixed``: rounds the exact binary value, ties away from zero."""
    d = Decimal(x).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    s = format(d, "f")
    if s.startswith("-") and Decimal(s) == 0:
        s = s[1:]
    return s


def format_size(n: int) -> str:
    """pi's ``formatSize``: ``512B``, ``50.0KB``, ``1.5MB`` (spec limits.1)."""
    if n < 1024:
        return f"{n}B"
    if n < 1024 * 1024:
        return f"{js_to_fixed(n / 1024, 1)}KB"
    return f"{js_to_fixed(n / (1024 * 1024), 1)}MB"


def _is_continuation(b: int) -> bool:
    return (b & 0xC0) == 0x80


def utf8_safe_prefix(data: bytes, max_bytes: int) -> bytes:
    """The longest prefix of ``data`` of at most ``max_bytes`` that does not end inside a sequence."""
    if len(data) <= max_bytes:
        return data
    cut = max(0, max_bytes)
    while cut > 0 and _is_continuation(data[cut]):
        cut -= 1
    return data[:cut]


def utf8_safe_suffix(data: bytes, max_bytes: int) -> bytes:
    """The longest suffix of ``data`` of at most ``max_bytes`` that does not start inside a sequence."""
    if len(data) <= max_bytes:
        return data
    cut = len(data) - max(0, max_bytes)
    while cut < len(data) and _is_continuation(data[cut]):
        cut += 1
    return data[cut:]


def cut_text_prefix(text: str, max_bytes: int) -> str:
    return utf8_safe_prefix(text.encode("utf-8", "surrogatepass"), max_bytes).decode("utf-8", "replace")


def cut_text_suffix(text: str, max_bytes: int) -> str:
    return utf8_safe_suffix(text.encode("utf-8", "surrogatepass"), max_bytes).decode("utf-8", "replace")
