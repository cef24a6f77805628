"""Getting scenarios: the YAML loader and validator, selection (``-k``, tags), record mode."""
