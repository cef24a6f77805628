"""The data that flows through a run: scenarios, observations, file states, results."""
