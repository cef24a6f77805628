"""A step's ``when: {programs: [...]}``: the programs its command runs must be found on the host
where the implementation runs, or the step is skipped with the reason (never a failure of the tool
layer: a recorded ``npm test`` replayed where no ``npm`` exists says nothing about the tools).

A program is found when one of the search directories holds a file or symlink of that name, as
the session reads paths where the implementation runs (the host for local and ``cmd:`` backends,
the container for docker). The directories: the scenario's ``PATH`` when its ``env`` sets one,
else the host's ``PATH`` on backends without isolation; then the standard ones.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping, Sequence

from harness.backends.base import Capabilities
from harness.run.session import Session

STANDARD_PATH_DIRS: tuple[str, ...] = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
FOUND_KINDS = ("file", "symlink")


def search_dirs(caps: Capabilities, env: Mapping[str, str | None]) -> tuple[str, ...]:
    """Where programs are looked for (absolute directories only, each once)."""
    path = env.get("PATH")
    if path is None and caps.get("isolation") != "container":
        path = os.environ.get("PATH", "")
    dirs = [d for d in (path or "").split(os.pathsep) if d.startswith("/")]
    return tuple(dict.fromkeys([*dirs, *STANDARD_PATH_DIRS]))


def missing_programs(session: Session, programs: Sequence[str], caps: Capabilities,
                     env: Mapping[str, str | None]) -> str | None:
    """The skip reason when a program of ``programs`` is not found, else None."""
    if not programs:
        return None
    dirs = search_dirs(caps, env)
    candidates = {name: [posixpath.join(d, name) for d in dirs] for name in programs}
    states = session.read_files([p for paths in candidates.values() for p in paths])
    missing = [name for name, paths in candidates.items() if not any(states[p].kind in FOUND_KINDS for p in paths)]
    if not missing:
        return None
    return f"requires program{'s' if len(missing) > 1 else ''} {', '.join(missing)}; not found on the replay host"
