"""What the reference server declares in its hello (tools_impl/server/declaration.py) is named from
the harness's registry (harness/model/features.py) and matches what the harness assumes of a
scenario with ``profile: {base: upstream}`` (``harness.model.features.UPSTREAM``)."""

from __future__ import annotations

import json
import subprocess
import sys

from harness.model.features import DIALECT_NAMES, FEATURE_NAMES, UPSTREAM
from tools_impl.core.profile import ALL_PATCHES
from tools_impl.server.declaration import (
    REFERENCE_DIALECTS,
    REFERENCE_FEATURES,
    UPSTREAM_DIALECTS,
    UPSTREAM_FEATURES,
)


def hello(*flags: str) -> dict[str, object]:
    proc = subprocess.run([sys.executable, "-m", "tools_impl.server", *flags], input='{"id": 1, "op": "hello"}\n',
                          capture_output=True, text=True, timeout=60)
    result: dict[str, object] = json.loads(proc.stdout.splitlines()[0])["result"]
    return result


def test_the_reference_declares_minimax_and_every_feature_of_the_registry() -> None:
    assert set(REFERENCE_DIALECTS) <= set(DIALECT_NAMES) and set(UPSTREAM_DIALECTS) <= set(DIALECT_NAMES)
    assert sorted(REFERENCE_FEATURES) == sorted(FEATURE_NAMES)
    got = hello()
    assert (got["dialects"], got["features"], got["absent_patches"]) == (["minimax"], list(REFERENCE_FEATURES), [])


def test_upstream_declares_pi_what_the_engine_has_and_every_patch_absent() -> None:
    assert set(UPSTREAM_FEATURES) <= set(FEATURE_NAMES)
    got = hello("--upstream")
    assert got["dialects"] == ["pi"] and got["features"] == list(UPSTREAM_FEATURES)
    assert got["absent_patches"] == list(ALL_PATCHES)
    # a scenario with profile base upstream on the reference is judged as this server would be
    assert (UPSTREAM.dialects, UPSTREAM.absent_patches) == (("pi",), ALL_PATCHES)
    assert UPSTREAM.features == UPSTREAM_FEATURES
