"""Differential fuzzing of two implementations through the tool protocol (``toolproof fuzz``)."""
