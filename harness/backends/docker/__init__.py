"""The docker backend: a hardened long-lived container per worker and the in-container agent."""
