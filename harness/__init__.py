"""toolproof's harness: the scenario model, corpus loading, backends, the runner, reports, the
``toolproof`` CLI and the pytest plugin (docs/cli.md, docs/scenario-format.md)."""

__version__ = "0.1.0"
