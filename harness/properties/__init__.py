"""Property-based checks of any implementation through the tool protocol (``toolproof properties``)."""
