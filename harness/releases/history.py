"""``docs/pi-history.md``: the reviewed account of every changelog tool entry from pi 0.73.1 to
1.6.0 — the scenarios or fuzz classes that pin it, or why it cannot be observed through the tool
protocol. The release report reads it to check each pinned entry against what the sweep saw and
to say why an entry was not observed; ``tests/corpus/test_pi_history.py`` keeps it true.

A row of its tables::

    | `0.85.0 #8979` | write | Fixed the write tool reporting … | `pi/history/write-byte-count` | note |

The first column is the entry's key (``entry_key``: the version, its first issue number if it
links one, and its first three words); the fourth names scenario ids
and fuzz classes (``fuzz: write \\| content``, the table's pipe escaped), or ``—``; a row without any says why in its note,
starting ``not observable through the protocol:`` or ``not a scenario:``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from harness.releases.changelog import Entry

ROW = re.compile(r"^\| `(?P<key>[^`]+)` \| (?P<tool>[^|]*?) \| (?P<entry>.*?) \| (?P<refs>.*?) \|\s*(?P<note>.*?)\s*\|$")
REF = re.compile(r"`([^`]+)`")
UNOBSERVABLE = "not observable through the protocol"
NOT_A_SCENARIO = "not a scenario"
FUZZ_PREFIX = "fuzz: "


def entry_key(entry: Entry) -> str:
    """``0.85.0 #8979 Fixed the write``: the version, the first issue number it links (if any) and
    its first three words (one version may list two entries under one issue)."""
    words = " ".join(re.findall(r"[A-Za-z0-9_.']+", entry.summary)[:3])
    return f"{entry.version} #{entry.issues[0]} {words}" if entry.issues else f"{entry.version} {words}"


@dataclass(frozen=True)
class HistoryRow:
    key: str
    tool: str
    entry: str
    scenarios: tuple[str, ...]
    fuzz_classes: tuple[str, ...]
    note: str
    line: int

    @property
    def version(self) -> str:
        return self.key.split(" ", 1)[0]

    @property
    def pinned(self) -> bool:
        return bool(self.scenarios or self.fuzz_classes)

    @property
    def unobservable(self) -> bool:
        return self.note.startswith(UNOBSERVABLE)


def parse_history(text: str) -> list[HistoryRow]:
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        m = ROW.match(line)
        if not m:
            continue
        refs = [] if m["refs"].strip() in ("—", "-", "") else [r.replace("\\|", "|") for r in REF.findall(m["refs"])]
        fuzz = tuple(r[len(FUZZ_PREFIX):] for r in refs if r.startswith(FUZZ_PREFIX))
        scenarios = tuple(r for r in refs if not r.startswith(FUZZ_PREFIX))
        rows.append(HistoryRow(m["key"], m["tool"].strip(), m["entry"].strip(), scenarios, fuzz, m["note"].strip(), n))
    return rows


def load_history(path: Path) -> list[HistoryRow]:
    try:
        return parse_history(path.read_text(encoding="utf-8"))
    except OSError:
        return []
