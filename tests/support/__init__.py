"""Helpers shared by the tests: repository paths, Docker fixtures, process liveness, and the
independent spec models of the output caps."""
