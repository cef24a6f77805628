"""Profile: defaults, patch toggles and JSON overlays (spec §0.6, §10)."""

from __future__ import annotations

import pytest

from tools_impl.core.profile import ALL_PATCHES, REFERENCE, UPSTREAM_PI, profile_from_json


def test_reference_profile_has_every_patch_on_except_diff_bounds() -> None:
    assert set(ALL_PATCHES) - REFERENCE.patches == {"edit.diff-bounds"}
    assert REFERENCE.wrapper is True


def test_upstream_profile_is_engine_only_with_every_patch_off() -> None:
    assert UPSTREAM_PI.patches == frozenset() and UPSTREAM_PI.wrapper is False


def test_seed_era_limits_and_names() -> None:
    p = REFERENCE
    assert (p.bash_default_timeout_s, p.bash_max_timeout_s, p.bash_soft_yield_ms) == (120, 300, 15_000)
    assert p.bash_background_max_run_ms == 1_800_000
    assert (p.read_text_max_bytes, p.grep_content_max_bytes, p.bash_max_bytes) == (24576, 16384, 24576)
    assert p.env_sanitize_var == "MAVIS_BASH_ENV_SANITIZE"
    assert p.full_output_prefix == "pi-bash"
    assert len(p.scrub_list) == 24 and p.scrub_list[0] == "MCODE_PROVIDER_API_KEY"


def test_with_patches_switches_single_toggles() -> None:
    p = REFERENCE.with_patches({"edit.fuzzy-span": False, "edit.diff-bounds": True})
    assert not p.patch("edit.fuzzy-span") and p.patch("edit.diff-bounds")
    with pytest.raises(KeyError):
        p.patch("no.such-patch")


def test_profile_overlay_from_json() -> None:
    p = profile_from_json({"base": "upstream", "patches": {"bash.graceful-kill": True}, "bash_soft_yield_ms": 200})
    assert p.wrapper is False and p.patches == frozenset({"bash.graceful-kill"}) and p.bash_soft_yield_ms == 200


@pytest.mark.parametrize(
    ("overlay", "message"),
    [
        ({"base": "nope"}, "profile.base: expected 'reference' or 'upstream', got 'nope'"),
        ({"patches": {"x.y": True}}, "profile.patches: unknown patch toggle 'x.y'"),
        ({"patches": {"edit.fuzzy-span": "yes"}}, "profile.patches.edit.fuzzy-span: expected a boolean"),
        ({"bogus": 1}, "profile.bogus: unknown profile field"),
    ],
)
def test_profile_overlay_errors_name_the_field(overlay: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError) as info:
        profile_from_json(overlay)
    assert str(info.value) == message
