"""Comparing a normalised observation with a step's ``Expectation``: pure functions returning the
list of mismatches, each a readable message (text mismatches carry a unified diff whose
whitespace is made visible: ``→`` tab, ``␍`` carriage return, ``·`` trailing space)."""

from __future__ import annotations

import base64
import difflib
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.model.file_state import FileState
from harness.model.observation import Observation
from harness.model.scenario import BOMS, CODECS, EOLS, Expectation, FileCheck, TextMatch
from harness.run.read_view import read_view

NO_NEWLINE_MARK = "⟵ no newline at end"
DIFF_CONTEXT_LINES = 3
MAX_REPR = 200

# A snapshot hook: (name, actual text) → None when it matches, else a mismatch message.
SnapshotHook = Callable[[str, str], "str | None"]


@dataclass(frozen=True)
class Mismatch:
    """One failed expectation: ``message`` is one line; ``diff`` (optional) is multi-line."""

    message: str
    diff: str = ""

    def render(self) -> str:
        return self.message + ("\n" + self.diff if self.diff else "")


def _visible(text: str) -> list[str]:
    parts = text.split("\n")
    out: list[str] = []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if last and part == "":
            break
        cr = part.endswith("\r")
        body = part[:-1] if cr else part
        stripped = body.rstrip(" ")
        line = stripped + "·" * (len(body) - len(stripped)) + ("\r" if cr else "")
        line = line.replace("\t", "→").replace("\r", "␍")
        if last:
            line += "  " + NO_NEWLINE_MARK
        out.append(line)
    return out


def readable_diff(expected: str, actual: str, labels: tuple[str, str] = ("expected", "actual")) -> str:
    """A unified diff of expected vs actual with visible whitespace markers."""
    lines = difflib.unified_diff(_visible(expected), _visible(actual), labels[0], labels[1],
                                 lineterm="", n=DIFF_CONTEXT_LINES)
    return "\n".join(lines)


def _short(value: Any) -> str:
    r = repr(value)
    return r if len(r) <= MAX_REPR else r[: MAX_REPR - 1] + "…"


def check_text(label: str, match: TextMatch, actual: str, snapshot: SnapshotHook | None = None,
               snapshot_name: str = "") -> list[Mismatch]:
    out: list[Mismatch] = []
    if match.equals is not None and actual != match.equals:
        out.append(Mismatch(f"{label}: not equal to the expected text", readable_diff(match.equals, actual)))
    for needle in match.contains:
        if needle not in actual:
            out.append(Mismatch(f"{label}: does not contain {_short(needle)}; actual: {_short(actual)}"))
    for needle in match.not_contains:
        if needle in actual:
            out.append(Mismatch(f"{label}: contains {_short(needle)} but must not"))
    if match.regex is not None and re.search(match.regex, actual) is None:
        out.append(Mismatch(f"{label}: does not match regex {_short(match.regex)}; actual: {_short(actual)}"))
    # the diff sets the expected start (end) against as much of the actual text: the two short
    # forms alone can be the same cut of two long texts
    if match.startswith is not None and not actual.startswith(match.startswith):
        out.append(Mismatch(f"{label}: does not start with {_short(match.startswith)}; actual: {_short(actual)}",
                            readable_diff(match.startswith, actual[:len(match.startswith)],
                                          ("expected start", "actual start"))))
    if match.endswith is not None and not actual.endswith(match.endswith):
        tail = actual[len(actual) - len(match.endswith):] if len(actual) > len(match.endswith) else actual
        out.append(Mismatch(f"{label}: does not end with {_short(match.endswith)}; actual: {_short(actual)}",
                            readable_diff(match.endswith, tail, ("expected end", "actual end"))))
    if match.lines is not None:
        n = len(actual.split("\n"))
        if n != match.lines:
            out.append(Mismatch(f"{label}: expected {match.lines} lines, got {n}"))
    size = len(actual.encode("utf-8", "surrogatepass"))
    if match.max_bytes is not None and size > match.max_bytes:
        out.append(Mismatch(f"{label}: expected at most {match.max_bytes} bytes, got {size}"))
    if match.min_bytes is not None and size < match.min_bytes:
        out.append(Mismatch(f"{label}: expected at least {match.min_bytes} bytes, got {size}"))
    if match.snapshot:
        if snapshot is None:
            out.append(Mismatch(f"{label}: snapshot expectations need a snapshot store (none configured)"))
        else:
            msg = snapshot(snapshot_name, actual)
            if msg:
                out.append(Mismatch(f"{label}: {msg}"))
    return out


