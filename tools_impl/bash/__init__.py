"""The ``bash`` tool: wrapper, engine, output, timeouts, shell selection, PowerShell transport, background tasks, environment sanitising, the rm shim and the trash."""
