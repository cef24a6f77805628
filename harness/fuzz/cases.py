"""Case ``i`` of seed ``s``: which tool, drawn by weight, and its generated call, workspace and
environment. A case depends only on ``(s, i)`` (its own ``random.Random``), so any case can be
regenerated alone and a run is reproducible from its seed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.fuzz.commands import gen_bash
from harness.fuzz.execute import Case
from harness.fuzz.generate import Gen, gen_edit, gen_read, gen_write
from harness.fuzz.trees import gen_glob, gen_grep

TOOLS = ("read", "write", "edit", "grep", "glob", "bash")
TOOL_WEIGHTS = (20, 13, 22, 15, 12, 18)  # percent of the calls, roughly
Generator = Callable[[Gen], tuple[Any, ...]]
GENERATORS: dict[str, Generator] = {"read": gen_read, "write": gen_write, "edit": gen_edit, "grep": gen_grep,
                                    "glob": gen_glob, "bash": gen_bash}


def generate(seed: int, index: int, tools: tuple[str, ...] = TOOLS) -> Case:
    g = Gen(seed, index)
    weights = [w for t, w in zip(TOOLS, TOOL_WEIGHTS, strict=True) if t in tools]
    tool = g.r.choices([t for t in TOOLS if t in tools], weights)[0]
    args, files, tag, *rest = GENERATORS[tool](g)
    extra: dict[str, Any] = rest[0] if rest else {}
    dirs = sorted({"/".join(p.split("/")[:i]) for p, _ in files for i in range(1, p.count("/") + 1)}
                  | set(extra.get("dirs", ())))
    if tool in ("read", "write", "edit") and "dir" not in dirs and g.r.random() < 0.3:
        dirs.append("dir")
    malformed = "malformed" in g.tags
    extra_tags = sorted({t for t in g.tags if t.startswith(("path:", "old:", "pattern:"))} - {"path:plain"})
    label = "+".join([tag, *extra_tags, *(["malformed"] if malformed else [])])
    return Case(tool, args, tuple(dict(files).items()), tuple(sorted(dirs)), label, index,
                links=tuple(extra.get("links", ())), git=bool(extra.get("git", False)),
                env=tuple(extra.get("env", ())), deadline_s=float(extra.get("deadline_s", 60.0)))
