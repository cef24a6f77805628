"""Trace importers (docs/importers.md): recorded agent sessions (Claude Code and pi session
JSONL, OpenAI chat-completions / Responses logs and Codex CLI rollouts, Anthropic messages logs)
become scenarios on a surface, with expectations from the recorded results, the start state the
user names (referenced through ``workspace.from`` by default) with what the recording shows laid
over it — or inferred from the recording alone — and resyncs where the recording saw a change the
replay cannot make.

Pipeline: ``readers.read_trace`` → ``RecordedSession`` → ``mapping.map_call`` per call (other
agents' tools: ``agent_tools``, their edit formats: ``patches``) → ``environment.decide`` for shell
commands (facts from ``commands``) → ``inference.infer`` (the start state and the resyncs) →
``expectations.build_expect`` → ``importer.build_session`` (validated YAML) →
``importer.write_scenarios``; ``report.build_report`` after ``--replay``. The CLI entry is
``cli.register_cli``.
"""

from __future__ import annotations

from harness.importers.importer import ImportOptions, SessionImport, build_session, write_scenarios
from harness.importers.readers import detect_format, read_trace
from harness.importers.trace import FORMATS, RecordedSession, ToolCall, TraceError
from harness.importers.workspace_files import (
    WorkspaceLimits,
    WorkspaceSourceError,
    from_archive,
    from_directory,
    from_git,
)

__all__ = [
    "FORMATS",
    "ImportOptions",
    "RecordedSession",
    "SessionImport",
    "ToolCall",
    "TraceError",
    "WorkspaceLimits",
    "WorkspaceSourceError",
    "build_session",
    "detect_format",
    "from_archive",
    "from_directory",
    "from_git",
    "read_trace",
    "write_scenarios",
]
