"""What the reference server declares in its ``hello`` (toolproof's docs/scenario-format.md,
"Behaviour, wording and features"): the dialect whose wording it speaks and its optional
features. With the wrapper (the reference) that is MiniMax's dialect and every feature; without
it (``--upstream``, the pi engine alone) pi's dialect and what pi's engine has, plus the tools and
ops the server still offers. The names are the harness's registry (``harness/model/features.py``;
a test keeps the two in step)."""

from __future__ import annotations

from tools_impl.core.profile import Profile

REFERENCE_DIALECTS: tuple[str, ...] = ("minimax",)
UPSTREAM_DIALECTS: tuple[str, ...] = ("pi",)
REFERENCE_FEATURES: tuple[str, ...] = (
    "fuzzy-edit", "line-number-retry", "edit-disproportion-guard",
    "read-binary-guard", "read-device-guard", "read-output-cap", "read-path-candidates",
    "read-images", "read-pdf", "read-notebook", "write-keeps-encoding",
    "bash-output-cap", "bash-timeout-clamp", "bash-env-scrub", "bash-rm-trash", "background-tasks", "powershell",
    "process-events", "grep-tool", "glob-tool", "classify",
)
UPSTREAM_FEATURES: tuple[str, ...] = ("fuzzy-edit", "read-images", "grep-tool", "glob-tool", "classify")


def dialects_of(profile: Profile) -> list[str]:
    return list(REFERENCE_DIALECTS if profile.wrapper else UPSTREAM_DIALECTS)


def features_of(profile: Profile) -> list[str]:
    return list(REFERENCE_FEATURES if profile.wrapper else UPSTREAM_FEATURES)
