#!/usr/bin/env python3
"""mavis-trash: the recoverable-delete program behind the rm shim (spec bash.trash.1).

Installed as ``<dataDir>/bin/mavis-trash``; the shim ``<dataDir>/shims/rm`` execs it with rm's
arguments. Instead of unlinking, every operand is *moved* into ``<dataDir>/trash/<id>/`` so it can
be restored. Standard library only.

Trash entry layout (the documented metadata format)::

    <dataDir>/trash/<id>/metadata.json      see below
    <dataDir>/trash/<id>/payload/<name>     the moved file, directory or symlink itself

``metadata.json`` = ``{"format": "mavis-trash/1", "id", "name", "original_path" (absolute,
lexical — symlinks in the operand are not resolved), "cwd", "deleted_at" (ISO-8601 UTC),
"deleted_at_ms", "kind" ("file" | "directory" | "symlink" | "other"), "operand" (as given)}``.

rm compatibility: ``-f/--force``, ``-r/-R/--recursive``, ``-d/--dir``, ``-v/--verbose``,
``-i/-I/--interactive[=WHEN]``, ``--preserve-root``, ``--no-preserve-root``, ``--one-file-system``,
``--``, option clusters (``-rf``) and options after operands (GNU permutation). Errors and exit
status follow GNU rm (``rm: cannot remove 'x': No such file or directory``, exit 1; silent with
``-f``; directories need ``-r``, or ``-d`` when empty). ``-i``/``-I`` never prompt — there is no
terminal to answer and every delete is recoverable — but, as in GNU rm, a later ``-i`` cancels an
earlier ``-f`` so missing operands are reported again.

Extra modes (not rm options; only recognised as the first argument):
``mavis-trash --list`` prints one JSON metadata object per line;
``mavis-trash --restore <id> [<destination>]`` moves the entry back to its original path (or to
``destination``) and fails, changing nothing, if that path exists.
"""

from __future__ import annotations

import datetime
import json
import os
import secrets
import shutil
import stat
import sys
import time

PROG = "rm"
TRASH_PROG = "mavis-trash"
METADATA_FORMAT = "mavis-trash/1"
METADATA_FILE = "metadata.json"
PAYLOAD_DIR = "payload"
TRASH_SUBDIR = "trash"
TRY_HELP = "Try 'rm --help' for more information."

HELP = """Usage: rm [OPTION]... [FILE]...
Move each FILE to the recoverable trash instead of deleting it.

  -f, --force           ignore nonexistent files and arguments
  -i, -I, --interactive accepted; never prompts (every delete is recoverable)
  -r, -R, --recursive   move directories and their contents
  -d, --dir             move empty directories
  -v, --verbose         explain what is being done
      --help            display this help and exit

Restore with: mavis-trash --restore <id> [<destination>]; list with: mavis-trash --list
"""

SHORT_FLAGS = {"f": "force", "r": "recursive", "R": "recursive", "d": "dir", "v": "verbose",
               "i": "interactive", "I": "interactive"}
LONG_FLAGS = {"force": "force", "recursive": "recursive", "dir": "dir", "verbose": "verbose",
              "interactive": "interactive", "preserve-root": "noop", "no-preserve-root": "noop",
              "one-file-system": "noop", "help": "help", "version": "version"}


class Usage(Exception):
    pass


