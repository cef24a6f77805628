"""A backend that cannot exist here by design (a pwsh image without a registry) turns its
scenarios into skips with the backend's reason; any other start failure is an error."""

from __future__ import annotations

from typing import Any

from harness.backends.base import Backend, FileState, HelloInfo
from harness.backends.client import Response
from harness.corpus.loader import parse_scenario_text
from harness.errors import InfrastructureError
from harness.model.results import ERROR, SKIP
from harness.run.runner import Runner

SCENARIO = "id: s/one\ntitle: t\nsteps:\n  - tool: bash\n    args: {command: 'echo x'}\n"


class Unstartable(Backend):
    def __init__(self, exc: InfrastructureError) -> None:
        self.exc = exc

    def start(self) -> HelloInfo:
        raise self.exc

    def new_workspace(self, archive: bytes, env: dict[str, str | None], profile: dict[str, Any] | None) -> str:
        raise AssertionError("never reached")

    def request(self, op: str, fields: dict[str, Any], *, deadline_s: float) -> Response:
        raise AssertionError("never reached")

    def read_files(self, root: str, paths: list[str]) -> dict[str, FileState]:
        return {}

    def drop_workspace(self, root: str) -> None:
        pass

    def restart(self) -> None:
        raise self.exc

    def close(self) -> None:
        pass


def _run(exc: InfrastructureError) -> Any:
    scenarios = [parse_scenario_text(SCENARIO, "a.yaml"), parse_scenario_text(SCENARIO.replace("s/one", "s/two"), "b.yaml")]
    return Runner(lambda: Unstartable(exc)).run(scenarios)


def test_missing_pwsh_image_skips_with_the_backends_reason() -> None:
    exc = InfrastructureError("image toolproof/linux-pwsh:abc is not present")
    exc.skip_reason = "requires pwsh image"  # type: ignore[attr-defined]
    run = _run(exc)
    assert [(s.status, s.reason) for s in run.scenarios] == [(SKIP, "requires pwsh image")] * 2
    assert run.exit_code == 0


def test_other_start_failures_are_infrastructure_errors() -> None:
    run = _run(InfrastructureError("engine on fire"))
    assert [s.status for s in run.scenarios] == [ERROR, ERROR]
    assert run.scenarios[0].message == "infrastructure: engine on fire"
    assert run.exit_code == 2


def _hello(tools: tuple[str, ...], ops: tuple[str, ...]) -> HelloInfo:
    return HelloInfo.from_json({"implementation": "x", "version": "1", "protocol": 1, "surface": "pi",
                                "surfaces": ["pi", "minimax"], "tools": list(tools), "ops": list(ops)})


def test_tools_called_by_steps_are_required_implicitly() -> None:
    from harness.run.runner import skip_reason

    scenario = parse_scenario_text(SCENARIO, "a.yaml")
    assert skip_reason(scenario, _hello(("read", "write", "edit"), ("hello", "call"))) == (
        "requires tools bash; the implementation offers read, write, edit")
    assert skip_reason(scenario, _hello(("bash",), ("hello", "call"))) is None


def test_protocol_ops_used_by_steps_must_be_supported() -> None:
    from harness.run.runner import skip_reason

    text = SCENARIO + "  - op: task_query\n    args: {}\n"
    scenario = parse_scenario_text(text, "a.yaml")
    assert skip_reason(scenario, _hello(("bash",), ("hello", "workspace", "call", "shutdown"))) == (
        "requires protocol ops task_query; the implementation supports hello, workspace, call, shutdown")
