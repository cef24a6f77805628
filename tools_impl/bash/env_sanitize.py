"""Bash subprocess environment sanitisation (spec bash.env): the two removal layers, the PATH
prefix, and the resolution of the sanitise mode from the tools' environment.

``sanitize_bash_subprocess_env`` is a pure function of its inputs (apart from running the
policy's preflight hook) and never modifies the mapping it is given.

Interpretation notes (the spec leaves these open):
- Layer A compares the *upper-cased* variable name against the prefixes, the two exact names and
  the four lists, so ``mavis_port`` is removed like ``MAVIS_PORT`` (the spec's sentence has one
  subject, "whose upper-cased name"; on Windows names are case-insensitive anyway).
- ``CI`` / ``GITHUB_ACTIONS`` are tested literally (not trimmed): truthy when non-empty and not,
  case-insensitively, ``0``/``false``/``no``/``off``.
- A value of ``None`` in the input mapping counts as "undefined": the name is dropped from the
  result when a rule matches it but is never reported in ``removed``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from tools_impl.core.patches import SURFACE_WRAPPER, Seam
from tools_impl.core.profile import Profile
from tools_impl.js.text import js_trim

MODE_OFF = "off"
MODE_SCRUB = "scrub"
MODE_STRICT = "strict"
VALID_MODES: frozenset[str] = frozenset({MODE_OFF, MODE_SCRUB, MODE_STRICT})

# The runtime's own provider key: the wrapper before patch wrap.scrub-provider-key left it out of
# the scrub list.
PROVIDER_KEY_NAME = "MCODE_PROVIDER_API_KEY"
# GitHub Actions exposes action inputs as INPUT_<NAME>; scrub removes that alias too.
INPUT_ALIAS_PREFIX = "INPUT_"
CI_FLAG_NAMES: tuple[str, ...] = ("CI", "GITHUB_ACTIONS")
FALSY_FLAG_VALUES: frozenset[str] = frozenset({"0", "false", "no", "off"})
STRICT_PROTECTED_PREFIX = "LC_"

SENSITIVE_ENV_KEYWORD_CORE = "API_?KEY|KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIALS?|PRIVATE_?KEY"
# JavaScript's non-unicode /i folds only ASCII letters for this pattern, hence re.ASCII; and JS `$`
# without /m never matches before a trailing newline, hence \Z.
SENSITIVE_ENV_NAME_RE = re.compile(
    r"(?:^|_)(?:" + SENSITIVE_ENV_KEYWORD_CORE + r")S?(?:_|\Z)", re.IGNORECASE | re.ASCII
)


@dataclass(frozen=True)
class BashEnvPolicy:
    """How one bash spawn's environment is sanitised.

    ``prepend_path`` entries go in front of PATH; ``spawn_preflight`` runs before anything else
    and blocks the spawn by raising ``ToolError`` (its message becomes the tool's error).
    """

    mode: str
    allowlist: tuple[str, ...] | None = None
    prepend_path: tuple[str, ...] | None = None
    spawn_preflight: Callable[[], None] | None = None


@dataclass(frozen=True)
class SanitizeResult:
    """The new environment and the sorted names removed from it (names only, never values)."""

    env: dict[str, str]
    removed: tuple[str, ...]


def is_env_truthy(value: str | None) -> bool:
    """``CI``-style flag: set, non-empty and not ``0``/``false``/``no``/``off`` (any case)."""
    if value is None:
        return False
    return value != "" and value.lower() not in FALSY_FLAG_VALUES


def resolve_mode(overrides: Mapping[str, object] | None, env_source: Mapping[str, str], profile: Profile) -> str:
    """spec bash.env.2: explicit override, then the profile's mode variable, then CI flags, else ``off``."""
    if overrides is not None and overrides.get("mode") is not None:
        mode = overrides["mode"]
        if not isinstance(mode, str) or mode not in VALID_MODES:
            raise ValueError(f"bash env policy mode: expected one of off, scrub, strict; got {mode!r}")
        return mode
    raw = env_source.get(profile.env_sanitize_var)
    if raw is not None:
        explicit = js_trim(raw).lower()
        if explicit in VALID_MODES:
            return explicit
    if any(is_env_truthy(env_source.get(name)) for name in CI_FLAG_NAMES):
        return MODE_SCRUB
    return MODE_OFF


def _opt_tuple(value: object) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple)):
        return tuple(str(v) for v in value)
    raise ValueError(f"bash env policy: expected a list of strings, got {value!r}")


def resolve_bash_env_policy(
    overrides: Mapping[str, object] | None, env_source: Mapping[str, str], profile: Profile
) -> BashEnvPolicy:
    """The policy for ``env_source`` (normally the tools' process environment).

    ``overrides`` may carry ``mode``, ``allowlist``, ``prepend_path`` (or ``prependPath``) and
    ``spawn_preflight`` (or ``spawnPreflight``); each is copied only when provided. Without an
    ``allowlist`` override, a non-empty ``profile.env_allowlist`` is used.
    """
    ov: Mapping[str, object] = overrides or {}
    mode = resolve_mode(overrides, env_source, profile)
    allowlist = _opt_tuple(ov.get("allowlist"))
    if allowlist is None and profile.env_allowlist:
        allowlist = tuple(profile.env_allowlist)
    prepend = _opt_tuple(ov.get("prepend_path", ov.get("prependPath")))
    preflight = ov.get("spawn_preflight", ov.get("spawnPreflight"))
    if preflight is not None and not callable(preflight):
        raise ValueError("bash env policy: spawn_preflight must be callable")
    return BashEnvPolicy(mode=mode, allowlist=allowlist, prepend_path=prepend, spawn_preflight=preflight)


