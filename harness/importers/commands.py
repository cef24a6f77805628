"""What a recorded shell command does, as far as a replay must know (docs/importers.md, "Bash
commands"): whether it reaches outside the workspace (``~``, absolute paths, ``cd ..``) or the
network (``curl``, ``git push``, ``npm install``…), whether it is bound to the recording's
platform (BSD ``sed -i ''``, ``open``, ``pbcopy``…), which programs it needs, which files it may
change, and — for the simple reading commands (``cat F``, ``sed -n 'A,Bp' F``, ``head``, ``nl``)
— what its output says a file contained. Pure functions over the command text.

The analysis is deliberately lexical: it splits the command into simple commands (on ``;``,
``&&``, ``||``, ``|`` and newlines), drops leading variable assignments and wrappers (``sudo``,
``env``, ``time``…), and looks at each command's words. It errs on the side of caution: a
command it cannot split is treated as touching everything.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

REDIRECT_RE = re.compile(r"^(?:\d*>>?|\d*<|&>|>&|\d*>&\d*)")
WRAPPERS = ("sudo", "env", "time", "nohup", "nice", "command", "exec", "timeout", "xargs", "stdbuf")
SHELL_WORDS = frozenset({
    "cd", "echo", "printf", "test", "[", "[[", "]]", "]", "true", "false", "export", "set", "unset", "pwd", "exit",
    "source", ".", "alias", "read", "eval", "type", "shift", "local", "return", "if", "then", "else", "elif", "fi",
    "for", "do", "done", "while", "until", "case", "esac", "function", "trap", "wait", "umask", "ulimit",
    "declare", "let", "builtin", "hash", "jobs", "fg", "bg", "kill", "{", "}", "(", ")", "!", "in", "select",
    ":", "break", "continue", "getopts",
})
# Programs every replay host has (the container image's bash, coreutils, procps, git, python3): never
# checked before a step runs.
BASE_PROGRAMS = frozenset({
    "sh", "bash", "cat", "ls", "head", "tail", "wc", "sort", "uniq", "cut", "tr", "tee", "grep", "egrep", "fgrep",
    "sed", "awk", "find", "xargs", "mkdir", "rmdir", "rm", "cp", "mv", "ln", "touch", "chmod", "chown", "stat",
    "dirname", "basename", "realpath", "readlink", "date", "sleep", "env", "printenv", "diff", "cmp", "comm",
    "paste", "join", "nl", "od", "seq", "yes", "expr", "tar", "gzip", "gunzip", "zcat", "du", "df", "which",
    "whoami", "id", "uname", "hostname", "md5sum", "sha256sum", "sha1sum", "base64", "split", "fold", "fmt",
    "tac", "mktemp", "timeout", "nproc", "ps", "pgrep", "pkill", "git", "python3", "install", "truncate",
    "shuf", "csplit", "pr", "numfmt", "sum", "cksum", "tsort", "ptx", "dd", "sync", "nohup", "nice", "stdbuf",
})
# (program, first argument or None for any) -> why it needs the network.
NETWORK: dict[tuple[str, str | None], str] = {
    **{(p, None): "network client" for p in ("curl", "wget", "ssh", "scp", "sftp", "ftp", "telnet", "nc", "ncat",
                                             "rsync", "gh", "http", "https", "aria2c", "ping", "dig", "nslookup")},
    **{("git", sub): "talks to a git remote" for sub in ("push", "pull", "fetch", "clone", "ls-remote", "remote-update")},
    **{(pm, sub): "installs packages from a registry" for pm in ("npm", "pnpm", "yarn", "bun")
       for sub in ("install", "i", "ci", "add", "update", "upgrade", "publish", "login", "audit", "outdated", "dlx")},
    ("npx", None): "fetches packages from a registry",
    ("bunx", None): "fetches packages from a registry",
    **{(pm, sub): "installs packages from a registry" for pm in ("pip", "pip3", "pipx", "poetry", "uv", "gem",
                                                                  "cargo", "go", "brew", "apt", "apt-get", "yum",
                                                                  "dnf", "apk", "conda", "mamba", "composer",
                                                                  "bundle", "mix", "dotnet")
       for sub in ("install", "add", "get", "update", "upgrade", "publish", "sync", "lock", "restore", "deps.get")},
    **{("docker", sub): "talks to a container registry or engine" for sub in ("pull", "push", "run", "build", "login")},
}
# Commands whose result depends on the project's installed dependencies (excluded node_modules…).
NEEDS_DEPENDENCIES: dict[str, tuple[str, str]] = {
    "npm": ("node_modules", "npm scripts run the project's installed packages"),
    "pnpm": ("node_modules", "pnpm scripts run the project's installed packages"),
    "yarn": ("node_modules", "yarn scripts run the project's installed packages"),
    "bun": ("node_modules", "bun scripts run the project's installed packages"),
}
# Commands and forms that exist only on one platform (macOS: BSD tools and Apple programs).
PLATFORM_PROGRAMS: dict[str, tuple[str, str]] = {
    "open": ("macos", "macOS open"), "pbcopy": ("macos", "macOS pbcopy"), "pbpaste": ("macos", "macOS pbpaste"),
    "osascript": ("macos", "macOS osascript"), "defaults": ("macos", "macOS defaults"),
    "brew": ("macos", "Homebrew"), "mdfind": ("macos", "macOS mdfind"), "xattr": ("macos", "macOS xattr"),
    "diskutil": ("macos", "macOS diskutil"), "launchctl": ("macos", "macOS launchctl"),
    "sw_vers": ("macos", "macOS sw_vers"), "say": ("macos", "macOS say"), "ditto": ("macos", "macOS ditto"),
    "cmd": ("windows", "Windows cmd"), "cmd.exe": ("windows", "Windows cmd"),
    "powershell": ("windows", "Windows PowerShell"), "powershell.exe": ("windows", "Windows PowerShell"),
    "where": ("windows", "Windows where"), "where.exe": ("windows", "Windows where"),
    "robocopy": ("windows", "Windows robocopy"), "xcopy": ("windows", "Windows xcopy"),
}
BSD_FORMS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?:^|\s)sed\s+(?:-[a-zA-Z]*\s+)*-i\s*(?:''|\"\")"), "BSD sed -i '' (GNU sed reads '' as its script)"),
    (re.compile(r"(?:^|\s)sed\s+(?:-[a-zA-Z]*\s+)*-i\s+-e\b"), "BSD sed -i -e (GNU sed makes a backup named '-e')"),
    (re.compile(r"(?:^|\s)stat\s+-f\b"), "BSD stat -f"),
    (re.compile(r"(?:^|\s)date\s+-j\b"), "BSD date -j"),
    (re.compile(r"(?:^|\s)(?:readlink|realpath)\s+-f\b.*\bUsers/"), "macOS paths"),
    (re.compile(r"(?:^|[\s'\"=])/(?:Users|Volumes|Applications|Library|System)/"), "macOS paths"),
)
WINDOWS_PATH_RE = re.compile(r"(?:^|[\s'\"=])[A-Za-z]:[\\/]")
# Paths outside the workspace a command may name without reaching out of it.
HARMLESS_ABSOLUTE = ("/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/zero", "/dev/urandom",
                     "/dev/random", "/dev/tty", "/dev/fd/")
PROGRAM_DIRS = ("/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/")
CLAUDE_TASK_OUTPUT_RE = re.compile(r"/(?:private/)?tmp/claude-[^\s'\"]*")
# Commands that may rewrite any file of the workspace (formatters, git, build tools).
BROAD_MUTATORS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\bgit\s+(?:checkout|reset|restore|stash|merge|rebase|apply|am|cherry-pick|revert|pull|switch|clean|mv|rm)\b"),
    re.compile(r"\b(?:prettier|black|isort|gofmt|rustfmt|autopep8|yapf|clang-format|eslint|ruff|rubocop|dprint|biome)\b"),
    re.compile(r"\b(?:cargo\s+fmt|go\s+fmt|mix\s+format|npm\s+run|yarn\s+\w+|pnpm\s+\w+|make|cmake|patch|perl\s+-[a-z]*i)\b"),
    re.compile(r"\bfind\b.*-(?:exec|delete)\b"),
    re.compile(r"\bsed\s+(?:-[a-zA-Z]*\s+)*-i"),
)
PATHLIKE_RE = re.compile(r"^[\w.@+~-][\w./@+~-]*$")
SED_RANGE_RE = re.compile(r"^(\d+)(?:,(\d+|\$))?p$")


def _pieces(command: str) -> list[str] | None:
    """``command`` cut at the separators outside quotes (``;``, ``&&``, ``||``, ``|``, ``&``, newlines);
    None when a quote is not closed."""
    out: list[str] = []
    cur: list[str] = []
    quote = ""
    i, n = 0, len(command)
    while i < n:
        ch = command[i]
        if quote:
            cur.append(ch)
            if ch == "\\" and quote == '"' and i + 1 < n:
                cur.append(command[i + 1])
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
            cur.append(ch)
        elif ch == "\\" and i + 1 < n:
            cur.extend((ch, command[i + 1]))
            i += 1
        elif ch in ";\n" or (ch == "&" and command[i - 1:i] not in ("<", ">") and command[i + 1:i + 2] != ">") \
                or ch == "|":
            if ch in "&|" and command[i + 1:i + 2] == ch:
                i += 1
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    if quote:
        return None
    out.append("".join(cur))
    return out


def split_commands(command: str) -> list[list[str]] | None:
    """The simple commands of ``command``, each as its words (assignments, redirections and
    wrappers dropped, the program first); None when the command cannot be split (unbalanced
    quotes, here-documents, substitutions the lexer cannot follow)."""
    if "<<" in command or "`" in command or "$(" in command:
        return None
    pieces = _pieces(command)
    if pieces is None:
        return None
    out: list[list[str]] = []
    for part in pieces:
        part = part.strip().lstrip("(").rstrip(")").strip()
        if not part:
            continue
        try:
            words = shlex.split(part, comments=True)
        except ValueError:
            return None
        words = _drop_redirections(words)
        while words and (re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]) or words[0] in WRAPPERS):
            wrapper = words.pop(0)
            if wrapper == "timeout" and words and re.fullmatch(r"[\d.]+[smhd]?", words[0]):
                words.pop(0)
            while wrapper in ("sudo", "env", "nice", "stdbuf") and words and words[0].startswith("-"):
                words.pop(0)
        if words:
            out.append(words)
    return out


def _drop_redirections(words: list[str]) -> list[str]:
    out: list[str] = []
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        m = REDIRECT_RE.match(w)
        if m:
            if m.end() == len(w):
                skip = True  # the target is the next word
            continue
        out.append(w)
    return out


def redirect_targets(command: str) -> list[str]:
    """Files the command writes through ``>``/``>>`` redirections (relative or absolute)."""
    targets: list[str] = []
    for m in re.finditer(r"(?<![<>&\d])\d?>>?\s*([^\s;&|<>()]+)", command):
        t = m.group(1).strip("'\"")
        if t and not t.startswith("&"):
            targets.append(t)
    return targets


@dataclass(frozen=True)
class CommandFacts:
    """What a replay must know of one shell command (see the module docstring)."""

    outside: tuple[str, ...] = ()  # why it reaches outside the workspace
    network: str = ""  # why it needs the network ("curl: network client")
    platform: tuple[str, str] | None = None  # (os, why) when bound to a platform
    programs: tuple[str, ...] = ()  # programs to find on the replay host (beyond BASE_PROGRAMS)
    dependencies: tuple[str, str] | None = None  # (directory, why) it needs installed
    task_output: str = ""  # a Claude Code background-task output file it reads
    unsplittable: bool = False
    broad_mutation: bool = False
    words: tuple[str, ...] = ()  # every word of every simple command
    commands: tuple[tuple[str, ...], ...] = ()  # the simple commands, program first

    @property
    def contained_only(self) -> bool:
        return bool(self.outside)


def analyse(command: str) -> CommandFacts:
    """The facts of ``command`` (the recorded command with the workspace root already made
    relative: any absolute path left is outside the workspace)."""
    parts = split_commands(command)
    outside: list[str] = []
    network = ""
    platform: tuple[str, str] | None = None
    programs: list[str] = []
    deps: tuple[str, str] | None = None
    words: list[str] = []
    task = CLAUDE_TASK_OUTPUT_RE.search(command)
    for pattern, why in BSD_FORMS:
        if pattern.search(command):
            platform = ("macos", why)
            break
    if platform is None and WINDOWS_PATH_RE.search(command):
        platform = ("windows", "Windows paths")
    for cmd in parts or []:
        prog = cmd[0]
        name = prog.rsplit("/", 1)[-1]
        words.extend(cmd)
        if platform is None and name in PLATFORM_PROGRAMS and not (name == "open" and len(cmd) == 1):
            platform = PLATFORM_PROGRAMS[name]
        sub = next((w for w in cmd[1:] if not w.startswith("-")), None)
        for key in ((name, sub), (name, None)):
            if not network and key in NETWORK:
                network = f"{name}{' ' + str(sub) if key[1] else ''}: {NETWORK[key]}"
        if name in NEEDS_DEPENDENCIES and sub not in ("--version", "-v", "version", None) and deps is None:
            deps = NEEDS_DEPENDENCIES[name]
        if name not in SHELL_WORDS and name not in BASE_PROGRAMS and not name.startswith(("./", "$")) \
                and "/" not in prog and name not in programs and re.fullmatch(r"[\w.+-]+", name):
            programs.append(name)
        if name == "cd" and len(cmd) > 1 and cmd[1] == "-":
            outside.append("cd - (the previous directory)")
        for w in cmd:
            outside.extend(_outside_word(w, prog))
    if re.search(r"(?:^|[\s;&|(])sudo\s", command):
        outside.append("sudo (runs as another user)")
    if parts is None:
        for w in command.split():
            outside.extend(_outside_word(w.strip("'\"();"), ""))
    for t in redirect_targets(command):
        outside.extend(_outside_word(t, ""))
    return CommandFacts(outside=tuple(dict.fromkeys(outside)), network=network, platform=platform,
                        programs=tuple(programs), dependencies=deps, task_output=task.group(0) if task else "",
                        unsplittable=parts is None,
                        broad_mutation=parts is None or any(p.search(command) for p in BROAD_MUTATORS),
                        words=tuple(words), commands=tuple(tuple(c) for c in parts or []))


def _outside_word(word: str, program: str) -> list[str]:
    if word.startswith("~") or "$HOME" in word or "${HOME}" in word:
        return [f"the home directory ({word})"]
    if word.startswith("../") or word == ".." or "/../" in word:
        return [f"a path above the workspace ({word})"]
    for piece in word.split("="):
        if piece.startswith("/") and len(piece) > 1:
            if piece.startswith(HARMLESS_ABSOLUTE) or (piece == program and piece.startswith(PROGRAM_DIRS)):
                continue
            return [f"an absolute path outside the workspace ({piece})"]
    return []


def mentioned_paths(facts: CommandFacts, known: set[str]) -> set[str]:
    """The workspace paths of ``known`` the command names (by relative path or base name)."""
    names: set[str] = set()
    for w in facts.words:
        w = w.strip("'\"")
        if w.startswith("./"):
            w = w[2:]
        if not PATHLIKE_RE.match(w):
            continue
        names.add(w.rstrip("/"))
    hits = set()
    for path in known:
        base = path.rsplit("/", 1)[-1]
        if path in names or base in names or any(n and path.startswith(n + "/") for n in names if n != "."):
            hits.add(path)
    return hits


@dataclass(frozen=True)
class ShownFile:
    """What a reading command's output shows of one file: ``lines`` from line ``start``; ``whole``
    when the output is the file's whole content (``text`` then holds it exactly)."""

    path: str
    start: int
    lines: tuple[str, ...]
    whole: bool = False
    text: str = ""


