"""The Claude Code BashTool profile (spec classify): constants, read-only classification, the
fail-safe tree-sitter-bash security parse, permission-rule matching, and ``classify`` — the
entry point of the server's ``classify`` op.

Everything the spec leaves undescribed is a field of ``ClaudeBashProfile``; the defaults and the
rules chosen for them are stated here.

Read-only classification (spec classify.2, pure, no tree-sitter):
- The command is split on unquoted ``&&``, ``||``, ``;``, ``|``, ``|&``, ``&`` and newlines
  (``>&``, ``<&``, ``&>`` are redirections, not separators); quotes and backslash escapes are
  respected. An unbalanced quote makes the command not read-only.
- Command substitution (``$(…)``, backticks), process substitution (``<(…)``, ``>(…)``), heredocs and
  output redirection to anything but ``/dev/null`` or a file descriptor make the command not
  read-only (``argument_restrictions``). So do known write/exec-capable arguments: ``find
  -delete/-exec/-execdir/-ok/-okdir/-fprint/-fprint0/-fprintf/-fls``, ``sort -o/--output``,
  ``uniq`` with an output operand, ``tree -o``, ``file -C``, ``rg --pre``, and ``awk`` programs
  mentioning ``system``, ``|`` or ``>``.
- Base command = the first word after leading ``VAR=val`` assignments, compared exactly
  (``/bin/ls`` is not ``ls``: conservative).
- ``cd`` anywhere forfeits read-only status (``cd_forfeits_read_only``, inferred default True;
  when False a ``cd`` part is treated as neutral). A command made only of neutral parts is
  read-only (``all_neutral_read_only``, default True: the spec's algorithm is vacuously true);
  an empty command is never read-only.

Security parse (spec classify.3): kind ``simple`` only when the tree-sitter-bash tree (without errors)
consists of simple commands combined by lists (``&&``, ``||``, ``;``, ``&``, newlines) and
pipelines (``|``, ``|&``), whose words are literals (plain words, quoted strings without
expansions, concatenations of those); leading ``VAR=val`` assignments must be literal too.
Redirections keep a command simple only when they duplicate a file descriptor (``2>&1``),
target ``/dev/null``, or read (``<``) from a literal word. Anything else — expansions
(``$VAR``, ``${…}``, ``$((…))``), command or process substitution, subshells, groups,
heredocs/herestrings, control flow, functions, tests, negation, parse errors — gives kind
``too_complex`` (or ``parse_error``); a missing tree-sitter gives ``unavailable``. Every
non-simple kind fails safe: the matcher answers true for every rule.

Rule syntax (``wildcard_syntax``; default ``both``): ``Bash(...)`` wrappers are stripped; a rule
ending in ``:*`` is a word-prefix rule (``git push:*`` matches ``git push`` and ``git push
--force`` but not ``git pushx``); otherwise ``*`` matches any run of characters (including spaces)
over the whole subcommand; a rule without wildcards must equal the subcommand.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# ---------------------------------------------------------------- command sets (spec classify.2)

BASH_SEARCH_COMMANDS: frozenset[str] = frozenset(
    {"find", "grep", "rg", "ag", "ack", "locate", "which", "whereis"}
)
# The members the source names, first; the source says the real set is longer.
BASH_READ_COMMANDS_KNOWN: tuple[str, ...] = (
    "cat", "head", "tail", "wc", "stat", "file", "jq", "awk", "sort", "uniq",
)
# Conservative extension: commands that only read their inputs and write to stdout.
BASH_READ_COMMANDS_EXTRA: tuple[str, ...] = (
    "cut", "tr", "nl", "tac", "rev", "paste", "comm", "cmp", "diff", "strings", "od",
    "cksum", "md5sum", "sha1sum", "sha256sum", "sha512sum", "basename", "dirname",
    "realpath", "readlink", "pwd", "column", "fold", "expand", "unexpand", "fmt",
)
BASH_READ_COMMANDS: frozenset[str] = frozenset(BASH_READ_COMMANDS_KNOWN + BASH_READ_COMMANDS_EXTRA)
BASH_LIST_COMMANDS: frozenset[str] = frozenset({"ls", "tree", "du"})
BASH_SEMANTIC_NEUTRAL_COMMANDS: frozenset[str] = frozenset({"echo", "printf", "true", "false", ":"})

SPLIT_OPERATORS: tuple[str, ...] = ("&&", "||", ";", "|", "|&", "&", "\n")
SAFE_REDIRECT_TARGETS: tuple[str, ...] = ("/dev/null",)

FIND_WRITE_ARGS: frozenset[str] = frozenset(
    {"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"}
)

PARSE_SIMPLE = "simple"
PARSE_TOO_COMPLEX = "too_complex"
PARSE_ERROR = "parse_error"
PARSE_UNAVAILABLE = "unavailable"
TREE_SITTER_MISSING = "tree-sitter-bash is not installed (pip install tree-sitter tree-sitter-bash)"

PERMISSION_ALLOW = "allow"
PERMISSION_ASK = "ask"
PERMISSION_RULE = "rule"


@dataclass(frozen=True)
class ClaudeBashProfile:
    """Constants of Claude Code's BashTool and an option for every point the spec leaves open."""

    name: str = "claude-code"
    default_timeout_ms: int = 120_000
    max_timeout_ms: int = 600_000
    auto_background_after_ms: int = 15_000
    max_result_chars: int = 100_000
    progress_poll_ms: int = 1000
    # spec classify.2 open points
    cd_forfeits_read_only: bool = True
    all_neutral_read_only: bool = True
    extended_read_commands: bool = True
    argument_restrictions: bool = True
    split_operators: tuple[str, ...] = SPLIT_OPERATORS
    safe_redirect_targets: tuple[str, ...] = SAFE_REDIRECT_TARGETS
    read_only_permission: str = PERMISSION_ALLOW  # 'allow', or 'rules' to fall through to rules
    # spec classify.3 open point
    wildcard_syntax: str = "both"  # 'both' | 'prefix' | 'glob'
    # spec classify.5 open points
    background_tasks_disabled: bool = False
    auto_background_excluded: tuple[str, ...] = ()


