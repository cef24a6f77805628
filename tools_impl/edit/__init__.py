"""The ``edit`` tool: the wrapper, the pi edit engine, MiniMax's patches to both, fuzzy normalisation."""

# The package's patches register at its seams whenever any of its modules is imported.
from tools_impl.edit import patches as patches