def shown_file(command: str, output: str) -> ShownFile | None:
    """What a successful simple reading command (``cat F``, ``sed -n 'A,Bp' F``, ``head -n N F``,
    ``nl -ba F``) shows of the one file it reads, or None for any other command."""
    parts = split_commands(command)
    if not parts or len(parts) != 1:
        return None
    cmd = parts[0]
    name = cmd[0].rsplit("/", 1)[-1]
    args = cmd[1:]
    if name == "cat" and len(args) == 1 and not args[0].startswith("-"):
        return ShownFile(args[0], 1, tuple(_lines(output)), True, output)
    if name == "sed" and len(args) == 3 and args[0] == "-n":
        m = SED_RANGE_RE.match(args[1])
        if m:
            start = int(m.group(1))
            return ShownFile(args[2], start, tuple(_lines(output)))
    if name == "head" and (len(args) == 1 or (len(args) == 2 and re.fullmatch(r"-\d+", args[0]))
                           or (len(args) == 3 and args[0] == "-n" and args[1].isdigit())):
        return ShownFile(args[-1], 1, tuple(_lines(output)))
    if name == "nl" and args[:1] == ["-ba"] and len(args) == 2:
        lines = []
        for ln in _lines(output):
            m = re.match(r"^\s*\d+\t(.*)$", ln)
            if not m:
                return None
            lines.append(m.group(1))
        return ShownFile(args[1], 1, tuple(lines))
    return None


def _lines(text: str) -> list[str]:
    if not text:
        return []
    body = text[:-1] if text.endswith("\n") else text
    return body.split("\n")
