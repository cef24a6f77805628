"""One corpus, both surfaces: a tool call written on one surface, sent to an implementation that
speaks only the other, with its arguments mapped (docs/scenario-format.md, "Surfaces").

The two surfaces name the same things differently (docs/spec/ read.1, write.1, edit.1, edit.5,
bash.1): ``read {path, offset, limit}``, ``write {path, content}`` and ``bash {command, timeout}``
are the same on both (offsets and limits in lines, 1-based; timeouts in seconds); ``edit`` is
``{file_path, old_string, new_string, replace_all}`` on the minimax surface (Claude Code's Edit
has this shape) and ``{path, edits: [{oldText, newText}]}`` on the pi surface. An argument with no
counterpart (``replace_all: true``, ``run_in_background: true``, read's ``pages``, several edits
in one call on the way to the minimax surface, an unknown key) makes the call unmappable: the step
skips with the reason, and so does the rest of its scenario.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

JsonObj = dict[str, Any]
MINIMAX, PI = "minimax", "pi"
# the arguments both surfaces share, per tool (same name, same unit)
SHARED_ARGS: dict[str, tuple[str, ...]] = {
    "read": ("path", "offset", "limit"),
    "write": ("path", "content"),
    "bash": ("command", "timeout"),
}
# arguments that may be dropped when they ask for the default
DEFAULT_FALSE = {MINIMAX: {"edit": ("replace_all",), "bash": ("run_in_background",)}, PI: {}}


@dataclass(frozen=True)
class Mapped:
    """The call on ``surface``; ``reason`` is set (and ``args`` empty) when it cannot be mapped."""

    surface: str
    args: JsonObj
    reason: str = ""

    @property
    def ok(self) -> bool:
        return not self.reason


def target_surface(scenario_surface: str, spoken: tuple[str, ...]) -> str | None:
    """The surface a scenario's calls are sent on: its own when spoken, else one the mapping can
    reach, else None."""
    if scenario_surface in spoken:
        return scenario_surface
    for surface in spoken:
        if (scenario_surface, surface) in ((MINIMAX, PI), (PI, MINIMAX)):
            return surface
    return None


def map_call(tool: str, args: Any, source: str, target: str) -> Mapped:
    """``args`` of ``tool`` written on surface ``source``, as surface ``target`` takes them."""
    if source == target:
        return Mapped(target, args)
    if not isinstance(args, dict):
        return Mapped(target, {}, f"{tool}'s arguments are not an object, so they have no form on the {target} surface")
    args = dict(args)
    for key in DEFAULT_FALSE.get(source, {}).get(tool, ()):
        if key in args and args[key] is False:
            del args[key]
    if tool in SHARED_ARGS:
        extra = [k for k in args if k not in SHARED_ARGS[tool]]
        if extra:
            return _unmappable(tool, target, extra)
        return Mapped(target, args)
    if tool == "edit":
        return _edit_to_pi(args) if target == PI else _edit_to_minimax(args)
    return Mapped(target, {}, f"{tool} has no counterpart on the {target} surface")


def _unmappable(tool: str, target: str, keys: list[str]) -> Mapped:
    what = ", ".join(f"{k}" for k in keys)
    return Mapped(target, {}, f"{tool} argument{'s' if len(keys) > 1 else ''} {what} "
                              f"{'have' if len(keys) > 1 else 'has'} no counterpart on the {target} surface")


def _edit_to_pi(args: JsonObj) -> Mapped:
    want = ("file_path", "old_string", "new_string")
    extra = [k for k in args if k not in want]
    if extra:
        return _unmappable("edit", PI, extra)
    missing = [k for k in want if k not in args]
    if missing:
        return Mapped(PI, {}, f"edit without {', '.join(missing)} tests the minimax surface's own validation")
    return Mapped(PI, {"path": args["file_path"],
                       "edits": [{"oldText": args["old_string"], "newText": args["new_string"]}]})


def _edit_to_minimax(args: JsonObj) -> Mapped:
    edits = args.get("edits")
    legacy = "oldText" in args or "newText" in args
    extra = [k for k in args if k not in ("path", "edits", "oldText", "newText")]
    if extra:
        return _unmappable("edit", MINIMAX, extra)
    if "path" not in args:
        return Mapped(MINIMAX, {}, "edit without path tests the pi surface's own validation")
    if legacy and edits is None:
        if not ("oldText" in args and "newText" in args):
            return Mapped(MINIMAX, {}, "edit with half a legacy oldText/newText pair tests the pi surface's own input")
        return Mapped(MINIMAX, {"file_path": args["path"], "old_string": args["oldText"], "new_string": args["newText"]})
    if legacy or not isinstance(edits, list) or len(edits) != 1 or not isinstance(edits[0], dict) \
            or set(edits[0]) != {"oldText", "newText"}:
        return Mapped(MINIMAX, {}, "the minimax surface's edit takes exactly one replacement (old_string, "
                                   "new_string); this call sends another form of edits")
    return Mapped(MINIMAX, {"file_path": args["path"], "old_string": edits[0]["oldText"],
                            "new_string": edits[0]["newText"]})
