"""Helpers shared by the tests: repository paths, Docker fixtures, process liveness."""
