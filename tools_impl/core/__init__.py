"""The tool contract and what every tool stands on: call context, profile, errors, result model, argument validation."""
