"""toolproof's harness: scenario model and loader, backends, runner, baselines, reports, CLI and
the pytest plugin (DESIGN §3–§6)."""

__version__ = "0.1.0"
