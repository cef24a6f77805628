#!/usr/bin/env python3
"""An example toolproof adapter in Python: the tool protocol on stdin/stdout, three tools.

Copy it into your repository (``toolproof init`` does) and replace the bodies of ``tool_read``,
``tool_write`` and ``tool_bash`` with calls into your own tool layer; add the other tools
(``edit``, ``grep``, ``glob``) to ``TOOLS`` as you wire them up. Scenarios that call a tool missing from
``TOOLS`` are skipped with the reason, never failed.

Protocol (JSON Schema: ``tools_impl/protocol/protocol.schema.json`` in toolproof): one JSON object
per line each way, answered by ``id``. A request is ``{"id", "op", …}``; the answer is
``{"id", "ok": true, "result": …}`` or ``{"id", "ok": false, "error": {"message", "kind"}}``.
This adapter answers ``hello``, ``workspace``, ``call`` and ``shutdown``; anything else is a
``protocol`` error. A tool that fails raises ``ToolError``: its message is what the model sees.

Run it: ``toolproof run toolproof: --backend "cmd:python3 adapter.py"``.
Standard library only; Python 3.8 or later.
"""

import json
import os
import subprocess
import sys

# -- your own package ----------------------------------------------------------------------------
# This file runs as a script (``python toolproof/adapter.py``), so Python puts its own directory,
# not your repository, first on sys.path, and ``import mypackage`` would fail. PROJECT_ROOT is the
# directory above this file's (your repository's root when this is toolproof/adapter.py); it and
# its src/ (a src layout) are put on sys.path, so your code imports as it does in your own tests:
#     from mypackage.tools import read_file
# In the docker job the same holds: ``toolproof images adapter --project .`` copies the repository
# into the image as /opt/adapter/ (this file becomes /opt/adapter/toolproof/adapter.py). What your
# code needs from PyPI must be in the image as well: ``--base`` an image that has it (toolproof's
# default base has python3 and its standard library only). Installed packages (``pip install -e .``)
# need none of this.
PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _path in (os.path.join(PROJECT_ROOT, "src"), PROJECT_ROOT):
    if os.path.isdir(_path) and _path not in sys.path:
        sys.path.insert(1, _path)

# The name this implementation reports in ``hello``: runs, reports and the baseline's
# ``implementation:`` carry it (``toolproof init`` sets it to your project's name).
IMPLEMENTATION = "example-python-adapter"
VERSION = "0.1.0"
DEFAULT_LIMIT = 2000  # lines a read returns when no limit is given
EMPTY_FILE_TEXT = "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"


class ToolError(Exception):
    """A tool failure: the message is the error text the model would see."""


class Workspace:
    def __init__(self, root):
        self.root = root

    def path(self, rel):
        return rel if os.path.isabs(rel) else os.path.join(self.root, rel)


# -- tools: replace these with calls into your own implementation ------------------------------

def tool_read(ws, args):
    path = args["path"]
    full = ws.path(path)
    if not os.path.exists(full):
        raise ToolError(f"ENOENT: no such file or directory, access '{full}'")
    if not os.path.isfile(full):  # a FIFO or a device would block or never end
        return {"content": [{"type": "text", "text": f"Cannot read '{full}': not a regular file."}],
                "details": {}, "is_error": True}
    with open(full, "rb") as fh:
        text = fh.read().decode("utf-8", "replace")
    if text == "":
        return {"content": [{"type": "text", "text": EMPTY_FILE_TEXT}], "details": {}, "is_error": False}
    lines = text.split("\n")  # a final newline leaves an empty last line, counted but not shown
    total = len(lines)
    final_newline = lines[-1] == ""
    if final_newline:
        lines.pop()
    offset = int(args.get("offset") or 1)
    limit = int(args.get("limit") or DEFAULT_LIMIT)
    chosen = lines[offset - 1:offset - 1 + limit]
    out = "\n".join(f"{n:6d}→{line}" for n, line in enumerate(chosen, offset))
    rest = total - (offset - 1 + len(chosen))
    if rest > 1 or (rest == 1 and not final_newline):
        out += f"\n\n[{rest} more lines in file. Use offset={offset + len(chosen)} to continue.]"
    elif final_newline:
        out += "\n"
    return {"content": [{"type": "text", "text": out}], "details": {}, "is_error": False}


