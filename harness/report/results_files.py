"""JSON results files read back: ``load_results`` is the one reader, checking their shape so a
wrong file is a one-line ``UsageError`` (used by ``merge``, ``baseline update`` and ``matrix``),
and ``merge`` combines shard results into one run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.errors import UsageError
from harness.model.results import RESULTS_FORMAT, STATUSES, RunInfo, RunResult


def _not_results(path: str, why: str) -> UsageError:
    return UsageError(f"{path}: not a toolproof JSON results file ({why})")


def _check_scenario(path: str, index: int, obj: Any) -> None:
    where = f"scenarios[{index}]"
    if not isinstance(obj, dict):
        raise _not_results(path, f"{where} is not an object")
    if not isinstance(obj.get("id"), str) or not obj["id"]:
        raise _not_results(path, f"{where} has no string 'id'")
    where = f"scenario {obj['id']!r}"
    if obj.get("status") not in STATUSES:
        raise _not_results(path, f"{where}: status {obj.get('status')!r} is not one of {', '.join(STATUSES)}")
    tags = obj.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise _not_results(path, f"{where}: 'tags' is not a list of strings")
    steps = obj.get("steps", [])
    if not isinstance(steps, list):
        raise _not_results(path, f"{where}: 'steps' is not a list")
    for j, st in enumerate(steps):
        if not isinstance(st, dict) or "id" not in st or st.get("status") not in STATUSES:
            raise _not_results(path, f"{where}: steps[{j}] has no 'id' or a status that is not one of "
                                     f"{', '.join(STATUSES)}")
        msgs = st.get("messages", [])
        if not isinstance(msgs, list) or not all(isinstance(m, str) for m in msgs):
            raise _not_results(path, f"{where}: steps[{j}].messages is not a list of strings")


def parse_results(obj: Any, path: str) -> RunResult:
    """A results JSON object (``RunResult.to_json``) → RunResult; any shape problem is a
    one-line ``UsageError`` naming ``path`` (and the scenario)."""
    if not isinstance(obj, dict) or not isinstance(obj.get("scenarios"), list):
        raise _not_results(path, "no 'scenarios' list")
    fmt = obj.get("format", RESULTS_FORMAT)
    if fmt != RESULTS_FORMAT:
        raise UsageError(f"{path}: results format {fmt!r} is not supported (expected {RESULTS_FORMAT})")
    if not isinstance(obj.get("run", {}), dict):
        raise _not_results(path, "'run' is not an object")
    seen: set[str] = set()
    for i, s in enumerate(obj["scenarios"]):
        _check_scenario(path, i, s)
        if s["id"] in seen:
            raise _not_results(path, f"scenario {s['id']!r} appears twice")
        seen.add(s["id"])
    try:
        return RunResult.from_json(obj)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise _not_results(path, f"{type(exc).__name__}: {exc}") from None


def load_results(path: str) -> RunResult:
    """Read and check a JSON results file; any problem is a one-line ``UsageError``."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read results {path}: {exc}") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _not_results(f"{path}:{exc.lineno}", exc.msg) from None
    return parse_results(obj, path)


def merge(runs: Sequence[RunResult]) -> RunResult:
    """Merge shard results: scenarios sorted by id; a scenario in several inputs is an error."""
    if not runs:
        raise UsageError("merge: no results given")
    seen: dict[str, int] = {}
    scenarios = []
    for i, run in enumerate(runs):
        for s in run.scenarios:
            if s.id in seen:
                raise UsageError(f"merge: scenario {s.id!r} appears in inputs {seen[s.id] + 1} and {i + 1}")
            seen[s.id] = i
            scenarios.append(s)
    first = runs[0].info
    info = RunInfo(backend=first.backend, implementation=first.implementation, version=first.version,
                   started=min(r.info.started for r in runs), duration_s=max(r.info.duration_s for r in runs),
                   jobs=sum(r.info.jobs for r in runs), shard="", baseline=first.baseline,
                   toolproof_version=first.toolproof_version,
                   extra={"merged_shards": [r.info.shard for r in runs]},
                   level=" / ".join(dict.fromkeys(r.info.level for r in runs if r.info.level)))
    return RunResult(info, tuple(sorted(scenarios, key=lambda s: s.id)))
