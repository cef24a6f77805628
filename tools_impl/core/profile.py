"""``Profile``: every limit and name that differs between tool layers, plus the patch toggles.

The default profile is the seed-era MiniMax reference (spec common.6, spec common.8, spec patches). Turning every
patch off and ``wrapper`` off emulates upstream pi v0.79.1. Limits live here, never as magic
numbers inside tool logic.
"""

from __future__ import annotations

import dataclasses
import difflib
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from tools_impl.js.unicode import DEFAULT_UNICODE_VERSION

# Patch toggles of the pi engine and of the wrapper (spec patches): the names a profile switches
# and overlays validate against. Each is a ``Patch`` object in its package's patches.py, registered
# in core/patches.py. Default: all on except diff-bounds.
PATCH_EDIT_FUZZY_SPAN = "edit.fuzzy-span"
PATCH_EDIT_FIDELITY_GUARD = "edit.fidelity-guard"
PATCH_BASH_GRACEFUL_KILL = "bash.graceful-kill"
PATCH_BASH_WIN_TASKKILL = "bash.win-taskkill"
PATCH_BASH_PARENT_DEATH_GUARD = "bash.parent-death-guard"
PATCH_BASH_PS51_STDIN_LAUNCHER = "bash.ps51-stdin-launcher"
PATCH_ENGINE_EXEC_FACTS = "engine.exec-facts"
PATCH_READ_IMAGE_FALLBACK = "read.image-fallback"
PATCH_BASH_PS_CONSTRAINED = "bash.ps-constrained"
PATCH_BASH_PROCESS_EVENTS = "bash.process-events"
PATCH_SHELL_WINDOWS_POWERSHELL = "shell.windows-powershell"
PATCH_EDIT_DIFF_BOUNDS = "edit.diff-bounds"
PATCH_WRAP_REPLACE_ALL_LITERAL = "wrap.replace-all-literal"
PATCH_WRAP_SCRUB_PROVIDER_KEY = "wrap.scrub-provider-key"

ALL_PATCHES: tuple[str, ...] = (
    PATCH_EDIT_FUZZY_SPAN,
    PATCH_EDIT_FIDELITY_GUARD,
    PATCH_BASH_GRACEFUL_KILL,
    PATCH_BASH_WIN_TASKKILL,
    PATCH_BASH_PARENT_DEATH_GUARD,
    PATCH_BASH_PS51_STDIN_LAUNCHER,
    PATCH_ENGINE_EXEC_FACTS,
    PATCH_READ_IMAGE_FALLBACK,
    PATCH_BASH_PS_CONSTRAINED,
    PATCH_BASH_PROCESS_EVENTS,
    PATCH_SHELL_WINDOWS_POWERSHELL,
    PATCH_EDIT_DIFF_BOUNDS,
    PATCH_WRAP_REPLACE_ALL_LITERAL,
    PATCH_WRAP_SCRUB_PROVIDER_KEY,
)
DEFAULT_OFF_PATCHES: frozenset[str] = frozenset({PATCH_EDIT_DIFF_BOUNDS})
DEFAULT_PATCHES: frozenset[str] = frozenset(ALL_PATCHES) - DEFAULT_OFF_PATCHES

