"""The installed pi release the real-pi tests use: ``TOOLPROOF_PI_DIR`` (and optionally
``TOOLPROOF_PI_NODE``), as ``eval "$(ci/pi-setup.sh --print env 0.79.1)"`` exports them. Without
it those tests skip; with ``TOOLPROOF_REQUIRE_PI=1`` they fail instead."""

from __future__ import annotations

import json
import os
import shlex
import shutil
from pathlib import Path

import pytest

from tests.support.repo import REPO

PI_DIR = os.environ.get("TOOLPROOF_PI_DIR") or None
REQUIRE_PI = os.environ.get("TOOLPROOF_REQUIRE_PI") == "1"
DRIVER = REPO / "adapters" / "pi" / "driver.mjs"


def pi_impl(version: str) -> str:
    """``cmd:`` of the pi driver for the install in ``TOOLPROOF_PI_DIR`` (which must be ``version``),
    or a skip (a failure under ``TOOLPROOF_REQUIRE_PI=1``)."""
    def unavailable(reason: str) -> None:
        if REQUIRE_PI:
            pytest.fail(f"TOOLPROOF_REQUIRE_PI=1 but {reason}")
        pytest.skip(reason)

    if PI_DIR is None:
        unavailable(f'set TOOLPROOF_PI_DIR to a pi {version} install (eval "$(ci/pi-setup.sh --print env {version})")')
    assert PI_DIR is not None
    try:
        installed = json.loads((Path(PI_DIR) / "toolproof-pi.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        installed = {}
    if installed.get("version") not in (None, version):
        unavailable(f"TOOLPROOF_PI_DIR holds pi {installed.get('version')}, this test needs {version}")
    node = os.environ.get("TOOLPROOF_PI_NODE") or installed.get("node") or shutil.which("node")
    if not node:
        unavailable(f"no Node binary for the pi install in {PI_DIR}")
    return "cmd:" + shlex.join([str(node), str(DRIVER), "--pi-dir", PI_DIR])
