"""``toolproof init``: scaffold a gate for the user's own tool layer into their repository.

Writes (never over an existing file without ``--force``): an adapter skeleton copied from the
shipped examples (``examples/python-adapter`` by default, ``examples/node-adapter`` with
``--adapter node``), one scenario of the user's own, a baseline file, the ``[tool.toolproof]``
table in ``pyproject.toml`` and CI workflows for GitHub Actions and GitLab that gate the user's
implementation (templates in ``harness/scaffold/templates/``): on Linux, in the hardened container
(the adapter's image built by ``toolproof images adapter``), on Windows and against pi releases. Then, unless ``--no-run``, it runs
the configured gate once and lists the failures found in the baseline with TODO reasons, so the
gate passes from the first commit and only gets stricter.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harness import __version__
from harness.errors import UsageError
from harness.images.adapter import ADAPTER_DIR
from harness.install.shipped import shipped_root

TEMPLATES = Path(__file__).resolve().parent / "templates"
DEFAULT_DIR = "toolproof"
CI_CHOICES = ("github", "gitlab")
GITHUB_WORKFLOW = ".github/workflows/toolproof.yml"
GITLAB_FILE = ".gitlab-ci.yml"
PYPROJECT = "pyproject.toml"
SECTION_HEADER = "[tool.toolproof]"
LINUX_IMAGE = "python:3.11-bookworm"
PYTHON_PLACEHOLDER = "{python}"


@dataclass(frozen=True)
class Adapter:
    name: str
    source: str   # under the shipped examples/
    filename: str
    command: str  # the impl, with {dir} for the scaffold directory
    github_setup: str
    gitlab_setup: str
    implementation: str  # the example's own name (``init`` gives the copy the user's)
    docker_impl: str   # the impl inside the image ``toolproof images adapter --project .`` builds
    node: bool = False  # the image needs the Node runtime (``--node``)


ADAPTERS = {
    "python": Adapter("python", "python-adapter/adapter.py", "adapter.py",
                      f"cmd:{PYTHON_PLACEHOLDER} {{dir}}/adapter.py", "", "", "example-python-adapter",
                      f"cmd:python3 {ADAPTER_DIR}/{{dir}}/adapter.py"),
    "node": Adapter("node", "node-adapter/adapter.mjs", "adapter.mjs", "cmd:node {dir}/adapter.mjs",
                    "      - uses: actions/setup-node@v4\n        with:\n          node-version: \"22\"\n",
                    "    - apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null\n",
                    "example-node-adapter", f"cmd:node {ADAPTER_DIR}/{{dir}}/adapter.mjs", node=True),
}


EXAMPLE_IMPLEMENTATION_RE = re.compile(r'^((?:const\s+)?IMPLEMENTATION\s*=\s*)"[^"\n]*"', re.MULTILINE)
NAME_UNSAFE = re.compile(r"[^a-z0-9._-]+")
FALLBACK_NAME = "my-tools"


@dataclass
class Plan:
    """What ``init`` writes: relative path → text, relative path → file to copy (a toolproof
    wheel for CI); ``pyproject`` is the new pyproject.toml text."""

    root: Path
    files: dict[str, str] = field(default_factory=dict)
    copies: dict[str, Path] = field(default_factory=dict)
    pyproject: str = ""
    pyproject_existed: bool = False
    baseline: str = ""
    config_impl: str = ""
    config_paths: tuple[str, ...] = ()
    implementation: str = ""
    pip_spec: str = ""


def implementation_name(root: Path) -> str:
    """The name the user's implementation reports: ``[project] name`` of their pyproject.toml,
    else the repository directory's name (lower case, ``[a-z0-9._-]``)."""
    name = ""
    try:
        data = tomllib.loads((root / PYPROJECT).read_text(encoding="utf-8"))
        project = data.get("project")
        if isinstance(project, dict) and isinstance(project.get("name"), str):
            name = project["name"]
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        pass
    name = NAME_UNSAFE.sub("-", (name or root.resolve().name).lower()).strip("-._")
    return name or FALLBACK_NAME


def named_adapter(text: str, implementation: str, source: str) -> str:
    """The example adapter's text with its ``IMPLEMENTATION`` set to ``implementation``."""
    renamed, count = EXAMPLE_IMPLEMENTATION_RE.subn(lambda m: f'{m.group(1)}"{implementation}"', text, count=1)
    if count != 1:
        raise AssertionError(f"example adapter {source}: no IMPLEMENTATION = \"...\" line to name")
    return renamed


def _template(name: str, values: dict[str, str]) -> str:
    text = (TEMPLATES / name).read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace(f"@@{key}@@", value)
    left = re.findall(r"@@[A-Z_]+@@", text)
    if left:
        raise AssertionError(f"template {name}: unfilled {', '.join(sorted(set(left)))}")
    return text


