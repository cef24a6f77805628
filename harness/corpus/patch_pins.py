"""Patch pins: which state (``on``/``off``) of which patch toggle each scenario pins
(``patches: {edit.fuzzy-span: on}``), and the per-patch verdict of a run against one
implementation (``toolproof patches``).

A scenario pinning ``on`` passes only where the change is present; one pinning ``off`` passes
only where it is absent (on the reference, its ``profile.patches`` switches the toggle off, so
both pass there). The verdict for a patch, from the pinned scenarios that ran (skips ignored):

- ``present``: every ``on`` scenario passed;
- ``absent``: no ``on`` scenario passed, and every ``off`` scenario that ran passed;
- ``partial``: some ``on`` scenarios passed and some failed;
- ``untested``: no pinned scenario ran, or none of ``on`` ran while an ``off`` one failed
  (nothing then speaks for either state).

The toggles, their spec rules and descriptions come from the reference's patch registry
(``tools_impl/server/patch_catalogue.py``), never from the implementation under test.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from harness.model.results import PASS, SKIP, XFAIL, RunResult
from harness.model.scenario import Scenario
from tools_impl.server.patch_catalogue import PatchEntry, patch_catalogue

PRESENT = "present"
ABSENT = "absent"
PARTIAL = "partial"
UNTESTED = "untested"
VERDICTS = (PRESENT, ABSENT, PARTIAL, UNTESTED)


@dataclass(frozen=True)
class PatchVerdict:
    patch: str
    verdict: str
    on_passed: tuple[str, ...] = ()
    on_failed: tuple[str, ...] = ()
    off_passed: tuple[str, ...] = ()
    off_failed: tuple[str, ...] = ()
    skipped: tuple[str, ...] = field(default=())
    skip_reasons: tuple[str, ...] = field(default=())  # one per ``skipped`` scenario, same order
    spec: str = ""  # the toggle's spec rule id
    description: str = ""

    def to_json(self) -> dict[str, object]:
        return {"patch": self.patch, "spec": self.spec, "description": self.description, "verdict": self.verdict,
                "on": {"passed": list(self.on_passed), "failed": list(self.on_failed)},
                "off": {"passed": list(self.off_passed), "failed": list(self.off_failed)},
                "skipped": list(self.skipped), "skip_reasons": list(self.skip_reasons)}

    def skipped_summary(self) -> str:
        """Why every pinned scenario skipped: ``all 2 pinned scenarios need os=windows`` when they
        share one unmet requirement; ``all 5 pinned scenarios skipped: 3 need profile_overlay=true,
        2 need os=windows`` when each has one (most frequent first); else the count."""
        n = len(self.skipped)
        lead = f"all {n} pinned scenarios" if n != 1 else "the 1 pinned scenario"
        if len(self.skip_reasons) != n or not all(r.startswith("requires ") for r in self.skip_reasons):
            return f"{lead} skipped"
        wants = Counter(r.split(";", 1)[0].removeprefix("requires ").strip() for r in self.skip_reasons)
        if len(wants) == 1:
            return f"{lead} need{'s' if n == 1 else ''} {next(iter(wants))}"
        parts = [f"{k} need{'s' if k == 1 else ''} {want}"
                 for want, k in sorted(wants.items(), key=lambda item: (-item[1], item[0]))]
        return f"{lead} skipped: {', '.join(parts)}"


def pins_by_patch(scenarios: Iterable[Scenario]) -> dict[str, dict[str, list[str]]]:
    """patch → {"on": [scenario ids], "off": [...]}, for every toggle (empty lists when unpinned)."""
    out: dict[str, dict[str, list[str]]] = {p.name: {"on": [], "off": []} for p in patch_catalogue()}
    for s in scenarios:
        for name, state in s.patches:
            out[name][state].append(s.id)
    return out


def pinned(scenarios: Sequence[Scenario]) -> list[Scenario]:
    return [s for s in scenarios if s.patches]


def verdicts(scenarios: Sequence[Scenario], run: RunResult) -> list[PatchVerdict]:
    status = {r.id: r.status for r in run.scenarios}
    reasons = {r.id: r.reason or "" for r in run.scenarios}
    entries = {e.name: e for e in patch_catalogue()}
    out: list[PatchVerdict] = []
    for patch, states in pins_by_patch(scenarios).items():
        groups: dict[str, list[str]] = {"on_passed": [], "on_failed": [], "off_passed": [], "off_failed": [], "skipped": [],
                                        "skip_reasons": []}
        for state in ("on", "off"):
            for sid in states[state]:
                st = status.get(sid, SKIP)
                if st == SKIP:
                    groups["skipped"].append(sid)
                    groups["skip_reasons"].append(reasons.get(sid, "not run"))
                elif st == PASS:
                    groups[f"{state}_passed"].append(sid)
                elif st != XFAIL:
                    groups[f"{state}_failed"].append(sid)
        on_p, on_f = groups["on_passed"], groups["on_failed"]
        off_p, off_f = groups["off_passed"], groups["off_failed"]
        if on_p and not on_f:
            verdict = PRESENT
        elif on_p and on_f:
            verdict = PARTIAL
        elif on_f and not off_f:
            verdict = ABSENT
        elif not on_p and not on_f and off_p and not off_f:
            verdict = ABSENT
        else:
            verdict = UNTESTED
        out.append(PatchVerdict(patch, verdict, **{k: tuple(v) for k, v in groups.items()},
                                spec=entries[patch].spec_id, description=entries[patch].description))
    return out


def render_text(found: Sequence[PatchVerdict], label: str) -> str:
    width = max(len(v.patch) for v in found)
    lines = [f"patches of {label}:"]
    for v in found:
        detail = []
        for name, ids in (("on passed", v.on_passed), ("on failed", v.on_failed),
                          ("off passed", v.off_passed), ("off failed", v.off_failed)):
            if ids:
                detail.append(f"{name}: {', '.join(ids)}")
        if v.skipped and not detail:
            detail.append(v.skipped_summary())
        elif not detail:
            detail.append("no scenario pins it")
        lines.append(f"  {v.patch:<{width}}  {v.verdict:<8}  {'; '.join(detail)}")
    return "\n".join(lines) + "\n"


def render_catalogue(entries: Sequence[PatchEntry]) -> str:
    """``toolproof patches --list``: one line per toggle with the layer it changes, its
    description, its seams and the toggles it needs."""
    width = max(len(e.name) for e in entries)
    lines = ["patch toggles of the reference (rules patch.<name> in docs/spec/patches.md):"]
    for e in entries:
        needs = f"; needs {', '.join(e.requires)}" if e.requires else ""
        lines.append(f"  {e.name:<{width}}  {e.surface:<7}  {e.description}  (seams: {', '.join(e.seams)}{needs})")
    return "\n".join(lines) + "\n"
