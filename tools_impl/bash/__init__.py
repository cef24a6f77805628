"""The ``bash`` tool: wrapper, engine, output, timeouts, shell selection, PowerShell transport, background tasks, environment sanitising, the rm shim and the trash."""

# The package's patches register at its seams whenever any of its modules is imported.
from tools_impl.bash import patches as patches
