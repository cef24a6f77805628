"""``--impl``: where the pi adapter is found (issue 21 item 1: from a wheel, ``--impl pi@VERSION``
crashed looking for ``site-packages/adapters/pi/pi_setup.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import harness.backends.impl as impl
import harness.install.pi as pi_install
from harness.errors import InfrastructureError

SETUP = '''
class SetupError(Exception):
    pass
def default_cache_dir():
    from pathlib import Path
    return Path(__file__).parent / "cache"
def install(version, cache):
    return "node-bin", cache / version
'''


def test_the_pi_adapter_is_loaded_from_where_the_package_ships_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = tmp_path / "site-packages" / "harness" / "_shipped"
    (shipped / "adapters" / "pi").mkdir(parents=True)
    (shipped / "adapters" / "pi" / "pi_setup.py").write_text(SETUP, encoding="utf-8")
    (shipped / "adapters" / "pi" / "driver.mjs").write_text("// driver\n", encoding="utf-8")
    monkeypatch.setattr(pi_install, "shipped_root", lambda: shipped)
    monkeypatch.delitem(sys.modules, "toolproof_pi_setup", raising=False)
    assert impl.pi_driver() == shipped / "adapters" / "pi" / "driver.mjs"
    argv = impl.local_argv(impl.parse_impl("pi@0.79.1"))
    assert argv == ["node-bin", str(shipped / "adapters" / "pi" / "driver.mjs"), "--pi-dir",
                    str((shipped / "adapters" / "pi" / "cache").resolve() / "0.79.1"), "--tools", impl.PI_TOOLS]
    monkeypatch.delitem(sys.modules, "toolproof_pi_setup", raising=False)


def test_a_missing_pi_adapter_is_an_infrastructure_error_not_a_traceback(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pi_install, "shipped_root", lambda: tmp_path)
    monkeypatch.delitem(sys.modules, "toolproof_pi_setup", raising=False)
    with pytest.raises(InfrastructureError, match=r"the pi adapter is not installed: .*pi_setup.py is missing"):
        impl.install_pi("0.79.1")