def scrub_list_without_provider_key(profile: Profile) -> tuple[str, ...]:
    """The wrapper's scrub list before the fix: ``Profile.scrub_list`` without the provider key."""
    return tuple(k for k in profile.scrub_list if k != PROVIDER_KEY_NAME)


SCRUB_LIST: Seam[Callable[[Profile], tuple[str, ...]]] = Seam(
    "bash.env-scrub", SURFACE_WRAPPER, scrub_list_without_provider_key,
    "the names scrub mode removes from the command's environment (spec bash.env.1)")
WRAPPER_SEAMS: tuple[Seam[Callable[[Profile], tuple[str, ...]]], ...] = (SCRUB_LIST,)


def scrub_list(profile: Profile) -> tuple[str, ...]:
    """``BASH_SUBPROCESS_SCRUB`` for this profile (seam ``bash.env-scrub``; 23 entries without
    patch ``wrap.scrub-provider-key``)."""
    return SCRUB_LIST.of(profile)(profile)


def is_layer_a_name(name: str, profile: Profile) -> bool:
    """Whether layer A (always on) removes ``name``."""
    upper = name.upper()
    if any(upper.startswith(p) for p in profile.layer_a_prefixes):
        return True
    if upper in profile.layer_a_exact:
        return True
    return (
        upper in profile.managed_runtime_keys
        or upper in profile.legacy_runtime_env_keys
        or upper in profile.parent_hint_keys
        or upper in profile.asr_proxy_auth_env_keys
    )


def is_strict_protected(name: str, profile: Profile) -> bool:
    """System variables that strict mode never removes."""
    upper = name.upper()
    return upper in profile.strict_protected_names or upper.startswith(STRICT_PROTECTED_PREFIX)


def is_sensitive_name(name: str) -> bool:
    """Segment-bounded credential-like name: ``GITHUB_TOKEN``, ``MY_KEYS``; not ``MONKEY``."""
    return SENSITIVE_ENV_NAME_RE.search(name) is not None


def _is_absolute(path: str, platform: str) -> bool:
    if platform == "win32":
        # Node's path.win32.isAbsolute: a leading separator, or a drive letter plus separator.
        return path[:1] in ("/", "\\") or bool(re.match(r"^[A-Za-z]:[\\/]", path))
    return path.startswith("/")


def prepend_path_value(current: str | None, entries: tuple[str, ...], platform: str) -> str | None:
    """PATH with each absolute, not yet listed entry of ``entries`` put in front (in order)."""
    delim = ";" if platform == "win32" else ":"
    present = [p for p in (current or "").split(delim) if p]
    additions: list[str] = []
    for entry in entries:
        if _is_absolute(entry, platform) and entry not in present and entry not in additions:
            additions.append(entry)
    if not additions:
        return current
    return delim.join([*additions, *([current] if current else [])])


def sanitize_bash_subprocess_env(
    env: Mapping[str, str], policy: BashEnvPolicy, profile: Profile, platform: str = sys.platform
) -> SanitizeResult:
    """spec bash.env.1. Returns a new environment and the sorted removed names; ``env`` is not modified.

    Raises whatever ``policy.spawn_preflight`` raises (``ToolError`` blocks the spawn).
    """
    if policy.spawn_preflight is not None:
        policy.spawn_preflight()
    out: dict[str, str] = dict(env)
    removed: set[str] = set()

    def drop(name: str) -> None:
        if name in out:
            if out.pop(name) is not None:
                removed.add(name)

    for name in list(out):
        if is_layer_a_name(name, profile):
            drop(name)

    if policy.mode == MODE_SCRUB:
        for key in scrub_list(profile):
            drop(key)
            drop(INPUT_ALIAS_PREFIX + key)
    elif policy.mode == MODE_STRICT:
        allowed = {a.upper() for a in (policy.allowlist or ())}
        for name in list(out):
            if is_strict_protected(name, profile) or name.upper() in allowed:
                continue
            if is_sensitive_name(name):
                drop(name)
    elif policy.mode != MODE_OFF:
        raise ValueError(f"bash env policy mode: expected one of off, scrub, strict; got {policy.mode!r}")

    if policy.prepend_path:
        source = out.get("PATH")
        if source is None:
            source = out.get("Path")
        new_path = prepend_path_value(source, tuple(policy.prepend_path), platform)
        if new_path is not None and new_path != source:
            if out.get("PATH") is None and out.get("Path") is not None:
                out["Path"] = new_path
            else:
                out["PATH"] = new_path
    # JavaScript sorts by UTF-16 code units; big-endian UTF-16 bytes give the same order.
    return SanitizeResult(env=out, removed=tuple(sorted(removed, key=lambda n: n.encode("utf-16-be", "surrogatepass"))))
