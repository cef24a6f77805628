"""Record mode: fill or refresh the ``expect`` blocks of scenario steps from an implementation's
(normalised) observations, shown as a unified diff and written only on request.

The file is rewritten textually: only each recorded step's ``expect`` block is replaced (or
inserted after the step's last key); everything else — comments, key order, quoting, other steps —
stays byte-for-byte. Within a replaced ``expect`` block comments are lost. Recorded keys are
``status``, ``is_error``, ``text``/``error`` and ``error_kind``; other expectations (``files``,
``details``, ``duration``, …) are kept, ``text``/``error`` matchers marked ``snapshot: true`` are
left alone, and so are deliberately loose ``text``/``error`` matchers (``contains``,
``startswith``, ``regex``, …) that still hold for the observation; only a matcher that no longer
holds (or every matcher, with ``exact``) is replaced by the exact text. Steps written in flow style (``- {tool: …}``) cannot be recorded.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import yaml

from harness.corpus.loader import parse_scenario_text
from harness.errors import HarnessError, ScenarioError
from harness.model.results import ERROR, SKIP, RunResult
from harness.model.scenario import RESULT_ONLY_KEYS, Expectation, Scenario, TextMatch
from harness.run.compare import check_text

RECORD_WIDTH = 100


class _Dumper(yaml.SafeDumper):
    pass


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value.rstrip("\n") and "\r" not in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_representer)


def _is_snapshot(value: Any) -> bool:
    return isinstance(value, dict) and bool(value.get("snapshot"))


def _loose_still_holds(old: Any, match: TextMatch | None, actual: str) -> bool:
    """``old`` is a loose matcher (a mapping, not a snapshot) that ``actual`` satisfies."""
    if not isinstance(old, dict) or _is_snapshot(old) or match is None:
        return False
    return not check_text("text", match, actual)


def recorded_expect(old: dict[str, Any], obs: dict[str, Any], expect: Expectation | None = None,
                    exact: bool = False) -> dict[str, Any]:
    """The new ``expect`` mapping for one step from its observation JSON. ``expect`` (the parsed
    form of ``old``) lets loose matchers that still hold stay, unless ``exact``."""
    def keep(key: str, match: TextMatch | None, actual: str) -> bool:
        return _is_snapshot(old.get(key)) or (not exact and _loose_still_holds(old.get(key), match, actual))

    rest = {k: v for k, v in old.items() if k not in ("status", "is_error", "text", "error", "error_kind")}
    new: dict[str, Any] = {}
    if obs.get("status") == "error":
        new["status"] = "error"
        actual_error = str(obs.get("error", ""))
        new["error"] = old["error"] if keep("error", expect.error if expect else None, actual_error) else actual_error
        if obs.get("error_kind"):
            new["error_kind"] = obs["error_kind"]
        rest = {k: v for k, v in rest.items() if k not in RESULT_ONLY_KEYS}
    else:
        if obs.get("is_error") or "is_error" in old:
            new["is_error"] = bool(obs.get("is_error"))
        actual_text = str(obs.get("text", ""))
        new["text"] = old["text"] if keep("text", expect.text if expect else None, actual_text) else actual_text
    new.update(rest)
    return new


def _deep_end(node: yaml.Node) -> int:
    if isinstance(node, yaml.MappingNode) and not node.flow_style and node.value:
        return _deep_end(node.value[-1][1])
    if isinstance(node, yaml.SequenceNode) and not node.flow_style and node.value:
        return _deep_end(node.value[-1])
    return node.end_mark.index


def _render(expect: dict[str, Any], col: int) -> str:
    dumped = yaml.dump({"expect": expect}, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                       default_flow_style=False, width=RECORD_WIDTH)
    lines = dumped.rstrip("\n").split("\n")
    return "\n".join([lines[0], *((" " * col + ln) if ln else ln for ln in lines[1:])])


def rewrite_expectations(text: str, path: str, updates: dict[int, dict[str, Any]]) -> str:
    """Replace (or insert) the ``expect`` block of the steps with 1-based index in ``updates``."""
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    if not isinstance(root, yaml.MappingNode):
        raise HarnessError(f"{path}: not a scenario mapping")
    steps_node = next((v for k, v in root.value if k.value == "steps"), None)
    if not isinstance(steps_node, yaml.SequenceNode):
        raise HarnessError(f"{path}: no steps list")
    edits: list[tuple[int, int, str]] = []
    for index, expect in updates.items():
        step = steps_node.value[index - 1]
        if not isinstance(step, yaml.MappingNode) or step.flow_style:
            raise HarnessError(f"{path}:{step.start_mark.line + 1}: steps[{index}]: cannot record into a "
                               "flow-style step; write the step in block style")
        pair = next(((k, v) for k, v in step.value if k.value == "expect"), None)
        col = step.value[0][0].start_mark.column
        if pair is not None:
            key, value = pair
            start, end = key.start_mark.index, _deep_end(value)
            old = text[start:end]
            trailing = old[len(old.rstrip()):]
            edits.append((start, end, _render(expect, col) + trailing))
        else:
            end = _deep_end(step)
            edits.append((end, end, "\n" + " " * col + _render(expect, col)))
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def record_scenario(scenario: Scenario, run: RunResult, exact: bool = False) -> tuple[str, str]:
    """(old text, new text) of one scenario file."""
    res = next((r for r in run.scenarios if r.id == scenario.id), None)
    old_text = Path(scenario.path).read_text(encoding="utf-8")
    if res is None or res.status in (ERROR, SKIP):
        return old_text, old_text
    obs_by_step = {s.id: s.observation for s in res.steps if s.observation is not None}
    updates: dict[int, dict[str, Any]] = {}
    for step in scenario.steps:
        obs = obs_by_step.get(step.id)
        if obs is None:
            continue
        new = recorded_expect(step.raw_expect, obs, step.expect, exact)
        if new != step.raw_expect:
            updates[step.index] = new
    if not updates:
        return old_text, old_text
    new_text = rewrite_expectations(old_text, scenario.path, updates)
    try:
        reparsed = parse_scenario_text(new_text, scenario.path)
    except ScenarioError as exc:
        raise HarnessError(f"{scenario.path}: recording produced an invalid file: {exc.problems[0]}") from None
    for step in reparsed.steps:
        if step.index in updates and step.raw_expect != updates[step.index]:
            raise HarnessError(f"{scenario.path}: steps[{step.index}]: recorded expectation did not round-trip")
    return old_text, new_text


def record_files(scenarios: list[Scenario], run: RunResult, *, write: bool, exact: bool = False) -> str:
    """Record every scenario; return the combined unified diff; write changed files if asked."""
    diffs: list[str] = []
    for scenario in scenarios:
        old, new = record_scenario(scenario, run, exact)
        if old == new:
            continue
        diffs.append("".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                                  f"{scenario.path} (current)", f"{scenario.path} (recorded)")))
        if write:
            Path(scenario.path).write_text(new, encoding="utf-8")
    return "".join(diffs)
