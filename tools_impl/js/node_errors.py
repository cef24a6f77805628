"""Render operating-system errors the way Node.js does (spec common.3):
``<CODE>: <description>, <syscall> '<path>'``, e.g. ``ENOENT: no such file or directory, access '/a'``.
"""

from __future__ import annotations

import errno

# libuv's descriptions, as Node prints them.
UV_DESCRIPTIONS: dict[str, str] = {
    "ENOENT": "no such file or directory",
    "EISDIR": "illegal operation on a directory",
    "EEXIST": "file already exists",
    "EACCES": "permission denied",
    "EPERM": "operation not permitted",
    "ENOTDIR": "not a directory",
    "ELOOP": "too many symbolic links encountered",
    "ENAMETOOLONG": "name too long",
    "EROFS": "read-only file system",
    "ENOSPC": "no space left on device",
    "EMFILE": "too many open files",
    "EINVAL": "invalid argument",
    "EBUSY": "resource busy or locked",
    "ETXTBSY": "text file is busy",
    "EXDEV": "cross-device link not permitted",
    "ENOTEMPTY": "directory not empty",
    "EAGAIN": "resource temporarily unavailable",
    "EIO": "i/o error",
    "ENXIO": "no such device or address",
    "EFBIG": "file too large",
}


def error_code(exc: BaseException) -> str | None:
    """The symbolic code (``ENOENT``) of an ``OSError``, or ``None``."""
    if isinstance(exc, OSError) and exc.errno is not None:
        return errno.errorcode.get(exc.errno)
    return None


def node_code_message(code: str, syscall: str, path: str | None = None, fallback: str = "unknown error") -> str:
    """``CODE: description, syscall 'path'`` for a symbolic ``code`` (path omitted for fd-level
    calls); ``fallback`` is the description of a code libuv's table here does not list."""
    desc = UV_DESCRIPTIONS.get(code, fallback)
    where = f"{syscall} '{path}'" if path is not None else syscall
    return f"{code}: {desc}, {where}"


def node_error_message(exc: OSError, syscall: str, path: str | None = None) -> str:
    """``node_code_message`` for a raised ``OSError`` (an unknown errno renders as ``EIO``)."""
    return node_code_message(error_code(exc) or "EIO", syscall, path, (exc.strerror or "unknown error").lower())


# Reading a directory's bytes: the message carries no path (Node's fd-level ``read``).
EISDIR_READ_MESSAGE = node_code_message("EISDIR", "read")