# Runtime-boundary variable lists of spec bash.env.1 (layer A).
LAYER_A_PREFIXES: tuple[str, ...] = (
    "__MAVIS_RUNTIME_",
    "__MAVIS_PARENT_",
    "__MAVIS_ORIGIN_XDG_",
    "AGENTARCHON_",
    "AGENT_ARCHON_",
)
LAYER_A_EXACT: tuple[str, ...] = ("MAVIS_AGENT", "MAVIS_SESSION")
MANAGED_RUNTIME_KEYS: tuple[str, ...] = (
    "MAVIS_ACCESS_TOKEN",
    "MAVIS_REGION",
    "MAVIS_BUILD_ENV",
    "__MAVIS_DISABLE_SAFETY",
    "MAVIS_SQLITE3_MODULE_PATH",
    "ELECTRON_RUN_AS_NODE",
)
LEGACY_RUNTIME_ENV_KEYS: tuple[str, ...] = (
    "__MAVIS_RUNTIME_PORT",
    "__MAVIS_RUNTIME_DATA_DIR",
    "__MAVIS_RUNTIME_PROFILE",
    "__MAVIS_RUNTIME_DISABLE_GIT_AUTO_CONFIG",
    "__MAVIS_RUNTIME_SKIP_PID_PORT",
    "__MAVIS_RUNTIME_MANAGED",
    "__MAVIS_RUNTIME_AGENT_NAME",
    "__MAVIS_RUNTIME_SESSION_ID",
    "__MAVIS_RUNTIME_DAEMON_URL",
    "MAVIS_PORT",
    "MINIMAX_DATA_DIR",
    "MAVIS_DATA_DIR",
    "MAVIS_PROFILE",
    "MAVIS_SKIP_PID_PORT",
    "MAVIS_MANAGED_RUNTIME",
    "AGENTARCHON_PORT",
    "AGENTARCHON_DATA_DIR",
    "AGENTARCHON_PROFILE",
)
PARENT_HINT_KEYS: tuple[str, ...] = (
    "__MAVIS_PARENT_DAEMON_URL",
    "__MAVIS_PARENT_DATA_DIR",
    "__MAVIS_PARENT_SESSION_ID",
    "__MAVIS_PARENT_AGENT_NAME",
    "__MAVIS_PARENT_MANAGED",
    "__MAVIS_PARENT_ACCESS_TOKEN",
    "__MAVIS_PARENT_REAL_USER_ID",
    "__MAVIS_PARENT_USER_EMAIL",
    "__MAVIS_PARENT_USER_NAME",
    "__MAVIS_PARENT_SUB_USER_NAME",
    "__MAVIS_PARENT_AUTH_SECRET",
)
ASR_PROXY_AUTH_ENV_KEYS: tuple[str, ...] = ("ASR_PROXY_JWT_SECRET", "ASR_PROXY_TOKEN", "ASR_TENANT_ID")
BASH_SUBPROCESS_SCRUB: tuple[str, ...] = (
    "MCODE_PROVIDER_API_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_FOUNDRY_API_KEY",
    "ANTHROPIC_CUSTOM_HEADERS",
    "OPENAI_API_KEY",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
    "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "AZURE_CLIENT_SECRET",
    "AZURE_CLIENT_CERTIFICATE_PATH",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_URL",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_RUNTIME_URL",
    "FIGMA_API_TOKEN",
    "FIGMA_TOKEN",
    "E2E_AUTH_TOKEN",
)
STRICT_PROTECTED_NAMES: tuple[str, ...] = (
    "PATH", "HOME", "SHELL", "LANG", "LOGNAME", "USER", "TERM", "TMPDIR",
    "SYSTEMROOT", "COMSPEC", "TEMP", "TMP", "USERPROFILE", "APPDATA", "LOCALAPPDATA",
)
SENSITIVE_ENV_KEYWORD_CORE = "API_?KEY|KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIALS?|PRIVATE_?KEY"


# The two tool surfaces a model can be shown: MiniMax's wrapper and bare pi.
SURFACE_MINIMAX = "minimax"
SURFACE_PI = "pi"
SURFACES: tuple[str, ...] = (SURFACE_MINIMAX, SURFACE_PI)


