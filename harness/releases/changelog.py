"""The release notes that ship inside each npm tarball (``CHANGELOG.md``, Keep a Changelog form:
``## [1.5.1] - date``, ``### Fixed``, one ``- `` bullet per entry), read into entries, merged
across tarballs, and classified: which tool an entry is about, and whether it is about the tool's
behaviour at all.

A changelog lists versions that were never published (``0.86.0``, ``0.99.0``, ``1.5.1``): their
entries first become testable in the next published release, and a behaviour change observed
between two releases is explained, if at all, by the entries of every changelog version in
between (``entries_between``). When tarballs disagree about a version's text, the newest tarball's
wording wins.

The classification is a keyword match, deliberately plain: an entry is about tool T when it says
"the T tool", "`T`" or lists T among "`a`, `b` and `T` tools" (or names ``ls``, no English word); it is about argument validation
when it talks about tool argument validation; and it is not about what a tool returns when its first sentence is
about another surface that happens to call tools (codemode scripts, the terminal interface, RPC
and ``!`` commands, ``pi.exec``, providers, prompts) or about how pi is packaged. ``docs/pi-history.md`` is the reviewed
account of every tool entry; the classifier is what a report can do without one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from harness.releases.versions import is_release, parse_version

HEADING = re.compile(r"^## \[(?P<version>[^\]]+)\]")
SECTION = re.compile(r"^### (?P<section>.+?)\s*$")
BULLET = re.compile(r"^- (?P<text>.*)$")
ISSUE = re.compile(r"\[#(\d+)\]")
# highlight summaries repeat entries listed in the sections below them
SKIPPED_SECTIONS = ("New Features",)
TOOLS = ("read", "write", "edit", "bash", "grep", "find", "ls", "powershell")
VALIDATION = "validation"
_TOOL_ALT = "|".join(TOOLS)
_TOOL_PHRASE = re.compile(rf"\b(?:the\s+)?(?P<tool>{_TOOL_ALT})\s+tool(?:s|'s)?\b", re.IGNORECASE)
_TICKED = re.compile(rf"`(?P<tool>{_TOOL_ALT})`")
# a bare name that is no English word ("in find and ls"); bare "bash" or "read" say nothing
_BARE = re.compile(r"\b(?P<tool>ls)\b")
# argument validation: "validation"/"rejected" said of tool arguments
_VALIDATION = re.compile(r"validat|rejected", re.IGNORECASE)
_ARGUMENTS = re.compile(r"\bargument", re.IGNORECASE)
# another surface that calls the tools (what it shows or does is not what the tool returns), or how
# pi is packaged and installed
OTHER_SURFACE = re.compile(
    r"codemode|code mode|\bRPC\b|`!`|`!!`|\bTUI\b|render|\bcards?\b|highlight|collapsed|expand|visibility|"
    r"scroll|fullscreen|pi\.exec|extension example|session tree|HTML export|system prompt|guideline|"
    r"sampling|\bMCP\b|autocomplete|/tree|compaction|\bprovider|Bedrock|OpenAI|Anthropic|Gemini|Mistral|"
    r"Copilot|\bNix\b|installer|installation",
    re.IGNORECASE)


@dataclass(frozen=True)
class Entry:
    """One changelog bullet: the version heading it is under, its section, the text (continuation
    lines joined) and the issue/PR numbers it links."""

    version: str
    section: str
    text: str

    @property
    def issues(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(ISSUE.findall(self.text)))

    @property
    def summary(self) -> str:
        """The text without its trailing link list: ``Fixed … (#123)`` → ``Fixed …``."""
        text = re.sub(r"\s*\(\[#\d+\].*$", "", self.text).strip()
        return text

    def to_json(self) -> dict[str, object]:
        return {"version": self.version, "section": self.section, "text": self.summary,
                "issues": list(self.issues), "tools": list(tools_of(self)), "tool_entry": is_tool_entry(self)}


def parse_changelog(text: str) -> dict[str, list[Entry]]:
    """``CHANGELOG.md`` → {version: entries in order}; headings that are not release versions
    (``[Unreleased]``) and highlight sections are left out."""
    out: dict[str, list[Entry]] = {}
    version: str | None = None
    section = ""
    current: list[str] | None = None

    def flush() -> None:
        nonlocal current
        if current is not None and version is not None and section not in SKIPPED_SECTIONS:
            out[version].append(Entry(version, section, " ".join(part.strip() for part in current).strip()))
        current = None

    for line in text.splitlines():
        heading = HEADING.match(line)
        if heading:
            flush()
            name = heading.group("version").strip()
            version = ".".join(map(str, parse_version(name))) if is_release(name) else None
            if version is not None:
                out.setdefault(version, [])
            section = ""
            continue
        sec = SECTION.match(line)
        if sec:
            flush()
            section = sec.group("section")
            continue
        bullet = BULLET.match(line)
        if bullet:
            flush()
            current = [bullet.group("text")]
        elif current is not None and line.startswith((" ", "\t")) and line.strip():
            current.append(line)
        elif not line.strip() or line.startswith("#"):
            flush()
    flush()
    return out


def merge_changelogs(sources: Mapping[str, Mapping[str, Sequence[Entry]]]) -> dict[str, list[Entry]]:
    """{tarball version: its parsed changelog} → one changelog: each version's entries as the newest
    tarball that lists the version words them."""
    merged: dict[str, list[Entry]] = {}
    for source in sorted(sources, key=parse_version):
        for version, entries in sources[source].items():
            merged[version] = list(entries)
    return {v: merged[v] for v in sorted(merged, key=parse_version)}


def shipped_in(version: str, published: Sequence[str]) -> str | None:
    """The first published release at or after ``version`` (where its entries become testable)."""
    key = parse_version(version)
    for v in published:
        if parse_version(v) >= key:
            return v
    return None


def entries_between(changelog: Mapping[str, Sequence[Entry]], after: str, upto: str) -> list[Entry]:
    """The entries of every changelog version v with ``after`` < v <= ``upto``, oldest first."""
    lo, hi = parse_version(after), parse_version(upto)
    out: list[Entry] = []
    for version in sorted(changelog, key=parse_version):
        if lo < parse_version(version) <= hi:
            out.extend(changelog[version])
    return out


def tools_of(entry: Entry) -> tuple[str, ...]:
    """The tools an entry names (``the bash tool``, ```edit```, ```find`` … tools``), in TOOLS order,
    plus ``validation`` when it is about tool argument validation."""
    text = entry.text
    named = {m.group("tool").lower() for m in _TOOL_PHRASE.finditer(text)}
    named |= {m.group("tool") for m in _TICKED.finditer(text)}
    named |= {m.group("tool") for m in _BARE.finditer(text)}
    found = [t for t in TOOLS if t in named]
    if _VALIDATION.search(text) and _ARGUMENTS.search(text):
        found.append(VALIDATION)
    return tuple(found)


def is_tool_entry(entry: Entry) -> bool:
    """Whether the entry plausibly changes what a tool call returns or does: it names a tool (or
    tool argument validation) and is not about another surface that calls the tools."""
    return bool(tools_of(entry)) and OTHER_SURFACE.search(first_sentence(entry.text)) is None


def first_sentence(text: str) -> str:
    """What an entry is about: its text up to the first sentence break (``. ``, ``: ``, ``; ``)."""
    return re.split(r"(?<=[.:;])\s", text, maxsplit=1)[0]


def tool_entries(changelog: Mapping[str, Sequence[Entry]], after: str, upto: str) -> list[Entry]:
    return [e for e in entries_between(changelog, after, upto) if is_tool_entry(e)]


def explaining(entries: Iterable[Entry], categories: Iterable[str]) -> list[Entry]:
    """The tool entries among ``entries`` about any of ``categories`` (tool names, ``validation``)."""
    wanted = set(categories)
    return [e for e in entries if is_tool_entry(e) and wanted & set(tools_of(e))]
