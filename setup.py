"""Build hook: the wheel carries the scenario corpus, its baselines and snapshots, the pi adapter,
the example adapters and the documentation (docs/, README.md) as package data under
``harness/_shipped/`` (see harness/install/shipped.py). Everything else is declared in pyproject.toml."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SHIPPED_DIRS = ("scenarios", "baselines", "snapshots", "adapters/pi", "examples", "docs")
SHIPPED_FILES = ("README.md",)
IGNORED = shutil.ignore_patterns("node_modules", "__pycache__", "*.pyc", ".venv")


class BuildPyWithCorpus(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the checkout's own directories
        here = Path(__file__).resolve().parent
        target = Path(self.build_lib) / "harness" / "_shipped"
        for rel in SHIPPED_DIRS:
            src = here / rel
            if not src.is_dir():
                raise SystemExit(f"setup.py: {rel}/ is missing; the wheel must carry it")
            dest = target / rel
            if dest.exists():
                shutil.rmtree(dest)
            shutil.copytree(src, dest, ignore=IGNORED)
        for rel in SHIPPED_FILES:
            if not (here / rel).is_file():
                raise SystemExit(f"setup.py: {rel} is missing; the wheel must carry it")
            shutil.copyfile(here / rel, target / rel)


setup(cmdclass={"build_py": BuildPyWithCorpus})
