"""The bash timeout clamps (spec bash.2): the foreground timeout, the background ``maxRunMs`` and
its cap, as pure functions."""

from __future__ import annotations

import math

import pytest

from tools_impl.bash import timeouts

# -- foreground timeout -------------------------------------------------------------------------


@pytest.mark.parametrize(("given_timeout", "expected"), [
    (None, 120), (0, 120), (-1, 120), (float("nan"), 120), (float("inf"), 120), (float("-inf"), 120),
    ("5", 120), (True, 120), (0.5, 0.5), (1, 1), (299.5, 299.5), (300, 300), (301, 300), (1e9, 300),
])
def test_resolve_foreground_timeout_defaults_and_clamps(given_timeout: object, expected: float) -> None:
    assert timeouts.resolve_foreground_timeout(given_timeout) == expected


@pytest.mark.parametrize(
    ("given_timeout", "expected"),
    [(None, 120), (0, 120), (-3, 120), (math.nan, 120), (math.inf, 120), (-math.inf, 120), (0.25, 0.25),
     (1, 1), (299.5, 299.5), (300, 300), (301, 300), (2147483, 300)],
)
def test_foreground_timeout_is_120_unless_positive_and_finite_and_at_most_300(given_timeout: float | None,
                                                                             expected: float) -> None:
    assert timeouts.resolve_foreground_timeout(given_timeout) == expected


# -- background maxRunMs ------------------------------------------------------------------------


@pytest.mark.parametrize(("timeout", "expected"), [
    (None, 1_800_000), (0, 1_800_000), (-5, 1_800_000), (120, 1_800_000), (3600, 3_600_000),
    (2_147_483, 2_147_483_000), (3_000_000, 2_147_483_647),
])
def test_resolve_background_max_run_ms(timeout: float | None, expected: float) -> None:
    assert timeouts.resolve_background_bash_max_run_ms(timeout) == expected


@pytest.mark.parametrize(
    ("t", "expected"),
    [(None, 1_800_000), (0, 1_800_000), (-5, 1_800_000), (120, 1_800_000), (1800, 1_800_000),
     (1801, 1_801_000), (2_147_483, 2_147_483_000), (3_000_000, 2_147_483_647)],
)
def test_background_max_run_is_30_minutes_or_a_longer_timeout_up_to_the_timer_limit(t: float | None,
                                                                                   expected: float) -> None:
    assert timeouts.resolve_background_bash_max_run_ms(t) == expected


@pytest.mark.parametrize(("ms", "expected"), [
    (float("nan"), 1_800_000), (0, 1), (-3, 1), (5, 5), (1e12, 2_147_483_647),
])
def test_cap_background_max_run_ms(ms: float, expected: float) -> None:
    assert timeouts.cap_background_bash_max_run_ms(ms) == expected


@pytest.mark.parametrize(("ms", "expected"), [(math.nan, 1_800_000), (0, 1), (-7, 1), (0.5, 1), (5, 5),
                                              (3e9, 2_147_483_647)])
def test_background_max_run_cap_maps_nan_to_the_default_and_clamps_to_1_ms_and_the_timer_limit(
        ms: float, expected: float) -> None:
    assert timeouts.cap_background_bash_max_run_ms(ms) == expected
