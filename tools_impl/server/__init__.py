"""The tool server: the JSON-lines protocol loop on stdin/stdout and the table of tools it dispatches to."""
