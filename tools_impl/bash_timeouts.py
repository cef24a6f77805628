"""The bash timeout clamps of spec §8.2, as pure functions shared by the bash wrapper (foreground
timeout), the Windows host-trash launcher (same foreground timeout) and the background-task layer
(``maxRunMs`` watchdog). Kept in their own module so that none of those has to import another.
"""

from __future__ import annotations

import math

from .profile import Profile

DEFAULT_FOREGROUND_BASH_TIMEOUT_SECONDS = 120
MAX_FOREGROUND_BASH_TIMEOUT_SECONDS = 300
DEFAULT_BACKGROUND_BASH_MAX_RUN_MS = 30 * 60 * 1000
MAX_BACKGROUND_BASH_MAX_RUN_MS = 2_147_483_647


def finite_number(value: object) -> float | None:
    """``value`` when it is a finite JSON number (booleans are not numbers), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if math.isfinite(value) else None


def resolve_foreground_timeout(timeout: object, profile: Profile | None = None) -> float:
    """``resolveForegroundTimeout``: absent, non-finite or ``<= 0`` → the default (120);
    otherwise ``min(timeout, maximum)`` (300; fractions kept)."""
    default = profile.bash_default_timeout_s if profile else DEFAULT_FOREGROUND_BASH_TIMEOUT_SECONDS
    maximum = profile.bash_max_timeout_s if profile else MAX_FOREGROUND_BASH_TIMEOUT_SECONDS
    t = finite_number(timeout)
    if t is None or t <= 0:
        return default
    return min(t, maximum)


def resolve_background_bash_max_run_ms(timeout: float | None, profile: Profile | None = None) -> float:
    """``resolveBackgroundBashMaxRunMs``: ``explicit = t > 0 ? t*1000 : 0``;
    ``min(MAX, max(DEFAULT, explicit))``."""
    default = profile.bash_background_max_run_ms if profile else DEFAULT_BACKGROUND_BASH_MAX_RUN_MS
    maximum = profile.bash_max_background_run_ms if profile else MAX_BACKGROUND_BASH_MAX_RUN_MS
    explicit = timeout * 1000 if timeout is not None and not math.isnan(timeout) and timeout > 0 else 0
    return min(maximum, max(default, explicit))


def cap_background_bash_max_run_ms(ms: float, profile: Profile | None = None) -> float:
    """``capBackgroundBashMaxRunMs``: NaN → the default; else ``min(MAX, max(1, ms))``."""
    default = profile.bash_background_max_run_ms if profile else DEFAULT_BACKGROUND_BASH_MAX_RUN_MS
    maximum = profile.bash_max_background_run_ms if profile else MAX_BACKGROUND_BASH_MAX_RUN_MS
    if math.isnan(ms):
        return default
    return min(maximum, max(1, ms))
