"""The ``cmd:`` backend: any command line that speaks the tool protocol on stdin/stdout (a foreign
implementation or an adapter on the host). The harness extracts each workspace on the host into a
temp dir and sends the ``workspace`` op without an archive; final files are read from the host."""

from __future__ import annotations

import shlex
import sys

from harness.backends.process import HELLO_DEADLINE_S, ProcessBackend
from harness.errors import UsageError

PREFIX = "cmd:"
PYTHON_PLACEHOLDER = "{python}"


class CmdBackend(ProcessBackend):
    name = "cmd"

    def __init__(self, command: str, *, hello_deadline_s: float = HELLO_DEADLINE_S) -> None:
        # ``{python}`` stands for the interpreter running toolproof (so one configured command works
        # in a venv, on Windows and on Linux); it is replaced after splitting, so its path needs no quoting
        argv = [sys.executable if word == PYTHON_PLACEHOLDER else word for word in shlex.split(command)]
        if not argv:
            raise UsageError("--backend cmd: needs a command line, e.g. cmd:'node adapter.js'")
        super().__init__(argv, inband=False, label=f"cmd:{command}",
                         hello_deadline_s=hello_deadline_s)
