"""pytest integration: scenario YAML files run as ordinary tests (one test per scenario, so
``-k``, ``-x``, ``-n auto`` and ``--junitxml`` work), on the backend named by
``--toolproof-backend``; ``snapshot: true`` expectations are checked by syrupy, stored under the
top-level ``snapshots/`` folder and updated with ``--snapshot-update``.

Inactive unless ``--toolproof`` is given or the ini option ``toolproof_paths`` is set: then YAML
files are collected that are named on the command line, lie under a directory named there, or
lie under ``toolproof_paths`` (default: ``paths`` of ``[tool.toolproof]`` in pyproject.toml,
else ``scenarios``, relative to the rootdir). ``toolproof:NAME`` arguments name the shipped
corpus (``harness.install.shipped``). Each scenario's tags are markers (``-m "edit and not fuzzy"``;
``patch:edit.fuzzy-span`` becomes ``patch_edit_fuzzy_span``). Infrastructure errors are reported
as test errors (setup), skips as skips, baseline-listed failures (``--toolproof-baseline``, default
the configured baseline) as xfail, and stale baseline entries as failures.
"""

from __future__ import annotations

import fnmatch
import functools
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.backends.base import Backend
from harness.backends.registry import DEFAULT_IMPL, backend_factory
from harness.cli.config import load_config
from harness.cli.options import declared_by_config
from harness.corpus.loader import load_scenario
from harness.errors import HarnessError, InfrastructureError, ScenarioError, UsageError
from harness.install.shipped import is_packaged, is_shipped_name, resolve, resolve_all, snapshot_root_for
from harness.model.features import DeclarationOverride
from harness.model.results import ERROR, FAIL, SKIP, STALE, XFAIL, RunInfo, RunResult, ScenarioResult
from harness.model.scenario import LEVELS, Scenario
from harness.report.baseline import apply_baseline, load_baseline
from harness.run.compare import readable_diff
from harness.run.runner import run_scenario
from harness.run.snapshots import SnapshotStore, snapshot_path

DEFAULT_PATHS = ("scenarios",)
SNAPSHOT_DIR = "snapshots"
MARKER_UNSAFE = re.compile(r"[^A-Za-z0-9_]")
SCENARIO_SNIFF = re.compile(r"^steps\s*:", re.MULTILINE)
_ENABLED = pytest.StashKey[bool]()
_ROOTS = pytest.StashKey[tuple[Path, ...]]()
_NAMED = pytest.StashKey[tuple[Path, ...]]()
_MARKERS = pytest.StashKey[set[str]]()
_FORCED = pytest.StashKey[dict[Path, Path]]()
_DECLARED = pytest.StashKey[DeclarationOverride | None]()


def marker_name(tag: str) -> str:
    """A scenario tag as a pytest marker usable in ``-m``: characters other than letters, digits
    and ``_`` become ``_`` (``patch:edit.fuzzy-span`` → ``patch_edit_fuzzy_span``)."""
    name = MARKER_UNSAFE.sub("_", tag)
    return name if name[:1].isalpha() or name[:1] == "_" else f"tag_{name}"


def _toolproof_requested(args: list[str]) -> bool:
    return any(a == "--toolproof" or a.startswith("--toolproof-") for a in args)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """Rewrite ``toolproof:NAME`` arguments into the shipped corpus' paths before pytest looks
    them up (pytest would report "file or directory not found")."""

    if not _toolproof_requested(args):
        return
    for i, arg in enumerate(args):
        if is_shipped_name(arg):
            try:
                args[i] = resolve(arg)
            except UsageError as exc:
                raise pytest.UsageError(str(exc)) from None


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("toolproof", "toolproof scenario corpus")
    group.addoption("--toolproof", action="store_true", default=False,
                    help="collect scenario YAML files (under toolproof_paths) as tests")
    group.addoption("--toolproof-impl", default=None, metavar="IMPL",
                    help="implementation under test: reference | upstream | pi@VERSION | cmd:COMMAND "
                         "(default: impl of [tool.toolproof], else reference)")
    group.addoption("--toolproof-backend", default=None, metavar="BACKEND",
                    help="backend for scenarios: local | cmd:COMMAND | docker[:IMAGE] "
                         "(default: impl/backend of [tool.toolproof], else local)")
    group.addoption("--toolproof-baseline", default=None, metavar="FILE",
                    help="baseline YAML: listed failures xfail, listed passes fail as stale "
                         "(default: baseline of [tool.toolproof])")
    group.addoption("--toolproof-level", default="full", choices=LEVELS,
                    help="behaviour: judge each step's expect alone; full (default): also the wording of "
                         "the dialects the implementation declares")
    parser.addini("toolproof_paths", "directories whose YAML files are toolproof scenarios", type="args",
                  default=[])


