"""Generated workspaces and calls for the search tools: grep (pi's ``grep``; the wrapper's grep in
``content`` mode) and glob (pi's ``find``; the wrapper's ``glob``).

Input classes (each case's ``tag``): trees of nested, hidden (``.name``) and ignored directories
(``node_modules``), files with text of every class of ``generate``, CRLF, BOM, invalid UTF-8, long
lines, binary files (NUL bytes), empty files, symlinks (to files, to directories, dangling);
``.gitignore`` files (root and nested, negations, anchored and directory patterns) in git
repositories and outside them, ``.ignore`` files; patterns (words present in the files, regexes,
invalid regexes, literal text with regex characters, case-folded), globs (``*.py``,
``**/*.ts``, ``src/**``, brace sets, negations, path globs), path variants (the root, a
subdirectory, a file, missing, absolute, ``@``), context and limits.

A limit that would cut a search of several files is not drawn: ripgrep and fd walk directories in
parallel, so which matches come first differs from run to run (in pi itself); small limits are
drawn where the search has one file (grep) or one possible result (find).
"""

from __future__ import annotations

from typing import Any

from harness.fuzz.execute import ROOT_TOKEN
from harness.fuzz.generate import TEXT_CLASSES, Gen, malformed_object

DIRS = ("src", "src/lib", "docs", ".hidden", "node_modules/pkg", "build", "sub dir", "名称", "logs")
NAMES = ("main.py", "util.ts", "README.md", "notes.txt", "data.json", "app.log", ".env", ".config",
         "test.spec.ts", "名称.txt", "a b.txt", "keep.log", "image.bin", "Makefile", "x.py")
GITIGNORE_LINES = ("*.log", "!keep.log", "build/", "/notes.txt", "node_modules", "*.bin", "docs/*.md",
                   ".hidden/", "sub dir/", "# comment", "", "src/lib/", "*.txt", "x.py")
WORDS = ("alpha", "beta", "TODO", "return", "名称", "café", "x = 1", "def", "import", "FIXME")
REGEXES = ("al.ha", "^beta", r"\bx\b", "[A-Z]{3,}", "a|b", r"\d+", "名.", "(", "[", "a{2", r"\w+\s=", ".*",
           "(?i)todo", r"\p{Han}", "^$", "$")
GLOBS = ("*.py", "**/*.ts", "src/**", "*.{py,md}", "!*.md", "*.txt", "**/*.log", "*", ".*", "src/*.py",
         "[a-m]*", "*.TXT", "名称*", "")
FIND_PATTERNS = ("*.py", "*.txt", "**/*.md", "src/*", "src/**/*.py", "*", ".*", "**", "*.{py,ts}", "[ab]*",
                 "*.log", "名称*", "**/lib/*", "sub dir/*", "*.TXT", "", "/", "build/**", "node_modules/**",
                 "*/", "README.md")


def _line(g: Gen, cls: str) -> str:
    r = g.r
    words = [r.choice(WORDS) if r.random() < 0.5 else g.word(cls) for _ in range(r.randint(0, 5))]
    return " ".join(words)


def file_bytes(g: Gen, name: str) -> tuple[bytes, str]:
    """Contents for a tree file and their shape."""
    r = g.r
    if name.endswith(".bin") or r.random() < 0.05:
        return bytes(r.randrange(256) for _ in range(r.randint(1, 64))) + b"\0alpha\0", "binary"
    cls = r.choice(TEXT_CLASSES)
    shape = r.choice(("plain", "plain", "plain", "crlf", "cr", "bom", "invalid-utf8", "empty", "long-line",
                      "no-final-eol", "mixed-eol"))
    if shape == "empty":
        return b"", shape
    lines = [_line(g, cls) for _ in range(r.randint(1, 9))]  # at most 90 lines a tree: under grep's 100
    if shape == "long-line":
        lines.insert(r.randrange(len(lines) + 1), "alpha " + "L" * r.choice((499, 500, 501, 700)) + " beta")
    text = "\n".join(lines) + ("" if shape == "no-final-eol" else "\n")
    return g.encode(text, shape), f"{cls}/{shape}"


def make_tree(g: Gen) -> tuple[list[tuple[str, bytes]], list[str], list[tuple[str, str]], bool, list[str]]:
    """(files, empty dirs, symlinks, git, tags)."""
    r = g.r
    tags: list[str] = []
    files: dict[str, bytes] = {}
    for _ in range(r.randint(1, 9)):
        directory = r.choice(("",) * 4 + DIRS)
        name = r.choice(NAMES)
        path = f"{directory}/{name}" if directory else name
        data, shape = file_bytes(g, name)
        files[path] = data
        tags.append(shape.split("/")[-1])
    if r.random() < 0.45:
        tags.append("gitignore")
        lines = r.sample(GITIGNORE_LINES, r.randint(1, 4))
        files[".gitignore"] = ("\n".join(lines) + "\n").encode()
        if r.random() < 0.3:
            sub = r.choice(("src", "docs", "sub dir"))
            files[f"{sub}/.gitignore"] = (r.choice(GITIGNORE_LINES) + "\n").encode()
    if r.random() < 0.1:
        tags.append("ignore-file")
        files[".ignore"] = (r.choice(GITIGNORE_LINES) + "\n").encode()
    git = r.random() < 0.25
    if git:
        tags.append("git")
    links: list[tuple[str, str]] = []
    if r.random() < 0.12:
        tags.append("symlink")
        target = r.choice((*files, "src", "missing.txt", "/etc"))
        links.append((r.choice(("link", "src/link.txt", "docs/ln")), target))
    dirs = [d for d in ("empty", "docs/empty") if r.random() < 0.1]
    if any(p.split("/")[-1].startswith(".") or "/." in p for p in files):
        tags.append("hidden")
    return sorted(files.items()), dirs, links, git, sorted(set(tags))


