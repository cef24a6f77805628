"""The wrapper's read guards (spec read.4, spec read.5): the device guard (blocking or endless device
paths), the non-regular-file guard (FIFOs, sockets, block devices) and the binary guard
(``detectBinaryRead``: extension list plus a 4100-byte content sniff).

Each guard returns the model-visible message when it fires and ``None`` when it passes. The
decisions are pure functions of a path string or a byte sample; only the ``*_for_path`` helpers
touch the file system.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Callable

from tools_impl.core.profile import REFERENCE
from tools_impl.js.text import UTF16BE_BOM, UTF16LE_BOM, js_trim
from tools_impl.read.media import detect_image_mime

BLOCKED_DEVICE_PATHS: tuple[str, ...] = (
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
    "/dev/full",
    "/dev/stdin",
    "/dev/tty",
    "/dev/console",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/fd/0",
    "/dev/fd/1",
    "/dev/fd/2",
)
PROC_FD_SUFFIXES: tuple[str, ...] = ("/fd/0", "/fd/1", "/fd/2")
WIN32_RESERVED_STEMS: frozenset[str] = frozenset({"CON", "PRN", "AUX", "NUL"})
WIN32_RESERVED_NUMBERED_RE = re.compile(r"^(COM|LPT)[1-9]$")

FIFO_KIND = "named pipe (FIFO)"
SOCKET_KIND = "socket"
BLOCK_DEVICE_KIND = "block device"

BINARY_SNIFF_BYTES = REFERENCE.binary_sniff_bytes
CONTROL_BYTE_RATIO = 0.3
# Control bytes that occur in ordinary text: tab, line feed, carriage return.
TEXT_CONTROL_BYTES: frozenset[int] = frozenset({9, 10, 13})
DEL_BYTE = 0x7F
UTF16_BOMS: tuple[bytes, ...] = (UTF16LE_BOM, UTF16BE_BOM)

BINARY_EXTENSION_CLASSES: dict[str, tuple[str, ...]] = {
    "images": (".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".webp", ".tiff", ".tif"),
    "videos": (".mp4", ".mov", ".avi", ".mkv", ".webm", ".wmv", ".flv", ".m4v", ".mpeg", ".mpg"),
    "audio": (".mp3", ".wav", ".ogg", ".flac", ".aac", ".m4a", ".wma", ".aiff", ".opus"),
    "archives": (".zip", ".tar", ".gz", ".bz2", ".7z", ".rar", ".xz", ".z", ".tgz", ".iso"),
    "executables": (".exe", ".dll", ".so", ".dylib", ".bin", ".o", ".a", ".obj", ".lib", ".app",
                    ".msi", ".deb", ".rpm"),
    "documents": (".pdf", ".doc", ".docx", ".xls", ".xlsx", ".ppt", ".pptx", ".odt", ".ods", ".odp"),
    "fonts": (".ttf", ".otf", ".woff", ".woff2", ".eot"),
    "bytecode": (".pyc", ".pyo", ".class", ".jar", ".war", ".ear", ".node", ".wasm", ".rlib"),
    "databases": (".sqlite", ".sqlite3", ".db", ".mdb", ".idx"),
    "design": (".psd", ".ai", ".eps", ".sketch", ".fig", ".xd", ".blend", ".3ds", ".max"),
    "flash": (".swf", ".fla"),
    "data": (".lockb", ".dat", ".data"),
}
BINARY_READ_EXTENSIONS: frozenset[str] = frozenset(
    ext for exts in BINARY_EXTENSION_CLASSES.values() for ext in exts
)
# The PDF reader and the engine's image reader handle these, so the extension alone never rejects them.
EXTENSION_VERDICT_EXEMPT: frozenset[str] = frozenset({".pdf", ".png", ".jpg", ".jpeg", ".gif", ".webp"})

NUL_DETAIL = "NUL bytes detected"
NON_PRINTABLE_DETAIL = "mostly non-printable content"


def device_guard_message(absolute_path: str, platform: str = sys.platform) -> str | None:
    """The device-guard message for ``absolute_path``, or ``None`` when the path is allowed.

    A path check only (no I/O). Win32 reserved names are blocked only when ``platform`` is
    ``"win32"``; ``/dev/null`` is deliberately allowed.
    """
    p = absolute_path.replace("\\", "/")
    blocked = p in BLOCKED_DEVICE_PATHS or (p.startswith("/proc/") and p.endswith(PROC_FD_SUFFIXES))
    if not blocked and platform == "win32":
        base = p.rsplit("/", 1)[-1]
        stem = js_trim(base.split(".", 1)[0]).upper()
        blocked = stem in WIN32_RESERVED_STEMS or WIN32_RESERVED_NUMBERED_RE.match(stem) is not None
    if not blocked:
        return None
    return f"Cannot read '{absolute_path}': this device file would block or produce infinite output."


def non_regular_kind(mode: int) -> str | None:
    """The guard's name for a ``st_mode`` that would block a reader, or ``None`` (regular file,
    directory, character device, anything else)."""
    if stat.S_ISFIFO(mode):
        return FIFO_KIND
    if stat.S_ISSOCK(mode):
        return SOCKET_KIND
    if stat.S_ISBLK(mode):
        return BLOCK_DEVICE_KIND
    return None


def non_regular_message(absolute_path: str, kind: str) -> str:
    return (
        f"Cannot read '{absolute_path}': not a regular file ({kind}) — reading it would block or never "
        "terminate. Use bash if you need to consume its stream."
    )


def non_regular_guard_message(absolute_path: str) -> str | None:
    """One ``stat`` that follows symlinks; a failing ``stat`` passes the guard."""
    try:
        mode = os.stat(absolute_path).st_mode
    except (OSError, ValueError):
        return None
    kind = non_regular_kind(mode)
    return None if kind is None else non_regular_message(absolute_path, kind)


def extension_of(path: str) -> str:
    """Node's ``path.extname`` lower-cased: ``.gz`` for ``a.tar.gz``, ``''`` for ``.bashrc`` and
    ``..``, ``.zip`` for ``..zip`` (Node only ignores a dot that starts the name)."""
    if os.sep == "\\":
        path = path.replace("\\", "/")
    start_dot = -1
    start_part = 0
    end = -1
    matched_slash = True
    # 0: no dot seen yet after a non-dot; 1: a second dot run; -1: a non-dot precedes the last dot
    pre_dot_state = 0
    for i in range(len(path) - 1, -1, -1):
        ch = path[i]
        if ch == "/":
            if not matched_slash:
                start_part = i + 1
                break
            continue
        if end == -1:
            matched_slash = False
            end = i + 1
        if ch == ".":
            if start_dot == -1:
                start_dot = i
            elif pre_dot_state != 1:
                pre_dot_state = 1
        elif start_dot != -1:
            pre_dot_state = -1
    if (
        start_dot == -1
        or end == -1
        or pre_dot_state == 0
        or (pre_dot_state == 1 and start_dot == end - 1 and start_dot == start_part + 1)
    ):
        return ""
    return path[start_dot:end].lower()


def binary_extension_message(ext: str) -> str:
    return (
        f"This tool cannot read binary files. The file appears to be a binary {ext} file. "
        "Please use appropriate tools for binary file analysis."
    )


def binary_content_message(detail: str) -> str:
    return (
        f"File appears to be binary ({detail}). Use bash (e.g. `file`, `hexdump -C | head`, or a "
        "format-specific tool) to inspect it."
    )


def classify_binary(ext: str, sample: bytes | None, *, video_recognised: bool = False) -> str | None:
    """The binary verdict for an extension and a sniffed sample (spec read.5 steps 1, 3–7).

    ``sample`` is ``None`` when the file could not be opened or read (→ not binary). Returns the
    guard message or ``None``.
    """
    ext_binary = (
        ext in BINARY_READ_EXTENSIONS and ext not in EXTENSION_VERDICT_EXEMPT and not video_recognised
    )
    if sample is None:
        return None
    if sample and detect_image_mime(sample) is not None:
        return None
    if ext_binary:
        return binary_extension_message(ext)
    if not sample or sample.startswith(UTF16_BOMS):
        return None
    if 0 in sample:
        return binary_content_message(NUL_DETAIL)
    control = sum(1 for b in sample if (b < 0x20 and b not in TEXT_CONTROL_BYTES) or b == DEL_BYTE)
    if control / len(sample) > CONTROL_BYTE_RATIO:
        return binary_content_message(NON_PRINTABLE_DETAIL)
    return None


def read_sample(path: str, size: int = BINARY_SNIFF_BYTES) -> bytes | None:
    """The first ``size`` bytes of ``path``; ``None`` on any open/read error (directories included)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(size)
    except (OSError, ValueError):
        return None


def binary_guard_message(
    absolute_path: str,
    *,
    sniff_bytes: int = BINARY_SNIFF_BYTES,
    video_recognises: Callable[[str], bool] = lambda _p: False,
) -> str | None:
    """``detectBinaryRead`` on a resolved path: the guard message or ``None``."""
    ext = extension_of(absolute_path)
    return classify_binary(ext, read_sample(absolute_path, sniff_bytes),
                           video_recognised=video_recognises(absolute_path))
