"""Generated bash commands: a command is a sequence of pieces drawn one by one, not a template.

Pieces (each case's ``tag`` lists their kinds): text on stdout or stderr, whole or partial lines,
with every text class of ``generate``, a BOM or invalid UTF-8 on either stream; files of the
workspace (every shape of ``generate``) printed with ``cat``; many lines (``seq``, ``yes``) around
the 2000-line and 50 KB limits; the environment overlay (``$FUZZ_*``, unset and empty variables,
``env | grep``); stdin (closed for the tools: ``cat``, ``read``, ``head -c``); stdout and stderr
interleaved (merged at the source with ``exec 2>&1``, or on two pipes with a pause between
switches, so the order they reach the tool is not a race); exit codes, ``false``, a subshell's
exit, signals the shell sends itself (``TERM``, ``KILL``, ``INT``, ``HUP``, ``SEGV``, ``PIPE``);
output after the shell has exited (a background child printing at once, or holding the pipe past
the 100 ms grace); real short timeouts (1-2 s) on commands that end well before them or run well
past them, never near them.
"""

from __future__ import annotations

from typing import Any

from harness.fuzz.generate import TEXT_CLASSES, TIMER_MAX_S, Gen, make_file, malformed_object

SIGNALS = ("TERM", "KILL", "INT", "HUP", "SEGV", "PIPE", "USR1")
PAUSE = "sleep 0.05"  # between writes to different pipes, so their order is not a race
ENV_VALUES = ("名称", "a b", "", "x=y", "multi\nline", "$HOME", "ÿ", "--flag", "*")


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _printf_escapes(data: bytes) -> str:
    """``printf`` format text that prints exactly ``data`` (after ``printf --``: a format that
    starts with ``-`` is not an option, whose error would land on stderr unpaused)."""
    out = []
    for b in data:
        ch = chr(b)
        if 0x20 <= b < 0x7F and ch not in "\\%'":
            out.append(ch)
        else:
            out.append(f"\\{b:03o}")
    return "'" + "".join(out) + "'"


def _text_bytes(g: Gen) -> tuple[bytes, str]:
    r = g.r
    cls = r.choice(TEXT_CLASSES)
    text = " ".join(g.word(cls) for _ in range(r.randint(1, 4)))
    data = text.encode("utf-8", "surrogatepass")
    kind = r.choices(("text", "bom", "invalid", "cr", "tab"), (60, 10, 15, 10, 5))[0]
    if kind == "bom":
        data = b"\xef\xbb\xbf" + data
    elif kind == "invalid":
        at = r.randrange(len(data) + 1)
        data = data[:at] + r.choice((b"\xff", b"\xc3", b"\xe2\x80", b"\xed\xa0\x80", b"\xf0\x9f", b"\x80")) + data[at:]
    elif kind == "cr":
        data += b"\r"
    elif kind == "tab":
        data = b"\t" + data
    return data, kind