def _path_arg(g: Gen, files: list[tuple[str, bytes]], single: bool) -> tuple[Any, bool]:
    """(path argument, whether it names one file)."""
    r = g.r
    choice = r.choices(("absent", "dot", "dir", "file", "missing", "abs", "at", "empty", "file-abs"),
                       (30, 10, 20, 15 if single else 0, 5, 6, 4, 3, 4 if single else 0))[0]
    g.tags.append(f"path:{choice}")
    dirs = sorted({p.rsplit("/", 1)[0] for p, _ in files if "/" in p}) or ["src"]
    some_file = r.choice(files)[0] if files else "a.txt"
    return {
        "absent": None, "dot": ".", "dir": r.choice(dirs), "file": some_file, "missing": "missing-dir",
        "abs": ROOT_TOKEN, "at": "@" + r.choice(dirs), "empty": "", "file-abs": f"{ROOT_TOKEN}/{some_file}",
    }[choice], choice in ("file", "file-abs")


def gen_grep(g: Gen) -> tuple[Any, list[tuple[str, bytes]], str, dict[str, Any]]:
    r = g.r
    files, dirs, links, git, tags = make_tree(g)
    kind = r.choices(("word", "regex", "literal", "ignore-case"), (45, 30, 15, 10))[0]
    g.tags.append(f"pattern:{kind}")
    if kind == "regex":
        pattern = r.choice(REGEXES)
    elif kind == "literal":
        pattern = r.choice(("x = 1", "(", "a.b", "[x]", "$", "名称", "alpha beta"))
    else:
        pattern = r.choice(WORDS)
    args: dict[str, Any] = {"pattern": g.string_arg(lambda: pattern)}
    path, single = _path_arg(g, files, True)
    if path is not None:
        args["path"] = path
    if r.random() < 0.35:
        args["glob"] = g.string_arg(lambda: r.choice(GLOBS))
    if kind == "literal" or r.random() < 0.1:
        args["literal"] = True if r.random() < 0.9 else r.choice((False, "true"))
    if kind == "ignore-case" or r.random() < 0.1:
        args["ignoreCase"] = True if r.random() < 0.9 else r.choice((False, 1))
    present, context = g.number_arg(lambda: r.choice((0, 1, 2, 3, 1.5)))
    if present and r.random() < 0.5:
        args["context"] = context
    if single or r.random() < 0.3:
        present, limit = g.number_arg(lambda: r.choice((1, 2, 3, 1000)) if single else 1000)
        if present and (single or (isinstance(limit, (int, float)) and not isinstance(limit, bool) and limit >= 1000)):
            args["limit"] = limit
    args = malformed_object(g, args, ("pattern",))
    return args, files, "+".join(tags) or "tree", {"dirs": dirs, "links": links, "git": git}


def gen_glob(g: Gen) -> tuple[Any, list[tuple[str, bytes]], str, dict[str, Any]]:
    r = g.r
    files, dirs, links, git, tags = make_tree(g)
    exact = r.random() < 0.1
    if exact and files:
        pattern = r.choice(files)[0].rsplit("/", 1)[-1]
        g.tags.append("pattern:exact")
    else:
        pattern = r.choice(FIND_PATTERNS)
    args: dict[str, Any] = {"pattern": g.string_arg(lambda: pattern)}
    path, _ = _path_arg(g, files, False)
    if path is not None:
        args["path"] = path
    # every file, directory and link, with room; a git repository adds its .git tree (HEAD, index,
    # logs, refs, objects: a few entries per file), which fd lists too, so a limit of "entries"
    # would cut a walk of several directories there (seed 20261203, case 7914: the 22 shown
    # depended on fd's walk order)
    entries = len(files) + len(dirs) + len(links) + 12 + (100 + 4 * (len(files) + len(dirs)) if git else 0)
    if exact and r.random() < 0.5:
        # only where one entry has that name: with two, a limit of 1 would keep whichever fd's
        # parallel walk reaches first (seed 20261203, case 9078: README.md and .hidden/README.md)
        named = [p for p in (*(f for f, _ in files), *dirs, *(link for link, _ in links))
                 if p.rsplit("/", 1)[-1] == pattern]
        if len(named) == 1:
            args["limit"] = 1
    elif r.random() < 0.25:
        args["limit"] = r.choice((entries, 1000, entries + 50))
    elif r.random() < 0.04:  # malformed: refused by validation (a number would cut a parallel walk)
        g.tags.append("malformed")
        args["limit"] = r.choice(("abc", None, [2], {"n": 2}, True, "", "1e3x"))
    args = malformed_object(g, args, ("pattern",))
    return args, files, "+".join(tags) or "tree", {"dirs": dirs, "links": links, "git": git}
