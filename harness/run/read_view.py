"""A read's text as behaviour: its **content** and where it says to **continue**, whatever dialect
presented it (docs/scenario-format.md, ``content`` and ``next_offset``).

MiniMax's layer numbers every line (``     1→text``, spec read.8), answers an empty file with a
``<system-reminder>`` and adds its own notices; pi returns the raw text with the engine's notices
(read.6, read.10). Both say the same thing about the file. The view takes off, in order:

1. a text that is one ``<system-reminder>…</system-reminder>`` and nothing else, or one bracketed
   line ``[…]`` and nothing else (``[Line 1 is 60.0KB, exceeds 50.0KB limit. Use bash: …]``): empty
   content, that line its notice;
2. trailing notices, each a last line ``[…]`` after a blank line (``\\n\\n[Showing lines 1-2000 of
   2501. Use offset=2001 to continue.]``, ``\\n\\n[desktop read output truncated: …offset=37…]``,
   ``\\n\\n[3 more lines in file. Use offset=4 to continue.]``); the outermost ``offset=N`` is where
   the text says to continue;
3. line-number prefixes, when every line carries one (``N→`` or ``N<TAB>`` after optional spaces;
   a fractional ``2.7→`` too, as an offset of 2.7 numbers it).

What is left is the content. A layer that presents a read some other way (a header line, say) gets
a content that differs, and the check says so with the diff.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

REMINDER_RE = re.compile(r"\A(?:<system-reminder>[^\n]*</system-reminder>|\[[^\n]*\])\Z")
NOTICE_RE = re.compile(r"\n\n(\[[^\n]*\])\Z")
OFFSET_RE = re.compile(r"\boffset=(\d+)")
PREFIX_RE = re.compile(r"\A *[0-9]+(?:\.[0-9]+)?(?:→|\t)")


@dataclass(frozen=True)
class ReadView:
    content: str
    next_offset: int | None
    notices: tuple[str, ...] = ()


def read_view(text: str) -> ReadView:
    if REMINDER_RE.match(text):
        found = OFFSET_RE.findall(text)
        return ReadView("", int(found[-1]) if found else None, (text,))
    notices: list[str] = []
    body = text
    while True:
        m = NOTICE_RE.search(body)
        if m is None:
            break
        notices.insert(0, m.group(1))
        body = body[:m.start()]
    next_offset = None
    for notice in reversed(notices):
        found = OFFSET_RE.findall(notice)
        if found:
            next_offset = int(found[-1])
            break
    return ReadView(strip_line_numbers(body), next_offset, tuple(notices))


def strip_line_numbers(body: str) -> str:
    """``body`` without its line-number prefixes when every line has one (a final newline's empty
    last element excepted), else unchanged."""
    if not body:
        return body
    lines = body.split("\n")
    last_empty = lines[-1] == ""
    numbered = lines[:-1] if last_empty else lines
    if not numbered or not all(PREFIX_RE.match(line) for line in numbered):
        return body
    out = [PREFIX_RE.sub("", line, count=1) for line in numbered]
    return "\n".join(out) + ("\n" if last_empty else "")
