"""The sweep's disk cache, so a second sweep over the same releases and corpus is fast: per
release, the outcome of each scenario keyed by the scenario's content (and the driver and
toolproof version that ran it); per pair of neighbours, the fuzzer's classes keyed by n, seed and
the fuzzer's own code; per release, whether it installs and loads (a failure is retried after a
day: a registry can gain the missing package).

Location: ``--cache-dir``, else ``$TOOLPROOF_RELEASES_CACHE``, else
``$XDG_CACHE_HOME/toolproof/releases`` (``~/.cache/toolproof/releases``). Writers take a file lock
per cache file, so shards or sweeps sharing one cache do not lose each other's entries.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from harness.releases.records import FuzzPair, Outcome, ReleaseState

try:
    import fcntl  # POSIX file locks between processes sharing the cache
except ImportError:  # Windows: no cross-process lock (one sweep per cache there)
    fcntl = None  # type: ignore[assignment]

FAILURE_TTL_S = 24 * 3600.0


def default_cache_dir() -> Path:
    explicit = os.environ.get("TOOLPROOF_RELEASES_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "toolproof" / "releases"


def digest(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8") if isinstance(part, str) else part)
        h.update(b"\0")
    return h.hexdigest()[:20]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)[:40]


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a+b") as fh:
        if fcntl is not None:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(path: Path, data: Mapping[str, Any]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, ensure_ascii=False)
    os.replace(tmp, path)


class SweepCache:
    """One template's cache (``root/<template>``); ``enabled=False`` reads nothing (``--refresh``)
    but still writes what it learns."""

    def __init__(self, root: Path, template_key: str, *, read: bool = True) -> None:
        self.root = root / template_key
        self.read = read

    @staticmethod
    def template_key(template: str, launch: str) -> str:
        return f"{_slug(template)}-{digest(template, launch)[:10]}"

    # -- scenario outcomes -------------------------------------------------------------------
    def _runs(self, version: str) -> Path:
        return self.root / "runs" / f"{version}.json"

    def outcomes(self, version: str, keys: Mapping[str, str]) -> dict[str, Outcome]:
        """The cached outcomes at ``version`` of the scenarios in ``keys`` (scenario id → its key)."""
        if not self.read:
            return {}
        data = _read(self._runs(version))
        out: dict[str, Outcome] = {}
        for sid, key in keys.items():
            item = data.get(key)
            if isinstance(item, dict):
                try:
                    out[sid] = Outcome.from_json(item)
                except (KeyError, TypeError, ValueError):
                    continue
        return out

    def store_outcomes(self, version: str, found: Mapping[str, Outcome]) -> None:
        """``found``: scenario key → outcome; infrastructure errors are not cached."""
        keep = {k: o.to_json() for k, o in found.items() if not o.error}
        if not keep:
            return
        path = self._runs(version)
        with _locked(path):
            data = _read(path)
            data.update(keep)
            _write(path, data)

    # -- fuzz pairs --------------------------------------------------------------------------
    def _fuzz(self, older: str, newer: str, key: str) -> Path:
        return self.root / "fuzz" / f"{older}..{newer}-{key}.json"

    def fuzz_pair(self, older: str, newer: str, key: str) -> FuzzPair | None:
        if not self.read:
            return None
        data = _read(self._fuzz(older, newer, key))
        if not data:
            return None
        try:
            return FuzzPair.from_json(data)
        except (KeyError, TypeError, ValueError):
            return None

    def store_fuzz_pair(self, pair: FuzzPair, key: str) -> None:
        if pair.error:
            return
        path = self._fuzz(pair.older, pair.newer, key)
        with _locked(path):
            _write(path, pair.to_json())

    # -- release states ----------------------------------------------------------------------
    def _release(self, version: str) -> Path:
        return self.root / "releases" / f"{version}.json"

    def release_state(self, version: str, now: float | None = None) -> ReleaseState | None:
        """A cached state; a failure only while it is younger than a day."""
        if not self.read:
            return None
        data = _read(self._release(version))
        if not data:
            return None
        try:
            state = ReleaseState.from_json(data)
        except (KeyError, TypeError, ValueError):
            return None
        if not state.usable and (now or time.time()) - float(data.get("checked", 0)) > FAILURE_TTL_S:
            return None
        return state

    def store_release_state(self, state: ReleaseState, now: float | None = None) -> None:
        path = self._release(state.version)
        with _locked(path):
            _write(path, {**state.to_json(), "checked": now or time.time()})
