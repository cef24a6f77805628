"""Bash subprocess environment sanitisation (spec bash.env): layers, PATH prefix, mode resolution,
and canaries that run ``env`` inside a real bash spawned with the sanitised environment."""

from __future__ import annotations

import os
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tools_impl.bash.env_sanitize import (
    SENSITIVE_ENV_NAME_RE,
    BashEnvPolicy,
    is_env_truthy,
    resolve_bash_env_policy,
    sanitize_bash_subprocess_env,
    scrub_list,
)
from tools_impl.bash.trash import resolve_agent_bash_env_policy
from tools_impl.core.errors import ToolError
from tools_impl.core.profile import BASH_SUBPROCESS_SCRUB, REFERENCE, STRICT_PROTECTED_NAMES

P = REFERENCE
NO_PROVIDER_FIX = REFERENCE.with_patches({"wrap.scrub-provider-key": False})


def sanitize(env: dict[str, str], mode: str, **kw: object) -> tuple[dict[str, str], tuple[str, ...]]:
    res = sanitize_bash_subprocess_env(env, BashEnvPolicy(mode=mode, **kw), P, "linux")  # type: ignore[arg-type]
    return res.env, res.removed


# ------------------------------------------------------------------ layer A


def test_layer_a_removes_runtime_boundary_names_even_in_off_mode() -> None:
    env = {
        "__MAVIS_RUNTIME_ANYTHING": "1",
        "__MAVIS_PARENT_X": "1",
        "__MAVIS_ORIGIN_XDG_CONFIG_HOME": "1",
        "AGENTARCHON_FOO": "1",
        "AGENT_ARCHON_BAR": "1",
        "MAVIS_AGENT": "a",
        "MAVIS_SESSION": "s",
        "MAVIS_ACCESS_TOKEN": "t",
        "ELECTRON_RUN_AS_NODE": "1",
        "MAVIS_PORT": "1",
        "MINIMAX_DATA_DIR": "/d",
        "ASR_TENANT_ID": "x",
        "HOME": "/h",
        "MAVIS_OTHER": "kept",
    }
    out, removed = sanitize(env, "off")
    assert out == {"HOME": "/h", "MAVIS_OTHER": "kept"}
    assert removed == (
        "AGENTARCHON_FOO",
        "AGENT_ARCHON_BAR",
        "ASR_TENANT_ID",
        "ELECTRON_RUN_AS_NODE",
        "MAVIS_ACCESS_TOKEN",
        "MAVIS_AGENT",
        "MAVIS_PORT",
        "MAVIS_SESSION",
        "MINIMAX_DATA_DIR",
        "__MAVIS_ORIGIN_XDG_CONFIG_HOME",
        "__MAVIS_PARENT_X",
        "__MAVIS_RUNTIME_ANYTHING",
    )


def test_layer_a_prefix_match_is_case_insensitive() -> None:
    out, removed = sanitize({"agentarchon_x": "1", "__mavis_runtime_port": "2"}, "off")
    assert out == {}
    assert removed == ("__mavis_runtime_port", "agentarchon_x")


def test_layer_a_ignores_the_strict_allowlist() -> None:
    out, removed = sanitize({"MAVIS_ACCESS_TOKEN": "t"}, "strict", allowlist=("MAVIS_ACCESS_TOKEN",))
    assert out == {}
    assert removed == ("MAVIS_ACCESS_TOKEN",)


def test_layer_a_matches_whole_names_and_prefixes_only() -> None:
    policy = resolve_bash_env_policy({"mode": "off"}, {}, REFERENCE)
    env = {"MINIMAX_PROFILE": "1", "MAVIS_AGENTX": "1", "XMAVIS_AGENT": "1", "MY_AGENTARCHON_X": "1",
           "MAVIS_PORT": "", "MAVIS_SESSION": "s"}
    res = sanitize_bash_subprocess_env(env, policy, REFERENCE, "linux")
    # An empty value is still a defined value, so it is reported.
    assert list(res.removed) == ["MAVIS_PORT", "MAVIS_SESSION"]
    assert res.env == {"MINIMAX_PROFILE": "1", "MAVIS_AGENTX": "1", "XMAVIS_AGENT": "1", "MY_AGENTARCHON_X": "1"}


