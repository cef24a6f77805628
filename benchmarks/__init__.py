"""toolproof's benchmarks: ``python -m benchmarks`` measures the reference tool server against a
published pi release and prints one table (see README "Performance")."""