def data_dir() -> str:
    """``<dataDir>`` = the parent of the directory this program lives in."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def trash_root() -> str:
    return os.path.join(data_dir(), TRASH_SUBDIR)


def err(msg: str) -> None:
    sys.stderr.write(msg + "\n")


def parse(argv: list[str]) -> tuple[dict[str, bool], list[str]]:
    opts = {"force": False, "recursive": False, "dir": False, "verbose": False, "help": False, "version": False}
    operands: list[str] = []
    only_operands = False
    for arg in argv:
        if only_operands or arg == "-" or not arg.startswith("-"):
            operands.append(arg)
        elif arg == "--":
            only_operands = True
        elif arg.startswith("--"):
            name, _, _value = arg[2:].partition("=")
            matches = [k for k in LONG_FLAGS if k.startswith(name)]
            exact = name in LONG_FLAGS
            if not exact and len(matches) != 1:
                raise Usage(f"{PROG}: unrecognized option '{arg}'" if not matches
                            else f"{PROG}: option '{arg}' is ambiguous")
            _apply(opts, LONG_FLAGS[name if exact else matches[0]])
        else:
            for ch in arg[1:]:
                if ch not in SHORT_FLAGS:
                    raise Usage(f"{PROG}: invalid option -- '{ch}'")
                _apply(opts, SHORT_FLAGS[ch])
    return opts, operands


def _apply(opts: dict[str, bool], flag: str) -> None:
    if flag == "interactive":
        opts["force"] = False
    elif flag != "noop":
        opts[flag] = True


def new_entry_id() -> str:
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S")  # noqa: UP017 - runs on pythons older than 3.11
    return f"{stamp}-{secrets.token_hex(6)}"


def kind_of(st: os.stat_result) -> str:
    if stat.S_ISLNK(st.st_mode):
        return "symlink"
    if stat.S_ISDIR(st.st_mode):
        return "directory"
    if stat.S_ISREG(st.st_mode):
        return "file"
    return "other"


def move_to_trash(operand: str, st: os.stat_result) -> str:
    """Move ``operand`` into a new trash entry; returns the entry id. Raises OSError."""
    cwd = os.getcwd()
    original = os.path.abspath(operand)
    name = os.path.basename(original.rstrip(os.sep)) or "root"
    root = trash_root()
    os.makedirs(root, exist_ok=True)
    entry_id = new_entry_id()
    entry = os.path.join(root, entry_id)
    os.makedirs(os.path.join(entry, PAYLOAD_DIR))
    now = time.time()
    meta = {
        "format": METADATA_FORMAT,
        "id": entry_id,
        "name": name,
        "original_path": original,
        "cwd": cwd,
        "deleted_at": datetime.datetime.fromtimestamp(now, datetime.timezone.utc).isoformat(),  # noqa: UP017 - runs on pythons older than 3.11
        "deleted_at_ms": int(now * 1000),
        "kind": kind_of(st),
        "operand": operand,
    }
    try:
        shutil.move(original, os.path.join(entry, PAYLOAD_DIR, name))
    except BaseException:
        shutil.rmtree(entry, ignore_errors=True)
        raise
    # Metadata last: an entry with metadata always has its payload.
    tmp = os.path.join(entry, METADATA_FILE + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(meta, fh, ensure_ascii=False, indent=2)
        fh.write("\n")
    os.replace(tmp, os.path.join(entry, METADATA_FILE))
    return entry_id


def remove_one(operand: str, opts: dict[str, bool]) -> bool:
    """rm semantics for one operand; True on success (or an ignored missing operand with -f)."""
    base = os.path.basename(operand.rstrip("/"))
    if base in (".", ".."):
        err(f"{PROG}: refusing to remove '.' or '..' directory: skipping '{operand}'")
        return False
    try:
        st = os.lstat(operand)
    except FileNotFoundError:
        if opts["force"]:
            return True
        err(f"{PROG}: cannot remove '{operand}': No such file or directory")
        return False
    except OSError as exc:
        err(f"{PROG}: cannot remove '{operand}': {exc.strerror}")
        return False
    is_dir = stat.S_ISDIR(st.st_mode)
    if is_dir and os.path.abspath(operand) == os.sep:
        err(f"{PROG}: it is dangerous to operate recursively on '/'")
        err(f"{PROG}: use --no-preserve-root to override this failsafe")
        return False
    if is_dir and not opts["recursive"]:
        if not opts["dir"]:
            err(f"{PROG}: cannot remove '{operand}': Is a directory")
            return False
        try:
            if os.listdir(operand):
                err(f"{PROG}: cannot remove '{operand}': Directory not empty")
                return False
        except OSError as exc:
            err(f"{PROG}: cannot remove '{operand}': {exc.strerror}")
            return False
    real = os.path.realpath(operand) if is_dir else None
    trash = os.path.realpath(trash_root())
    if real is not None and (trash == real or trash.startswith(real.rstrip(os.sep) + os.sep)):
        err(f"{PROG}: cannot remove '{operand}': refusing to move the trash into itself")
        return False
    try:
        move_to_trash(operand, st)
    except OSError as exc:
        err(f"{PROG}: cannot remove '{operand}': {exc.strerror or exc}")
        return False
    if opts["verbose"]:
        print(f"removed directory '{operand}'" if is_dir else f"removed '{operand}'")
    return True


def list_entries() -> int:
    root = trash_root()
    if not os.path.isdir(root):
        return 0
    for entry_id in sorted(os.listdir(root)):
        meta_path = os.path.join(root, entry_id, METADATA_FILE)
        try:
            with open(meta_path, encoding="utf-8") as fh:
                meta = json.load(fh)
        except (OSError, ValueError):
            continue
        print(json.dumps(meta, ensure_ascii=False))
    return 0


def restore(entry_id: str, destination: str | None) -> int:
    if not entry_id or "/" in entry_id or entry_id in (".", ".."):
        err(f"{TRASH_PROG}: invalid trash entry id '{entry_id}'")
        return 1
    entry = os.path.join(trash_root(), entry_id)
    try:
        with open(os.path.join(entry, METADATA_FILE), encoding="utf-8") as fh:
            meta = json.load(fh)
    except (OSError, ValueError):
        err(f"{TRASH_PROG}: no trash entry '{entry_id}'")
        return 1
    target = os.path.abspath(destination) if destination else str(meta["original_path"])
    if os.path.lexists(target):
        err(f"{TRASH_PROG}: cannot restore '{entry_id}': '{target}' already exists")
        return 1
    payload = os.path.join(entry, PAYLOAD_DIR, str(meta["name"]))
    try:
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        shutil.move(payload, target)
    except OSError as exc:
        err(f"{TRASH_PROG}: cannot restore '{entry_id}': {exc.strerror or exc}")
        return 1
    shutil.rmtree(entry, ignore_errors=True)
    print(f"restored '{target}'")
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--list"]:
        return list_entries()
    if argv[:1] == ["--restore"]:
        if len(argv) not in (2, 3):
            err(f"{TRASH_PROG}: usage: {TRASH_PROG} --restore <id> [<destination>]")
            return 1
        return restore(argv[1], argv[2] if len(argv) == 3 else None)
    try:
        opts, operands = parse(argv)
    except Usage as exc:
        err(str(exc))
        err(TRY_HELP)
        return 1
    if opts["help"]:
        sys.stdout.write(HELP)
        return 0
    if opts["version"]:
        print(f"{TRASH_PROG} (recoverable rm) 1")
        return 0
    if not operands:
        if opts["force"]:
            return 0
        err(f"{PROG}: missing operand")
        err(TRY_HELP)
        return 1
    ok = True
    for operand in operands:
        ok = remove_one(operand, opts) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