def test_minimax_profile_list_entry_is_configurable() -> None:
    prof = P.replace(legacy_runtime_env_keys=(*P.legacy_runtime_env_keys, "MINIMAX_PROFILE"))
    assert sanitize_bash_subprocess_env({"MINIMAX_PROFILE": "x"}, BashEnvPolicy("off"), P).removed == ()
    assert sanitize_bash_subprocess_env({"MINIMAX_PROFILE": "x"}, BashEnvPolicy("off"), prof).removed == (
        "MINIMAX_PROFILE",
    )


def test_input_mapping_is_not_modified() -> None:
    env = {"MAVIS_AGENT": "1", "OPENAI_API_KEY": "k", "PATH": "/usr/bin"}
    snapshot = dict(env)
    res = sanitize_bash_subprocess_env(env, BashEnvPolicy("scrub", prepend_path=("/shim",)), P, "linux")
    assert env == snapshot
    assert res.env == {"PATH": "/shim:/usr/bin"}


# ------------------------------------------------------------------ layer B


def test_scrub_list_has_24_entries_and_23_without_the_provider_key_fix() -> None:
    assert len(scrub_list(P)) == 24
    assert scrub_list(P)[0] == "MCODE_PROVIDER_API_KEY"
    assert len(scrub_list(NO_PROVIDER_FIX)) == 23
    assert "MCODE_PROVIDER_API_KEY" not in scrub_list(NO_PROVIDER_FIX)


def test_scrub_removes_each_listed_name_and_its_input_alias_exactly() -> None:
    env = {k: "v" for k in BASH_SUBPROCESS_SCRUB}
    env.update({"INPUT_" + k: "v" for k in BASH_SUBPROCESS_SCRUB})
    env.update({"GH_TOKEN": "g", "GITHUB_TOKEN": "g", "NPM_TOKEN": "n", "openai_api_key": "lower"})
    out, removed = sanitize(env, "scrub")
    assert out == {"GH_TOKEN": "g", "GITHUB_TOKEN": "g", "NPM_TOKEN": "n", "openai_api_key": "lower"}
    assert len(removed) == 48
    assert list(removed) == sorted(removed)


def test_scrub_keeps_provider_key_when_toggle_off() -> None:
    env = {"MCODE_PROVIDER_API_KEY": "k", "INPUT_MCODE_PROVIDER_API_KEY": "k", "OPENAI_API_KEY": "o"}
    res = sanitize_bash_subprocess_env(env, BashEnvPolicy("scrub"), NO_PROVIDER_FIX, "linux")
    assert res.env == {"MCODE_PROVIDER_API_KEY": "k", "INPUT_MCODE_PROVIDER_API_KEY": "k"}
    assert res.removed == ("OPENAI_API_KEY",)
    strict = sanitize_bash_subprocess_env(env, BashEnvPolicy("strict"), NO_PROVIDER_FIX, "linux")
    assert strict.env == {}


def test_strict_removes_credential_like_names_segment_bounded() -> None:
    env = {
        "GITHUB_TOKEN": "1",
        "MY_KEYS": "1",
        "db_password": "1",
        "AWS_SECRET_ACCESS_KEY": "1",
        "SSH_PRIVATE_KEY": "1",
        "APIKEY": "1",
        "X_CREDENTIAL": "1",
        "TOKENIZER": "1",
        "MONKEY": "1",
        "KEYBOARD": "1",
        "PASSWORDLESS": "1",
        "PATH": "/bin",
        "HOME": "/h",
        "LC_SECRET": "1",
    }
    out, removed = sanitize(env, "strict")
    assert out == {
        "TOKENIZER": "1",
        "MONKEY": "1",
        "KEYBOARD": "1",
        "PASSWORDLESS": "1",
        "PATH": "/bin",
        "HOME": "/h",
        "LC_SECRET": "1",
    }
    assert removed == (
        "APIKEY",
        "AWS_SECRET_ACCESS_KEY",
        "GITHUB_TOKEN",
        "MY_KEYS",
        "SSH_PRIVATE_KEY",
        "X_CREDENTIAL",
        "db_password",
    )


def test_strict_allowlist_is_case_insensitive() -> None:
    out, removed = sanitize({"GITHUB_TOKEN": "1", "NPM_TOKEN": "2"}, "strict", allowlist=("github_token",))
    assert out == {"GITHUB_TOKEN": "1"}
    assert removed == ("NPM_TOKEN",)