def check_details(expected: Any, actual: Any, path: str = "details") -> list[Mismatch]:
    """Subset match: dicts recursively subset, lists and scalars exact."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [Mismatch(f"{path}: expected a mapping, got {_short(actual)}")]
        out: list[Mismatch] = []
        for k, v in expected.items():
            if k not in actual:
                out.append(Mismatch(f"{path}.{k}: missing (expected {_short(v)})"))
            else:
                out.extend(check_details(v, actual[k], f"{path}.{k}"))
        return out
    if isinstance(expected, bool) or isinstance(actual, bool):
        same = type(expected) is type(actual) and expected == actual
    else:
        same = expected == actual
    if not same:
        return [Mismatch(f"{path}: expected {_short(expected)}, got {_short(actual)}")]
    return []


def check_process_events(expected: tuple[Any, ...], actual: tuple[Any, ...]) -> list[Mismatch]:
    """As many facts as expected, in order, each a subset match."""
    if len(expected) != len(actual):
        got = ", ".join(str(e.get("event")) if isinstance(e, dict) else _short(e) for e in actual) or "none"
        return [Mismatch(f"process_events: expected {len(expected)} fact(s), got {len(actual)} ({got})")]
    out: list[Mismatch] = []
    for i, (want, got) in enumerate(zip(expected, actual, strict=True)):
        out.extend(check_details(want, got, f"process_events[{i + 1}]"))
    return out


def _decode(data: bytes, check: FileCheck) -> str:
    bom = BOMS[check.encoding]
    if data.startswith(bom):
        data = data[len(bom):]
    return data.decode(CODECS[check.encoding], "replace")


def check_file(check: FileCheck, state: FileState, where: str = "files") -> list[Mismatch]:
    label = f"{where}.{check.path}"
    if check.absent:
        return [] if not state.exists else [Mismatch(f"{label}: expected absent, found a {state.kind}")]
    if not state.exists:
        return [Mismatch(f"{label}: expected to exist, but it is absent")]
    out: list[Mismatch] = []
    want_kind = check.kind or ("file" if check.expected_bytes() is not None or check.contains or check.sha256
                               else None)
    if want_kind is not None and state.kind != want_kind:
        out.append(Mismatch(f"{label}: expected a {want_kind}, found a {state.kind}"))
        return out
    if check.mode is not None and state.mode is not None and state.mode != check.mode:
        out.append(Mismatch(f"{label}: expected mode {check.mode:#o}, got {state.mode:#o}"))
    want = check.expected_bytes()
    data = state.data or b""
    if want is not None and data != want:
        if check.text is not None:
            diff = readable_diff(check.text.replace("\n", EOLS[check.eol]), _decode(data, check))
            extra = ""
            if _decode(data, check) == check.text.replace("\n", EOLS[check.eol]):
                extra = " (same text, different encoding or BOM)"
            out.append(Mismatch(f"{label}: content differs{extra}", diff))
        else:
            out.append(Mismatch(f"{label}: bytes differ; expected base64 {base64.b64encode(want).decode()[:80]}, "
                                f"got {base64.b64encode(data).decode()[:80]}"))
    if check.sha256 is not None and hashlib.sha256(data).hexdigest() != check.sha256:
        out.append(Mismatch(f"{label}: bytes differ; expected SHA-256 {check.sha256}, got "
                            f"{hashlib.sha256(data).hexdigest()} ({len(data)} bytes)"))
    for needle in check.contains:
        if needle not in _decode(data, check):
            out.append(Mismatch(f"{label}: does not contain {_short(needle)}"))
    return out


def model_text(obs: Observation) -> str:
    """What the model sees of a call: the result's text, or the raised error's message."""
    return obs.text if obs.status == "result" else obs.error_message


def failed(obs: Observation) -> bool:
    """The call failed: it raised an error or returned ``is_error: true``."""
    return obs.status == "error" or bool(obs.is_error)


def _form(obs: Observation, is_error: bool = False) -> str:
    if obs.status == "error":
        return f"raised error ({obs.error_kind}): {_short(obs.error_message)}"
    flag = f" (is_error {str(bool(obs.is_error)).lower()})" if is_error else ""
    return f"returned result{flag}: {_short(obs.text)}"


def check_observation(exp: Expectation, obs: Observation, snapshot: SnapshotHook | None = None,
                      snapshot_prefix: str = "", label: str = "") -> list[Mismatch]:
    """Everything but ``files`` (those need the backend). ``label`` prefixes every mismatch (a
    wording block's ``wording.minimax: ``)."""
    out = _check_observation(exp, obs, snapshot, snapshot_prefix)
    if label:
        out = [Mismatch(f"{label}: {m.message}", m.diff) for m in out]
    return out


def _check_observation(exp: Expectation, obs: Observation, snapshot: SnapshotHook | None,
                       snapshot_prefix: str) -> list[Mismatch]:
    out: list[Mismatch] = []
    if exp.failed is not None and failed(obs) != exp.failed:
        want = "fail (raise an error or return is_error: true)" if exp.failed else "succeed"
        return [Mismatch(f"failed: expected the call to {want}, got {_form(obs, is_error=True)}")]
    if exp.status is not None and obs.status != exp.status:
        return [Mismatch(f"status: expected {exp.status}, got {_form(obs)}")]
    if exp.output is not None:
        out.extend(check_text("output", exp.output, model_text(obs), snapshot, f"{snapshot_prefix}output"))
    if exp.content is not None or exp.checks_next_offset:
        view = read_view(model_text(obs))
        if exp.content is not None:
            out.extend(check_text("content", exp.content, view.content, snapshot, f"{snapshot_prefix}content"))
        if exp.checks_next_offset and view.next_offset != exp.next_offset:
            want = "no continuation notice" if exp.next_offset is None else f"a notice to continue at offset={exp.next_offset}"
            got = "none" if view.next_offset is None else f"offset={view.next_offset}"
            out.append(Mismatch(f"next_offset: expected {want}, got {got}; notices: {_short(list(view.notices))}"))
    if exp.status == "result":
        if exp.is_error is not None and obs.is_error != exp.is_error:
            out.append(Mismatch(f"is_error: expected {str(exp.is_error).lower()}, got "
                                f"{str(obs.is_error).lower()}; text: {_short(obs.text)}"))
        if exp.text is not None:
            out.extend(check_text("text", exp.text, obs.text, snapshot, f"{snapshot_prefix}text"))
        if exp.details is not None:
            out.extend(check_details(exp.details, obs.details))
        for key in exp.details_absent:
            if isinstance(obs.details, dict) and key in obs.details:
                out.append(Mismatch(f"details.{key}: expected absent, got {_short(obs.details[key])}"))
        if exp.content_types is not None and tuple(obs.content_types) != tuple(exp.content_types):
            out.append(Mismatch(f"content_types: expected {list(exp.content_types)}, got {list(obs.content_types)}"))
    elif exp.status == "error":
        if exp.error is not None:
            out.extend(check_text("error", exp.error, obs.error_message, snapshot, f"{snapshot_prefix}error"))
        if exp.error_kind is not None and obs.error_kind != exp.error_kind:
            out.append(Mismatch(f"error_kind: expected {exp.error_kind}, got {obs.error_kind}; "
                                f"message: {_short(obs.error_message)}"))
    if exp.process_events is not None:
        out.extend(check_process_events(exp.process_events, obs.process_events))
    if exp.duration_max is not None and obs.duration_s > exp.duration_max:
        out.append(Mismatch(f"duration: expected at most {exp.duration_max:g} s, took {obs.duration_s:.3f} s"))
    if exp.duration_min is not None and obs.duration_s < exp.duration_min:
        out.append(Mismatch(f"duration: expected at least {exp.duration_min:g} s, took {obs.duration_s:.3f} s"))
    return out