def pytest_configure(config: pytest.Config) -> None:

    ini_paths = list(config.getini("toolproof_paths"))
    enabled = bool(config.getoption("toolproof") or ini_paths)
    config.stash[_ENABLED] = enabled
    config.stash[_MARKERS] = set()
    if not enabled:
        config.stash[_ROOTS] = config.stash[_NAMED] = ()
        return
    try:
        tp = load_config(config.rootpath)
        roots = resolve_all(ini_paths or list(tp.paths) or list(DEFAULT_PATHS))
        if config.getoption("toolproof_backend") is None:
            config.option.toolproof_backend = tp.backend or "local"
            if tp.impl and config.getoption("toolproof_impl") is None:
                config.option.toolproof_impl = tp.impl
        if config.getoption("toolproof_impl") is None:
            config.option.toolproof_impl = DEFAULT_IMPL
        if config.getoption("toolproof_baseline") is None and tp.baseline:
            config.option.toolproof_baseline = resolve_all([tp.baseline])[0]
        config.stash[_DECLARED] = declared_by_config(tp, config.getoption("toolproof_impl"))
    except UsageError as exc:
        raise pytest.UsageError(f"toolproof: {exc}") from None
    config.stash[_ROOTS] = resolved_roots = tuple((config.rootpath / p).resolve() for p in roots)
    # what the command line names: a file named is collected even outside the roots, and so is
    # every scenario file under a directory named (pytest --toolproof mydir). Without PATHS pytest
    # passes the rootdir (or testpaths), which names nothing: there only the roots count.
    explicit = config.args_source == pytest.Config.ArgsSource.ARGS
    named = []
    walked = []
    for arg in config.args:
        path = Path(arg.split("::", 1)[0])
        path = path if path.is_absolute() else Path(config.invocation_params.dir) / path
        if not path.exists():
            continue
        walked.append(path.resolve())
        if explicit or path.resolve() != config.rootpath.resolve():
            named.append(path.resolve())
    config.stash[_NAMED] = tuple(named)
    config.stash[_FORCED] = {}
    if not explicit:
        _reach_the_roots(config, resolved_roots, walked)


def _skipped_by_default(config: pytest.Config, directory: Path) -> bool:
    """Whether pytest's own rules would not walk into ``directory`` (a virtualenv, or a name in
    ``norecursedirs`` such as ``.venv`` or ``build``)."""
    if not config.getoption("collect_in_virtualenv") and (
            (directory / "pyvenv.cfg").is_file() or (directory / "conda-meta" / "history").is_file()):
        return True
    return any(fnmatch.fnmatch(directory.name, pattern) for pattern in config.getini("norecursedirs"))


def _reach_the_roots(config: pytest.Config, roots: tuple[Path, ...], walked: list[Path]) -> None:
    """pytest walks only its arguments, and skips virtualenvs and ``norecursedirs`` on the way;
    a configured root it would not reach (the shipped corpus, ``toolproof:`` in ``[tool.toolproof]
    paths``, lives in site-packages, perhaps of a ``.venv`` inside the repository) is added to the
    arguments, or, when it lies under one, its path is opened through the skipped directories
    (``pytest_ignore_collect`` below), nothing beside that path."""
    forced: dict[Path, Path] = config.stash[_FORCED]  # directory on a forced path → its root
    for root in roots:
        if not root.exists():
            continue
        top = next((w for w in walked if root.is_relative_to(w)), None)
        if top is None:
            config.args.append(str(root))
            continue
        chain = [top.joinpath(*root.relative_to(top).parts[:i]) for i in range(1, len(root.relative_to(top).parts) + 1)]
        first = next((i for i, d in enumerate(chain) if _skipped_by_default(config, d)), None)
        if first is not None:
            for d in chain[first:]:
                forced[d] = root