def test_strict_protects_system_names_even_if_they_look_sensitive() -> None:
    # TMP/TEMP etc. never match; LC_ prefix guards e.g. LC_API_KEY.
    out, _ = sanitize({"LC_API_KEY": "x", "lc_token": "y"}, "strict")
    assert out == {"LC_API_KEY": "x", "lc_token": "y"}


def test_sensitive_regex_does_not_fold_non_ascii_letters() -> None:
    # JavaScript's /i without /u folds only ASCII for this pattern: the Kelvin sign is not "K".
    assert SENSITIVE_ENV_NAME_RE.search("\u212aEY") is None
    assert SENSITIVE_ENV_NAME_RE.search("key") is not None
    assert SENSITIVE_ENV_NAME_RE.search("TOKEN\n") is None


# ------------------------------------------------------------------ PATH prefix


def test_prepend_path_adds_absolute_missing_entries_in_order() -> None:
    out, _ = sanitize({"PATH": "/usr/bin:/b"}, "off", prepend_path=("/a", "relative", "/b", "/c"))
    assert out["PATH"] == "/a:/c:/usr/bin:/b"


def test_prepend_path_uses_semicolon_and_path_key_on_win32() -> None:
    res = sanitize_bash_subprocess_env(
        {"Path": "C:\\Windows"}, BashEnvPolicy("off", prepend_path=("C:\\shim", "rel\\x", "\\\\srv\\s")), P, "win32"
    )
    assert res.env == {"Path": "C:\\shim;\\\\srv\\s;C:\\Windows"}


def test_prepend_path_writes_path_when_both_keys_exist() -> None:
    res = sanitize_bash_subprocess_env(
        {"PATH": "/x", "Path": "/y"}, BashEnvPolicy("off", prepend_path=("/s",)), P, "linux"
    )
    assert res.env == {"PATH": "/s:/x", "Path": "/y"}


def test_prepend_path_creates_path_when_undefined() -> None:
    res = sanitize_bash_subprocess_env({}, BashEnvPolicy("off", prepend_path=("/s",)), P, "linux")
    assert res.env == {"PATH": "/s"}


def test_sanitiser_returns_a_new_environment_and_prepends_absolute_paths_once() -> None:
    source = {"PATH": "/usr/bin:/bin", "MAVIS_PORT": "1"}
    policy = resolve_bash_env_policy({"mode": "off", "prependPath": ["/shims", "relative/dir", "/bin"]}, {},
                                     REFERENCE)
    res = sanitize_bash_subprocess_env(source, policy, REFERENCE, "linux")
    assert source == {"PATH": "/usr/bin:/bin", "MAVIS_PORT": "1"}
    assert res.env == {"PATH": "/shims:/usr/bin:/bin"}
    assert list(res.removed) == ["MAVIS_PORT"]


def test_sanitiser_writes_windows_path_key_only_when_path_is_absent() -> None:
    policy = resolve_bash_env_policy({"mode": "off", "prependPath": ["C:\\shims"]}, {}, REFERENCE)
    res = sanitize_bash_subprocess_env({"Path": "C:\\Windows"}, policy, REFERENCE, "win32")
    assert res.env == {"Path": "C:\\shims;C:\\Windows"}


def test_preflight_error_blocks_sanitising() -> None:
    def boom() -> None:
        raise ToolError("blocked")

    with pytest.raises(ToolError, match=r"^blocked$"):
        sanitize_bash_subprocess_env({}, BashEnvPolicy("off", spawn_preflight=boom), P)


# ------------------------------------------------------------------ mode resolution


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "off"),
        ({"MAVIS_BASH_ENV_SANITIZE": " STRICT \n"}, "strict"),
        ({"MAVIS_BASH_ENV_SANITIZE": "scrub"}, "scrub"),
        ({"MAVIS_BASH_ENV_SANITIZE": "off", "CI": "true"}, "off"),
        ({"MAVIS_BASH_ENV_SANITIZE": "bogus", "CI": "1"}, "scrub"),
        ({"MAVIS_BASH_ENV_SANITIZE": "bogus"}, "off"),
        ({"CI": "true"}, "scrub"),
        ({"GITHUB_ACTIONS": "yes"}, "scrub"),
        ({"CI": "FALSE"}, "off"),
        ({"CI": "0", "GITHUB_ACTIONS": "Off"}, "off"),
        ({"CI": "no"}, "off"),
        ({"CI": ""}, "off"),
    ],
)
def test_mode_resolution_order(env: dict[str, str], expected: str) -> None:
    assert resolve_bash_env_policy(None, env, P).mode == expected


