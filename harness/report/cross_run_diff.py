"""``toolproof diff``: compare the normalised observations of the same corpus on two backends and
list every step whose observation differs (durations ignored)."""

from __future__ import annotations

import json
from typing import Any

from harness.model.results import RunResult
from harness.run.compare import readable_diff

IGNORED_KEYS = ("duration_s",)


def _comparable(obs: dict[str, Any] | None) -> dict[str, Any] | None:
    if obs is None:
        return None
    return {k: v for k, v in obs.items() if k not in IGNORED_KEYS}


def observation_differences(left: RunResult, right: RunResult, labels: tuple[str, str] = ("a", "b")) -> list[str]:
    """One entry per differing step: ``scenario step: what`` with a diff of the two observations."""
    out: list[str] = []
    rmap = {s.id: s for s in right.scenarios}
    for ls in left.scenarios:
        rs = rmap.get(ls.id)
        if rs is None:
            continue
        if (ls.status == "skip") != (rs.status == "skip"):
            out.append(f"{ls.id}: skipped on one side only ({ls.status} vs {rs.status})")
            continue
        rsteps = {st.id: st for st in rs.steps}
        for lst in ls.steps:
            rst = rsteps.get(lst.id)
            if rst is None:
                continue
            a, b = _comparable(lst.observation), _comparable(rst.observation)
            if a is None or b is None or a == b:
                continue
            fields = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            ja = json.dumps(a, ensure_ascii=False, indent=1, sort_keys=True)
            jb = json.dumps(b, ensure_ascii=False, indent=1, sort_keys=True)
            out.append(f"{ls.id} {lst.id}: {', '.join(fields)} differ\n" + readable_diff(ja + "\n", jb + "\n", labels))
    return out
