"""A deliberately broken reference server for the property tests: ``replace_all`` goes through
``re.sub``, so ``$&``-style and backslash sequences in ``new_string`` are interpreted instead of
written literally. Run as ``python broken_reference.py`` (it speaks the tool protocol)."""

from __future__ import annotations

import re
import sys
from typing import Any

from tools_impl.core.patches import PATCHES, Seam
from tools_impl.core.profile import Profile
from tools_impl.edit import patches
from tools_impl.server.dispatch import main


def regex_replace_all(raw: str, old: str, new: str) -> str:
    return re.sub(re.escape(old), new, raw)


_resolve = PATCHES.resolve


def _broken_resolve(seam: Seam[Any], profile: Profile) -> Any:
    """Where patch wrap.replace-all-literal would write new_string literally, use re.sub."""
    found = _resolve(seam, profile)
    return regex_replace_all if found is patches.replace_all_literal else found


PATCHES.resolve = _broken_resolve  # type: ignore[method-assign]

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
