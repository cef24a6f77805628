"""Running scenarios: the runner, workspace archives, normalisers, comparison with expectations,
snapshots."""
