"""``python -m harness.mutants.server NAME [--upstream]``: the reference tool server with mutant
``NAME`` of the built-in catalogue put in (``toolproof mutants`` starts it through the normal
local backend). The mutant is named on the command line, never in the environment, so the
commands the server runs cannot see it; a name that is not in the catalogue, or an edit that no
longer applies, ends the process with exit code 2 before the server starts."""

from __future__ import annotations

import importlib
import sys

from harness.mutants.apply import MutantError, install
from harness.mutants.catalogue import by_name

SERVER_MODULE = "tools_impl.server.dispatch"


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print("usage: python -m harness.mutants.server NAME [server options]", file=sys.stderr)
        return 2
    name, rest = args[0], args[1:]
    mutant = by_name().get(name)
    if mutant is None:
        print(f"harness.mutants.server: no mutant named {name!r}", file=sys.stderr)
        return 2
    try:
        install(mutant)
    except MutantError as exc:
        print(f"harness.mutants.server: {exc}", file=sys.stderr)
        return 2
    # The reference is imported only now, after the hook is in place, so it loads mutated.
    dispatch = importlib.import_module(SERVER_MODULE)
    return int(dispatch.main(rest))


if __name__ == "__main__":
    sys.exit(main())
