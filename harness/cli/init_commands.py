"""``toolproof init``: the command around ``harness.scaffold`` (plan, write, first gate run)."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import TextIO

from harness.cli.config import load_config, parse_jobs
from harness.cli.options import Subparsers, load_selection
from harness.cli.progress import run_scenarios
from harness.errors import UsageError
from harness.install.origin import build_wheel, installed_from
from harness.install.shipped import resolve_all
from harness.model.results import ERROR, EXIT_ERROR, EXIT_OK
from harness.report.baseline import load_baseline, update_baseline, update_baseline_text
from harness.report.writers import summary_line, write_output
from harness.scaffold.project import ADAPTERS, CI_CHOICES, DEFAULT_DIR, plan, write


def _ci_choice(text: str) -> tuple[str, ...]:
    if text == "none":
        return ()
    if text == "all":
        return CI_CHOICES
    return tuple(p.strip() for p in text.split(",") if p.strip())


def first_run(root: Path, out: TextIO) -> int:
    """Run the gate just configured and list its failures in the configured baseline, with TODO
    reasons, so that the gate passes from the first commit."""

    config = load_config(root)
    assert config.baseline is not None
    scenarios = load_selection(resolve_all(list(config.paths)))
    run = run_scenarios(scenarios, config.backend or "local", config.jobs or parse_jobs("auto"), out,
                        quiet=True, impl=config.impl or "reference")
    print(f"toolproof: first run of the gate: {summary_line(run)}", file=out)
    errors = [r for r in run.scenarios if r.status == ERROR]
    if errors:
        for r in errors[:10]:
            print(f"ERROR {r.id}: {r.message or r.failure_text}", file=out)
        print("toolproof: the implementation did not run cleanly; fix it, then record its known failures with\n"
              "  toolproof run --no-baseline --json r.json; toolproof baseline update --results r.json --write", file=out)
        return EXIT_ERROR
    old = load_baseline(config.baseline)
    new = update_baseline(run, old)
    old_text = Path(config.baseline).read_text(encoding="utf-8")
    write_output(config.baseline, update_baseline_text(old_text, config.baseline, new), "baseline")
    rel = Path(config.baseline).resolve().relative_to(root.resolve())
    print(f"toolproof: {len(new.entries)} known failure(s) of {new.implementation} listed in {rel} with TODO "
          "reasons: those of the adapter as scaffolded (the example's tools, under your implementation's "
          "name); once your own tools are wired in, list theirs:\n"
          "  toolproof run --no-baseline --json r.json; toolproof baseline update --results r.json --write",
          file=out)
    return EXIT_OK


def ci_install(args: argparse.Namespace, ci: tuple[str, ...], keep: Path) -> tuple[str, Path | None, str]:
    """(pip spec, file to commit, what to tell the user) for the CI files: ``--pip-spec``, else
    how this toolproof was installed (``harness.install.origin``); a wheel built from a source
    tree goes into ``keep`` until it is copied into the repository."""
    if not ci:
        return "", None, ""
    if args.pip_spec:
        return args.pip_spec, None, "as --pip-spec says"
    source = installed_from()
    if source.kind == "directory":
        assert source.file is not None
        return "", build_wheel(source.file, keep), source.how
    if source.kind == "file":
        assert source.file is not None
        if not source.file.is_file():
            raise UsageError(f"toolproof was installed from {source.file}, which no longer exists, so CI cannot "
                             "install it the same way: pass --pip-spec (a version, a git URL or a wheel path), "
                             "or --ci none")
        return "", source.file, source.how
    return source.spec, None, source.how


def cmd_init(args: argparse.Namespace, out: TextIO) -> int:
    root = Path(args.root).resolve()
    if not root.is_dir():
        raise UsageError(f"--root {args.root}: no such directory")
    if not (root / ".git").exists():
        print(f"toolproof: note: {root} is not the root of a git repository", file=out)
    ci = _ci_choice(args.ci)
    with tempfile.TemporaryDirectory(prefix="toolproof-init-") as keep:
        spec, ci_file, how = ci_install(args, ci, Path(keep))
        p = plan(root, adapter=args.adapter, directory=args.dir, ci=ci, pip_spec=spec, force=args.force,
                 ci_file=ci_file)
        write(p, lambda line: print(f"toolproof: {line}", file=out))
    if p.copies:
        rel = next(iter(p.copies))
        print(f"toolproof: CI installs toolproof from {rel}, {how}: commit it (git add -f it if your .gitignore "
              "leaves out wheels); --pip-spec or TOOLPROOF_PIP in the CI files choose another source", file=out)
    elif how:
        print(f"toolproof: CI installs toolproof as {p.pip_spec}, {how}; --pip-spec or TOOLPROOF_PIP in the CI "
              "files choose another source", file=out)
    code = EXIT_OK
    if not args.no_run:
        code = first_run(root, out)
    print("\nNext steps:\n"
          f"  toolproof run                      # the gate: {p.config_impl} on {', '.join(p.config_paths)}\n"
          f"  edit {args.dir}/{ADAPTERS[args.adapter].filename:<24}    # wire in your own tools (and import your "
          "package: see its top); scenarios for missing tools skip\n"
          "  toolproof baseline update --results r.json --write   # after `toolproof run --json r.json`\n"
          "  git add -A && git commit -m 'toolproof gate'\n"
          "  toolproof docs                     # the documentation (cli, scenario-format, docker, …)", file=out)
    return code


def register_cli(subparsers: Subparsers) -> None:
    """Add ``init``."""
    p = subparsers.add_parser(
        "init", help="scaffold a toolproof gate (adapter, config, baseline, CI) into your repository",
        description="Write an adapter skeleton, one scenario of your own, a baseline file, the [tool.toolproof] "
                    "table in pyproject.toml and CI workflows that gate your implementation; then run the gate "
                    "once and list its failures in the baseline. Nothing is overwritten without --force.")
    p.add_argument("--adapter", choices=tuple(ADAPTERS), default="python",
                   help="the example adapter to start from (default: python)")
    p.add_argument("--dir", default=DEFAULT_DIR, metavar="DIR",
                   help=f"directory for the adapter, baseline and scenarios (default: {DEFAULT_DIR})")
    p.add_argument("--ci", default="all", metavar="LIST",
                   help="CI files to write: github, gitlab, github,gitlab, all (default) or none")
    p.add_argument("--pip-spec", metavar="SPEC",
                   help="how CI installs toolproof: a version, a git URL or a wheel path (default: as this toolproof "
                        "was installed: its version from an index, its git commit, or its wheel copied into DIR)")
    p.add_argument("--root", default=".", metavar="DIR", help="the repository root (default: the current directory)")
    p.add_argument("--no-run", action="store_true", help="do not run the gate once to fill the baseline")
    p.add_argument("--force", action="store_true", help="replace files (and the [tool.toolproof] table) that exist")
    p.set_defaults(func=cmd_init)
