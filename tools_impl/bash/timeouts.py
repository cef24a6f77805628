"""The bash timeout clamps of spec bash.2, as pure functions shared by the bash wrapper (foreground
timeout), the Windows host-trash launcher (same foreground timeout) and the background-task layer
(``maxRunMs`` watchdog). Kept in their own module so that none of those has to import another.
"""

from __future__ import annotations

import math

from tools_impl.core.profile import REFERENCE, Profile
from tools_impl.js.text import finite_number


def resolve_foreground_timeout(timeout: object, profile: Profile = REFERENCE) -> float:
    """``resolveForegroundTimeout``: absent, non-finite or ``<= 0`` → the default
    (``Profile.bash_default_timeout_s``, 120); otherwise ``min(timeout, bash_max_timeout_s)``
    (300; fractions kept)."""
    t = finite_number(timeout)
    if t is None or t <= 0:
        return profile.bash_default_timeout_s
    return min(t, profile.bash_max_timeout_s)


def resolve_background_bash_max_run_ms(timeout: float | None, profile: Profile = REFERENCE) -> float:
    """``resolveBackgroundBashMaxRunMs``: ``explicit = t > 0 ? t*1000 : 0``;
    ``min(MAX, max(DEFAULT, explicit))`` with ``Profile.bash_max_background_run_ms`` and
    ``bash_background_max_run_ms``."""
    explicit = timeout * 1000 if timeout is not None and not math.isnan(timeout) and timeout > 0 else 0
    return min(profile.bash_max_background_run_ms, max(profile.bash_background_max_run_ms, explicit))


def cap_background_bash_max_run_ms(ms: float, profile: Profile = REFERENCE) -> float:
    """``capBackgroundBashMaxRunMs``: NaN → the default; else ``min(MAX, max(1, ms))``."""
    if math.isnan(ms):
        return profile.bash_background_max_run_ms
    return min(profile.bash_max_background_run_ms, max(1, ms))
