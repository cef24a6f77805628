"""The built-in mutants of the reference (``toolproof mutants``): each one a realistic single
regression of ``tools_impl`` — an off-by-one at a limit, a wrong default, a dropped BOM, a guard
skipped, a kill that spares the children — written as a source edit (text that must occur
exactly once in the module, and what it becomes) with a one-line description.

``tool`` names the tool whose behaviour the regression changes (``truncation`` and ``paths`` for
the shared limiters and path resolution); ``surface`` says which layer holds it: ``minimax`` (the
MiniMax wrapper: line numbers, caps, ``replace_all``, managed bash, the environment scrub),
``pi`` (the pi engine that upstream emulation and the pi-surface scenarios run bare) or ``both``
(code every surface goes through). The catalogue imports nothing from ``tools_impl``: the
server that puts a mutant in (``harness/mutants/server.py``) must be able to do so before the
reference is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass

TOOLS = ("read", "write", "edit", "grep", "glob", "bash", "truncation", "paths")
SURFACES = ("minimax", "pi", "both")


@dataclass(frozen=True)
class SourceEdit:
    """Replace ``old`` (which must occur exactly once in ``module``'s source) by ``new``."""

    module: str
    old: str
    new: str


@dataclass(frozen=True)
class Mutant:
    name: str
    tool: str
    surface: str
    description: str
    edits: tuple[SourceEdit, ...]


def _m(name: str, tool: str, surface: str, description: str, module: str, old: str, new: str,
       *more: tuple[str, str, str]) -> Mutant:
    edits = (SourceEdit(module, old, new), *(SourceEdit(*e) for e in more))
    return Mutant(name, tool, surface, description, edits)


READ_ENGINE = "tools_impl.read.engine"
READ_TOOL = "tools_impl.read.tool"
READ_GUARDS = "tools_impl.read.guards"
WRITE = "tools_impl.write.tool"
EDIT_ENGINE = "tools_impl.edit.engine"
EDIT_TOOL = "tools_impl.edit.tool"
EDIT_PATCHES = "tools_impl.edit.patches"
EDIT_FUZZY = "tools_impl.edit.fuzzy"
BASH_ENGINE = "tools_impl.bash.engine"
BASH_TOOL = "tools_impl.bash.tool"
BASH_OUTPUT = "tools_impl.bash.output"
BASH_PATCHES = "tools_impl.bash.patches"
BASH_TIMEOUTS = "tools_impl.bash.timeouts"
BASH_ENV = "tools_impl.bash.env_sanitize"
BASH_TASKS = "tools_impl.bash.tasks"
TRUNCATION = "tools_impl.shared.truncation"
JS_TEXT = "tools_impl.js.text"
PATHS = "tools_impl.shared.paths"
PROFILE = "tools_impl.core.profile"
GREP = "tools_impl.search.grep_tool"
GLOB = "tools_impl.search.glob_tool"
SCAN = "tools_impl.search.scan_policy"

MUTANTS: tuple[Mutant, ...] = (
    # -- read: the pi engine ---------------------------------------------------------------
    _m("read.offset-zero-based", "read", "both", "offset is taken as 0-based: offset=N starts at line N+1",
       READ_ENGINE, "start_line: Number = max(0, offset - 1) if offset else 0",
       "start_line: Number = max(0, offset) if offset else 0"),
    _m("read.offset-past-end-accepted", "read", "both",
       "an offset one past the last line is accepted (returns nothing) instead of raising",
       READ_ENGINE, "if start_line >= total_file_lines:", "if start_line > total_file_lines:"),
    _m("read.limit-one-short", "read", "both", "limit=N returns N-1 lines",
       READ_ENGINE, "end_line = min(start_line + limit, total_file_lines)",
       "end_line = min(start_line + limit - 1, total_file_lines)"),
    _m("read.more-lines-offset-repeats", "read", "both",
       "the '[N more lines in file. Use offset=…]' continuation offset repeats the last line shown",
       READ_ENGINE, "next_offset = start_line + user_limited + 1", "next_offset = start_line + user_limited"),
    _m("read.line-notice-offset-repeats", "read", "both",
       "the 2000-line truncation notice says 'Use offset=N' for the last line shown instead of the next one",
       READ_ENGINE, 'notice = f"[Showing lines {where}. Use offset={js_number(end + 1)} to continue.]"',
       'notice = f"[Showing lines {where}. Use offset={js_number(end)} to continue.]"'),
    _m("read.byte-cap-stream-inclusive", "read", "both",
       "a file over 50 KB keeps a line that would end exactly at the byte limit out (>= instead of >)",
       READ_ENGINE, "            if used + cost > max_bytes:\n                break\n            kept.append(complete[i])",
       "            if used + cost >= max_bytes:\n                break\n            kept.append(complete[i])",
       (READ_ENGINE, "        keep = max_bytes + 1\n", "        keep = max_bytes\n")),
    _m("read.first-line-limit-inclusive", "read", "both",
       "a first line of exactly 50 KB is refused as too long",
       READ_ENGINE, "if first_len > max_bytes:", "if first_len >= max_bytes:"),
    _m("read.total-lines-phantom", "read", "both",
       "a large file's truncation details count the empty line after a final newline",
       READ_ENGINE, "total_lines = end - start - (1 if ends_with_newline else 0)", "total_lines = end - start"),
    _m("read.bom-dropped", "read", "both", "the engine strips a UTF-8 BOM from the text it returns",
       READ_ENGINE, 'def _decode(data: bytes) -> str:\n    return data.decode("utf-8", "replace")',
       'def _decode(data: bytes) -> str:\n    return data.decode("utf-8-sig", "replace")'),
    _m("read.cr-dropped", "read", "both", "the engine removes carriage returns from the text it returns",
       READ_ENGINE, "        if last - first <= keep:\n            return truncate_head(_decode(self._read(first, last)),",
       "        if last - first <= keep:\n            return truncate_head(_decode(self._read(first, last)).replace('\\r', ''),"),
    # -- read: the MiniMax wrapper -----------------------------------------------------------
    _m("read.number-splitlines", "read", "minimax",
       "line numbering splits with str.splitlines (CR, form feed, U+2028 start new numbered lines)",
       READ_TOOL, 'for i, line in enumerate(core.split("\\n")):', "for i, line in enumerate(core.splitlines()):"),
    _m("read.number-width-5", "read", "minimax", "line numbers are padded to 5 columns instead of 6",
       READ_TOOL, "LINE_NUMBER_WIDTH = 6", "LINE_NUMBER_WIDTH = 5"),
    _m("read.long-line-inclusive", "read", "minimax", "a line of exactly 2000 characters is cut",
       READ_TOOL, "if len(line) > max_chars:", "if len(line) >= max_chars:"),
    _m("read.long-line-utf16", "read", "minimax",
       "the 2000-character line cap counts UTF-16 units instead of code points",
       READ_TOOL, "if len(line) > max_chars:\n            line = line[:max_chars]",
       "if len(line.encode('utf-16-le')) // 2 > max_chars:\n            line = line[:max_chars]"),
    _m("read.blank-file-reminder", "read", "minimax",
       "a whitespace-only file gets the empty-file reminder instead of its contents",
       READ_TOOL, '        if text == "":\n            blocks.append(TextBlock(EMPTY_FILE_REMINDER))',
       '        if text.strip() == "":\n            blocks.append(TextBlock(EMPTY_FILE_REMINDER))'),
    _m("read.cap-offset-repeats", "read", "minimax",
       "the 24 KiB cap's next_offset repeats the last numbered line instead of the next one",
       READ_TOOL, "return int(m.group(1)) + 1", "return int(m.group(1))"),
    _m("read.more-lines-notice-numbered", "read", "minimax",
       "the engine's '[N more lines in file…]' notice is numbered as if it were a file line",
       READ_TOOL, r'r"\n\n\[(?:Showing lines [0-9]+-[0-9]+ of [0-9]+|[0-9]+ more lines in file\.)[^\n]*\]\Z"',
       r'r"\n\n\[(?:Showing lines [0-9]+-[0-9]+ of [0-9]+)[^\n]*\]\Z"'),
    _m("read.cap-24000", "read", "minimax", "the read cap is 24000 bytes instead of 24 KiB (24576)",
       PROFILE, "read_text_max_bytes: int = 24 * 1024", "read_text_max_bytes: int = 24 * 1000"),
    _m("read.socket-guard-skipped", "read", "minimax", "a socket is not refused by the non-regular-file guard",
       READ_GUARDS, "    if stat.S_ISSOCK(mode):\n        return SOCKET_KIND\n", ""),
    _m("read.control-ratio-inclusive", "read", "minimax",
       "a sample with exactly 30 % control bytes is called binary",
       READ_GUARDS, "if control / len(sample) > CONTROL_BYTE_RATIO:", "if control / len(sample) >= CONTROL_BYTE_RATIO:"),
    _m("read.sniff-4096", "read", "minimax", "the binary sniff reads 4096 bytes instead of 4100",
       PROFILE, "binary_sniff_bytes: int = 4100", "binary_sniff_bytes: int = 4096"),
    _m("read.utf16-called-binary", "read", "minimax", "a UTF-16 file (BOM, then NUL bytes) is refused as binary",
       READ_GUARDS, "if not sample or sample.startswith(UTF16_BOMS):", "if not sample:"),
    _m("read.extension-case-sensitive", "read", "minimax",
       "binary extensions are compared case-sensitively (.ZIP is read as text)",
       READ_GUARDS, "return path[start_dot:end].lower()", "return path[start_dot:end]"),
    # -- write ------------------------------------------------------------------------------
    _m("write.bom-dropped", "write", "minimax", "overwriting a UTF-8 file with a BOM drops the BOM",
       WRITE, "bom = old.bom or new_bom", "bom = new_bom"),
    _m("write.utf16-not-detected", "write", "minimax",
       "a UTF-16LE file is rewritten as UTF-8 (the BOM is checked big-endian)",
       WRITE, "if head.startswith(UTF16LE_BOM):", "if head.startswith(b'\\xfe\\xff'):"),
    _m("write.utf16-without-bom", "write", "minimax", "a rewritten UTF-16LE file loses its BOM",
       WRITE, 'return EncodedContent(UTF16LE_BOM + body.encode("utf-16-le", "surrogatepass"), "utf16le", True, body)',
       'return EncodedContent(body.encode("utf-16-le", "surrogatepass"), "utf16le", True, body)'),
    _m("write.bom-char-doubled", "write", "minimax",
       "content starting with U+FEFF is written with the BOM twice",
       WRITE, "body = content[1:] if new_bom else content", "body = content"),
    _m("write.count-chars", "write", "minimax", "the byte count reported is the content's length in characters",
       WRITE, "return text_result(NAME, capture_text(len(encoded.data), path, old.exists), details)",
       "return text_result(NAME, capture_text(len(content), path, old.exists), details)"),
    _m("write.no-parent-dirs", "write", "both", "missing parent directories are not created",
       WRITE, "        mkdir_parents(os.path.dirname(abs_path))\n", ""),
    _m("write.no-truncate", "write", "both", "overwriting a longer file leaves its old tail (no O_TRUNC)",
       WRITE, "os.O_WRONLY | os.O_CREAT | os.O_TRUNC", "os.O_WRONLY | os.O_CREAT"),
    _m("write.replaces-symlink", "write", "both", "writing through a symlink replaces the link with a file",
       WRITE, "    try:\n        fd = os.open(abs_path,",
       "    if os.path.islink(abs_path):\n        os.unlink(abs_path)\n    try:\n        fd = os.open(abs_path,"),
    _m("write.created-inverted", "write", "minimax", "details.created is true for an overwrite and false for a new file",
       WRITE, '"created": not old.exists,', '"created": old.exists,'),
    _m("write.engine-counts-bytes", "write", "pi", "pi's write message counts UTF-8 bytes instead of UTF-16 units",
       WRITE, "units = utf16_len(content) if data is None else utf16_len_of_encoded(content, data)",
       'units = len(content.encode("utf-8", "surrogatepass"))'),
    # -- edit: the pi engine -----------------------------------------------------------------
    _m("edit.crlf-not-restored", "edit", "both", "an edited CRLF file is written back with LF endings",
       EDIT_ENGINE, 'body = outcome.new.replace("\\n", "\\r\\n") if crlf else outcome.new', "body = outcome.new"),
    _m("edit.crlf-anywhere", "edit", "both",
       "a file is treated as CRLF when any line ends in CRLF, not only the first",
       EDIT_ENGINE, 'return first > 0 and text[first - 1] == "\\r"', 'return "\\r\\n" in text'),
    _m("edit.bom-dropped", "edit", "both", "an edited file loses its UTF-8 BOM",
       EDIT_ENGINE, "fh.write(encode_utf8(bom + body))", "fh.write(encode_utf8(body))"),
    _m("edit.lone-cr-kept", "edit", "both", "lone CR line endings are not normalised (only CRLF is)",
       EDIT_ENGINE, 'return text.replace("\\r\\n", "\\n").replace("\\r", "\\n")', 'return text.replace("\\r\\n", "\\n")'),
    _m("edit.count-overlapping", "edit", "both",
       "occurrences are counted overlapping ('aa' twice in 'aaa'), so a unique text is called a duplicate",
       EDIT_ENGINE, "count = haystack.count(needle)  # non-overlapping",
       "count = sum(1 for k in range(len(haystack)) if haystack.startswith(needle, k))  # overlapping"),
    _m("edit.touching-spans-overlap", "edit", "both", "two edits whose spans touch are refused as overlapping",
       EDIT_ENGINE, "if prev.start + prev.length > cur.start:", "if prev.start + prev.length >= cur.start:"),
    _m("edit.splice-stale-offset", "edit", "both",
       "after each spliced edit the cursor moves on by the new text's length, not the old text's",
       EDIT_ENGINE, "pos = span.start + span.length", "pos = span.start + len(span.new_text)"),
    _m("edit.no-change-accepted", "edit", "both", "an edit that changes nothing succeeds instead of raising",
       EDIT_ENGINE, "    if new == base:\n        raise _no_change(path, n)\n", "",
       (EDIT_ENGINE, "                if new == base:\n                    raise _no_change(path, n)\n", "")),
    _m("edit.first-match-no-duplicate-check", "edit", "minimax",
       "an exact match is taken at its first occurrence without checking that it is unique",
       EDIT_PATCHES, "        if count > 1:\n            raise duplicate(path, i, n, count, match_lines_text(lines, count))",
       "        if used_fuzzy and count > 1:\n            raise duplicate(path, i, n, count, match_lines_text(lines, count))"),
    _m("edit.disproportion-chars-inclusive", "edit", "minimax",
       "a multi-line fuzzy hit exactly max(len+500, 4*len) characters long is refused (>= instead of >)",
       EDIT_PATCHES, "return len(js_trim(matched)) > limit", "return len(js_trim(matched)) >= limit"),
    _m("edit.fidelity-guard-skipped", "edit", "minimax",
       "a widened fuzzy span that swallows a compatibility character is accepted",
       EDIT_FUZZY, "return norm(content[start:end]) == normalised_old", "return True"),
    _m("edit.fuzzy-strips-indent", "edit", "both",
       "fuzzy normalisation trims both ends of a line (trim, not trimEnd), so indentation no longer matters",
       EDIT_FUZZY, "        return line.rstrip(JS_WHITESPACE)\n    return _replace_lookalikes(js_trim_end(nfkc(line)))",
       "        return line.strip(JS_WHITESPACE)\n    return _replace_lookalikes(nfkc(line).strip(JS_WHITESPACE))",
       (EDIT_FUZZY, "        return [line.rstrip(JS_WHITESPACE) for line in lines]",
        "        return [line.strip(JS_WHITESPACE) for line in lines]"),
       (EDIT_FUZZY, "    return [line.rstrip(JS_WHITESPACE) if line.isascii()", "    return [line.strip(JS_WHITESPACE) if line.isascii()"),
       (EDIT_FUZZY, 'return "\\n".join([line.rstrip(JS_WHITESPACE) for line in block.split("\\n")])',
        'return "\\n".join([line.strip(JS_WHITESPACE) for line in block.split("\\n")])'),
       (EDIT_FUZZY, 'trimmed = "\\n".join([line.rstrip(JS_WHITESPACE) for line in normalised.split("\\n")])',
        'trimmed = "\\n".join([line.strip(JS_WHITESPACE) for line in normalised.split("\\n")])')),
    _m("edit.upstream-short-messages", "edit", "pi",
       "upstream pi's duplicate check is skipped (first occurrence replaced)",
       EDIT_ENGINE, "        if count > 1:\n            raise duplicate(path, i, n, count)\n", ""),
    # -- edit: the MiniMax wrapper -----------------------------------------------------------
    _m("edit.replace-all-first-only", "edit", "minimax", "replace_all replaces only the first occurrence",
       EDIT_PATCHES, "return haystack.replace(needle, replacement)", "return haystack.replace(needle, replacement, 1)"),
    _m("edit.replace-all-re-sub", "edit", "minimax",
       "replace_all uses re.sub, so new_string is a Python template (\\1, \\g<0>, \\\\)",
       EDIT_PATCHES, "return haystack.replace(needle, replacement)",
       "return re.sub(re.escape(needle), replacement, haystack)",
       (EDIT_PATCHES, "from collections.abc import Callable, Sequence", "import re\nfrom collections.abc import Callable, Sequence")),
    _m("edit.replace-all-dollar-collapse", "edit", "minimax",
       "replace_all collapses '$$' in new_string to '$' (half of JavaScript's template rules)",
       EDIT_PATCHES, "return haystack.replace(needle, replacement)",
       'return haystack.replace(needle, replacement.replace("$$", "$"))'),
    _m("edit.replace-all-format", "edit", "minimax",
       "replace_all runs a new_string containing '%' through %-formatting ('%%' becomes '%', '%s' fails)",
       EDIT_PATCHES, "return haystack.replace(needle, replacement)",
       'return haystack.replace(needle, replacement % () if "%" in replacement else replacement)'),
    _m("edit.replace-all-bom-stripped", "edit", "minimax",
       "replace_all decodes the file without its BOM, so the whole-file edit of a BOM file succeeds",
       EDIT_TOOL, 'raw = fh.read().decode("utf-8", "replace")', 'raw = fh.read().decode("utf-8-sig", "replace")'),
    _m("edit.replace-all-empty-accepted", "edit", "minimax",
       "replace_all with an empty old_string is not refused",
       EDIT_TOOL, '    if old == "":\n        raise ToolError(\n            f"replace_all: old_string must be non-empty',
       '    if old == "" and False:\n        raise ToolError(\n            f"replace_all: old_string must be non-empty'),
    _m("edit.retry-no-tab", "edit", "minimax", "the line-number retry does not accept a TAB after the number",
       EDIT_TOOL, '"]*[0-9]+[\\u2192\\t]([^\\n\\r\\u2028\\u2029]*)$"', '"]*[0-9]+[\\u2192]([^\\n\\r\\u2028\\u2029]*)$"'),
    _m("edit.retry-partial-prefixes", "edit", "minimax",
       "the line-number retry strips prefixes even when some lines have none",
       EDIT_TOOL, "        if m is None:\n            return None\n",
       "        if m is None:\n            out.append(line)\n            continue\n"),
    # -- bash: the pi engine -----------------------------------------------------------------
    _m("bash.kill-shell-only", "bash", "both",
       "a timeout or abort signals the shell only, not its process group (children live on)",
       BASH_ENGINE, "def signal_group(pid: int, sig: int) -> None:\n    try:\n        os.killpg(pid, sig)",
       "def signal_group(pid: int, sig: int) -> None:\n    try:\n        os.kill(pid, sig)"),
    _m("bash.signal-exit-code", "bash", "both",
       "a shell killed by a signal reports a negative exit code instead of success",
       BASH_ENGINE, "    if returncode is None or returncode < 0:\n        return None",
       "    if returncode is None:\n        return None"),
    _m("bash.timeout-seconds-int", "bash", "both", "the timeout message prints whole seconds (0.5 → 0)",
       BASH_ENGINE, "status = STATUS_TIMEOUT.format(seconds=js_number(timeout))",
       "status = STATUS_TIMEOUT.format(seconds=int(timeout))"),
    _m("bash.line-limit-inclusive", "bash", "both", "exactly 2000 lines of output are reported as truncated",
       BASH_OUTPUT, "truncated = total_lines > self.max_lines or", "truncated = total_lines >= self.max_lines or"),
    _m("bash.notice-start-off-by-one", "bash", "both",
       "the '[Showing lines S-E …]' notice starts one line early",
       BASH_OUTPUT, "start = s.total_lines - s.output_lines + 1", "start = s.total_lines - s.output_lines"),
    _m("bash.line-count-no-open-line", "bash", "both",
       "a last line without a final newline is not counted",
       BASH_OUTPUT, "return self._newlines + (1 if self._open_line_bytes > 0 else 0)", "return self._newlines"),
    _m("bash.exit-grace-waits", "bash", "both",
       "the call waits for background grandchildren that keep the pipes open (no 100 ms exit grace)",
       PROFILE, "bash_exit_stdio_grace_ms: int = 100", "bash_exit_stdio_grace_ms: int = 8000"),
    _m("bash.no-kill-escalation", "bash", "both",
       "the SIGKILL escalation after the grace period is skipped once the shell itself has exited",
       BASH_PATCHES, "                if group_exists(pid):\n                    signal_group(pid, signal.SIGKILL)",
       "                if group_exists(pid) and os.path.exists(f'/proc/{pid}/status') and "
       "'zombie' not in open(f'/proc/{pid}/status').read():\n                    signal_group(pid, signal.SIGKILL)"),
    _m("bash.term-grace-short", "bash", "minimax", "the SIGTERM grace period is 300 ms instead of 3 s",
       PROFILE, "bash_term_grace_ms: int = 3000", "bash_term_grace_ms: int = 300"),
    _m("bash.sigkill-at-once", "bash", "minimax", "timeouts SIGKILL at once (TERM traps never run)",
       BASH_PATCHES, "        signal_group(pid, signal.SIGTERM)\n", "        signal_group(pid, signal.SIGKILL)\n"),
    # -- bash: the MiniMax wrapper -----------------------------------------------------------
    _m("bash.default-timeout-60", "bash", "minimax", "the default foreground timeout is 60 s instead of 120 s",
       PROFILE, "bash_default_timeout_s: float = 120", "bash_default_timeout_s: float = 60"),
    _m("bash.timeout-not-clamped", "bash", "minimax", "a foreground timeout above 300 s is not clamped",
       BASH_TIMEOUTS, "return min(t, profile.bash_max_timeout_s)", "return t"),
    _m("bash.zero-timeout-kept", "bash", "minimax", "timeout: 0 is kept (no timer) instead of the 120 s default",
       BASH_TIMEOUTS, "if t is None or t <= 0:", "if t is None or t < 0:"),
    _m("bash.soft-yield-10s", "bash", "minimax", "a foreground command is promoted to the background after 10 s instead of 15 s",
       PROFILE, "bash_soft_yield_ms: int = 15_000", "bash_soft_yield_ms: int = 10_000"),
    _m("bash.watchdog-default", "bash", "minimax", "the background watchdog defaults to 10 min instead of 30 min",
       PROFILE, "bash_background_max_run_ms: int = 30 * 60 * 1000", "bash_background_max_run_ms: int = 10 * 60 * 1000"),
    _m("bash.cap-24000", "bash", "minimax", "the bash cap is 24000 bytes instead of 24 KiB (24576)",
       PROFILE, "bash_max_bytes: int = 24 * 1024", "bash_max_bytes: int = 24 * 1000"),
    _m("bash.cap-counts-chars", "bash", "minimax", "the bash cap's original_bytes counts characters, not UTF-8 bytes",
       BASH_TOOL, "outcome_bytes = utf8_len(text)", "outcome_bytes = len(text)"),
    _m("bash.scrub-misses-openai", "bash", "minimax", "scrub mode leaves OPENAI_API_KEY in the environment",
       PROFILE, '    "OPENAI_API_KEY",\n', ""),
    _m("bash.strict-plural-kept", "bash", "minimax", "strict mode keeps plural names such as MY_KEYS (no optional S)",
       BASH_ENV, 'r")S?(?:_|\\Z)"', 'r")(?:_|\\Z)"'),
    _m("bash.ci-off-truthy", "bash", "minimax", "CI=off counts as truthy and turns the scrub on",
       BASH_ENV, 'FALSY_FLAG_VALUES: frozenset[str] = frozenset({"0", "false", "no", "off"})',
       'FALSY_FLAG_VALUES: frozenset[str] = frozenset({"0", "false", "no"})'),
    # -- shared truncation -------------------------------------------------------------------
    _m("truncation.head-keeps-2001", "truncation", "both", "truncateHead keeps one line more than the line limit",
       TRUNCATION, "        if i >= max_lines:\n            truncated_by = \"lines\"",
       "        if i > max_lines:\n            truncated_by = \"lines\""),
    _m("truncation.head-bytes-inclusive", "truncation", "both",
       "truncateHead stops before a line that would end exactly at the byte limit",
       TRUNCATION, "        cost = utf8_len(line) + (1 if i > 0 else 0)\n        if used + cost > max_bytes:",
       "        cost = utf8_len(line) + (1 if i > 0 else 0)\n        if used + cost >= max_bytes:"),
    _m("truncation.head-fits-exclusive", "truncation", "both",
       "content of exactly 2000 lines is truncated by truncateHead",
       TRUNCATION, "    if total_lines <= max_lines and total_bytes <= max_bytes:\n        return _untruncated("
                   "content, total_lines, total_bytes, max_lines, max_bytes)\n    if lines and",
       "    if total_lines < max_lines and total_bytes <= max_bytes:\n        return _untruncated("
       "content, total_lines, total_bytes, max_lines, max_bytes)\n    if lines and"),
    _m("truncation.tail-bytes-inclusive", "truncation", "both",
       "truncateTail stops before a line that would end exactly at the byte limit",
       TRUNCATION, "        cost = utf8_len(line) + (1 if kept else 0)\n        if used + cost > max_bytes:",
       "        cost = utf8_len(line) + (1 if kept else 0)\n        if used + cost >= max_bytes:"),
    _m("truncation.tail-keeps-2001", "truncation", "both", "truncateTail keeps one line more than the line limit",
       TRUNCATION, "        if len(kept) >= max_lines:", "        if len(kept) > max_lines:"),
    _m("truncation.count-phantom-line", "truncation", "both",
       "line counting includes the empty line after a final newline (pi 0.73.1's count)",
       TRUNCATION, "    if text.endswith(\"\\n\"):\n        lines.pop()\n    return lines", "    return lines"),
    _m("truncation.partial-line-keeps-start", "truncation", "both",
       "a last line longer than 50 KB keeps its first 50 KB instead of its last",
       TRUNCATION, "kept.append(cut_text_suffix(line, max_bytes))", "kept.append(cut_text_prefix(line, max_bytes))"),
    _m("truncation.utf8-suffix-splits", "truncation", "both",
       "a byte suffix cut moves backwards, so it may start inside a UTF-8 sequence",
       JS_TEXT, "    while cut < len(data) and _is_continuation(data[cut]):\n        cut += 1",
       "    while cut > 0 and _is_continuation(data[cut]):\n        cut -= 1"),
    _m("truncation.prefix-fits-exclusive", "truncation", "minimax",
       "a text of exactly the cap's size is truncated by the prefix cap",
       TRUNCATION, "    if orig <= max_bytes:\n        return LimitOutcome(text, False, orig, ())\n    lines = split_body_lines(text)\n    best",
       "    if orig < max_bytes:\n        return LimitOutcome(text, False, orig, ())\n    lines = split_body_lines(text)\n    best"),
    _m("truncation.prefix-candidate-exclusive", "truncation", "minimax",
       "the prefix cap drops a line whose candidate would fill the cap exactly",
       TRUNCATION, "if utf8_len(candidate) <= max_bytes:", "if utf8_len(candidate) < max_bytes:"),
    _m("truncation.head-share-half", "truncation", "minimax", "bash's head+tail cap splits the budget 50/50 instead of 45/55",
       TRUNCATION, "HEAD_SHARE = 0.45", "HEAD_SHARE = 0.5"),
    _m("truncation.head-tail-fits-exclusive", "truncation", "minimax",
       "a bash result of exactly 24 KiB is truncated by the head+tail cap",
       TRUNCATION, "    if orig <= max_bytes:\n        return LimitOutcome(text, False, orig, ())\n    lines = split_body_lines(text)\n    note",
       "    if orig < max_bytes:\n        return LimitOutcome(text, False, orig, ())\n    lines = split_body_lines(text)\n    note"),
    # -- grep -------------------------------------------------------------------------------
    _m("grep.default-limit-50", "grep", "minimax", "grep's default limit is 50 results instead of 100",
       PROFILE, "grep_default_limit: int = 100", "grep_default_limit: int = 50"),
    _m("grep.max-count-ignores-offset", "grep", "minimax",
       "content mode asks ripgrep for limit+1 matches per file, ignoring offset, so later pages lose matches",
       GREP, 'f"--max-count={inp.offset + inp.limit + 1}"', 'f"--max-count={inp.limit + 1}"'),
    _m("grep.files-more-inclusive", "grep", "minimax",
       "files mode says more are available when the page ends exactly at the last file",
       GREP, "more = offset + limit < n", "more = offset + limit <= n"),
    _m("grep.content-page-overlaps", "grep", "minimax", "a content page repeats the last match of the previous page",
       GREP, "if offset < ordinal <= offset + limit:", "if offset <= ordinal <= offset + limit:"),
    _m("grep.line-cap-inclusive", "grep", "minimax", "a matching line of exactly 2000 characters is cut",
       GREP, "if len(units) // 2 > max_line_length:", "if len(units) // 2 >= max_line_length:"),
    _m("grep.no-hidden", "grep", "minimax", "grep skips dotfiles (no --hidden)",
       GREP, 'argv = ["--no-config", "--no-messages", "--hidden", f"--max-filesize={MAX_FILESIZE_FLAG}"]',
       'argv = ["--no-config", "--no-messages", f"--max-filesize={MAX_FILESIZE_FLAG}"]'),
    _m("grep.sensitive-case-sensitive", "grep", "minimax",
       "the sensitive excludes are passed as case-sensitive --glob, so .ENV or KEY.PEM are searched",
       SCAN, 'return [f"--iglob={entry}" for entry in LOCAL_SENSITIVE_GLOB_EXCLUDES]',
       'return [f"--glob={entry}" for entry in LOCAL_SENSITIVE_GLOB_EXCLUDES]'),
    _m("grep.cap-16000", "grep", "minimax", "the grep content cap is 16000 bytes instead of 16 KiB",
       PROFILE, "grep_content_max_bytes: int = 16 * 1024", "grep_content_max_bytes: int = 16 * 1000"),
    _m("grep.count-first-colon", "grep", "minimax", "count mode reads the number after the first ':' of a line",
       GREP, 'line.rsplit(":", 1)', 'line.split(":", 1)'),
    # -- glob -------------------------------------------------------------------------------
    _m("glob.default-limit-100", "glob", "minimax", "glob's default limit is 100 paths instead of 200",
       PROFILE, "glob_default_limit: int = 200", "glob_default_limit: int = 100"),
    _m("glob.page-skips-one", "glob", "minimax", "a page starts one path after its offset",
       GLOB, "page = list(paths[offset : offset + limit])", "page = list(paths[offset + 1 : offset + limit + 1])"),
    _m("glob.no-dotfiles", "glob", "minimax", "glob patterns do not match dotfiles",
       GLOB, 'rx = make_re(pattern if "/" in pattern else "**/" + pattern, dot=True)',
       'rx = make_re(pattern if "/" in pattern else "**/" + pattern, dot=False)'),
    _m("glob.top-level-only", "glob", "minimax", "a pattern without '/' matches only at the top level",
       GLOB, 'rx = make_re(pattern if "/" in pattern else "**/" + pattern, dot=True)',
       "rx = make_re(pattern, dot=True)"),
    _m("glob.truncated-when-exact", "glob", "minimax",
       "a page that ends exactly at the last path says the results were truncated",
       GLOB, "truncated = total > offset + n or stdout_truncated", "truncated = total >= offset + n or stdout_truncated"),
    _m("glob.node-modules-scanned", "glob", "minimax", "node_modules is no longer excluded from scans",
       SCAN, '".worktrees", "node_modules", ', '".worktrees", '),
    # -- MiniMax features, formatSize, the rolling tail (a second round, after the first corpus run) --
    _m("bash.layer-a-parent-prefix-missing", "bash", "minimax",
       "layer A no longer removes unlisted __MAVIS_PARENT_* variables",
       PROFILE, '    "__MAVIS_PARENT_",\n', ""),
    _m("bash.env-sanitized-every-call", "bash", "minimax", "envSanitized is reported on every call, not only the first",
       BASH_TOOL, "first = bool(removed) and not workspace.bash_env_reported", "first = bool(removed)"),
    _m("bash.rolling-tail-halved", "bash", "both", "the rolling output tail keeps 50 KB instead of 100 KB",
       BASH_OUTPUT, "ROLLING_FACTOR = 2  #", "ROLLING_FACTOR = 1  #"),
    _m("bash.task-output-since-ignored", "bash", "minimax", "task_output returns the whole output whatever 'since' says",
       BASH_TASKS, "            start = max(since, self._base)\n", "            start = self._base\n"),
    _m("edit.fuzzy-no-curly-singles", "edit", "both", "fuzzy matching no longer maps curly single quotes to '",
       EDIT_FUZZY, '**dict.fromkeys("\\u2018\\u2019\\u201a\\u201b", "\'"),', '**dict.fromkeys("\\u201a\\u201b", "\'"),'),
    _m("edit.fuzzy-no-minus-sign", "edit", "both", "fuzzy matching no longer maps U+2212 MINUS SIGN to '-'",
       EDIT_FUZZY, '"\\u2010\\u2011\\u2012\\u2013\\u2014\\u2015\\u2212", "-"', '"\\u2010\\u2011\\u2012\\u2013\\u2014\\u2015", "-"'),
    _m("edit.match-lines-four", "edit", "minimax", "a duplicate error lists the first four start lines instead of three",
       EDIT_ENGINE, "MATCH_LINES_SHOWN = 3", "MATCH_LINES_SHOWN = 4"),
    _m("read.exe-not-binary", "read", "minimax", ".exe is missing from the binary extensions",
       READ_GUARDS, '"executables": (".exe", ', '"executables": ('),
    _m("write.capture-limit-inclusive", "write", "minimax", "an old file of exactly 1 MiB is not captured (too_large)",
       WRITE, '    if size > capture_max_bytes:\n        return OldFile(True, encoding, bom, None, "too_large")',
       '    if size >= capture_max_bytes:\n        return OldFile(True, encoding, bom, None, "too_large")'),
    _m("grep.oldest-first", "grep", "minimax", "files_with_matches lists the oldest file first",
       GREP, "by_time = sorted(files, key=lambda f: -times[f])", "by_time = sorted(files, key=lambda f: times[f])"),
    _m("glob.broad-excludes-when-narrow", "glob", "minimax", "the broad-scan media excludes also apply to a narrow root",
       GLOB, "broad = is_broad_file_scan(pattern) and not narrow", "broad = is_broad_file_scan(pattern)"),
    _m("truncation.mb-at-1mib-exclusive", "truncation", "both", "formatSize says 1024.0KB for exactly 1 MiB",
       JS_TEXT, "    if n < 1024 * 1024:\n", "    if n <= 1024 * 1024:\n"),
    # -- paths ------------------------------------------------------------------------------
    _m("paths.tilde-prefix", "paths", "both", "any leading '~' is expanded (~draft.md becomes $HOME/draft.md)",
       PATHS, '    if p.startswith("~/") or (windows and p.startswith("~\\\\")):\n        # Node joins',
       '    if p.startswith("~") or (windows and p.startswith("~\\\\")):\n        # Node joins'),
    _m("paths.all-at-signs", "paths", "both", "every leading '@' is dropped, not just one",
       PATHS, '    p = SPECIAL_SPACES_RE.sub(" ", path)\n    if p.startswith("@"):\n        p = p[1:]',
       '    p = SPECIAL_SPACES_RE.sub(" ", path)\n    p = p.lstrip("@")'),
    _m("paths.narrow-nbsp-kept", "paths", "both", "U+202F is not among the special spaces turned into a space",
       PATHS, 'SPECIAL_SPACES_RE = re.compile("[\\u00a0\\u2000-\\u200a\\u202f\\u205f\\u3000]")',
       'SPECIAL_SPACES_RE = re.compile("[\\u00a0\\u2000-\\u200a\\u205f\\u3000]")'),
    _m("paths.am-pm-case-sensitive", "paths", "both", "the AM/PM variant only matches upper-case AM./PM.",
       PATHS, 'AM_PM_RE = re.compile(r" (AM|PM)\\.", re.IGNORECASE)', 'AM_PM_RE = re.compile(r" (AM|PM)\\.")'),
    _m("paths.no-nfd-variant", "paths", "both", "the NFD variant of a missing path is not tried",
       PATHS, '    return unicode.normalize("NFD", p)', "    return p"),
    _m("paths.no-curly-variant", "paths", "both", "the curly-quote variant of a missing path is not tried",
       PATHS, '    return p.replace("\'", RIGHT_SINGLE_QUOTE)', "    return p"),
    _m("paths.blank-search-root", "paths", "minimax",
       "a whitespace-only grep or glob path is resolved as a directory name instead of the workspace",
       PATHS, 'if path is None or js_trim(path) == "":', 'if path is None or path == "":',
       (GREP, 'resolved = search_root(None if inp.path is None or js_trim(inp.path) == "" else inp.path, ctx.root)',
        'resolved = search_root(None if inp.path is None or inp.path == "" else inp.path, ctx.root)'),
       (GLOB, 'base = search_root(None if inp.path is None or js_trim(inp.path) == "" else inp.path, ctx.root)',
        'base = search_root(None if inp.path is None or inp.path == "" else inp.path, ctx.root)')),
)


def by_name() -> dict[str, Mutant]:
    return {m.name: m for m in MUTANTS}


__all__ = ["MUTANTS", "SURFACES", "TOOLS", "Mutant", "SourceEdit", "by_name"]