class Composer:
    """Draws the pieces of one command."""

    def __init__(self, g: Gen) -> None:
        self.g = g
        self.r = g.r
        self.parts: list[str] = []
        self.kinds: list[str] = []
        self.files: list[tuple[str, bytes]] = []
        self.env: dict[str, str] = {}
        self.stream = "err" if g.r.random() < 0.3 else "out"  # where the last write went
        self.merged = False
        self.ended = False  # the shell exits at this point (exit, a fatal signal)

    def write(self, text: str, stream: str) -> None:
        if not self.merged and stream != self.stream and self.parts:
            self.parts.append(PAUSE)
        self.stream = stream
        self.parts.append(text + (" >&2" if stream == "err" else ""))

    def piece(self) -> None:
        r = self.r
        kind = r.choices(("print", "partial", "cat", "lines", "env", "stdin", "merge", "status", "late"),
                         (30, 10, 10, 10, 10, 6, 5, 12, 4))[0]
        # the stream stays mostly the same from piece to piece: each switch costs a pause
        stream = self.stream if r.random() < 0.8 else ("err" if self.stream == "out" else "out")
        if kind == "print":
            data, sub = _text_bytes(self.g)
            self.write("printf -- " + _printf_escapes(data + b"\n"), stream)
            self.kinds.append(f"print-{stream}-{sub}")
        elif kind == "partial":
            data, sub = _text_bytes(self.g)
            self.write(f"printf -- {_printf_escapes(data)}", stream)
            self.kinds.append(f"partial-{stream}-{sub}")
        elif kind == "cat":
            name = f"in{len(self.files)}.txt"
            _, data, _, shape = make_file(self.g, name)
            if shape in ("big", "many-lines", "huge-line") and r.random() < 0.6:
                _, data, _, shape = make_file(self.g, name)
            self.files.append((name, data))
            self.write(f"cat {name}", stream)
            self.kinds.append(f"cat-{stream}-{shape}")
        elif kind == "lines":
            n = r.choice((5, 1999, 2000, 2001, 2500, r.randint(1, 6000)))
            if r.random() < 0.5:
                self.write(f"seq 1 {n}", stream)
                self.kinds.append(f"seq-{stream}")
            else:
                word = r.choice(("abc", "名称", "x" * 40, ""))
                self.write(f"yes {_quote(word)} | head -n {n}", stream)
                self.kinds.append(f"yes-{stream}")
        elif kind == "env":
            name = f"FUZZ_{len(self.env)}"
            self.env[name] = r.choice(ENV_VALUES)
            form = r.choice(('printf "[%s]\\n" "${NAME}"', 'echo "${NAME:-unset}"', "env | grep -c ^NAME=",
                             'printf "[%s]\\n" "${FUZZ_UNSET-unset}"', "echo ${#NAME}"))
            self.write(form.replace("NAME", name), stream)
            self.kinds.append("env")
        elif kind == "stdin":
            self.write(r.choice(("cat", "cat -", 'read -r x; echo "read=$? [$x]"', "head -c 5; echo \"[$?]\"",
                                 "wc -c")), stream)
            self.kinds.append("stdin")
        elif kind == "merge":
            if not self.merged:
                if self.stream == "err" and self.parts:
                    self.parts.append(PAUSE)  # what is still on the stderr pipe arrives first
                self.parts.append("exec 2>&1")
                self.merged = True
                self.kinds.append("merged")
        elif kind == "status":
            self.status()
        else:  # the last piece: the shell exits while a child still writes (or holds the pipe)
            delay = r.choice(("", "sleep 1.5; "))
            if not self.merged and self.stream == "err" and self.parts:
                # "late" goes to stdout: what is still on the stderr pipe arrives first (seed 5,
                # case 30: 2000 lines to stderr, then "late" landed inside them or after them)
                self.parts.append(PAUSE)
            self.parts.append(f"({delay}echo late) &")
            self.kinds.append("late-fast" if not delay else "late-slow")
            self.ended = True

    def status(self) -> None:
        r = self.r
        form = r.choices(("exit", "false", "subshell", "signal", "pipefail"), (35, 15, 15, 25, 10))[0]
        if form == "exit":
            self.parts.append(f"exit {r.choice((0, 1, 2, 3, 42, 126, 127, 128, 255, 256, 300))}")
            self.ended = True
        elif form == "false":
            self.parts.append("false")
        elif form == "subshell":
            self.write(f"(exit {r.randint(1, 255)}); echo \"status=$?\"", "out")
        elif form == "signal":
            self.parts.append(f"kill -{r.choice(SIGNALS)} $$")
            self.ended = True
        else:
            self.parts.append("set -o pipefail; false | true")
        self.kinds.append(f"status-{form}")

    def command(self) -> str:
        for _ in range(self.r.randint(1, 5)):
            if self.ended:
                break
            self.piece()
        return "; ".join(self.parts) if self.parts else "true"


def _racy(timeout: Any) -> bool:
    """A timeout that may fire while the command runs, or not, by timing alone: between 0 and 5 s
    (as a number or a numeric string), or past Node's 2^31-1 ms timer limit (Node fires it after
    1 ms, so it races the command in pi and in the emulation alike)."""
    value: Any = timeout
    if isinstance(timeout, str):
        try:
            value = float(timeout.strip()) if timeout.strip() else 0.0
        except ValueError:
            return timeout.strip().lower().startswith("0x")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return 0 < value < 5 or value > TIMER_MAX_S


def gen_bash(g: Gen) -> tuple[Any, list[tuple[str, bytes]], str, dict[str, Any]]:
    r = g.r
    c = Composer(g)
    command = c.command()
    extra: dict[str, Any] = {"env": sorted(c.env.items())}
    args: dict[str, Any] = {"command": g.string_arg(lambda: command)}
    roll = r.random()
    if roll < 0.03:  # a real short timeout on a command that runs well past it
        timeout = 1
        args["command"] = f"{command}; sleep {timeout + 3}; echo after"
        args["timeout"] = timeout
        c.kinds.append("timeout-fires")
        extra["deadline_s"] = 30.0
    elif roll < 0.1:  # a short timeout the command ends well before (no sleep piece runs long)
        if "late-slow" not in c.kinds:
            args["timeout"] = r.choice((2, 3))
            c.kinds.append("timeout-idle")
    elif roll < 0.25:
        present, timeout = g.number_arg(lambda: r.choice((30, 60, 10.5)))
        if present:
            args["timeout"] = timeout if not _racy(timeout) else r.choice((30, "30", " 30 "))
    args = malformed_object(g, args, ("command",))
    kinds = sorted(set(c.kinds)) or ["true"]
    return args, c.files, "+".join(kinds), extra