def test_explicit_mode_override_wins_and_extras_copied_only_when_given() -> None:
    pol = resolve_bash_env_policy({"mode": "strict"}, {"MAVIS_BASH_ENV_SANITIZE": "off"}, P)
    assert pol == BashEnvPolicy("strict")
    pol = resolve_bash_env_policy({"allowlist": ["A"], "prependPath": ["/s"]}, {}, P)
    assert pol == BashEnvPolicy("off", allowlist=("A",), prepend_path=("/s",))


@pytest.mark.parametrize(
    ("env", "mode"),
    [
        ({}, "off"),
        ({"MAVIS_BASH_ENV_SANITIZE": " Strict\n"}, "strict"),
        ({"MAVIS_BASH_ENV_SANITIZE": "SCRUB"}, "scrub"),
        ({"MAVIS_BASH_ENV_SANITIZE": "off", "CI": "true"}, "off"),
        ({"MAVIS_BASH_ENV_SANITIZE": "bogus", "CI": "1"}, "scrub"),
        ({"MAVIS_BASH_ENV_SANITIZE": "bogus"}, "off"),
        ({"CI": "yes"}, "scrub"),
        ({"GITHUB_ACTIONS": "true"}, "scrub"),
        ({"CI": ""}, "off"),
        ({"CI": "0"}, "off"),
        ({"CI": "FALSE"}, "off"),
        ({"CI": "No"}, "off"),
        ({"CI": "oFF", "GITHUB_ACTIONS": "false"}, "off"),
    ],
)
def test_mode_resolution_order_and_truthiness(env: dict[str, str], mode: str) -> None:
    assert resolve_bash_env_policy(None, env, REFERENCE).mode == mode


def test_explicit_mode_override_wins_over_the_environment() -> None:
    assert resolve_bash_env_policy({"mode": "strict"}, {"MAVIS_BASH_ENV_SANITIZE": "off"}, REFERENCE).mode == "strict"


def test_mode_variable_name_comes_from_profile() -> None:
    prof = P.replace(env_sanitize_var="OTHER_MODE")
    assert resolve_bash_env_policy(None, {"OTHER_MODE": "strict", "MAVIS_BASH_ENV_SANITIZE": "scrub"}, prof).mode == (
        "strict"
    )


def test_is_env_truthy() -> None:
    assert [is_env_truthy(v) for v in (None, "", "0", "false", "No", "OFF", "1", "true", "anything")] == [
        False, False, False, False, False, False, True, True, True,
    ]


def test_agent_policy_without_data_dir_is_the_plain_policy(tmp_path: object) -> None:
    from tools_impl.core.context import make_context

    ctx = make_context(str(tmp_path), env={"CI": "true"})
    assert resolve_agent_bash_env_policy(ctx) == BashEnvPolicy("scrub")


# ------------------------------------------------------------------ properties

NAME_CHARS = st.sampled_from(list("ABCKEYTOKNSPWRDIL_abcky0"))
names = st.one_of(
    st.text(NAME_CHARS, min_size=1, max_size=20),
    st.sampled_from(list(BASH_SUBPROCESS_SCRUB) + ["INPUT_" + k for k in BASH_SUBPROCESS_SCRUB]),
    st.sampled_from([*list(STRICT_PROTECTED_NAMES), "LC_ALL", "lc_token", "Path", "GH_TOKEN"]),
    st.sampled_from(["MAVIS_AGENT", "__MAVIS_PARENT_X", "AGENTARCHON_PORT", "MAVIS_PORT", "ASR_PROXY_TOKEN"]),
)
envs = st.dictionaries(names, st.text(max_size=5), max_size=25)