@pytest.hookimpl(tryfirst=True)
def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    forced: dict[Path, Path] = config.stash.get(_FORCED, {})
    if not forced:
        return None
    path = collection_path.resolve()
    if path in forced:
        return False  # on the path to a configured root: walk in, whatever pytest's rules say
    parent = forced.get(path.parent)
    if parent is not None and path.parent != parent:
        return True  # beside that path inside a skipped directory: stays skipped
    return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    config = parent.config
    if not config.stash.get(_ENABLED, False) or file_path.suffix not in (".yaml", ".yml"):
        return None
    resolved = file_path.resolve()
    if any(resolved.is_relative_to(root) for root in config.stash[_ROOTS]) or resolved in config.stash[_NAMED]:
        return ScenarioFile.from_parent(parent, path=file_path)
    # under a directory named on the command line: only what looks like a scenario, so that
    # ``pytest --toolproof .`` does not trip over CI files and baselines
    if any(resolved.is_relative_to(d) for d in config.stash[_NAMED]) and looks_like_scenario(file_path):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


def looks_like_scenario(path: Path) -> bool:
    """A YAML file with a top-level ``steps:`` key (read cheaply, without parsing)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return SCENARIO_SNIFF.search(text) is not None


class ScenarioFile(pytest.File):
    """One scenario YAML file → one test."""

    def collect(self) -> Iterator[pytest.Item]:
        try:
            scenario = load_scenario(self.path)
        except ScenarioError as exc:
            raise self.CollectError("\n".join(exc.problems)) from None
        item = ScenarioItem.from_parent(self, name=scenario.id, callobj=_scenario_test)
        item.scenario = scenario
        known = self.config.stash[_MARKERS]
        for tag in scenario.tags:
            item.extra_keyword_matches.add(tag)
            name = marker_name(tag)
            if name not in known:  # registered, so --strict-markers accepts it
                known.add(name)
                self.config.addinivalue_line("markers", f"{name}: toolproof scenario tag {tag!r}")
            item.add_marker(name)
        yield item


class ScenarioItem(pytest.Function):
    scenario: Scenario

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.scenario.line - 1, f"scenario {self.scenario.id}"

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> str:  # type: ignore[override]
        if isinstance(excinfo.value, ScenarioFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))


class ScenarioFailed(AssertionError):
    """A behaviour failure; its text lists every failing step with diffs."""


class _BackendHolder:
    """The session's backend (one per xdist worker); restarted after an infrastructure error."""

    def __init__(self, spec: str, impl: str = "reference") -> None:
        self.spec = spec
        self.impl = impl
        self.backend: Backend | None = None
        self.dirty = False

    def get(self) -> Backend:
        if self.backend is None:
            factory, _ = backend_factory(self.spec, self.impl)
            self.backend = factory()
        elif self.dirty:
            self.dirty = False
            self.backend.restart()
        return self.backend

    def close(self) -> None:
        if self.backend is not None:
            self.backend.close()


@pytest.fixture(scope="session")
def toolproof_backend(request: pytest.FixtureRequest) -> Iterator[_BackendHolder]:
    holder = _BackendHolder(request.config.getoption("toolproof_backend"), request.config.getoption("toolproof_impl"))
    yield holder
    holder.close()


def _snapshot_hook(request: pytest.FixtureRequest) -> Any:

    item = request.node
    shipped = snapshot_root_for(item.scenario.path)
    if shipped is not None and is_packaged(shipped.parent):
        return _installed_snapshot_hook(request.config, item.scenario, shipped)
    root = shipped or request.config.rootpath / SNAPSHOT_DIR

    def check(name: str, actual: str) -> str | None:
        snapshot = request.getfixturevalue("snapshot").use_extension(snapshot_extension_class())
        if snapshot(name=name) == actual:
            return None
        path = snapshot_path(root, item.scenario.id, name)
        try:
            stored = path.read_bytes().decode("utf-8", "surrogateescape")
        except OSError:
            return f"snapshot {path} is missing; run pytest with --snapshot-update to create it"
        return f"differs from snapshot {path} (run pytest with --snapshot-update to accept)\n" + readable_diff(stored, actual)

    return check


