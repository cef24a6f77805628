"""What a run leaves: baselines, report writers, the conformance matrix, cross-run diffs."""
