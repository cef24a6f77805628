"""pytest integration of the toolproof corpus (being built; registers nothing yet)."""
