"""``toolproof images build`` (toolproof's container images from their recipes) and
``toolproof docker cleanup`` (leftover worker containers of earlier runs)."""

from __future__ import annotations

import argparse
from typing import TextIO

from harness.cli.options import Subparsers
from harness.errors import InfrastructureError
from harness.images.build import build_image
from harness.model.results import EXIT_OK


def cmd_images_build(args: argparse.Namespace, out: TextIO) -> int:
    for name in args.names:
        report = build_image(name, force=args.force, progress=None if args.quiet else (lambda m: print(m, file=out)))
        print(f"{report.tag} {report.method} {report.seconds:.1f}s", file=out)
    return EXIT_OK


def cmd_docker_cleanup(args: argparse.Namespace, out: TextIO) -> int:
    # Optional: the docker backend and the docker SDK are imported only for this command, so the
    # rest of the CLI works on hosts without them.
    try:
        import docker

        from harness.backends.docker.backend import cleanup
    except ImportError as exc:
        raise InfrastructureError(f"the docker backend is not available: {exc}") from None
    try:  # cleanup() itself treats "no engine" as "nothing to remove"; a user asking should know
        docker.from_env(timeout=10).ping()
    except Exception as exc:
        raise InfrastructureError(f"no Docker engine reachable: {exc}") from None
    removed = cleanup(args.run_id)
    scope = f" of run {args.run_id}" if args.run_id else ""
    print(f"toolproof: removed {removed} leftover container(s){scope}", file=out)
    return EXIT_OK


def register_cli(subparsers: Subparsers) -> None:
    """Add ``images build`` and ``docker cleanup``."""
    p = subparsers.add_parser("images", help="build toolproof's container images")
    actions = p.add_subparsers(dest="images_command", required=True, metavar="ACTION")
    b = actions.add_parser("build", help="build images from their recipes (cached when the recipe is unchanged)")
    b.add_argument("names", nargs="+", metavar="NAME", help="linux-bash | linux-pwsh | windows-pwsh")
    b.add_argument("--force", action="store_true", help="rebuild even when the recipe hash is unchanged")
    b.add_argument("--quiet", action="store_true", help="print only the result line")
    b.set_defaults(func=cmd_images_build)

    p = subparsers.add_parser("docker", help="docker backend maintenance")
    actions = p.add_subparsers(dest="docker_command", required=True, metavar="ACTION")
    c = actions.add_parser("cleanup", help="remove leftover worker containers of earlier runs (by label)")
    c.add_argument("--run-id", metavar="ID", help="only containers of this run")
    c.set_defaults(func=cmd_docker_cleanup)