CLAUDE_CODE = ClaudeBashProfile()


def profile_from_options(options: Mapping[str, object] | None, base: ClaudeBashProfile = CLAUDE_CODE) -> ClaudeBashProfile:
    """Overlay ``options`` (field name → value) on ``base``; unknown keys raise ``ValueError``.
    The key ``timeout_ms`` is a per-call input, not a profile field, and is ignored here."""
    if not options:
        return base
    fields = {f.name for f in dataclasses.fields(ClaudeBashProfile)}
    updates: dict[str, Any] = {}
    for key, value in options.items():
        if key == "timeout_ms":
            continue
        if key not in fields:
            raise ValueError(f"classify options: unknown option {key!r}")
        updates[key] = tuple(value) if isinstance(value, list) else value
    return dataclasses.replace(base, **updates)


# ---------------------------------------------------------------- splitting (pure)


@dataclass(frozen=True)
class Part:
    """One segment of a compound command and the operator that ended it (``""`` at the end)."""

    text: str
    operator: str
    has_substitution: bool = False
    output_redirects: tuple[str, ...] = ()
    argv_text: str = ""


class UnbalancedQuote(ValueError):
    pass


def split_command(command: str, operators: Sequence[str] = SPLIT_OPERATORS) -> list[Part]:
    """Split on unquoted operators (longest match first). Raises ``UnbalancedQuote``.

    Each part keeps its text as written; ``argv_text`` is the same text without redirections.
    """
    ops = sorted((o for o in operators if o != "\n"), key=len, reverse=True)
    split_newline = "\n" in operators
    parts: list[Part] = []
    buf: list[str] = []
    argv_buf: list[str] = []
    subst = False
    redirects: list[str] = []
    i, n = 0, len(command)
    quote: str | None = None

    def emit(s: str) -> None:
        buf.append(s)
        argv_buf.append(s)

    def flush(op: str) -> None:
        nonlocal subst, redirects
        text = "".join(buf).strip()
        if text:
            parts.append(Part(text, op, subst, tuple(redirects), "".join(argv_buf).strip()))
        buf.clear()
        argv_buf.clear()
        subst = False
        redirects = []

    while i < n:
        c = command[i]
        if quote == "'":
            emit(c)
            if c == "'":
                quote = None
            i += 1
            continue
        if c == "\\" and i + 1 < n:
            emit(command[i : i + 2])
            i += 2
            continue
        if quote == '"':
            emit(c)
            if c == '"':
                quote = None
            elif c == "`" or command.startswith("$(", i):
                subst = True
            i += 1
            continue
        if c in ("'", '"'):
            quote = c
            emit(c)
            i += 1
            continue
        if c == "`" or command.startswith(("$(", "<(", ">("), i):
            subst = True
            emit(c)
            i += 1
            continue
        if c == "#" and (not buf or buf[-1][-1:].isspace()):
            # A comment runs to the end of the line.
            while i < n and command[i] != "\n":
                i += 1
            continue
        if c in "<>" or command.startswith("&>", i):
            j = i
            while j < n and command[j] in "<>&|":
                j += 1
            opx = command[i:j]
            k = j
            while k < n and command[k] in " \t":
                k += 1
            m = re.match(r"[^\s;&|<>()]*", command[k:])
            target = m.group(0) if m else ""
            buf.append(command[i : k + len(target)])
            if opx.startswith("<<") and not opx.startswith("<<<"):
                subst = True  # a heredoc body is not a command line: never read-only
            # A file-descriptor number written right before the operator belongs to it.
            fd = re.search(r"(?:^|\s)(\d+)$", "".join(argv_buf))
            if fd and opx[0] in "<>":
                del argv_buf[len(argv_buf) - len(fd.group(1)) :]
            if ">" in opx:
                is_fd_dup = opx.endswith("&") and re.fullmatch(r"\d+|-", target) is not None
                redirects.append("&" + target if is_fd_dup else target)
            i = k + len(target)
            continue
        if c == "\n" and split_newline:
            flush("\n")
            i += 1
            continue
        op = next((o for o in ops if command.startswith(o, i)), None)
        if op is not None:
            flush(op)
            i += len(op)
            continue
        emit(c)
        i += 1
    if quote is not None:
        raise UnbalancedQuote(f"unbalanced {quote} quote")
    flush("")
    return parts


