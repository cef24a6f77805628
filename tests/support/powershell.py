"""A real PowerShell for the live PowerShell tests: ``pwsh`` or Windows PowerShell on PATH.

Without one those tests skip with the reason; with ``TOOLPROOF_REQUIRE_PWSH=1`` (the Windows job of
``.github/workflows/ci.yml``) they fail instead, so a runner that lost its PowerShell cannot pass
the job by skipping them."""

from __future__ import annotations

import os
import shutil

import pytest

REQUIRE_ENV = "TOOLPROOF_REQUIRE_PWSH"


def find_powershell() -> str | None:
    """The PowerShell executable the live tests use (``powershell`` first, as on Windows), or None."""
    return shutil.which("powershell") or shutil.which("pwsh")


def live_powershell() -> str:
    """The PowerShell executable, or a skip (a failure under ``TOOLPROOF_REQUIRE_PWSH=1``)."""
    found = find_powershell()
    if found is not None:
        return found
    reason = "no PowerShell executable (pwsh/powershell) on PATH"
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{REQUIRE_ENV}=1 but {reason}")
    pytest.skip(reason)
