"""The declared normalisers (docs/scenario-format.md, ``normalize:``): they replace in an
observation what legitimately varies between runs — the workspace path, temp files, task ids,
durations and HOME — with fixed tokens, before it is compared or recorded."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from harness.backends.base import HelloInfo
from harness.model.observation import Observation
from harness.model.scenario import Scenario

TMPFILE_RE = re.compile(r"(?:[A-Za-z]:)?(?:[/\\][^\s'\"<>()\[\]]*)?[/\\]pi-bash-[0-9a-f]{16}\.log")
TMPFILE_TOKEN = "$TMP/pi-bash-XXXX.log"
TASK_ID_TEXT_RE = re.compile(r"""task_id="([^"]+)\"""")
TASK_ID_KEYS = ("task_id", "taskId")
DURATION_RE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?=\s?(?:ms|s)\b)")
HOST_BACKENDS = ("local", "cmd")  # implementations that run on the host and share its temp dir and HOME


@dataclass(frozen=True)
class NormalisationContext:
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


def normalize_text(s: str, names: Iterable[str], ctx: NormalisationContext) -> str:
    names = tuple(names)
    if "tmpfiles" in names:
        s = TMPFILE_RE.sub(TMPFILE_TOKEN, s)
    if "workspace" in names:
        s = _replace_all(s, ctx.roots, "$WORKSPACE")
    if "home" in names:
        # a HOME inside a temp dir (the local backend's per-scenario HOME) is a home first
        nested = [h for h in ctx.homes if any(t and h.startswith(t.rstrip("/") + "/") for t in ctx.tmpdirs)]
        s = _replace_all(s, nested, "$HOME")
    if "tmpfiles" in names:
        s = _replace_all(s, ctx.tmpdirs, "$TMP")
    if "home" in names:
        s = _replace_all(s, ctx.homes, "$HOME")
    if "task_ids" in names:
        s = _replace_all(s, ctx.task_ids, "$TASK_ID")
    if "durations" in names:
        s = DURATION_RE.sub("N", s)
    return s


def _normalize_value(value: Any, names: tuple[str, ...], ctx: NormalisationContext) -> Any:
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


def normalize_observation(obs: Observation, names: Iterable[str], ctx: NormalisationContext) -> Observation:
    names = tuple(names)
    if "task_ids" in names:
        ctx = replace(ctx, task_ids=(*ctx.task_ids, *find_task_ids(obs)))
    return replace(
        obs,
        text=normalize_text(obs.text, names, ctx),
        error_message=normalize_text(obs.error_message, names, ctx),
        details=_normalize_value(obs.details, names, ctx),
        process_events=tuple(_normalize_value(list(obs.process_events), names, ctx)),
    )


def context_for(scenario: Scenario, backend_name: str, hello: HelloInfo, root: str) -> NormalisationContext:
    """What to replace for one scenario: its workspace ``root`` as the implementation sees it, the
    implementation's temp dir and HOME (from ``hello``, plus the host's for host backends)."""
    roots = {root, os.path.realpath(root)}
    tmpdirs = {d for d in (hello.capabilities.extra.get("tmpdir"),) if isinstance(d, str)}
    homes = {h for h in (scenario.env.get("HOME"), hello.capabilities.extra.get("home")) if isinstance(h, str)}
    if backend_name in HOST_BACKENDS:
        tmpdirs.add(tempfile.gettempdir())
        tmpdirs.add(os.path.realpath(tempfile.gettempdir()))
        tmpdirs.update({os.path.realpath(d) for d in tmpdirs})  # the private TMPDIR's host alias
        homes.add(os.path.expanduser("~"))
    else:
        tmpdirs.add("/tmp")
    return NormalisationContext(roots=tuple(roots), tmpdirs=tuple(tmpdirs), homes=tuple(homes))
