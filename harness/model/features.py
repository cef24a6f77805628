"""Optional features and wording dialects (docs/scenario-format.md, "Behaviour, wording and
features"): the registries scenarios name and implementations declare.

Every expectation of a scenario is one of three claims:

- **behaviour** (a step's ``expect`` and the final ``files``): what any correct tool layer does
  (bytes on disk, success or failure, the text a command printed, what a read returns and where it
  continues);
- **wording** of a named **dialect** (a step's ``wording: {DIALECT: …}``): exact message texts and
  ``details`` receipts, judged only where the implementation declares that dialect;
- an optional **feature** (a scenario's ``features: […]``): behaviour only some tool layers have
  (fuzzy matching, environment scrubbing, background tasks …); a scenario needing a feature the
  implementation does not declare skips with the reason.

An implementation declares its dialects and features in its ``hello`` (``dialects``,
``features``, and ``absent_patches``: the patch toggles it declares it does not have, ``"all"``
for every one), or for a ``cmd:`` layer in ``[tool.toolproof]`` (``dialects``, ``features``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tools_impl.core.profile import ALL_PATCHES


@dataclass(frozen=True)
class Feature:
    name: str
    description: str
    spec: tuple[str, ...]  # the rules of docs/spec/ that describe it


FEATURE_LIST: tuple[Feature, ...] = (
    Feature("fuzzy-edit", "edit finds old text after fuzzy normalisation (NFKC, trailing spaces, curly quotes, "
            "dashes, special spaces) when there is no exact match", ("edit.6", "edit.7", "edit.10")),
    Feature("line-number-retry", "edit retries once with `N→`/`N<TAB>` line-number prefixes stripped from the old "
            "and new text", ("edit.3",)),
    Feature("edit-disproportion-guard", "edit refuses a fuzzy match that spans far more text than the old text",
            ("edit.6", "edit.8")),
    Feature("read-binary-guard", "read refuses binary files (by extension and by content) with a message",
            ("read.5",)),
    Feature("read-device-guard", "read refuses device files, FIFOs and sockets instead of blocking", ("read.4",)),
    Feature("read-output-cap", "read caps its output at 24 KiB and long lines at 2000 characters, with a notice",
            ("read.8", "read.9")),
    Feature("read-path-candidates", "read resolves a path through the wrapper's candidates (literal name first, "
            "then special spaces, @ prefix, file:// URLs, AM/PM, NFD and curly quotes)", ("read.3",)),
    Feature("read-images", "read returns PNG, JPEG, GIF and WebP files as image content", ("read.7",)),
    Feature("read-pdf", "read extracts the text of PDF files, with a pages argument", ("read.2",)),
    Feature("read-notebook", "read renders Jupyter notebooks (.ipynb) cell by cell", ("read.2",)),
    Feature("write-keeps-encoding", "write keeps an existing file's encoding and BOM (UTF-16LE, UTF-8 with BOM) "
            "and reports what it wrote", ("write.3",)),
    Feature("bash-output-cap", "bash caps its output at 24 KiB, keeping head and tail, with a notice",
            ("bash.10",)),
    Feature("bash-timeout-clamp", "bash's foreground timeout defaults to 120 s and is clamped to 300 s",
            ("bash.2",)),
    Feature("bash-env-scrub", "bash removes secrets and agent variables from the command's environment",
            ("bash.env.1", "bash.env.2", "bash.env.3", "bash.env.4")),
    Feature("bash-rm-trash", "bash's rm moves files to a recoverable trash instead of deleting them",
            ("bash.trash.1", "bash.trash.2")),
    Feature("background-tasks", "bash runs commands in the background (run_in_background, auto-promotion) and "
            "offers task_output, task_stop and task_query", ("bash.tasks.1", "bash.tasks.2", "bash.tasks.3",
                                                              "bash.tasks.4", "bash.tasks.5")),
    Feature("powershell", "bash runs commands through PowerShell where the platform has it", ("bash.4", "bash.14")),
    Feature("process-events", "calls report the process facts they observed (process_events)", ("bash.16",)),
    Feature("grep-tool", "the grep tool with the minimax parameters (pattern, path, glob, output_mode, …)",
            ("grep.1",)),
    Feature("glob-tool", "the glob tool with the minimax parameters (pattern, path, sort, offset, limit …)",
            ("glob.1",)),
    Feature("classify", "the classify op: Claude Code's bash permission profile", ("classify.1",)),
)
FEATURES: dict[str, Feature] = {f.name: f for f in FEATURE_LIST}
FEATURE_NAMES: tuple[str, ...] = tuple(FEATURES)

DIALECTS: dict[str, str] = {
    "minimax": "MiniMax's tool layer: numbered read output, `<bash_error>` results, the capture writer's receipts, "
               "the engine's messages with reload hints",
    "pi": "the published pi coding-agent tools: raw read text, errors raised with the engine's short messages",
}
DIALECT_NAMES: tuple[str, ...] = tuple(DIALECTS)
DIALECT_SEPARATOR = "+"  # ``wording: {minimax+pi: …}``: wording both dialects share

# What a step's call implies beyond the scenario's own ``features`` list (on the minimax surface's
# argument names; docs/scenario-format.md lists them).
TOOL_FEATURES: dict[str, str] = {"grep": "grep-tool", "glob": "glob-tool"}
OP_FEATURES: dict[str, str] = {"classify": "classify", "task_output": "background-tasks",
                               "task_stop": "background-tasks", "task_query": "background-tasks"}

# A published pi release (and the reference's ``--upstream`` emulation of it): the features of
# the pi engine, which has none of MiniMax's patches.
PI_FEATURES: tuple[str, ...] = ("fuzzy-edit", "read-images")
# ``toolproof serve --upstream`` (the reference without its wrapper): pi's engine, plus the tools and
# ops that server still offers
UPSTREAM_FEATURES: tuple[str, ...] = (*PI_FEATURES, "grep-tool", "glob-tool", "classify")
ALL = "all"
# the features a patch toggle provides: on an implementation that applies profiles, a scenario whose
# profile sets the patch (``--upstream`` with ``bash.process-events: true``) decides whether it is there
PATCH_FEATURES: dict[str, str] = {"bash.process-events": "process-events"}


@dataclass(frozen=True)
class Declaration:
    """What an implementation says it is: the dialects whose wording it speaks, its optional
    features, and the patch toggles it declares it does not have. ``source`` says where it came
    from (``hello``, ``[tool.toolproof] in FILE``, ``profile base upstream``)."""

    dialects: tuple[str, ...] = ()
    features: tuple[str, ...] = ()
    absent_patches: tuple[str, ...] = ()
    source: str = "hello"

    def has_feature(self, name: str) -> bool:
        return name in self.features

    def lacks_patch(self, name: str) -> bool:
        return name in self.absent_patches


UPSTREAM = Declaration(("pi",), UPSTREAM_FEATURES, ALL_PATCHES, "profile base upstream")


def patch_names(value: Any) -> tuple[str, ...]:
    """``absent_patches`` of a hello: a list of toggle names, or ``"all"`` for every toggle."""
    if value == ALL:
        return ALL_PATCHES
    if isinstance(value, (list, tuple)):
        return tuple(str(v) for v in value)
    return ()


def unknown(names: Iterable[str], known: Iterable[str]) -> list[str]:
    known_set = set(known)
    return [n for n in names if n not in known_set]


def describe_feature(name: str) -> str:
    f = FEATURES.get(name)
    return f"{name} ({f.description})" if f else name


def implied_by_call(tool: str | None, op: str | None, args: Any, surface: str = "minimax") -> tuple[str, ...]:
    """The features one step's request needs whatever the scenario declares: the classify and task
    ops on any surface; on the minimax surface also the grep and glob tools, ``run_in_background:
    true`` and read's ``pages``. (``replace_all`` is part of the minimax surface's edit, as in Claude
    Code's Edit: behaviour, not a feature; a pi-surface implementation has no counterpart, so the
    mapping skips such a call.)"""
    out: list[str] = []
    if op in OP_FEATURES:
        out.append(OP_FEATURES[op])
    if surface != "minimax" or not isinstance(args, dict):
        # a pi-surface call names pi's own tools (grep, find: `requires: {tools: …}` says whether
        # they exist), and a tool call's malformed arguments (fuzz) need no feature
        return tuple(out)
    if tool in TOOL_FEATURES:
        out.append(TOOL_FEATURES[tool])
    if tool == "bash" and args.get("run_in_background") is True:
        out.append("background-tasks")
    if tool == "read" and "pages" in args:
        out.append("read-pdf")
    return tuple(out)


@dataclass(frozen=True)
class DeclarationOverride:
    """``[tool.toolproof] dialects`` / ``features``: what the configured implementation declares
    in place of its hello's (a key left out keeps the hello's)."""

    dialects: tuple[str, ...] | None = None
    features: tuple[str, ...] | None = None
    source: str = "[tool.toolproof]"
    # run every patch pin whatever the implementation declares: `toolproof releases` asks each
    # release both whether a patch is still needed (pin off) and whether upstream adopted it (pin on)
    every_pin: bool = False

    def over(self, decl: Declaration) -> Declaration:
        return Declaration(decl.dialects if self.dialects is None else self.dialects,
                           decl.features if self.features is None else self.features,
                           decl.absent_patches, self.source)
