"""The one equivalence of two observations: what is random by nature is replaced by a
placeholder on both sides before two runs of the same step are compared (``toolproof diff``, the
local/docker parity test).

Before comparing, what is random by nature is replaced on both sides by a placeholder: durations
are dropped; task ids (``task_id``/``taskId`` values and every occurrence of them, e.g. in
``<bash_background task_id="…">``) become ``$TASK_ID1``, ``$TASK_ID2``… in order of appearance;
process ids, wall-clock timestamps and session/turn ids (``VOLATILE_KEYS``) become a placeholder
naming what they were. A timestamp or id present on one side and null on the other still differs;
a process id does not (``ALWAYS_VOLATILE``: whether a stopped task still had a pid when it was
reported is timing, not behaviour). Full-output file names (``pi-bash-<16 hex>.log``) become ``$TMP/pi-bash-XXXX.log``
wherever they appear, as the ``tmpfiles`` normaliser writes them.

JSON has one number type: ``2.0`` and ``2`` are the same value (Python and JavaScript print them
differently); booleans are not numbers. With ``unordered_lines`` (pi's ``grep`` and ``find``, whose
ripgrep and fd walk directories in parallel and print files in the order they finish: two runs of
pi itself differ) the lines of the text before its first blank line are compared as a sorted list.

What a scenario's expectations see is normalised by ``harness.run.normalise`` (the normalisers the
scenario declares); this module is what two runs' observations must agree on beyond that. ``toolproof
diff``, ``toolproof fuzz`` and the local/docker parity test all compare through
``differing_keys`` and ``differing_paths``."""

from __future__ import annotations

import json
from typing import Any

from harness.run.normalise import TASK_ID_KEYS, TASK_ID_TEXT_RE, TMPFILE_RE, TMPFILE_TOKEN

IGNORED_KEYS = ("duration_s",)
VOLATILE_KEYS = {
    "pid": "$PID", "pgid": "$PID",
    "created_at": "$TIME", "started_at": "$TIME", "ended_at": "$TIME", "updated_at": "$TIME",
    "createdAt": "$TIME", "startedAt": "$TIME", "endedAt": "$TIME",
    "parentSessionId": "$SESSION_ID", "sessionId": "$SESSION_ID", "session_id": "$SESSION_ID",
    "parentTurnId": "$TURN_ID", "turnId": "$TURN_ID",
}
ALWAYS_VOLATILE = ("pid", "pgid")


def _task_ids(value: Any, found: list[str]) -> None:
    if isinstance(value, dict):
        for k, sub in value.items():
            if k in TASK_ID_KEYS and isinstance(sub, str) and sub and sub not in found:
                found.append(sub)
            _task_ids(sub, found)
    elif isinstance(value, list):
        for sub in value:
            _task_ids(sub, found)
    elif isinstance(value, str):
        for tid in TASK_ID_TEXT_RE.findall(value):
            if tid not in found:
                found.append(tid)


def _replace(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: (VOLATILE_KEYS[k] if k in VOLATILE_KEYS and not isinstance(v, (dict, list))
                    and (v is not None or k in ALWAYS_VOLATILE) else _replace(v, ids)) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace(v, ids) for v in value]
    if isinstance(value, str):
        for tid, token in ids.items():
            value = value.replace(tid, token)
        return TMPFILE_RE.sub(TMPFILE_TOKEN, value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)  # one number type: 2.0 is 2
    return value


def _sorted_head(text: str) -> str:
    """The lines before the first blank line sorted, the rest (notices) kept in place."""
    head, sep, tail = text.partition("\n\n")
    return "\n".join(sorted(head.split("\n"))) + sep + tail


def comparable(obs: dict[str, Any] | None, *, unordered_lines: bool = False) -> dict[str, Any] | None:
    """An observation with durations dropped and random values replaced by placeholders."""
    if obs is None:
        return None
    kept = {k: v for k, v in obs.items() if k not in IGNORED_KEYS}
    if unordered_lines and isinstance(kept.get("text"), str):
        kept["text"] = _sorted_head(kept["text"])
    found: list[str] = []
    _task_ids(kept, found)
    ids = {tid: f"$TASK_ID{i}" for i, tid in enumerate(found, 1)}
    return _replace(kept, dict(sorted(ids.items(), key=lambda kv: -len(kv[0]))))


def differing_keys(a: dict[str, Any] | None, b: dict[str, Any] | None, *,
                            unordered_lines: bool = False) -> list[str]:
    """The keys in which two observations (``Observation.to_json``) differ once comparable."""
    ca, cb = comparable(a, unordered_lines=unordered_lines), comparable(b, unordered_lines=unordered_lines)
    if ca is None or cb is None:
        return []
    return sorted(k for k in set(ca) | set(cb) if _canon(ca.get(k)) != _canon(cb.get(k)))


def differing_paths(a: dict[str, Any] | None, b: dict[str, Any] | None) -> list[str]:
    """The paths whose entry differs between two workspace trees (``Backend.list_tree``), or that
    one side lacks; none when either side did not list its tree."""
    if a is None or b is None:
        return []
    return [p for p in sorted(set(a) | set(b)) if a.get(p) != b.get(p)]


def _canon(value: Any) -> str:
    """Equal JSON values give equal strings (``True`` and ``1`` do not)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