def _installed_snapshot_hook(config: pytest.Config, scenario: Scenario, root: Path) -> Any:
    """The snapshots of the shipped corpus, installed with toolproof (package data), belong to
    it: compared byte for byte, never written or removed through syrupy, so ``--snapshot-update``
    cannot change or delete them. (In a checkout of toolproof they are the repository's own files
    and syrupy updates them as any others.)"""
    check = SnapshotStore(root).hook_for(scenario)
    if not getattr(config.option, "update_snapshots", False):
        return check

    def refuse(name: str, actual: str) -> str | None:
        problem = check(name, actual)
        if problem is None:
            return None
        return (f"{problem}\n--snapshot-update does not change the shipped snapshots of toolproof's corpus "
                f"({root}); a scenario of your own (outside toolproof:) keeps its snapshots under "
                f"{config.rootpath / SNAPSHOT_DIR}")

    return refuse


@pytest.fixture
def toolproof_result(request: pytest.FixtureRequest, toolproof_backend: _BackendHolder) -> ScenarioResult:
    """Runs the scenario (in setup, so infrastructure errors are test errors, not failures)."""
    scenario: Scenario = request.node.scenario
    try:
        backend = toolproof_backend.get()
    except HarnessError as exc:
        toolproof_backend.dirty = True
        raise InfrastructureError(f"backend {toolproof_backend.spec}: {exc}") from None
    result = run_scenario(backend, scenario, snapshot=_snapshot_hook(request), keep_observations=False,
                          level=request.config.getoption("toolproof_level"),
                          declared=request.config.stash.get(_DECLARED, None))
    if result.status == ERROR:
        toolproof_backend.dirty = True
        raise InfrastructureError(result.failure_text or result.message)
    return result


def _scenario_test(request: pytest.FixtureRequest, toolproof_result: ScenarioResult) -> None:
    result = toolproof_result
    baseline_path = request.config.getoption("toolproof_baseline")
    if baseline_path:
        run = apply_baseline(RunResult(RunInfo(), (result,)), load_baseline(baseline_path))
        result = run.scenarios[0]
    if result.status == SKIP:
        # report the scenario file as the skip's location, not this module
        raise pytest.skip.Exception(result.reason, _use_item_location=True)
    if result.status == XFAIL:
        pytest.xfail(f"baseline: {result.reason or result.failure_text}")
    if result.status in (FAIL, STALE):
        raise ScenarioFailed(f"scenario {result.id} ({result.path}) {result.status}:\n{result.failure_text}")


@functools.cache
def snapshot_extension_class() -> type:
    # Optional: syrupy is a test extra; the plugin imports it only when a scenario checks a snapshot.
    from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

    class _Extension(SingleFileSnapshotExtension):
        """Exact UTF-8 bytes in ``<rootdir>/snapshots/<scenario id>/<step>.<text|error>.txt``."""

        _write_mode = WriteMode.BINARY
        file_extension = "txt"

        def serialize(self, data: Any, **_: Any) -> bytes:
            return data.encode("utf-8", "surrogateescape") if isinstance(data, str) else bytes(data)

        @classmethod
        def get_snapshot_name(cls, *, test_location: Any, index: Any = 0) -> str:
            return str(index)

        @classmethod
        def dirname(cls, *, test_location: Any) -> str:
            item = test_location.item
            root = snapshot_root_for(item.scenario.path) or item.config.rootpath / SNAPSHOT_DIR
            return str(root / item.scenario.id)

        @classmethod
        def discovery_dirname(cls, *, test_location: Any) -> str:
            return cls.dirname(test_location=test_location)

        @classmethod
        def write_snapshot(cls, **kwargs: Any) -> None:
            # syrupy warns that our id-based layout does not follow its test-file naming; it is
            # deliberate (scenario ids are the stable names), so the warning is noise.
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=r"\s*Can not relate snapshot", category=UserWarning)
                super().write_snapshot(**kwargs)

    return _Extension
