"""What a run leaves: baselines, report writers, results files read back and merged, the
conformance matrix, cross-run diffs."""