@dataclass(frozen=True)
class Profile:
    """Every limit and name of one tool layer, and which patches are applied.

    ``wrapper=False`` gives the bare pi engine (spec read.10, spec write.2 Upstream, spec edit.10).
    """

    name: str = "minimax"
    wrapper: bool = True
    patches: frozenset[str] = DEFAULT_PATCHES

    # spec limits.1 engine truncation
    engine_max_lines: int = 2000
    engine_max_bytes: int = 50 * 1024
    # spec limits.2 wrapper caps
    grep_content_max_bytes: int = 16 * 1024
    read_text_max_bytes: int = 24 * 1024
    bash_max_bytes: int = 24 * 1024
    # spec read read
    read_max_line_chars: int = 2000
    binary_sniff_bytes: int = 4100
    pdf_max_pages: int = 20
    # False: behave as if the image processor (Pillow) were missing (patch read.image-fallback,
    # spec read.7); True uses it when it is installed.
    image_processor: bool = True
    # spec write write
    write_capture_max_bytes: int = 1024 * 1024
    write_patch_max_chars: int = 256 * 1024
    write_diff_timeout_ms: int = 5000
    # spec edit edit
    diff_max_edit_length: int = 1000
    diff_timeout_ms: int = 5000
    # spec ripgrep ripgrep runner
    rg_timeout_ms: int = 30_000
    rg_kill_grace_ms: int = 5_000
    rg_max_stdout_bytes: int = 8 * 1024 * 1024
    rg_binary: str | None = None  # explicit override; else bundled package binary; else PATH
    # spec grep / spec glob
    grep_default_limit: int = 100
    grep_max_line_length: int = 2000
    grep_max_total_bytes: int = 256 * 1024
    glob_default_limit: int = 200
    sort_by_name_only: bool = False  # the spec's test-mode switch for grep file ordering
    # spec bash bash
    bash_default_timeout_s: float = 120
    bash_max_timeout_s: float = 300
    bash_max_background_timeout_s: int = 2_147_483
    bash_soft_yield_ms: int = 15_000
    bash_background_max_run_ms: int = 30 * 60 * 1000
    bash_max_background_run_ms: int = 2_147_483_647
    bash_term_grace_ms: int = 3000
    bash_exit_stdio_grace_ms: int = 100
    bash_update_throttle_ms: int = 100
    full_output_prefix: str = "pi-bash"
    shell_path: str | None = None
    # A POSIX stand-in for the Windows kill path (spec patch.bash.win-taskkill): when set on a host
    # that is not Windows, timeouts and aborts end the tree through ``taskkill`` as on Windows; a
    # Windows path the taskkill resolution yields (``C:\Windows\System32\taskkill.exe``) is found
    # under this directory (``<root>/C/Windows/System32/taskkill.exe``), a bare ``taskkill`` on PATH.
    # Ignored on Windows. A relative value is resolved against the workspace root by the server.
    taskkill_standin_root: str | None = None
    can_consume_background_output: bool = True
    # spec common.6 names
    env_sanitize_var: str = "MAVIS_BASH_ENV_SANITIZE"
    powershell_source_var_prefix: str = "MAVIS_POWERSHELL_SOURCE_"
    powershell_launcher_var_prefix: str = "$__mavis"
    trash_binary: str = "mavis-trash"
    trash_sentinel: str = "mavis-trash --"
    trash_script: str = "mavis-trash.js"
    guardian_shell_name: str = "mavis-guarded-shell"
    guardian_ready_var: str = "__mavis_guardian_ready"
    sensitive_root_probe: str = "__mavis_sensitive_root_probe__"
    data_dir: str | None = None  # where shims/rm and bin/mavis-trash live; None = no rm shim
    # spec bash.env environment lists (configurable: the legacy list may gain MINIMAX_PROFILE)
    layer_a_prefixes: tuple[str, ...] = LAYER_A_PREFIXES
    layer_a_exact: tuple[str, ...] = LAYER_A_EXACT
    managed_runtime_keys: tuple[str, ...] = MANAGED_RUNTIME_KEYS
    legacy_runtime_env_keys: tuple[str, ...] = LEGACY_RUNTIME_ENV_KEYS
    parent_hint_keys: tuple[str, ...] = PARENT_HINT_KEYS
    asr_proxy_auth_env_keys: tuple[str, ...] = ASR_PROXY_AUTH_ENV_KEYS
    scrub_list: tuple[str, ...] = BASH_SUBPROCESS_SCRUB
    strict_protected_names: tuple[str, ...] = STRICT_PROTECTED_NAMES
    env_allowlist: tuple[str, ...] = ()
    # spec common.4 Unicode version of the emulated runtime's normalisation data (Node 22: 17.0.0)
    unicode_version: str = DEFAULT_UNICODE_VERSION
    extra: Mapping[str, object] = field(default_factory=dict)

    def patch(self, name: str) -> bool:
        """Whether the patch toggle ``name`` is on. Unknown names raise ``KeyError``. (The tools
        never ask: their seams do, through core/patches.py.)"""
        if name not in ALL_PATCHES:
            raise KeyError(f"unknown patch toggle: {name}")
        return name in self.patches

    def with_patches(self, changes: Mapping[str, bool]) -> Profile:
        """A copy with the named toggles switched on or off."""
        enabled = set(self.patches)
        for name, on in changes.items():
            if name not in ALL_PATCHES:
                raise KeyError(f"unknown patch toggle: {name}")
            (enabled.add if on else enabled.discard)(name)
        return dataclasses.replace(self, patches=frozenset(enabled))

    def replace(self, **changes: object) -> Profile:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


def surface_of(profile: Profile) -> str:
    """The surface ``profile`` shows: MiniMax's with the wrapper, pi's without it."""
    return SURFACE_MINIMAX if profile.wrapper else SURFACE_PI


