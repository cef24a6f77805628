"""Profile: defaults, patch toggles and JSON overlays (spec common.6, spec patches)."""

from __future__ import annotations

import pytest

from tools_impl.core.profile import ALL_PATCHES, REFERENCE, UPSTREAM_PI, profile_from_json, profile_problems


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


def test_profile_overlay_fields_of_every_type_are_accepted() -> None:
    p = profile_from_json({"bash_default_timeout_s": 5, "rg_binary": None, "shell_path": "/bin/sh",
                           "scrub_list": ["A_KEY"], "wrapper": False, "name": "x"})
    assert (p.bash_default_timeout_s, p.rg_binary, p.shell_path, p.scrub_list, p.wrapper, p.name) == (
        5, None, "/bin/sh", ("A_KEY",), False, "x")


def test_profile_problems_lists_every_problem_with_the_key_it_is_about() -> None:
    problems = profile_problems({"base": "pi", "patches": {"x.y": True, "edit.fuzzy-span": 1}, "bogus": 1})
    assert [(p.key, p.in_value, str(p)) for p in problems] == [
        (("base",), True, "profile.base: expected one of reference, upstream; got 'pi'"),
        (("patches", "x.y"), False, "profile.patches: unknown patch toggle 'x.y'"),
        (("patches", "edit.fuzzy-span"), True, "profile.patches.edit.fuzzy-span: expected a boolean, got 1"),
        (("bogus",), False, "profile.bogus: unknown profile field"),
    ]


@pytest.mark.parametrize(
    ("overlay", "message"),
    [
        ({"base": "nope"}, "profile.base: expected one of reference, upstream; got 'nope'"),
        ({"patches": {"x.y": True}}, "profile.patches: unknown patch toggle 'x.y'"),
        ({"patches": {"edit.fuzzy-span": "yes"}}, "profile.patches.edit.fuzzy-span: expected a boolean, got 'yes'"),
        ({"bogus": 1}, "profile.bogus: unknown profile field"),
        ({"base": "pi"}, "profile.base: expected one of reference, upstream; got 'pi'"),
        ({"base": "upstreem"}, "profile.base: expected one of reference, upstream; got 'upstreem' (did you mean 'upstream'?)"),
        ({"patches": ["edit.fuzzy-span"]}, "profile.patches: expected a mapping of patch toggle to boolean"),
        ({"engine_max_lines": "2000"}, "profile.engine_max_lines: expected an integer, got '2000'"),
        ({"engine_max_lines": True}, "profile.engine_max_lines: expected an integer, got True"),
        ({"bash_default_timeout_s": "1"}, "profile.bash_default_timeout_s: expected a number, got '1'"),
        ({"wrapper": 0}, "profile.wrapper: expected a boolean, got 0"),
        ({"rg_binary": 5}, "profile.rg_binary: expected a string or null, got 5"),
        ({"scrub_list": ["A", 1]}, "profile.scrub_list: expected a list of strings, got ['A', 1]"),
        ({"extra": {}}, "profile.extra: unknown profile field"),
    ],
)
def test_profile_overlay_errors_name_the_field(overlay: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError) as info:
        profile_from_json(overlay)
    assert str(info.value) == message
