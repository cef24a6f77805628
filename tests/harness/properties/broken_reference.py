"""A deliberately broken reference server for the property tests: ``replace_all`` goes through
``re.sub``, so ``$&``-style and backslash sequences in ``new_string`` are interpreted instead of
written literally. Run as ``python broken_reference.py`` (it speaks the tool protocol)."""

from __future__ import annotations

import re
import sys

from tools_impl.edit import tool
from tools_impl.server.dispatch import main


def regex_replace_all(raw: str, old: str, new: str) -> str:
    return re.sub(re.escape(old), new, raw)


tool.replace_all_literal = regex_replace_all

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