def tool_write(ws, args):
    path, content = args["path"], args["content"]
    full = ws.path(path)
    existed = os.path.exists(full)
    os.makedirs(os.path.dirname(full) or ".", exist_ok=True)
    data = content.encode("utf-8")
    with open(full, "wb") as fh:
        fh.write(data)
    text = f"Successfully wrote {len(data)} bytes to {path}" + (" (overwrote existing file)" if existed else "")
    details = {"created": not existed, "bytes_written": len(data), "encoding": "utf-8", "bom": False}
    return {"content": [{"type": "text", "text": text}], "details": details, "is_error": False}


def tool_bash(ws, args):
    if os.name == "nt":  # on Windows the bash tool runs PowerShell 7, with UTF-8 output
        argv = ["pwsh", "-NoProfile", "-NonInteractive", "-Command",
                "[Console]::OutputEncoding = [Text.Encoding]::UTF8; " + args["command"]]
    else:
        argv = ["bash", "-c", args["command"]]
    try:
        proc = subprocess.run(argv, cwd=ws.root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=float(args.get("timeout") or 120))
    except subprocess.TimeoutExpired:
        raise ToolError(f"Command timed out after {args.get('timeout') or 120} seconds") from None
    out = proc.stdout.decode("utf-8", "replace") or "(no output)"
    if proc.returncode > 0:
        return {"content": [{"type": "text", "text": f"{out}\n\nCommand exited with code {proc.returncode}"}],
                "details": {}, "is_error": True}
    return {"content": [{"type": "text", "text": out}], "details": {}, "is_error": False}


TOOLS = {"read": tool_read, "write": tool_write, "bash": tool_bash}


# -- protocol ------------------------------------------------------------------------------------

def hello():
    return {
        "protocol": 1,
        "implementation": IMPLEMENTATION,
        "version": VERSION,
        "surface": "minimax",
        "tools": sorted(TOOLS),
        "ops": ["hello", "workspace", "call", "shutdown"],
        "patches": [],
        # What this layer is (toolproof's docs/scenario-format.md, "Behaviour, wording and
        # features"): the dialects whose exact wording it speaks (none: only behaviour is judged)
        # and the optional features it has (none: scenarios needing one skip, with the reason).
        # List them as you add them, e.g. "features": ["fuzzy-edit"].
        "dialects": [],
        "features": [],
        "capabilities": {"os": "windows" if os.name == "nt" else "linux",
                         "shell": "pwsh" if os.name == "nt" else "bash",
                         "symlinks": os.name != "nt", "fifo": hasattr(os, "mkfifo"),
                         "case_sensitive_fs": os.name != "nt",
                         # scenarios about permissions skip under root, where they cannot hold
                         "root": hasattr(os, "geteuid") and os.geteuid() == 0},
    }


def handle(state, req):
    """One request → (result, None) or (None, error)."""
    op = req.get("op")
    if op == "hello":
        return hello(), None
    if op == "workspace":
        state["ws"] = Workspace(os.path.abspath(req["root"]))
        return {"root": state["ws"].root}, None
    if op == "call":
        tool = TOOLS.get(req.get("tool"))
        if tool is None:
            return None, {"message": f"unknown tool {req.get('tool')!r}", "kind": "protocol"}
        try:
            return tool(state["ws"], req.get("args") or {}), None
        except ToolError as exc:
            return None, {"message": str(exc), "kind": "tool"}
        except (KeyError, TypeError, ValueError) as exc:
            return None, {"message": f"invalid arguments: {exc}", "kind": "validation"}
    if op == "shutdown":
        return {}, None
    return None, {"message": f"unsupported op {op!r}", "kind": "protocol"}


def main():
    state = {"ws": Workspace(os.getcwd())}
    for line in sys.stdin:
        try:
            req = json.loads(line)
        except ValueError as exc:
            req, result, error = {}, None, {"message": f"not JSON: {exc}", "kind": "protocol"}
        else:
            try:
                result, error = handle(state, req)
            except Exception as exc:  # an adapter bug must not kill the adapter
                result, error = None, {"message": f"internal error: {type(exc).__name__}: {exc}", "kind": "internal"}
        answer = {"id": req.get("id"), "ok": error is None}
        answer.update({"result": result} if error is None else {"error": error})
        sys.stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
        sys.stdout.flush()
        if req.get("op") == "shutdown":
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
