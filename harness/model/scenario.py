"""The scenario model (docs/scenario-format.md): frozen dataclasses for a loaded,
validated scenario. Loading and validation live in ``loader``; this module only holds data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

JsonObj = dict[str, Any]

KNOWN_TOOLS: tuple[str, ...] = ("read", "write", "edit", "grep", "glob", "bash")
KNOWN_OPS: tuple[str, ...] = ("cancel", "task_output", "task_stop", "task_query", "classify", "fs_read")
SURFACES: tuple[str, ...] = ("minimax", "pi")
NORMALIZERS: tuple[str, ...] = ("workspace", "tmpfiles", "task_ids", "durations", "home")
DEFAULT_NORMALIZERS: tuple[str, ...] = ("workspace",)
ENCODINGS: tuple[str, ...] = ("utf-8", "utf-16le")
BOMS: dict[str, bytes] = {"utf-8": b"\xef\xbb\xbf", "utf-16le": b"\xff\xfe"}  # by scenario encoding
CODECS: dict[str, str] = {"utf-8": "utf-8", "utf-16le": "utf-16-le"}  # scenario encoding -> Python codec
EOLS: dict[str, str] = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}
# Expectation keys that only make sense for one outcome (``status: result`` or ``status: error``).
RESULT_ONLY_KEYS: tuple[str, ...] = ("is_error", "text", "details", "details_absent", "content_types")
ERROR_ONLY_KEYS: tuple[str, ...] = ("error", "error_kind")
# What ``requires`` / a step's ``when`` can ask of the backend (``requires`` also takes ``tools``).
CONDITION_NAMES: tuple[str, ...] = ("os", "shell", "symlinks", "fifo", "root", "case_sensitive_fs", "isolation",
                                     "profile_overlay")


@dataclass(frozen=True)
class TextMatch:
    """Matchers on one string (result text or error message); all set ones must hold."""

    equals: str | None = None
    contains: tuple[str, ...] = ()
    not_contains: tuple[str, ...] = ()
    regex: str | None = None
    lines: int | None = None
    max_bytes: int | None = None
    min_bytes: int | None = None
    startswith: str | None = None
    endswith: str | None = None
    snapshot: bool = False


@dataclass(frozen=True)
class FileCheck:
    """Expected state of one workspace path (after a step, or after the scenario)."""

    path: str
    line: int
    text: str | None = None
    encoding: str = "utf-8"
    bom: bool = False
    eol: str = "lf"
    data: bytes | None = None
    absent: bool = False
    mode: int | None = None
    kind: str | None = None
    contains: tuple[str, ...] = ()

    def expected_bytes(self) -> bytes | None:
        """The exact bytes expected, from ``text`` (encoded) or ``base64``; None if unconstrained."""
        if self.data is not None:
            return self.data
        if self.text is None:
            return None
        return encode_text(self.text, self.encoding, self.bom, self.eol)


@dataclass(frozen=True)
class Expectation:
    """What one step's observation must satisfy."""

    status: str = "result"
    is_error: bool | None = None
    text: TextMatch | None = None
    error: TextMatch | None = None
    error_kind: str | None = None
    details: JsonObj | None = None
    details_absent: tuple[str, ...] = ()
    content_types: tuple[str, ...] | None = None
    # the call's process facts (patch bash.process-events, spec bash.16): the exact number of
    # facts, each a subset match (``{event: spawned, role: shell}``); ``[]`` means none reported
    process_events: tuple[JsonObj, ...] | None = None
    files: tuple[FileCheck, ...] = ()
    duration_min: float | None = None
    duration_max: float | None = None


@dataclass(frozen=True)
class Step:
    """One protocol request: a tool ``call`` (``tool`` set) or another op (``op`` set)."""

    id: str
    index: int
    line: int
    tool: str | None
    op: str | None
    args: JsonObj
    timeout: float | None = None  # the host deadline the step sets; None: harness.run.deadlines decides
    when: JsonObj = field(default_factory=dict)
    expect: Expectation = field(default_factory=Expectation)
    platform: tuple[tuple[str, Expectation], ...] = ()
    save: tuple[tuple[str, str], ...] = ()
    raw_expect: JsonObj = field(default_factory=dict)
    reason: str = ""  # why a step marked ``expect: none`` asserts nothing

    def expectation_for(self, os_name: str) -> Expectation:
        for name, exp in self.platform:
            if name == os_name:
                return exp
        return self.expect

    @property
    def label(self) -> str:
        return f"{self.tool or self.op}"


@dataclass(frozen=True)
class WorkspaceEntry:
    """One member of the starting workspace: ``kind`` is file, dir, symlink or fifo."""

    path: str
    kind: str
    data: bytes = b""
    target: str | None = None
    mode: int | None = None
    mtime: float | None = None


@dataclass(frozen=True)
class Workspace:
    entries: tuple[WorkspaceEntry, ...] = ()
    git: bool = False


@dataclass(frozen=True)
class Requires:
    """Capabilities a scenario needs; ``None`` means "any"."""

    os: str | None = None
    shell: str | None = None
    symlinks: bool | None = None
    fifo: bool | None = None
    root: bool | None = None
    case_sensitive_fs: bool | None = None
    isolation: str | None = None
    # the implementation honours the settings of a scenario's ``profile:`` overlay (the reference
    # does; published pi releases ignore it), e.g. a stand-in knob such as taskkill_standin_root
    profile_overlay: bool | None = None
    tools: tuple[str, ...] = ()
    # a step's ``when`` only: programs that must be found on the replay host (``harness.run.programs``)
    programs: tuple[str, ...] = ()

    def items(self) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        for name in CONDITION_NAMES:
            value = getattr(self, name)
            if value is not None:
                out.append((name, value))
        return out


@dataclass(frozen=True)
class Scenario:
    id: str
    path: str
    line: int
    title: str = ""
    tags: tuple[str, ...] = ()
    spec: tuple[str, ...] = ()  # rule ids of docs/spec/ the scenario pins
    patches: tuple[tuple[str, str], ...] = ()  # (toggle, "on" | "off") the scenario pins
    requires: Requires = field(default_factory=Requires)
    surface: str = "minimax"
    profile: JsonObj | None = None
    env: dict[str, str | None] = field(default_factory=dict)
    normalize: tuple[str, ...] = DEFAULT_NORMALIZERS
    workspace: Workspace = field(default_factory=Workspace)
    steps: tuple[Step, ...] = ()
    files: tuple[FileCheck, ...] = ()
    processes_left_behind: int | None = None


def encode_text(text: str, encoding: str = "utf-8", bom: bool = False, eol: str = "lf") -> bytes:
    """Encode scenario text: every ``\\n`` becomes the chosen EOL, then the encoding (+ BOM)."""
    if eol != "lf":
        text = text.replace("\n", EOLS[eol])
    return (BOMS[encoding] if bom else b"") + text.encode(CODECS[encoding])
