"""The workspace as the recorded session saw it (docs/importers.md, "The start state, inferred"):
every successful read, the old text and receipts of an edit, the content of a write, the files a
glob or grep listed, and the output of a simple reading command say what a file contained at that
moment. From them this module infers

- the **start state**: the earliest consistent content of each file the session touched, laid
  over the repository (``--workspace-dir``/``--git``/``--workspace-archive``) or standing alone,
  with each file's provenance (the repository, the trace, or both and where they disagreed);
- **resyncs**: where a recorded result shows a file state the replayed steps cannot produce (a
  human edit, a formatter, a call that was skipped or whose effect is not modelled), a visible
  step that puts the file as the recording saw it next, instead of letting every later step fail;
- the imported calls a replay cannot reproduce (a recorded failure the replay's file would not
  give), and, without a repository, the calls that need one.

Two passes over the calls in trace order. Pass 1 folds every observation of a file made before
anything changed it into its start knowledge (exact content, numbered lines, text it must contain,
existence). Pass 2 replays the calls on that start state — writes and edits applied, shell
commands marking the files they name as possibly changed — and compares every later observation
with the state the replay will have: a difference becomes a resync, labelled with its cause.
Pure functions; the contents are text (a file that is not UTF-8 text is taken as it is).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from harness.importers.commands import CommandFacts, analyse, mentioned_paths, shown_file, split_commands
from harness.importers.mapping import MappedStep, relativize_path_or_none
from harness.importers.trace import JsonObj, RecordedResult

NUMBERED_RE = re.compile(r"^\s*(\d+)(?:→|\t|: )(.*)$")
CAT_N_HEADER_RE = re.compile(r"\AHere's the result of running `cat -n` on [^\n]*:\n")
REMINDER_RE = re.compile(r"\s*<system-reminder>.*?</system-reminder>\s*", re.DOTALL)
EMPTY_FILE_RE = re.compile(r"the file exists but the contents are empty", re.IGNORECASE)
SHORTER_RE = re.compile(r"the file exists but is shorter than the provided offset \((\d+)\)\. The file has (\d+) lines")
TRAILING_NOTICE_RE = re.compile(r"\n*\n\[(?:Showing lines \d+-\d+ of (\d+)[^\]\n]*|(\d+) more lines in file\.[^\]\n]*"
                                r"|desktop read output truncated[^\]\n]*|Lines \[[\d, ]+\] were truncated[^\]\n]*)\]\s*\Z")
LINE_TRUNCATED_SUFFIXES = ("... (line truncated)", "... [truncated]")
NOT_FOUND_RE = re.compile(r"ENOENT|[Nn]o such file|does not exist|File not found|not found:", re.IGNORECASE)
FOUND_FILES_RE = re.compile(r"\AFound \d+ files?\n")
PI_DIFF_LINE_RE = re.compile(r"^([ +-])\s*(\d+) (.*)$")
SMART_CHARS = str.maketrans({"‘": "'", "’": "'", "‚": "'", "‛": "'", "“": '"', "”": '"', "„": '"', "‟": '"',
                             "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "―": "-", "−": "-",
                             "\u00a0": " ", "\u2002": " ", "\u2003": " ", "\u2009": " ", "\u202f": " ",
                             "\u205f": " ", "\u3000": " "})
SELF_CONTAINED_PROGRAMS = frozenset({
    "cat", "head", "tail", "wc", "sort", "uniq", "cut", "tr", "grep", "egrep", "fgrep", "sed", "awk", "diff", "cmp",
    "nl", "md5sum", "sha256sum", "sha1sum", "base64", "tac", "rev", "echo", "printf", "test", "[", "true", "false",
    "pwd", "cd", "sh", "bash", "python3", "node", "stat", "file", "touch", "mkdir", "cp", "mv", "rm", "chmod", "ls",
    "date", "sleep", "seq", "expr", "od", "basename", "dirname", "realpath", "tee", "paste", "comm", "fold",
    "exit", ":", "[[",
})
RECURSIVE_FLAGS_RE = re.compile(r"^-[a-zA-Z]*[rR][a-zA-Z]*$|^--recursive$")
FILE_WORD_RE = re.compile(r"^(?:\.{0,2}/)?[\w@+-][\w.@+/-]*\.[A-Za-z0-9]{1,8}$|^[\w.-]+/[\w./@+-]+$")
SED_SCRIPT_RE = re.compile(r"^[0-9,$]*[sy]/.*/.*/[a-zA-Z0-9]*$")


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


ABSENT = _Marker("ABSENT")
OPAQUE = _Marker("OPAQUE")  # the file exists; its content is not known as text
State = str | _Marker


# -- observations ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Obs:
    """What one recorded result says about one file before the call's own effect.
    ``kind``: ``exact`` (``text``), ``lines`` (``lines`` from ``start``; None for a line not
    shown whole; ``to_eof``; ``eof_newline`` when known), ``contains`` (``fragments``, each
    exactly once when ``unique``), ``absent``, ``exists`` (``is_dir``)."""

    path: str
    kind: str
    line: int
    text: str = ""
    start: int = 1
    lines: tuple[str | None, ...] = ()
    to_eof: bool = False
    eof_newline: bool | None = None
    fragments: tuple[str, ...] = ()
    unique: bool = True
    is_dir: bool = False
    weak: bool = False  # a receipt (Claude Code's originalFile): the start state, or a resync's source, never a check


def _strip_read_text(text: str) -> tuple[str, bool]:
    """The body of a read result without reminders and trailing notices, and whether a notice
    said the view stops before the end of the file."""
    text = CAT_N_HEADER_RE.sub("", text)
    body = REMINDER_RE.sub("\n", text) if "<system-reminder>" in text else text
    if body.endswith("\n") and not text.endswith("\n"):
        body = body[:-1]
    cut = False
    while True:
        m = TRAILING_NOTICE_RE.search(body)
        if not m:
            break
        cut = cut or not m.group(0).lstrip("\n").startswith("[Lines [")
        body = body[: m.start()]
    return body, cut


def read_observation(path: str, args: JsonObj, result: RecordedResult, line: int, numbered: bool) -> Obs | None:
    """What a successful recorded read shows of ``path`` (Claude Code's structured record first,
    else the text: numbered ``N→``/``N\\t``/``N: `` lines, or pi's raw text)."""
    file_rec = (result.structured or {}).get("file") if result.structured else None
    if isinstance(file_rec, dict) and isinstance(file_rec.get("content"), str):
        content = file_rec["content"]
        first_line = file_rec.get("startLine")
        begin = first_line if isinstance(first_line, int) and first_line >= 1 else 1
        total = file_rec.get("totalLines")
        part = [] if content == "" else (content[:-1] if content.endswith("\n") else content).split("\n")
        whole = isinstance(total, int) and begin - 1 + len(part) >= total - 1
        if begin == 1 and whole:
            return Obs(path, "exact", line, text=content)
        return Obs(path, "lines", line, start=begin, lines=tuple(part), to_eof=whole)
    if result.images:
        return Obs(path, "exists", line)
    raw = result.text
    if EMPTY_FILE_RE.search(raw) and len(REMINDER_RE.sub("", raw).strip()) == 0:
        return Obs(path, "exact", line, text="")
    m = SHORTER_RE.search(raw)
    if m:
        return Obs(path, "exists", line)
    body, cut = _strip_read_text(raw)
    offset = args.get("offset")
    start = int(offset) if isinstance(offset, int) and not isinstance(offset, bool) and offset >= 1 else 1
    limit = args.get("limit")
    max_rows = limit if isinstance(limit, int) and not isinstance(limit, bool) else None
    rows = (body[:-1] if body.endswith("\n") else body).split("\n") if body else []
    nums = [NUMBERED_RE.match(r) for r in rows]
    if numbered and rows and all(nums):
        first = int(nums[0].group(1))  # type: ignore[union-attr]
        shown: list[str | None] = []
        for n in nums:
            assert n is not None
            text = n.group(2)
            shown.append(None if text.endswith(LINE_TRUNCATED_SUFFIXES) else text)
        to_eof = not cut and not (max_rows is not None and len(shown) >= max_rows)
        return Obs(path, "lines", line, start=first, lines=tuple(shown), to_eof=to_eof)
    if numbered and rows:
        return None  # not the numbered form the tool layer used: nothing safe to learn
    to_eof = not cut and not (max_rows is not None and len(rows) >= max_rows)
    if start == 1 and to_eof:
        return Obs(path, "exact", line, text=body)
    return Obs(path, "lines", line, start=start, lines=tuple(rows), to_eof=to_eof,
               eof_newline=body.endswith("\n") if to_eof else None)


def _pi_diff_lines(diff: str) -> list[tuple[int, str]]:
    """(old line number, text) of the context and removed lines of pi's numbered edit diff."""
    out = []
    for row in diff.split("\n"):
        m = PI_DIFF_LINE_RE.match(row)
        if m and m.group(1) in (" ", "-"):
            out.append((int(m.group(2)), m.group(3)))
    return out


def _structured_patch_lines(hunks: Any) -> list[tuple[int, str]]:
    out = []
    for h in hunks if isinstance(hunks, list) else []:
        if not isinstance(h, dict) or not isinstance(h.get("oldStart"), int) or not isinstance(h.get("lines"), list):
            continue
        n = h["oldStart"]
        for row in h["lines"]:
            if not isinstance(row, str) or not row:
                continue
            if row[0] in (" ", "-"):
                out.append((n, row[1:]))
                n += 1
    return out


def _numbered_runs(pairs: list[tuple[int, str]], path: str, line: int) -> list[Obs]:
    obs = []
    run: list[tuple[int, str]] = []
    for n, text in sorted(pairs):
        if run and n != run[-1][0] + 1:
            obs.append(Obs(path, "lines", line, start=run[0][0], lines=tuple(t for _, t in run)))
            run = []
        run.append((n, text))
    if run:
        obs.append(Obs(path, "lines", line, start=run[0][0], lines=tuple(t for _, t in run)))
    return obs


def edit_observations(step: MappedStep, result: RecordedResult, line: int) -> list[Obs]:
    """What a successful recorded edit shows of its file before it applied: the old texts (each
    exactly once unless replace_all), Claude Code's ``originalFile``, the context lines of pi's
    diff or Claude Code's ``structuredPatch``."""
    args = step.args
    path = str(args.get("file_path", args.get("path")))
    if "edits" in args:
        olds = tuple(str(e["oldText"]) for e in args["edits"])
        unique = True
    else:
        olds = (str(args["old_string"]),)
        unique = args.get("replace_all") is not True
    obs = [Obs(path, "contains", line, fragments=olds, unique=unique)]
    rec = result.structured or {}
    if step.part == 1 and isinstance(rec.get("originalFile"), str):
        obs.insert(0, Obs(path, "exact", line, text=rec["originalFile"], weak=True))
    elif step.part == 1 and isinstance(rec.get("diff"), str):
        obs[:0] = _numbered_runs(_pi_diff_lines(rec["diff"]), path, line)
    elif step.part == 1 and rec.get("structuredPatch"):
        obs[:0] = _numbered_runs(_structured_patch_lines(rec["structuredPatch"]), path, line)
    return obs


def listing_observations(step: MappedStep, result: RecordedResult, root: str | None, line: int) -> list[Obs]:
    """The files a successful glob (or a grep listing files) names: they exist."""
    text = FOUND_FILES_RE.sub("", REMINDER_RE.sub("\n", result.text)).strip()
    if not text or text.startswith(("No files found", "No matches found", "No files")):
        return []
    base = str(step.args.get("path") or ".").strip("/") or "."
    out = []
    for row in text.split("\n"):
        row = row.strip()
        if not row or row.startswith("[") or (" " in row and not row.startswith("/")):
            continue
        if step.tool == "grep":
            if step.args.get("output_mode") not in (None, "files_with_matches"):
                return []
        rel = relativize_path_or_none(row, root) if row.startswith("/") else \
            (row if base in (".", "") or row.startswith(base + "/") else f"{base}/{row}")
        if rel is None or rel in (".", "") or rel.startswith("../"):
            continue
        out.append(Obs(rel.rstrip("/"), "exists", line, is_dir=row.endswith("/")))
    return out


def observations(step: MappedStep, result: RecordedResult, root: str | None, line: int, numbered: bool,
                 facts: CommandFacts | None = None) -> list[Obs]:
    """Everything the recorded result of ``step`` says about files before its effect."""
    args = step.args
    if result.is_error:
        if step.tool == "read" and NOT_FOUND_RE.search(result.text):
            return [Obs(str(args["path"]), "absent", line)]
        return []
    if step.tool == "read":
        o = read_observation(str(args["path"]), args, result, line, numbered)
        return [o] if o else []
    if step.tool == "edit":
        return edit_observations(step, result, line)
    if step.tool in ("glob", "grep"):
        return listing_observations(step, result, root, line)
    if step.tool == "bash" and facts is not None and not facts.unsplittable:
        shown = shown_file(str(args.get("command", "")), result.text)
        if shown is None or shown.path.startswith(("/", "~")) or ".." in shown.path.split("/"):
            return []
        path = shown.path[2:] if shown.path.startswith("./") else shown.path
        if shown.whole:
            return [Obs(path, "exact", line, text=shown.text)]
        return [Obs(path, "lines", line, start=shown.start, lines=shown.lines)]
    return []


# -- file knowledge ----------------------------------------------------------------------------------

def _fuzzy(text: str) -> str:
    return "\n".join(ln.rstrip() for ln in text.replace("\r\n", "\n").translate(SMART_CHARS).split("\n"))


def occurrences(text: str, fragment: str) -> int:
    """How often ``fragment`` occurs in ``text`` as an edit finds it: exactly (line ends
    normalised), else after pi's fuzzy normalisation (trailing spaces, smart quotes, dashes)."""
    plain = text.replace("\r\n", "\n")
    n = plain.count(fragment.replace("\r\n", "\n")) if fragment else 0
    if n:
        return n
    return _fuzzy(plain).count(_fuzzy(fragment)) if fragment.strip() else 0


def _split(text: str) -> list[str]:
    body = text[:-1] if text.endswith("\n") else text
    return body.replace("\r\n", "\n").split("\n") if text else []


def consistent(state: State, obs: Obs) -> bool:
    """Whether a file in ``state`` shows what ``obs`` says."""
    if obs.kind == "absent":
        return state is ABSENT
    if state is ABSENT:
        return False
    if obs.kind == "exists":
        return True
    if state is OPAQUE:
        return True  # nothing to compare with: taken as it is
    assert isinstance(state, str)
    if obs.kind == "exact":
        return state.replace("\r\n", "\n") == obs.text.replace("\r\n", "\n")
    if obs.kind == "contains":
        for frag in obs.fragments:
            n = occurrences(state, frag)
            if n == 0 or (obs.unique and n > 1):
                return False
        return True
    rows = _split(state)
    for i, shown in enumerate(obs.lines):
        n = obs.start + i
        if shown is None:
            if n > len(rows):
                return False
            continue
        if n > len(rows) or rows[n - 1].rstrip("\r") != shown.rstrip("\r"):
            return False
    if obs.to_eof and len(rows) != obs.start - 1 + len(obs.lines):
        return False
    if obs.eof_newline is not None and obs.to_eof and state and state.endswith("\n") != obs.eof_newline:
        return False
    return True


def patched(state: State, obs: Obs) -> State:
    """``state`` made to show what ``obs`` says (the file as the recording saw it then)."""
    if obs.kind == "absent":
        return ABSENT
    if obs.kind == "exact":
        return obs.text
    base = state if isinstance(state, str) else ""
    if obs.kind == "exists":
        return state if state is not ABSENT else ("" if not obs.is_dir else OPAQUE)
    if obs.kind == "contains":
        missing = [f for f in obs.fragments if occurrences(base, f) == 0]
        if not missing:
            return base
        joined = base if not base or base.endswith("\n") else base + "\n"
        return joined + "".join(f if f.endswith("\n") else f + "\n" for f in missing)
    rows = _split(base)
    newline = base.endswith("\n") if base else True
    end = obs.start - 1 + len(obs.lines)
    while len(rows) < end:
        rows.append("")
    for i, shown in enumerate(obs.lines):
        if shown is not None:
            rows[obs.start - 1 + i] = shown
    if obs.to_eof:
        rows = rows[:end]
        if obs.eof_newline is not None:
            newline = obs.eof_newline
    return "\n".join(rows) + ("\n" if newline and rows else "")


# -- the calls as the inference sees them -------------------------------------------------------------

@dataclass(frozen=True)
class CallView:
    """One recorded call: its position, trace line, steps (mapped, when it could be), result, and
    whether it is imported (``skip`` says why not)."""

    index: int
    line: int
    steps: tuple[MappedStep, ...]
    result: RecordedResult | None
    imported: bool
    skip: str = ""
    numbered: bool = True  # the recorded read results number their lines


@dataclass(frozen=True)
class Resync:
    """A step put before step ``part`` of call ``index``: ``path`` set to ``content`` (None:
    removed), because of ``cause`` (``out-of-band``, ``skipped-call``, ``unmodelled-command``,
    ``unseen``) described by ``reason``."""

    index: int
    part: int
    path: str
    content: str | None
    cause: str
    reason: str


@dataclass(frozen=True)
class Provenance:
    """Where a start file came from: ``repository``, ``trace`` or ``both`` (the trace agreed, or —
    ``disagreed`` — the trace's content from trace line ``line`` replaced the repository's)."""

    path: str
    source: str
    line: int = 0
    disagreed: bool = False
    detail: str = ""

    def describe(self) -> str:
        if self.source == "repository":
            return f"{self.path}: from the repository"
        if self.source == "trace":
            return f"{self.path}: from the trace (line {self.line}){': ' + self.detail if self.detail else ''}"
        if self.disagreed:
            return (f"{self.path}: the repository and the trace disagree; the trace's content (line {self.line}) "
                    f"is used{': ' + self.detail if self.detail else ''}")
        return f"{self.path}: from the repository, as the trace shows it (line {self.line})"


@dataclass
class Inference:
    """The start files to lay over the repository (``start``: path → text, or ``ABSENT`` to leave
    a repository file out), their provenance, the resyncs, and the imported calls to skip after
    all (``dropped``: call index → reason)."""

    start: dict[str, State] = field(default_factory=dict)
    provenance: list[Provenance] = field(default_factory=list)
    resyncs: list[Resync] = field(default_factory=list)
    dropped: dict[int, str] = field(default_factory=dict)


@dataclass
class _Knowledge:
    obs: list[Obs] = field(default_factory=list)
    open: bool = True


def _effect_paths(step: MappedStep) -> list[str]:
    if step.tool in ("write", "edit"):
        return [str(step.args.get("path", step.args.get("file_path")))]
    return []


def _facts(step: MappedStep) -> CommandFacts | None:
    return analyse(str(step.args.get("command", ""))) if step.tool == "bash" else None


def _known_paths(repo: dict[str, State], knowledge: dict[str, _Knowledge]) -> set[str]:
    return set(repo) | set(knowledge)


def _materialize(path: str, know: _Knowledge, repo: State | None) -> tuple[State | None, Provenance]:
    """The start content of ``path`` from what the trace showed before anything changed it and
    what the repository holds (None: nothing to lay over the repository)."""
    first = know.obs[0].line
    if repo is not None and all(consistent(repo, o) for o in know.obs):
        return None, Provenance(path, "both", first)
    state: State = repo if repo is not None else ABSENT
    if repo is None or repo is OPAQUE:
        state = "" if repo is None else repo
    for o in know.obs:
        if not consistent(state, o):
            state = patched(state, o)
    if repo is None:
        partial = [o for o in know.obs if o.kind in ("lines", "contains")] and not any(o.kind == "exact" for o in know.obs)
        detail = "only partly shown; the lines and texts it showed are in place, the rest is empty" if partial else ""
        if state is ABSENT:
            return None, Provenance(path, "trace", first, detail="absent at the start")
        return state, Provenance(path, "trace", first, detail=detail)
    return state, Provenance(path, "both", next(o.line for o in know.obs if not consistent(repo, o)), disagreed=True)


def infer(calls: Iterable[CallView], repo: dict[str, State], root: str | None, *,
          with_repository: bool) -> Inference:
    """The start state and resyncs of a session (see the module docstring). ``repo``: the
    repository's files (path → text, ``OPAQUE`` for binary files); ``with_repository`` False
    when the import has no workspace source (calls that need one are then dropped)."""
    views = list(calls)
    facts = {(c.index, s.part): _facts(s) for c in views for s in c.steps}
    result = Inference()
    # Pass 1: start knowledge, and (without a repository) what cannot be replayed.
    knowledge: dict[str, _Knowledge] = {}
    created: set[str] = set()
    for c in views:
        if c.result is None:
            continue
        for s in c.steps:
            f = facts[(c.index, s.part)]
            seen = observations(s, c.result, root, c.line, c.numbered, f)
            if c.imported and not with_repository:
                why = _needs_repository(s, f, set(knowledge) | created | {o.path for o in seen}, c.result)
                if why:
                    result.dropped.setdefault(c.index, why)
            for o in seen:
                k = knowledge.setdefault(o.path, _Knowledge())
                if k.open and not _conflicts(k.obs, o):
                    k.obs.append(o)
                else:
                    k.open = False
            for p in _effect_paths(s):
                knowledge.setdefault(p, _Knowledge()).open = False
                created.add(p)
            if f is not None:
                touched = set(knowledge) if f.broad_mutation else mentioned_paths(f, _known_paths(repo, knowledge))
                for p in touched:
                    knowledge.setdefault(p, _Knowledge()).open = False
    for path, k in sorted(knowledge.items()):
        if not k.obs:
            continue
        content, prov = _materialize(path, k, repo.get(path))
        if content is not None:
            result.start[path] = content
        result.provenance.append(prov)
    for path in sorted(repo):
        if path not in knowledge or not knowledge[path].obs:
            result.provenance.append(Provenance(path, "repository"))
    _simulate(views, facts, repo, root, result)
    return result


def _conflicts(earlier: list[Obs], obs: Obs) -> bool:
    """Whether ``obs`` contradicts what ``earlier`` observations of the same file showed (only
    what they showed: lines they did not show are not taken as empty)."""
    if not earlier:
        return False
    if obs.kind == "absent" or any(o.kind == "absent" for o in earlier):
        return not all(o.kind == "absent" for o in (*earlier, obs))
    exact = next((o.text for o in earlier if o.kind == "exact"), None)
    if exact is not None:
        return not consistent(exact, obs)
    if obs.kind == "exact":
        return not all(consistent(obs.text, o) for o in earlier)
    if obs.kind != "lines":
        return False
    known: dict[int, str] = {}
    for o in earlier:
        if o.kind == "lines":
            for i, shown in enumerate(o.lines):
                if shown is not None:
                    known[o.start + i] = shown
    return any(shown is not None and known.get(obs.start + i, shown).rstrip("\r") != shown.rstrip("\r")
               for i, shown in enumerate(obs.lines))


def _needs_repository(step: MappedStep, facts: CommandFacts | None, known: set[str],
                      result: RecordedResult) -> str:
    """Why ``step`` cannot be replayed from the inferred files alone ("" when it can)."""
    if step.tool == "read" and result.images:
        return "needs the repository: an image the recording does not hold"
    if step.tool in ("grep",) and not result.is_error:
        mode = step.args.get("output_mode")
        if mode == "count":
            return "needs the repository: grep counts matches in files the recording does not show"
    if step.tool != "bash" or facts is None:
        return ""
    if facts.unsplittable:
        return "needs the repository: a shell command this import cannot follow"
    command = str(step.args.get("command", ""))
    parts = list(facts.words)
    if not parts:
        return ""
    from_split = _programs(command)
    for prog in from_split:
        if prog not in SELF_CONTAINED_PROGRAMS:
            return f"needs the repository: {prog} works on the project, not on files the recording shows"
    for w in parts:
        if RECURSIVE_FLAGS_RE.match(w):
            return "needs the repository: a recursive command over the project"
    for cmd in facts.commands:
        prog = cmd[0].rsplit("/", 1)[-1]
        if prog.startswith("python") and "-m" in cmd:
            return f"needs the repository: {' '.join(cmd[:3])} runs a module of the project"
        # an existence test that failed in the recording fails alike without the file
        absent_ok = prog in ("test", "[") and result.is_error
        for w in cmd[1:]:
            word = w[2:] if w.startswith("./") else w
            if absent_ok or (cmd[cmd.index(w) - 1] == "-c" and prog.startswith("python")):
                continue
            if FILE_WORD_RE.match(word) and not SED_SCRIPT_RE.match(word) and word not in known \
                    and not any(k.startswith(word.rstrip("/") + "/")
                                                                         for k in known):
                return f"needs the repository: {word} is not shown in the recording"
    if any(prog == "ls" for prog in from_split):
        return "needs the repository: ls lists the project's files"
    return ""


def _programs(command: str) -> list[str]:
    return [c[0].rsplit("/", 1)[-1] for c in split_commands(command) or []]


def _simulate(views: list[CallView], facts: dict[tuple[int, int], CommandFacts | None], repo: dict[str, State],
              root: str | None, result: Inference) -> None:
    """Pass 2: replay the calls on the start state and resync where a recorded result shows a
    file state the replay would not have."""
    replay: dict[str, State] = dict(repo)
    replay.update(result.start)
    recorded: dict[str, State] = dict(replay)
    history: dict[str, list[tuple[int, State]]] = {p: [(0, s)] for p, s in replay.items()}
    last_seen: dict[str, int] = {}
    maybe_changed: dict[str, tuple[str, str]] = {}  # path -> (cause, reason) of a change not modelled
    for c in views:
        if c.result is None:
            continue
        imported = c.imported and c.index not in result.dropped
        for s in c.steps:
            f = facts[(c.index, s.part)]
            obs = observations(s, c.result, root, c.line, c.numbered, f)
            receipts = {o.path: o.text for o in obs if o.weak}
            for o in obs:
                if o.weak:
                    continue
                cur = replay.get(o.path, ABSENT)
                rec = recorded.get(o.path, ABSENT)
                if cur is OPAQUE and o.kind == "exact":
                    replay[o.path] = recorded[o.path] = o.text  # adopted: the replay is taken to match
                    maybe_changed.pop(o.path, None)
                    last_seen[o.path] = c.line
                    continue
                if not consistent(cur, o):
                    if not imported and o.kind == "contains":
                        continue
                    target = _resync_target(o, rec, history.get(o.path, []), receipts.get(o.path))
                    if target is None:
                        if imported:
                            result.dropped[c.index] = (f"the file {o.path} before this call is not known: it changed "
                                                       "in a way the recording does not show")
                            imported = False
                        continue
                    cause, reason = maybe_changed.get(o.path) or (
                        "out-of-band", f"changed outside the recording (a human edit, a formatter, a tool the recording "
                                       f"does not show) between trace lines {last_seen.get(o.path, 0) or 'start'} and "
                                       f"{c.line}")
                    result.resyncs.append(Resync(c.index, s.part, o.path, None if target is ABSENT else
                                                 str(target) if isinstance(target, str) else "", cause,
                                                 f"{o.path}: {reason}"))
                    replay[o.path] = target
                    recorded[o.path] = target
                    history.setdefault(o.path, []).append((c.line, target))
                else:
                    recorded[o.path] = patched(rec, o) if not consistent(rec, o) else rec
                maybe_changed.pop(o.path, None)
                last_seen[o.path] = c.line
            if c.result.is_error and imported and s.tool == "edit":
                path = str(s.args.get("file_path", s.args.get("path")))
                olds = [str(e["oldText"]) for e in s.args["edits"]] if "edits" in s.args else [str(s.args["old_string"])]
                cur = replay.get(path, ABSENT)
                if isinstance(cur, str) and all(occurrences(cur, o) == 1 for o in olds):
                    result.dropped[c.index] = ("the recorded failure cannot be reproduced: the file as the replay has it "
                                               "holds the text exactly once (it changed in a way the recording does not "
                                               "show)")
                    imported = False
            if c.result.is_error:
                continue
            for model in (replay, recorded) if imported else (recorded,):
                _apply(s, model)
            for p in _effect_paths(s):
                last_seen[p] = c.line
                history.setdefault(p, []).append((c.line, recorded.get(p, ABSENT)))
                if not imported:
                    maybe_changed[p] = ("skipped-call", f"after the call at trace line {c.line}, which is not "
                                                        f"replayed ({c.skip or 'skipped'})")
            if f is not None:
                touched = set(replay) | set(recorded) if f.broad_mutation else \
                    mentioned_paths(f, set(replay) | set(recorded))
                for p in touched:
                    if imported:
                        maybe_changed[p] = ("unmodelled-command", f"after the shell command at trace line {c.line} "
                                                                  "(its effect on files is not modelled)")
                    else:
                        maybe_changed[p] = ("skipped-call", f"after the call at trace line {c.line}, which is not "
                                                            f"replayed ({c.skip or 'skipped'})")


def _resync_target(obs: Obs, recorded: State, history: list[tuple[int, State]], receipt: str | None = None
                   ) -> State | None:
    """The file as the recording saw it at ``obs``: the recorded model patched with what it shows;
    for an edit's old text, the edit's own receipt of the file (Claude Code's ``originalFile``), the
    recorded model, or the latest earlier version holding it."""
    if obs.kind != "contains":
        return patched(recorded, obs)
    if receipt is not None and consistent(receipt, obs):
        return receipt
    if consistent(recorded, obs):
        return recorded
    for _, version in reversed(history):
        if consistent(version, obs):
            return version
    return None


def _apply(step: MappedStep, model: dict[str, State]) -> None:
    """A write or edit applied to a content model (an edit that does not match exactly leaves the
    file's content unknown as text)."""
    if step.tool == "write":
        model[str(step.args["path"])] = str(step.args["content"])
        return
    if step.tool != "edit":
        return
    path = str(step.args.get("file_path", step.args.get("path")))
    cur = model.get(path, ABSENT)
    if not isinstance(cur, str):
        return
    pairs = [(str(e["oldText"]), str(e["newText"])) for e in step.args["edits"]] if "edits" in step.args \
        else [(str(step.args["old_string"]), str(step.args["new_string"]))]
    crlf = "\r\n" in cur
    text = cur.replace("\r\n", "\n") if crlf else cur
    for old, new in pairs:
        old_n = old.replace("\r\n", "\n")
        if old_n not in text:
            model[path] = OPAQUE
            return
        count = -1 if step.args.get("replace_all") is True else 1
        text = text.replace(old_n, new.replace("\r\n", "\n"), count)
    model[path] = text.replace("\n", "\r\n") if crlf else text
