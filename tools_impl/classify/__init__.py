"""The ``classify`` op: the Claude Code bash permission profile."""