def words_of(part_text: str) -> list[str]:
    """Unquoted words of one segment, leading ``VAR=val`` assignments removed."""
    lexer = shlex.shlex(part_text, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    words = list(lexer)
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        words.pop(0)
    return words


def _restricted_arguments(base: str, args: list[str]) -> bool:
    """Known write- or exec-capable arguments of otherwise read-only commands."""
    if base == "find":
        return any(a in FIND_WRITE_ARGS for a in args)
    if base == "sort":
        return any(a == "-o" or (a.startswith("-o") and not a.startswith("--")) or a.startswith("--output")
                   or a.startswith("--compress-program") for a in args)
    if base == "uniq":
        operands = [a for a in args if not a.startswith("-") or a == "-"]
        return len(operands) > 1
    if base == "tree":
        return "-o" in args
    if base == "file":
        return any(a == "-C" or a == "--compile" for a in args)
    if base == "rg":
        return any(a == "--pre" or a.startswith("--pre=") for a in args)
    if base == "awk":
        return any(("system" in a or "|" in a or ">" in a) for a in args)
    return False


@dataclass(frozen=True)
class ReadOnlyVerdict:
    read_only: bool
    has_cd: bool
    parts: tuple[Part, ...]
    reason: str


def is_read_only(command: str, profile: ClaudeBashProfile = CLAUDE_CODE) -> ReadOnlyVerdict:
    """spec classify.2 ``isReadOnly`` with this profile's choices (see the module docstring)."""
    try:
        parts = split_command(command, profile.split_operators)
    except UnbalancedQuote:
        return ReadOnlyVerdict(False, False, (), "unbalanced quote")
    read_set = BASH_READ_COMMANDS if profile.extended_read_commands else frozenset(BASH_READ_COMMANDS_KNOWN)
    allowed = BASH_SEARCH_COMMANDS | read_set | BASH_LIST_COMMANDS
    bases: list[str] = []
    for part in parts:
        try:
            words = words_of(part.argv_text)
        except ValueError:
            return ReadOnlyVerdict(False, False, tuple(parts), "unparsable segment")
        bases.append(words[0] if words else "")
    has_cd = "cd" in bases
    if not parts:
        return ReadOnlyVerdict(False, has_cd, (), "empty command")
    if has_cd and profile.cd_forfeits_read_only:
        return ReadOnlyVerdict(False, True, tuple(parts), "cd")
    all_neutral = True
    for part, base in zip(parts, bases, strict=True):
        if profile.argument_restrictions:
            if part.has_substitution:
                return ReadOnlyVerdict(False, has_cd, tuple(parts), "substitution or heredoc")
            for target in part.output_redirects:
                if not target.startswith("&") and target not in profile.safe_redirect_targets:
                    return ReadOnlyVerdict(False, has_cd, tuple(parts), "output redirection")
        if base in BASH_SEMANTIC_NEUTRAL_COMMANDS or base == "" or (base == "cd" and not profile.cd_forfeits_read_only):
            continue
        all_neutral = False
        if base not in allowed:
            return ReadOnlyVerdict(False, has_cd, tuple(parts), f"not read-only: {base}")
        if profile.argument_restrictions and _restricted_arguments(base, words_of(part.argv_text)[1:]):
            return ReadOnlyVerdict(False, has_cd, tuple(parts), f"write-capable arguments: {base}")
    if all_neutral and not profile.all_neutral_read_only:
        return ReadOnlyVerdict(False, has_cd, tuple(parts), "only neutral commands")
    return ReadOnlyVerdict(True, has_cd, tuple(parts), "read-only")


# ---------------------------------------------------------------- security parse (spec classify.3)


@dataclass(frozen=True)
class SecurityParse:
    kind: str
    subcommands: tuple[str, ...] = ()
    reason: str = ""


@functools.cache
def _get_parser() -> Any:
    """The tree-sitter-bash parser, created on first use and kept; raises ImportError when missing
    (not cached, so installing the extra later works)."""
    # optional dependency (the bashparse extra), imported when a command is first parsed
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


class _TooComplex(Exception):
    pass


_LIST_TOKENS = frozenset({"&&", "||", ";", "&", "|", "|&", "\n", "comment"})


def _unescape_word(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text, flags=re.DOTALL).replace("\\\n", "")


def _literal(node: Any) -> str:
    """The literal value of an argument node, or ``_TooComplex``."""
    t = node.type
    text = node.text.decode("utf-8", "surrogateescape")
    if t in ("word", "number"):
        if "$" in text or "`" in text:
            raise _TooComplex(f"expansion in {text!r}")
        return _unescape_word(text)
    if t == "raw_string":
        return text[1:-1]
    if t == "string":
        out = []
        for child in node.children:
            if child.type == '"':
                continue
            if child.type == "string_content":
                out.append(re.sub(r'\\([$`"\\\n])', r"\1", child.text.decode("utf-8", "surrogateescape")))
            else:
                raise _TooComplex(f"{child.type} inside a string")
        return "".join(out)
    if t == "concatenation":
        return "".join(_literal(c) for c in node.children)
    raise _TooComplex(f"argument node {t}")


def _command_argv(node: Any) -> list[str]:
    argv: list[str] = []
    for child in node.children:
        if child.type == "variable_assignment":
            for sub in child.children[2:]:
                _literal(sub)  # must be literal; the assignment itself is dropped
            continue
        if child.type == "command_name":
            argv.extend(_literal(c) for c in child.children)
            continue
        if child.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
            _check_redirect(child)
            continue
        argv.append(_literal(child))
    return argv


def _check_redirect(node: Any) -> None:
    if node.type != "file_redirect":
        raise _TooComplex(node.type)
    op = ""
    target: Any = None
    for child in node.children:
        if child.type == "file_descriptor":
            continue
        if not child.is_named:
            op += child.type
        else:
            target = child
    if target is None:
        raise _TooComplex("redirect without target")
    value = _literal(target)
    if op in (">&", "<&") and re.fullmatch(r"\d+|-", value):
        return
    if value in SAFE_REDIRECT_TARGETS:
        return
    if op == "<":
        return
    raise _TooComplex(f"redirect {op} {value}")


def _collect(node: Any, out: list[str]) -> None:
    t = node.type
    if t in ("program", "list", "pipeline"):
        for child in node.children:
            if child.type in _LIST_TOKENS:
                continue
            _collect(child, out)
        return
    if t == "command":
        argv = _command_argv(node)
        if argv:
            out.append(" ".join(argv))
        return
    if t == "redirected_statement":
        body, *redirects = node.children
        for r in redirects:
            _check_redirect(r)
        _collect(body, out)
        return
    if t == "variable_assignment":
        for sub in node.children[2:]:
            _literal(sub)
        return
    raise _TooComplex(t)


def parse_for_security(command: str) -> SecurityParse:
    """``parseForSecurity``: kind ``simple`` with the subcommands, or a fail-safe kind."""
    try:
        parser = _get_parser()
    except ImportError:
        return SecurityParse(PARSE_UNAVAILABLE, (), TREE_SITTER_MISSING)
    tree = parser.parse(command.encode("utf-8", "surrogateescape"))
    root = tree.root_node
    if root.has_error:
        return SecurityParse(PARSE_ERROR, (), "syntax error")
    out: list[str] = []
    try:
        _collect(root, out)
    except _TooComplex as exc:
        return SecurityParse(PARSE_TOO_COMPLEX, (), str(exc))
    return SecurityParse(PARSE_SIMPLE, tuple(out))


# ---------------------------------------------------------------- rule matching


def _rule_body(rule: str) -> str:
    m = re.fullmatch(r"\s*Bash\((.*)\)\s*", rule, flags=re.DOTALL)
    return m.group(1) if m else rule.strip()


def match_wildcard_pattern(rule: str, subcommand: str, syntax: str = "both") -> bool:
    """Whether one rule matches one subcommand (see the module docstring for the syntax)."""
    body = _rule_body(rule)
    if syntax in ("both", "prefix") and body.endswith(":*"):
        prefix = body[:-2]
        return subcommand == prefix or subcommand.startswith(prefix + " ")
    if syntax in ("both", "glob") and "*" in body:
        pattern = "".join(".*" if ch == "*" else re.escape(ch) for ch in body)
        return re.fullmatch(pattern, subcommand, flags=re.DOTALL) is not None
    return subcommand == body


def prepare_permission_matcher(command: str, syntax: str = "both") -> tuple[SecurityParse, Any]:
    """``preparePermissionMatcher``: the parse and a predicate ``rule -> bool`` that is true for
    every rule when the parse is not simple (fail-safe)."""
    parsed = parse_for_security(command)
    if parsed.kind != PARSE_SIMPLE:
        return parsed, lambda _rule: True
    subs = parsed.subcommands
    return parsed, lambda rule: any(match_wildcard_pattern(rule, s, syntax) for s in subs)


# ---------------------------------------------------------------- timeouts and classify


def resolve_timeout_ms(timeout_ms: object, profile: ClaudeBashProfile = CLAUDE_CODE) -> float:
    """No timeout → the default (2 min); an explicit one is used as given (fractions kept) up to the
    maximum (10 min). A non-positive or NaN value counts as no timeout."""
    if (isinstance(timeout_ms, bool) or not isinstance(timeout_ms, (int, float)) or math.isnan(timeout_ms)
            or timeout_ms <= 0):
        return profile.default_timeout_ms
    return min(timeout_ms, profile.max_timeout_ms)


def classify(command: str, rules: list[str], options: dict[str, Any]) -> dict[str, Any]:
    """Everything spec classify says about one command, as JSON-able data.

    ``options``: any ``ClaudeBashProfile`` field, plus ``timeout_ms`` (the call's timeout input).
    Returns ``read_only``, ``concurrency_safe``, ``has_cd``, ``parts`` (segment + operator),
    ``parse_kind``, ``parse_reason``, ``subcommands``, ``matched_rules``, ``permission``
    (``allow`` | ``rule`` | ``ask``), ``timeouts`` and ``auto_background``.
    """
    profile = profile_from_options(options)
    verdict = is_read_only(command, profile)
    parsed, matcher = prepare_permission_matcher(command, profile.wildcard_syntax)
    matched = [r for r in rules if matcher(r)]
    if verdict.read_only and profile.read_only_permission == PERMISSION_ALLOW:
        permission = PERMISSION_ALLOW
    elif matched:
        permission = PERMISSION_RULE
    else:
        permission = PERMISSION_ASK
    base = ""
    if verdict.parts:
        try:
            first_words = words_of(verdict.parts[0].argv_text)
            base = first_words[0] if first_words else ""
        except ValueError:
            base = ""
    eligible = not profile.background_tasks_disabled and base not in profile.auto_background_excluded
    return {
        "profile": profile.name,
        "read_only": verdict.read_only,
        "read_only_reason": verdict.reason,
        "concurrency_safe": verdict.read_only,
        "has_cd": verdict.has_cd,
        "parts": [{"text": p.text, "operator": p.operator} for p in verdict.parts],
        "parse_kind": parsed.kind,
        "parse_reason": parsed.reason,
        "subcommands": list(parsed.subcommands),
        "matched_rules": matched,
        "permission": permission,
        "timeouts": {
            "default_ms": profile.default_timeout_ms,
            "max_ms": profile.max_timeout_ms,
            "effective_ms": resolve_timeout_ms(options.get("timeout_ms") if options else None, profile),
            "auto_background_after_ms": profile.auto_background_after_ms,
        },
        "auto_background": {"eligible": eligible, "after_ms": profile.auto_background_after_ms},
        "max_result_chars": profile.max_result_chars,
    }
