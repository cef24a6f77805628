"""Getting scenarios: the YAML reader (shared with baselines), the scenario loader and validator,
selection (``-k``, tags, shards), record mode."""
