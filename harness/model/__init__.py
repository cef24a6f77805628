"""The data that flows through a run: scenarios, observations, results."""
