"""Observations of one step and the declared normalisers (docs/scenario-format.md) that remove
what legitimately varies between runs: workspace path, temp files, task ids, durations, HOME."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from harness.backends.client import Response

TMPFILE_RE = re.compile(r"(?:[A-Za-z]:)?(?:[/\\][^\s'\"<>()\[\]]*)?[/\\]pi-bash-[0-9a-f]{16}\.log")
TMPFILE_TOKEN = "$TMP/pi-bash-XXXX.log"
TASK_ID_TEXT_RE = re.compile(r"""task_id="([^"]+)\"""")
TASK_ID_KEYS = ("task_id", "taskId")
DURATION_RE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?=\s?(?:ms|s)\b)")


@dataclass(frozen=True)
class Observation:
    """What one step produced. ``status`` is ``result`` (returned) or ``error`` (raised);
    ``text`` is all text blocks joined with ``\\n`` (results) — ``error_message`` for errors."""

    status: str
    text: str = ""
    is_error: bool | None = None
    content_types: tuple[str, ...] = ()
    details: Any = None
    error_message: str = ""
    error_kind: str = ""
    result: Any = None
    duration_s: float = 0.0

    @classmethod
    def from_response(cls, resp: Response, duration_s: float) -> Observation:
        if not resp.ok:
            return cls("error", error_message=resp.error_message, error_kind=resp.error_kind,
                       duration_s=duration_s, result=resp.error)
        res = resp.result
        if isinstance(res, dict) and isinstance(res.get("content"), list):
            blocks = [b for b in res["content"] if isinstance(b, dict)]
            text = "\n".join(str(b.get("text", "")) for b in blocks if b.get("type", "text") == "text")
            return cls("result", text=text, is_error=bool(res.get("is_error", False)),
                       content_types=tuple(str(b.get("type", "text")) for b in blocks),
                       details=res.get("details"), result=res, duration_s=duration_s)
        # a non-call op: the result object is the details; its ``output`` (or ``text``) string,
        # if any, is the text, so task_output can be matched like a tool result
        text = ""
        if isinstance(res, dict):
            field = res.get("output", res.get("text"))
            text = field if isinstance(field, str) else ""
        return cls("result", text=text, is_error=False, details=res, result=res, duration_s=duration_s)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status, "duration_s": round(self.duration_s, 4)}
        if self.status == "result":
            out.update(text=self.text, is_error=self.is_error, content_types=list(self.content_types),
                       details=self.details)
        else:
            out.update(error=self.error_message, error_kind=self.error_kind)
        return out

    def lookup(self, dotted: str) -> Any:
        """A value by dotted path: ``details.a.b``, ``text``, ``error``, ``result.x``."""
        head, _, rest = dotted.partition(".")
        value: Any = {"details": self.details, "text": self.text, "error": self.error_message,
                      "result": self.result}.get(head)
        for part in rest.split(".") if rest else []:
            if isinstance(value, dict):
                value = value.get(part)
            elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
                value = value[int(part)]
            else:
                return None
        return value


@dataclass(frozen=True)
class NormContext:
    """Values the normalisers replace: the workspace root as the implementation sees it (plus
    host aliases of it), the implementation's temp dir and HOME, and task ids seen so far."""

    roots: tuple[str, ...] = ()
    tmpdirs: tuple[str, ...] = ()
    homes: tuple[str, ...] = ()
    task_ids: tuple[str, ...] = field(default_factory=tuple)


def _replace_all(s: str, olds: Iterable[str], token: str) -> str:
    for old in sorted({o for o in olds if o and len(o) > 1}, key=len, reverse=True):
        s = s.replace(old, token)
    return s


def normalize_text(s: str, names: Iterable[str], ctx: NormContext) -> str:
    names = tuple(names)
    if "tmpfiles" in names:
        s = TMPFILE_RE.sub(TMPFILE_TOKEN, s)
    if "workspace" in names:
        s = _replace_all(s, ctx.roots, "$WORKSPACE")
    if "tmpfiles" in names:
        s = _replace_all(s, ctx.tmpdirs, "$TMP")
    if "home" in names:
        s = _replace_all(s, ctx.homes, "$HOME")
    if "task_ids" in names:
        s = _replace_all(s, ctx.task_ids, "$TASK_ID")
    if "durations" in names:
        s = DURATION_RE.sub("N", s)
    return s


def _normalize_value(value: Any, names: tuple[str, ...], ctx: NormContext) -> Any:
    if isinstance(value, str):
        return normalize_text(value, names, ctx)
    if isinstance(value, dict):
        return {k: _normalize_value(v, names, ctx) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalize_value(v, names, ctx) for v in value]
    return value


def find_task_ids(obs: Observation) -> list[str]:
    """Task ids an observation reveals (``task_id`` keys in details, ``task_id="…"`` in text)."""
    found: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for k, sub in v.items():
                if k in TASK_ID_KEYS and isinstance(sub, str) and sub:
                    found.append(sub)
                walk(sub)
        elif isinstance(v, list):
            for sub in v:
                walk(sub)

    walk(obs.details)
    found.extend(TASK_ID_TEXT_RE.findall(obs.text))
    return found


def normalize_observation(obs: Observation, names: Iterable[str], ctx: NormContext) -> Observation:
    names = tuple(names)
    if "task_ids" in names:
        ctx = replace(ctx, task_ids=(*ctx.task_ids, *find_task_ids(obs)))
    return replace(
        obs,
        text=normalize_text(obs.text, names, ctx),
        error_message=normalize_text(obs.error_message, names, ctx),
        details=_normalize_value(obs.details, names, ctx),
    )
