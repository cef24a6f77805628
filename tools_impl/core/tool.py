"""The tool contract: what every tool module declares, and the host path that runs a call.

A ``Tool`` names its execution mode (spec common.7), the argument schema it is validated
against on each surface (a function of the profile and, for tools whose arguments come in two
forms, of the arguments themselves), how raw arguments are prepared before validation (pi's
``prepareArguments``; most tools keep them as they are) and the body that runs validated
arguments. ``Tool.call`` is the host path: prepare once, validate once, execute.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from tools_impl.core.arguments import ParamSchema, validate_args
from tools_impl.core.context import ToolContext
from tools_impl.core.profile import Profile
from tools_impl.core.result import ToolResult

ExecutionMode = Literal["parallel", "sequential"]
MODE_PARALLEL: ExecutionMode = "parallel"
MODE_SEQUENTIAL: ExecutionMode = "sequential"
EXECUTION_MODES: tuple[ExecutionMode, ...] = (MODE_PARALLEL, MODE_SEQUENTIAL)

SchemaFor = Callable[[Profile, Mapping[str, Any]], ParamSchema]
Prepare = Callable[[dict[str, Any]], dict[str, Any]]
Execute = Callable[[dict[str, Any], ToolContext], ToolResult]


def keep_arguments(args: dict[str, Any]) -> dict[str, Any]:
    """The preparation of a tool without a ``prepareArguments`` step: none."""
    return args


def by_surface(minimax: ParamSchema, pi: ParamSchema) -> SchemaFor:
    """A schema that depends on the surface only: ``minimax`` with the wrapper, ``pi`` without."""

    def schema(profile: Profile, _args: Mapping[str, Any]) -> ParamSchema:
        return minimax if profile.wrapper else pi

    return schema


@dataclass(frozen=True)
class Tool:
    """One tool as the host sees it."""

    name: str
    mode: ExecutionMode
    schema: SchemaFor  # (profile, raw arguments) -> the schema those arguments are validated against
    prepare: Prepare  # raw object arguments -> the arguments to validate
    execute: Execute  # validated arguments -> result; raises ToolError / ToolAborted

    def surface_schema(self, profile: Profile) -> ParamSchema:
        """The model-facing schema on ``profile``'s surface (the form a model is shown)."""
        return self.schema(profile, {})

    def call(self, args: Any, ctx: ToolContext) -> ToolResult:
        """The host path of one call: prepare, validate (raising ``ArgumentError``), execute."""
        if isinstance(args, dict):
            args = self.prepare(args)
        schema = self.schema(ctx.profile, args if isinstance(args, dict) else {})
        return self.execute(validate_args(self.name, schema, args), ctx)