@given(env=envs, mode=st.sampled_from(["off", "scrub", "strict"]))
def test_sanitiser_never_leaves_a_blacklisted_name_and_never_removes_a_protected_one(
    env: dict[str, str], mode: str
) -> None:
    """Blacklisted = layer A, plus the scrub list and INPUT_ aliases (scrub), plus credential-like
    unprotected names (strict). Protected = strict's system names in strict mode; in every mode,
    anything not blacklisted survives with its value."""
    res = sanitize_bash_subprocess_env(env, BashEnvPolicy(mode), P, "linux")
    for name, value in env.items():
        upper = name.upper()
        layer_a = (
            upper.startswith(("__MAVIS_RUNTIME_", "__MAVIS_PARENT_", "__MAVIS_ORIGIN_XDG_", "AGENTARCHON_", "AGENT_ARCHON_"))
            or upper in ("MAVIS_AGENT", "MAVIS_SESSION")
            or upper in P.managed_runtime_keys + P.legacy_runtime_env_keys + P.parent_hint_keys + P.asr_proxy_auth_env_keys
        )
        scrubbed = mode == "scrub" and (name in BASH_SUBPROCESS_SCRUB or (name.removeprefix("INPUT_") in BASH_SUBPROCESS_SCRUB and name.startswith("INPUT_")))
        protected = upper in STRICT_PROTECTED_NAMES or upper.startswith("LC_")
        strict_hit = mode == "strict" and not protected and SENSITIVE_ENV_NAME_RE.search(name) is not None
        if layer_a or scrubbed or strict_hit:
            assert name not in res.env
            assert name in res.removed
        else:
            assert res.env.get(name) == value
            assert name not in res.removed
    assert set(res.removed) == set(env) - set(res.env)
    assert list(res.removed) == sorted(res.removed)


# ------------------------------------------------------------------ canaries: a real bash


def env_in_real_bash(env: dict[str, str]) -> dict[str, str]:
    proc = subprocess.run(["bash", "-c", "env -0"], env=env, capture_output=True, check=True)
    pairs = [item.split(b"=", 1) for item in proc.stdout.split(b"\0") if item]
    return {k.decode(): v.decode() for k, v in pairs}


def host_env(extra: dict[str, str]) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    base.update(extra)
    return base


def test_canary_scrub_under_ci_removes_listed_names_and_aliases_in_real_bash() -> None:
    canaries = {k: "canary" for k in BASH_SUBPROCESS_SCRUB}
    canaries.update({"INPUT_" + k: "canary" for k in BASH_SUBPROCESS_SCRUB})
    keep = {"GH_TOKEN": "gh", "GITHUB_TOKEN": "ghs", "NPM_TOKEN": "npm", "CI": "true"}
    host = host_env({**canaries, **keep, "MAVIS_SESSION": "s", "__MAVIS_PARENT_DATA_DIR": "/d"})
    policy = resolve_bash_env_policy(None, host, P)
    assert policy.mode == "scrub"
    seen = env_in_real_bash(sanitize_bash_subprocess_env(host, policy, P).env)
    for name in canaries:
        assert name not in seen
    for name, value in keep.items():
        assert seen[name] == value
    assert "MAVIS_SESSION" not in seen
    assert "__MAVIS_PARENT_DATA_DIR" not in seen


def test_canary_strict_removes_credentials_but_keeps_lookalikes_in_real_bash() -> None:
    host = host_env(
        {
            "CI": "true",
            "MAVIS_BASH_ENV_SANITIZE": "strict",
            "GITHUB_TOKEN": "x",
            "MY_API_KEY": "x",
            "DB_PASSWORD": "x",
            "TOKENIZER": "keep",
            "MONKEY": "keep",
            "KEYBOARD": "keep",
        }
    )
    policy = resolve_bash_env_policy(None, host, P)
    seen = env_in_real_bash(sanitize_bash_subprocess_env(host, policy, P).env)
    assert "GITHUB_TOKEN" not in seen and "MY_API_KEY" not in seen and "DB_PASSWORD" not in seen
    assert (seen["TOKENIZER"], seen["MONKEY"], seen["KEYBOARD"]) == ("keep", "keep", "keep")
    assert seen["PATH"] == host["PATH"]


def test_canary_layer_a_vanishes_even_in_off_mode_in_real_bash() -> None:
    host = host_env(
        {"MAVIS_BASH_ENV_SANITIZE": "off", "MAVIS_AGENT": "a", "__MAVIS_RUNTIME_PORT": "1", "OPENAI_API_KEY": "kept"}
    )
    policy = resolve_bash_env_policy(None, host, P)
    assert policy.mode == "off"
    seen = env_in_real_bash(sanitize_bash_subprocess_env(host, policy, P).env)
    assert "MAVIS_AGENT" not in seen and "__MAVIS_RUNTIME_PORT" not in seen
    assert seen["OPENAI_API_KEY"] == "kept"