REFERENCE = Profile()
UPSTREAM_PI = Profile(name="pi-upstream", wrapper=False, patches=frozenset())


# The profile overlay of a scenario (``profile:``) and of the ``workspace`` op: one validator for
# both, so the loader and the server accept exactly the same words.
PROFILE_BASES: dict[str, Profile] = {"reference": REFERENCE, "upstream": UPSTREAM_PI}
OVERLAY_KEYS: tuple[str, ...] = ("base", "patches")
_NOT_OVERLAY_FIELDS = ("patches", "extra")  # set through "patches", or not settable at all


@dataclass(frozen=True)
class ProfileProblem:
    """One problem of a profile overlay. ``key`` is the offending key's path in the overlay
    (``("patches", "edit.fuzzy-spam")``); ``in_value`` says whether the problem is its value (else
    the key itself); ``field`` is what the message names (``profile.patches``)."""

    key: tuple[str, ...]
    field: str
    message: str
    in_value: bool = True

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


def _suggestion(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _expected_type(hint: object, value: object) -> str | None:
    """What a field of type ``hint`` expects, or ``None`` if ``value`` fits."""
    if hint is bool:
        return None if isinstance(value, bool) else "a boolean"
    if hint is int:
        return None if isinstance(value, int) and not isinstance(value, bool) else "an integer"
    if hint is float:
        return None if isinstance(value, (int, float)) and not isinstance(value, bool) else "a number"
    if hint is str:
        return None if isinstance(value, str) else "a string"
    if hint == (str | None):
        return None if value is None or isinstance(value, str) else "a string or null"
    if typing.get_origin(hint) is tuple:
        ok = isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
        return None if ok else "a list of strings"
    return None


def profile_problems(obj: Mapping[str, object]) -> list[ProfileProblem]:
    """Every problem of a profile overlay ``{"base": "reference"|"upstream", "patches": {toggle:
    bool}, <field>: value}``, in key order; empty if it is valid."""
    problems: list[ProfileProblem] = []
    hints = typing.get_type_hints(Profile)
    fields = [f.name for f in dataclasses.fields(Profile) if f.name not in _NOT_OVERLAY_FIELDS]
    for key, value in obj.items():
        if key == "base":
            if not isinstance(value, str) or value not in PROFILE_BASES:
                hint = _suggestion(value, PROFILE_BASES) if isinstance(value, str) else ""
                problems.append(ProfileProblem(("base",), "profile.base",
                                               f"expected one of {', '.join(PROFILE_BASES)}; got {value!r}{hint}"))
        elif key == "patches":
            if not isinstance(value, Mapping):
                problems.append(ProfileProblem(("patches",), "profile.patches",
                                               "expected a mapping of patch toggle to boolean"))
                continue
            for name, on in value.items():
                if name not in ALL_PATCHES:
                    problems.append(ProfileProblem(
                        ("patches", str(name)), "profile.patches",
                        f"unknown patch toggle {name!r}{_suggestion(str(name), ALL_PATCHES)}", in_value=False))
                elif not isinstance(on, bool):
                    problems.append(ProfileProblem(("patches", name), f"profile.patches.{name}",
                                                   f"expected a boolean, got {on!r}"))
        elif key not in fields:
            problems.append(ProfileProblem((key,), f"profile.{key}",
                                           "unknown profile field" + _suggestion(key, [*OVERLAY_KEYS, *fields]),
                                           in_value=False))
        else:
            expected = _expected_type(hints[key], value)
            if expected is not None:
                problems.append(ProfileProblem((key,), f"profile.{key}", f"expected {expected}, got {value!r}"))
    return problems


def profile_from_json(obj: Mapping[str, object] | None, base: Profile = REFERENCE) -> Profile:
    """Build a profile from a JSON overlay (see ``profile_problems``) over ``base``.

    Raises ``ValueError`` naming the first offending key.
    """
    if not obj:
        return base
    problems = profile_problems(obj)
    if problems:
        raise ValueError(str(problems[0]))
    prof = PROFILE_BASES[str(obj["base"])] if "base" in obj else base
    patches = obj.get("patches")
    if isinstance(patches, Mapping):
        prof = prof.with_patches({str(k): bool(v) for k, v in patches.items()})
    updates = {key: tuple(value) if isinstance(value, list) else value
               for key, value in obj.items() if key not in OVERLAY_KEYS}
    return dataclasses.replace(prof, **updates) if updates else prof  # type: ignore[arg-type]
