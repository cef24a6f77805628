"""The ``read`` tool: the wrapper pipeline, the engine read, the device guards, images/notebooks/PDFs."""

# The package's patches register at its seams whenever any of its modules is imported.
from tools_impl.read import patches as patches
