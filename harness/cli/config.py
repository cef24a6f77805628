"""``[tool.toolproof]`` in the user's ``pyproject.toml``: the defaults of a gate, read by the CLI
and the pytest plugin alike (a command-line option always wins).

    [tool.toolproof]
    impl = "cmd:python3 toolproof/adapter.py"   # what is tested
    backend = "local"                           # where it runs
    paths = ["toolproof:", "toolproof/scenarios"]
    baseline = "toolproof/baseline.yaml"
    jobs = "auto"                               # or a number
    dialects = []                               # what the impl declares when its hello does not:
    features = ["fuzzy-edit"]                   #   harness/model/features.py (docs/scenario-format.md)

The file is the nearest ``pyproject.toml`` in the current directory or above it (stopping at the
root of a git repository). Relative paths are relative to the file's directory (so are the words
of a ``cmd:`` impl that name files there: the gate runs alike from a subdirectory); ``toolproof:``
names the shipped corpus (``harness.install.shipped``). Unknown keys and wrong types are a one-line
``UsageError`` naming the file and the key.
"""

from __future__ import annotations

import difflib
import os
import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from harness.backends.cmd import PYTHON_PLACEHOLDER
from harness.backends.impl import parse_impl
from harness.errors import UsageError
from harness.install.shipped import is_shipped_name
from harness.model.features import DIALECT_NAMES, FEATURE_NAMES

CONFIG_FILE = "pyproject.toml"
SECTION = "tool.toolproof"
KEYS = ("impl", "backend", "baseline", "paths", "jobs", "dialects", "features")
JOBS_AUTO = "auto"


@dataclass(frozen=True)
class Config:
    path: str = ""  # the pyproject.toml it came from ("" when there is none)
    impl: str | None = None
    backend: str | None = None
    baseline: str | None = None
    paths: tuple[str, ...] = field(default_factory=tuple)
    jobs: int | None = None
    dialects: tuple[str, ...] | None = None  # None: not configured (the hello's declaration stands)
    features: tuple[str, ...] | None = None

    @property
    def found(self) -> bool:
        return bool(self.path)


def parse_jobs(value: str | int, where: str = "--jobs") -> int:
    """``auto`` → the number of CPUs; a positive integer → itself."""
    if isinstance(value, int) and not isinstance(value, bool):
        jobs = value
    elif isinstance(value, str) and value.strip().lower() == JOBS_AUTO:
        return max(1, os.cpu_count() or 1)
    elif isinstance(value, str) and value.strip().isdigit():
        jobs = int(value.strip())
    else:
        raise UsageError(f"{where}: expected a positive integer or 'auto', got {value!r}")
    if jobs < 1:
        raise UsageError(f"{where}: must be at least 1, got {jobs}")
    return jobs


def find_config_file(start: Path | None = None) -> Path | None:
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        candidate = d / CONFIG_FILE
        if candidate.is_file():
            return candidate
        if (d / ".git").exists():
            return None
    return None


def _relative_to(base: Path, value: str) -> str:
    """``value`` (relative to the config file's directory ``base``) as a path that works from the
    current directory: kept as written when that is ``base``, else relative or absolute."""
    if is_shipped_name(value) or value.startswith("cmd:") or Path(value).is_absolute():
        return value
    target = base / value
    try:
        return os.path.relpath(target) if target.resolve().is_relative_to(Path.cwd().resolve()) else str(target)
    except ValueError:  # another drive on Windows
        return str(target)


def _command_relative_to(base: Path, impl: str) -> str:
    """A ``cmd:`` impl whose words name files relative to the config's directory ``base``
    (``cmd:{python} toolproof/adapter.py``), with those words made to work from the current
    directory, as ``paths`` and ``baseline`` are: toolproof then runs the same gate from any
    subdirectory. Other impls, and commands run from ``base`` itself, are kept as written."""
    if not impl.startswith("cmd:"):
        return impl
    try:
        words = shlex.split(impl[len("cmd:"):])
    except ValueError:
        return impl  # parse_impl reports it
    changed = False
    for i, word in enumerate(words):
        if word.startswith("-") or word == PYTHON_PLACEHOLDER or Path(word).is_absolute() or not (base / word).exists():
            continue
        moved = _relative_to(base, word)
        if moved != word:
            words[i], changed = moved, True
    if not changed:
        return impl
    return "cmd:" + " ".join(w if w == PYTHON_PLACEHOLDER else shlex.quote(w) for w in words)


def _string(file: str, key: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{file}: [{SECTION}] {key}: expected a non-empty string, got {value!r}")
    return value


def parse_config(data: dict[str, object], file: str) -> Config:
    section = data.get("tool", {})
    section = section.get("toolproof") if isinstance(section, dict) else None
    if section is None:
        return Config()
    if not isinstance(section, dict):
        raise UsageError(f"{file}: [{SECTION}] must be a table")
    for key in section:
        if key not in KEYS:
            close = difflib.get_close_matches(key, KEYS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise UsageError(f"{file}: [{SECTION}] unknown key {key!r}{hint}; expected one of {', '.join(KEYS)}")
    base = Path(file).parent
    paths_value = section.get("paths", [])
    if isinstance(paths_value, str):
        paths_value = [paths_value]
    if not isinstance(paths_value, list) or not all(isinstance(p, str) and p for p in paths_value):
        raise UsageError(f"{file}: [{SECTION}] paths: expected a list of strings, got {paths_value!r}")
    impl = _string(file, "impl", section["impl"]) if "impl" in section else None
    if impl is not None:
        try:
            parse_impl(impl)
        except UsageError as exc:
            raise UsageError(f"{file}: [{SECTION}] impl: {exc}") from None
    backend = _string(file, "backend", section["backend"]) if "backend" in section else None
    baseline = _string(file, "baseline", section["baseline"]) if "baseline" in section else None
    jobs = parse_jobs(section["jobs"], f"{file}: [{SECTION}] jobs") if "jobs" in section else None  # type: ignore[arg-type]
    dialects = _names(file, "dialects", section["dialects"], DIALECT_NAMES) if "dialects" in section else None
    features = _names(file, "features", section["features"], FEATURE_NAMES) if "features" in section else None
    return Config(path=file, impl=_command_relative_to(base, impl) if impl else None, backend=backend,
                  baseline=_relative_to(base, baseline) if baseline else None,
                  paths=tuple(_relative_to(base, p) for p in paths_value), jobs=jobs, dialects=dialects,
                  features=features)


def _names(file: str, key: str, value: object, known: tuple[str, ...]) -> tuple[str, ...]:
    """``dialects`` / ``features``: a list of names from the harness's registry."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{file}: [{SECTION}] {key}: expected a list of strings, got {value!r}")
    for name in value:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise UsageError(f"{file}: [{SECTION}] {key}: unknown name {name!r}{hint}; expected some of "
                             f"{', '.join(known)}")
    return tuple(value)


def load_config(start: Path | None = None) -> Config:
    """The ``[tool.toolproof]`` table of the nearest pyproject.toml (an empty Config if none)."""
    path = find_config_file(start)
    if path is None:
        return Config()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not valid TOML: {exc}") from None
    return parse_config(data, str(path))
