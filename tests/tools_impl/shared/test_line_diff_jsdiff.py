"""Differential test of tools_impl.shared.line_diff against the real jsdiff (npm package ``diff``).

Runs only when ``node`` is on PATH and ``TOOLPROOF_JSDIFF_DIR`` names a directory from which
``require("diff")`` resolves to jsdiff 8.0.4 (e.g. a directory where ``npm install diff@8.0.4``
was run). Nothing is installed by the test; without either it is skipped with the reason.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.repo import FIXTURES
from tools_impl.shared.line_diff import (
    DiffBounds,
    DiffOmitted,
    create_two_files_patch,
    diff_lines,
    diff_lines_bounded,
)

ORACLE = FIXTURES / "jsdiff_oracle.js"
JSDIFF_VERSION = "8.0.4"
CASES_PER_SHAPE = 600
LINE_ALPHABET = ["a", "b", "c", "", "x y", "a\r", "\r", "\u00e9"]
LARGE_CASES = 150


def _jsdiff_dir() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH")
    root = os.environ.get("TOOLPROOF_JSDIFF_DIR")
    if not root:
        pytest.skip("TOOLPROOF_JSDIFF_DIR is not set (a directory with `npm install diff@8.0.4`)")
    if not (Path(root) / "node_modules" / "diff" / "package.json").is_file():
        pytest.skip(f"TOOLPROOF_JSDIFF_DIR has no node_modules/diff: {root}")
    return root


def _random_text(rng: random.Random, max_lines: int) -> str:
    n = rng.randint(0, max_lines)
    text = "".join(rng.choice(LINE_ALPHABET) + rng.choice(["\n", "\n", "\n", "\r\n"]) for _ in range(n))
    if text and rng.random() < 0.3:
        text = text[:-1]
    if rng.random() < 0.2:
        text += rng.choice(LINE_ALPHABET)
    return text


def _mutate(rng: random.Random, text: str) -> str:
    lines = text.split("\n")
    for _ in range(rng.randint(0, 5)):
        i = rng.randint(0, len(lines))
        op = rng.random()
        if op < 0.35:
            lines.insert(i, rng.choice(LINE_ALPHABET))
        elif op < 0.7 and i < len(lines):
            del lines[i]
        elif i < len(lines):
            lines[i] = rng.choice(LINE_ALPHABET)
    return "\n".join(lines)


def _cases(seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    cases: list[dict[str, Any]] = []
    for max_lines in (4, 12, 40):
        for _ in range(CASES_PER_SHAPE):
            old = _random_text(rng, max_lines)
            new = _random_text(rng, max_lines) if rng.random() < 0.4 else _mutate(rng, old)
            cases.append({"path": "dir/f.txt", "old": old, "new": new, "maxEditLength": rng.randint(0, 8)})
    return cases


def _large_cases(seed: int) -> list[dict[str, Any]]:
    """Files of hundreds to thousands of lines with a few edits: long common runs before, between
    and after the changes, the snakes the line diff walks with slice comparisons."""
    rng = random.Random(seed)
    cases: list[dict[str, Any]] = []
    for _ in range(LARGE_CASES):
        lines = [f"row {rng.randint(0, 30)}" for _ in range(rng.randint(100, 2500))]
        text = "\n".join(lines) + rng.choice(["\n", "", "\r\n"])
        cases.append({"path": "big.txt", "old": text, "new": _mutate(rng, text), "maxEditLength": rng.randint(0, 8)})
    return cases


def _run_oracle(root: str, cases: list[dict[str, Any]]) -> dict[str, Any]:
    proc = subprocess.run(
        ["node", str(ORACLE), root],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=True,
    )
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


@pytest.mark.parametrize("seed", [1, 2, "large-3", "large-4"])
def test_diff_lines_patch_and_bounds_equal_real_jsdiff(seed: int | str) -> None:
    root = _jsdiff_dir()
    cases = _large_cases(int(seed[6:])) if isinstance(seed, str) else _cases(seed)
    oracle = _run_oracle(root, cases)
    assert oracle["version"] == JSDIFF_VERSION
    mismatches = []
    for case, expected in zip(cases, oracle["results"], strict=True):
        ours = {
            "parts": [
                {"value": c.value, "added": c.added, "removed": c.removed, "count": c.count}
                for c in diff_lines(case["old"], case["new"])
            ],
            "patch": create_two_files_patch(case["path"], case["path"], case["old"], case["new"]),
            "boundedOmitted": isinstance(
                diff_lines_bounded(case["old"], case["new"], DiffBounds(case["maxEditLength"], None)), DiffOmitted
            ),
        }
        if ours != expected:
            mismatches.append((case, ours, expected))
    assert mismatches == []
