"""Baselines for ``toolproof properties --baseline FILE`` (``baselines/properties/<name>.yaml``):
the invariants an implementation is known to break, each with a reason. The file format is the
scenario baselines' (``implementation`` and ``entries`` of ``id`` + ``reason``), with invariant
names as ids and no ``step``.

Applied to the results: a listed invariant that fails is ``xfail`` with the baseline's reason (a
"patch absent" one stays recognised as such, the reason added); a listed invariant that passes is
``stale`` and fails the run, so the list only shrinks; listed invariants that did not apply, did
not run (``--only``) or errored are left as they are. An unlisted "patch absent" stays ``xfail``
(recognised from ``hello``); an unlisted failure is a failure.
"""

from __future__ import annotations

from dataclasses import replace

from harness.corpus.yaml_reader import read_document_text
from harness.errors import ScenarioError, UsageError
from harness.properties.invariants import INVARIANTS
from harness.properties.runner import FAIL, PASS, PATCH_ABSENT, STALE, XFAIL, PropertyResult
from harness.report.baseline import Baseline, parse_baseline_text


def load_properties_baseline(path: str) -> Baseline:
    """The baseline at ``path``; ``ScenarioError`` (file: entry: what) for an unknown invariant or a
    ``step``, on top of the scenario baselines' checks."""
    text = read_document_text(path)
    baseline = parse_baseline_text(text, path, whole_entries=True)
    known = [i.name for i in INVARIANTS]
    lines = text.splitlines()
    problems = []
    for n, entry in enumerate(baseline.entries, 1):
        line = next((i for i, ln in enumerate(lines, 1) if ln.strip().lstrip("- ").strip() in
                     (f"id: {entry.id}", f"id: '{entry.id}'", f'id: "{entry.id}"')), 1)
        if entry.id not in known:
            problems.append(f"{path}:{line}: entries[{n}].id: unknown invariant {entry.id!r}; expected one of "
                            f"{', '.join(known)}")
        if entry.step is not None:
            problems.append(f"{path}:{line}: entries[{n}].step: an invariant has no steps; remove it")
    if problems:
        raise ScenarioError(problems)
    return baseline


def check_implementation(baseline: Baseline, implementation: str) -> None:
    """``UsageError`` when ``baseline`` is for another implementation than the one under test."""
    if baseline.implementation != implementation:
        raise UsageError(f"--baseline {baseline.path} lists the properties of {baseline.implementation!r}; "
                         f"the implementation under test is {implementation!r}")


def apply_properties_baseline(results: list[PropertyResult], baseline: Baseline) -> list[PropertyResult]:
    """``results`` with the baseline applied (see the module docstring)."""
    reasons = {e.id: e.reason for e in baseline.entries}
    out = []
    for res in results:
        reason = reasons.get(res.invariant.name)
        if reason is None:
            out.append(res)
        elif res.status == PATCH_ABSENT:
            out.append(replace(res, reason=f"{res.reason}; baseline: {reason}"))
        elif res.status == FAIL:
            out.append(replace(res, status=XFAIL, reason=f"baseline: {reason}"))
        elif res.status == PASS:
            out.append(replace(res, status=STALE,
                               reason=f"stale baseline entry: {res.invariant.name} now holds; remove it from "
                                      f"{baseline.path} (reason was: {reason})"))
        else:
            out.append(res)
    return out


__all__ = ["apply_properties_baseline", "check_implementation", "load_properties_baseline"]
