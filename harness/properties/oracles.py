"""Oracles of the properties, written from the specification alone (never from ``tools_impl``):
small models of what an implementation must return, used to compute the expected outcome of a
generated call. Each function names the rule it models.

The generated inputs stay inside the domain where a model is short and exact: edit texts are ASCII
without tabs (NFKC is the identity there and fuzzy normalisation only trims line ends), read files
stay under the engine's 2000-line / 50 KB caps and the wrapper's 24 KiB cap, and bash output is
ASCII.
"""

from __future__ import annotations

import re

RELOAD_HINT = ("If oldText was written from memory or an earlier read, the file may have changed since - "
               "use the read tool to reload it before retrying.")
ASCII_TRIM_END = " \t\x0b\x0c\r"  # JavaScript trimEnd restricted to ASCII
ENGINE_MAX_LINES = 2000
ENGINE_MAX_BYTES = 50 * 1024
WRAPPER_READ_MAX_BYTES = 24 * 1024
WRAPPER_BASH_MAX_BYTES = 24 * 1024
EMPTY_FILE_REMINDER = "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"
NOTICE_RE = re.compile(r"\n\n\[(?:Showing lines \d+-\d+ of \d+|\d+ more lines in file\.)[^\n]*\]$")


def ascii_norm(text: str) -> str:
    """Fuzzy normalisation (spec edit.7) of ASCII text: each line's end trimmed."""
    return "\n".join(line.rstrip(ASCII_TRIM_END) for line in text.split("\n"))


def occurrences(haystack: str, needle: str) -> list[int]:
    """Start offsets of the non-overlapping occurrences, left to right (split/join counting)."""
    out: list[int] = []
    if not needle:
        return out
    at = haystack.find(needle)
    while at >= 0:
        out.append(at)
        at = haystack.find(needle, at + len(needle))
    return out


def split_join(text: str, old: str, new: str) -> str:
    """replace_all (spec edit.4): every non-overlapping occurrence replaced literally."""
    return new.join(text.split(old))


def duplicate_message(path: str, text: str, old: str, with_lines: bool) -> str:
    """The duplicate refusal of one edit (spec edit.8): count and start lines in fuzzy space."""
    normed = ascii_norm(text)
    hits = occurrences(normed, ascii_norm(old))
    lines = [normed.count("\n", 0, h) + 1 for h in hits]
    shown = ""
    if with_lines:
        shown = " Matches start at lines " + ", ".join(map(str, lines[:3])) + (", ..." if len(lines) > 3 else "") + "."
    return (f"Found {len(hits)} occurrences of the text in {path}.{shown} The text must be unique. "
            "Please provide more context to make it unique.")


def not_found_message(path: str, with_hint: bool) -> str:
    base = (f"Could not find the exact text in {path}. The old text must match exactly including all "
            "whitespace and newlines.")
    return f"{base} {RELOAD_HINT}" if with_hint else base


def edit_bytes(raw: bytes, old: str, new: str) -> bytes:
    """An exact, unique edit (spec edit.5): BOM kept, the first line ending decides CRLF or LF for
    the whole file, ``\\n`` in ``new`` takes that ending, lone CRs become LF."""
    bom = raw.startswith(b"\xef\xbb\xbf")
    text = raw[3:].decode("utf-8") if bom else raw.decode("utf-8")
    first_nl = text.find("\n")
    crlf = first_nl > 0 and text[first_nl - 1] == "\r"
    lf = text.replace("\r\n", "\n").replace("\r", "\n")
    old_lf = old.replace("\r\n", "\n").replace("\r", "\n")
    new_lf = new.replace("\r\n", "\n").replace("\r", "\n")
    at = lf.find(old_lf)
    out = lf[:at] + new_lf + lf[at + len(old_lf):]
    if crlf:
        out = out.replace("\n", "\r\n")
    return (b"\xef\xbb\xbf" if bom else b"") + out.encode("utf-8")


def write_bytes(content: str, old: bytes | None, wrapper: bool) -> bytes:
    """What ``write`` leaves on disk (spec write.2, write.3): upstream writes the content verbatim
    as UTF-8; the wrapper splits a leading U+FEFF off and writes a BOM when the old file or the
    content had one. Line endings are never touched."""
    if not wrapper:
        return content.encode("utf-8")
    new_bom = content.startswith("\ufeff")
    body = content[1:] if new_bom else content
    old_bom = old is not None and old.startswith(b"\xef\xbb\xbf")
    return (b"\xef\xbb\xbf" if (old_bom or new_bom) else b"") + body.encode("utf-8")


def engine_read(text: str, offset: int | None, limit: int | None) -> tuple[str, int | None]:
    """Engine read of a small file (spec read.6, no truncation): (text, the offset the notice
    says to continue at, or None). Raises ``ValueError`` with the beyond-end message."""
    lines = text.split("\n")
    start = max(0, offset - 1) if offset else 0
    if start >= len(lines):
        raise ValueError(f"Offset {offset if offset is not None else 0} is beyond end of file ({len(lines)} lines total)")
    if limit is None:
        return "\n".join(lines[start:]), None
    end = min(start + limit, len(lines))
    body = "\n".join(lines[start:end])
    if end < len(lines):
        return f"{body}\n\n[{len(lines) - end} more lines in file. Use offset={end + 1} to continue.]", end + 1
    return body, None


def wrapper_number(engine_text: str, offset: int | None) -> str:
    """The wrapper's post-processing of a short text read (spec read.8): the empty-file reminder,
    the notice kept verbatim, ``String(n).padStart(6) + "→" + line`` per line, a final newline
    left unnumbered."""
    if engine_text == "":
        return EMPTY_FILE_REMINDER
    m = NOTICE_RE.search(engine_text)
    body, notice = (engine_text[: m.start()], m.group(0)) if m else (engine_text, "")
    trailing = body.endswith("\n")
    if trailing:
        body = body[:-1]
    first = offset if offset and offset > 0 else 1
    numbered = "\n".join(f"{n:>6}→{line}" for n, line in enumerate(body.split("\n"), first))
    return numbered + ("\n" if trailing else "") + notice


def truncate_tail(text: str) -> tuple[str, int, int, bool]:
    """The engine's tail truncation (spec limits.1) of ASCII output with short lines:
    (kept text, output lines, total lines, truncated)."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines = lines[:-1]
    total = len(lines)
    if total <= ENGINE_MAX_LINES and len(text.encode()) <= ENGINE_MAX_BYTES:
        return text, total, total, False
    kept: list[str] = []
    size = 0
    for line in reversed(lines):
        cost = len(line.encode()) + (1 if kept else 0)
        if len(kept) >= ENGINE_MAX_LINES or size + cost > ENGINE_MAX_BYTES:
            break
        kept.append(line)
        size += cost
    kept.reverse()
    return "\n".join(kept), len(kept), total, True


def bash_engine_text(output: str, full_output_token: str) -> str:
    """The engine's bash result text (spec bash.8, bash.9) for ASCII output with short lines."""
    kept, out_lines, total, truncated = truncate_tail(output)
    text = kept or "(no output)"
    if not truncated:
        return text
    start = total - out_lines + 1
    limited_by_lines = out_lines >= ENGINE_MAX_LINES
    where = f"{start}-{total} of {total}" + ("" if limited_by_lines else " (50.0KB limit)")
    return f"{text}\n\n[Showing lines {where}. Full output: {full_output_token}]"
