"""What toolproof ships besides code: the scenario corpus, the baselines and snapshots that go
with it, the pi adapter, the example adapters and the documentation (``docs/``, README.md:
``toolproof docs``). In a wheel they are package data under
``harness/_shipped/`` (``setup.py`` copies them there at build time); in a checkout (or an
editable install) they are the top-level directories of the repository.

Scenario paths on the command line, in ``[tool.toolproof] paths`` and in a pytest invocation may
name the shipped corpus as ``toolproof:`` (all of ``scenarios/``) or ``toolproof:SUBDIR``
(``toolproof:edit``, ``toolproof:read/missing-file.yaml``); ``toolproof:pi`` is the pi adapter's
scenarios. Baselines shipped with it are named ``toolproof:baselines/NAME.yaml``, the
documentation ``toolproof:docs/…``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from harness.errors import UsageError

PREFIX = "toolproof:"
PACKAGE_DATA_DIR = "_shipped"
# (name inside the shipped root, where it lives in a checkout)
SHIPPED_DIRS = ("scenarios", "baselines", "snapshots", "adapters/pi", "examples", "docs")
SHIPPED_FILES = ("README.md",)
CORPUS_DIR = "scenarios"
PI_SCENARIOS = "adapters/pi/scenarios"
# names under ``toolproof:`` that are not directories of the corpus
ALIASES = {"pi": PI_SCENARIOS}
TOP_LEVEL = ("baselines", "snapshots", "adapters", "examples", "docs")


def shipped_root() -> Path:
    """The directory holding ``scenarios/``, ``baselines/``, … (package data, else the checkout)."""
    here = Path(__file__).resolve().parents[1]  # the harness package
    packaged = here / PACKAGE_DATA_DIR
    if (packaged / CORPUS_DIR).is_dir():
        return packaged
    checkout = here.parent
    if (checkout / CORPUS_DIR).is_dir() and (checkout / "pyproject.toml").is_file():
        return checkout
    raise UsageError(f"the shipped corpus is not installed (looked in {packaged} and {checkout / CORPUS_DIR}); "
                     "reinstall toolproof from a wheel or a checkout")


def is_packaged(root: Path | None = None) -> bool:
    """Whether the shipped files are an installed package's data (a wheel install), which no
    command may change, rather than a checkout's own directories."""
    try:
        return (root or shipped_root()).name == PACKAGE_DATA_DIR
    except UsageError:
        return False


def is_shipped_name(path: str) -> bool:
    return path.startswith(PREFIX)


def resolve(path: str) -> str:
    """``toolproof:REL`` → the file system path of that shipped file or directory; other paths
    are returned unchanged. An unknown shipped name is a ``UsageError`` listing what exists."""
    if not is_shipped_name(path):
        return path
    rel = path[len(PREFIX):].strip("/")
    root = shipped_root()
    head, _, rest = rel.partition("/")
    if not rel:
        target = root / CORPUS_DIR
    elif head in ALIASES:
        target = root / ALIASES[head] / rest
    elif head in TOP_LEVEL:
        target = root / rel
    else:
        target = root / CORPUS_DIR / rel
    if not target.exists():
        groups = sorted(p.name for p in (root / CORPUS_DIR).iterdir() if p.is_dir())
        raise UsageError(f"{path}: no such shipped scenario file or directory "
                         f"(the shipped corpus has {', '.join(groups)}; also toolproof:pi and "
                         "toolproof:baselines/NAME.yaml)")
    return str(target)


def resolve_all(paths: list[str] | tuple[str, ...]) -> list[str]:
    return [resolve(p) for p in paths]


def snapshot_root_for(scenario_path: str) -> Path | None:
    """The shipped snapshot store when ``scenario_path`` is a shipped scenario, else None."""
    try:
        root = shipped_root()
    except UsageError:
        return None
    resolved = Path(scenario_path).resolve()
    for rel in (CORPUS_DIR, PI_SCENARIOS):
        if resolved.is_relative_to((root / rel).resolve()):
            return root / "snapshots"
    return None


def main(argv: list[str] | None = None) -> int:
    """``python -m harness.install.shipped where``: print where the shipped files are."""
    args = sys.argv[1:] if argv is None else argv
    try:
        if args == ["where"]:
            print(shipped_root())
            return 0
    except UsageError as exc:
        print(f"toolproof: error: {exc}", file=sys.stderr)
        return 2
    print("usage: python -m harness.install.shipped where", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