def config_table(impl: str, paths: tuple[str, ...], baseline: str) -> str:
    quoted = ", ".join(f'"{p}"' for p in paths)
    return (f"{SECTION_HEADER}\n"
            "# What is tested: a command speaking the tool protocol ({python} is the Python running\n"
            "# toolproof). Run toolproof from the repository root. See `toolproof run --help`.\n"
            f'impl = "{impl}"\n'
            'backend = "local"\n'
            "# the corpus shipped with toolproof (toolproof:) and your own scenarios\n"
            f"paths = [{quoted}]\n"
            f'baseline = "{baseline}"\n'
            'jobs = "auto"\n')


def _replace_section(text: str, table: str) -> str:
    """``text`` with its ``[tool.toolproof]`` table replaced by ``table`` (or appended)."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, ln in enumerate(lines) if ln.strip() == SECTION_HEADER), None)
    if start is None:
        sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        return text + sep + table
    end = next((i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")), len(lines))
    return "".join(lines[:start]) + table + ("\n" if end < len(lines) else "") + "".join(lines[end:])


def plan(root: Path, *, adapter: str = "python", directory: str = DEFAULT_DIR,
         ci: tuple[str, ...] = CI_CHOICES, pip_spec: str = "", force: bool = False,
         implementation: str = "", ci_file: Path | None = None) -> Plan:
    """Everything ``init`` would write, checked against what exists (``UsageError`` listing every
    file that would be overwritten, unless ``force``). ``implementation``: the name the adapter
    reports and the baseline belongs to (default: ``implementation_name(root)``); ``pip_spec``: how
    CI installs toolproof (default: this version from an index); ``ci_file``: a wheel or sdist of
    toolproof that CI installs from the repository (copied into ``directory``; ``pip_spec`` is then
    its path)."""
    if adapter not in ADAPTERS:
        raise UsageError(f"--adapter {adapter!r}: expected one of {', '.join(ADAPTERS)}")
    bad = [c for c in ci if c not in CI_CHOICES]
    if bad:
        raise UsageError(f"--ci {','.join(bad)}: expected {', '.join(CI_CHOICES)} or none")
    directory = directory.strip("/") or DEFAULT_DIR
    a = ADAPTERS[adapter]
    name = implementation or implementation_name(root)
    impl = a.command.format(dir=directory, python=PYTHON_PLACEHOLDER)
    baseline = f"{directory}/baseline.yaml"
    paths = ("toolproof:", f"{directory}/scenarios")
    copies: dict[str, Path] = {}
    if ci_file is not None and ci:
        rel = f"{directory}/{ci_file.name}"
        copies[rel] = ci_file
        pip_spec = f"./{rel}"
    spec = pip_spec or f"toolproof=={__version__}"
    values = {"PIP_SPEC": spec, "SETUP_RUNTIME": a.github_setup.rstrip("\n"),
              "GITLAB_RUNTIME": a.gitlab_setup.rstrip("\n"), "LINUX_IMAGE": LINUX_IMAGE,
              "IMPLEMENTATION": name, "ADAPTER_FILE": f"{directory}/{a.filename}",
              "DOCKER_IMPL": a.docker_impl.format(dir=directory), "NODE_FLAG": " --node" if a.node else ""}
    out = Plan(root=root, config_impl=impl, config_paths=paths, implementation=name, pip_spec=spec, copies=copies)
    source = shipped_root() / "examples" / a.source
    out.files[f"{directory}/{a.filename}"] = named_adapter(source.read_text(encoding="utf-8"), name, a.source)
    out.files[f"{directory}/scenarios/write-then-read.yaml"] = _template("scenario.yaml", values)
    out.files[baseline] = out.baseline = _template("baseline.yaml", values)
    if "github" in ci:
        out.files[GITHUB_WORKFLOW] = _template("github-actions.yml", values).replace("\n\n      - name", "\n      - name")
    if "gitlab" in ci:
        out.files[GITLAB_FILE] = _template("gitlab-ci.yml", values).replace("\n\n\ngate:", "\n\ngate:")
    conflicts = [rel for rel in out.files if (root / rel).exists()]
    conflicts += [rel for rel, src in copies.items()
                  if (root / rel).exists() and (root / rel).read_bytes() != src.read_bytes()]
    py = root / PYPROJECT
    old = py.read_text(encoding="utf-8") if py.is_file() else ""
    out.pyproject_existed = py.is_file()
    if any(ln.strip() == SECTION_HEADER for ln in old.splitlines()):
        conflicts.append(f"{PYPROJECT} (its {SECTION_HEADER} table)")
    if conflicts and not force:
        raise UsageError("init would overwrite " + ", ".join(conflicts) + "; pass --force to replace them")
    out.pyproject = _replace_section(old, config_table(impl, paths, baseline))
    return out


def write(p: Plan, say: Callable[[str], None]) -> None:
    for rel, src in p.copies.items():
        target = p.root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(src.read_bytes())
        say(f"created {rel}")
    for rel, text in p.files.items():
        target = p.root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8", newline="\n")
        if rel.endswith((".py", ".mjs")):
            target.chmod(0o755)
        say(f"created {rel}")
    (p.root / PYPROJECT).write_text(p.pyproject, encoding="utf-8", newline="\n")
    say(f"{'updated' if p.pyproject_existed else 'created'} {PYPROJECT} ({SECTION_HEADER})")
