"""The ``find`` tool: pi's own file finder, offered on the pi surface only (spec glob.3); the
wrapper surface finds files with ``glob`` (``glob_tool.py``)."""

from __future__ import annotations

from tools_impl.core.tool import MODE_PARALLEL, Tool, by_surface, keep_arguments
from tools_impl.search.pi_tools import PI_FIND_SCHEMA, pi_find

NAME = "find"
SURFACES = ("pi",)

TOOL = Tool(NAME, MODE_PARALLEL, by_surface(PI_FIND_SCHEMA, PI_FIND_SCHEMA), keep_arguments, pi_find)
