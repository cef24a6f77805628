"""The declared normalisers (docs/scenario-format.md, ``normalize:``): they replace in an
observation what legitimately varies between runs — the workspace path, temp files, task ids,
durations and HOME — with fixed tokens, before it is compared or recorded.

The tokens tell a scenario's private directories from the host's: the implementation's own HOME
and TMPDIR (the per-scenario ones a backend makes) become ``$HOME`` and ``$TMP``; on a host
backend, the host user's real home and the host's shared temp dir become ``$HOST_HOME`` and
``$HOST_TMP``, so a path that leaked out of the scenario's private directories does not read
like one that stayed inside them."""

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
    host_tmpdirs: tuple[str, ...] = ()  # the host's shared temp dir (host backends): $HOST_TMP
    host_homes: tuple[str, ...] = ()  # the host user's real home (host backends): $HOST_HOME


def _replace_longest_first(s: str, pairs: Iterable[tuple[str, str]]) -> str:
    """Replace each path by its token, longer paths first, so a directory nested in another (a
    private HOME inside a temp dir, a workspace inside the host's /tmp) is named as itself."""
    seen: dict[str, str] = {}
    for old, token in pairs:
        if old and len(old) > 1 and old not in seen:
            seen[old] = token
    for old in sorted(seen, key=len, reverse=True):
        s = s.replace(old, seen[old])
    return s


def normalize_text(s: str, names: Iterable[str], ctx: NormalisationContext) -> str:
    names = tuple(names)
    if "tmpfiles" in names:
        s = TMPFILE_RE.sub(TMPFILE_TOKEN, s)
    pairs: list[tuple[str, str]] = []
    if "workspace" in names:
        pairs += [(r, "$WORKSPACE") for r in ctx.roots]
    if "home" in names:
        pairs += [(h, "$HOME") for h in ctx.homes]
    if "tmpfiles" in names:
        pairs += [(t, "$TMP") for t in ctx.tmpdirs]
        pairs += [(t, "$HOST_TMP") for t in ctx.host_tmpdirs]
    if "home" in names:
        pairs += [(h, "$HOST_HOME") for h in ctx.host_homes]
    s = _replace_longest_first(s, pairs)
    if "task_ids" in names:
        s = _replace_longest_first(s, ((t, "$TASK_ID") for t in ctx.task_ids))
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
    host_tmpdirs: set[str] = set()
    host_homes: set[str] = set()
    if backend_name in HOST_BACKENDS:
        tmpdirs.update({os.path.realpath(d) for d in tmpdirs})  # the private TMPDIR's host alias
        host_tmpdirs = {tempfile.gettempdir(), os.path.realpath(tempfile.gettempdir())} - tmpdirs
        host_homes = {os.path.expanduser("~"), os.path.realpath(os.path.expanduser("~"))} - homes
    else:
        tmpdirs.add("/tmp")  # the container's own /tmp: a fresh tmpfs, private to the scenario
    return NormalisationContext(roots=tuple(roots), tmpdirs=tuple(tmpdirs), homes=tuple(homes),
                                host_tmpdirs=tuple(host_tmpdirs), host_homes=tuple(host_homes))
