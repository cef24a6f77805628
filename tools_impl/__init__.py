"""toolproof's reference implementation of the six coding-agent tools (read, write, edit, grep, glob, bash).

The core uses the standard library only (plus the ``rg`` binary) because it is copied into
containers and run there by the image's own python3. The behaviour it reproduces is docs/spec/.
"""

__version__ = "0.1.0"
IMPLEMENTATION_NAME = "toolproof-reference"
# ``python -m tools_impl.server --upstream``: the emulation of upstream pi is another implementation
# (own baseline, own matrix column), never the reference.
UPSTREAM_IMPLEMENTATION_NAME = "toolproof-reference-upstream"
