"""Shared test configuration: Hypothesis profiles and the Docker requirement switch.

Hypothesis: a thorough ``dev`` profile for local runs; Hypothesis's own ``ci`` profile is used
automatically when ``CI`` is set (Hypothesis loads it by itself), and both can be forced with
``HYPOTHESIS_PROFILE``.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "dev",
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "fast",
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

_explicit = os.environ.get("HYPOTHESIS_PROFILE")
if _explicit:
    settings.load_profile(_explicit)
elif not os.environ.get("CI"):
    settings.load_profile("dev")
# Under CI=true Hypothesis selects its built-in "ci" profile itself.
