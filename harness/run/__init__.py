"""Running scenarios: the runner, workspace archives, comparison with expectations, snapshots."""
