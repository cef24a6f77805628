"""Host-side argument validation with type coercion (spec §0.7), in pi's message format.

Validation is host behaviour, not tool behaviour; the tool server applies it so that a bad
call gets a clear error instead of a crash.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .errors import ArgumentError

ParamSchema = Mapping[str, Any]


def _coerce(value: Any, typ: str) -> tuple[bool, Any]:
    if typ == "string":
        if isinstance(value, str):
            return True, value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return True, json.dumps(value)
        if isinstance(value, bool):
            return True, "true" if value else "false"
        return False, value
    if typ in ("number", "integer"):
        if isinstance(value, bool):
            return False, value
        if isinstance(value, (int, float)):
            ok = typ == "number" or float(value).is_integer()
            return ok, value
        if isinstance(value, str) and value.strip():
            try:
                num = float(value)
            except ValueError:
                return False, value
            if num.is_integer() and "." not in value and "e" not in value.lower():
                num = int(num)
            return (typ == "number" or float(num).is_integer()), num
        return False, value
    if typ == "boolean":
        if isinstance(value, bool):
            return True, value
        if value in ("true", "false"):
            return True, value == "true"
        return False, value
    if typ == "array":
        return isinstance(value, list), value
    if typ == "object":
        return isinstance(value, dict), value
    return True, value


def validate_args(tool: str, schema: ParamSchema, args: Any) -> dict[str, Any]:
    """Validate and coerce ``args``; raise ``ArgumentError`` with pi's message on failure."""
    problems: list[str] = []
    if not isinstance(args, dict):
        problems.append("  - root: must be object")
        raise ArgumentError(_render(tool, problems, args))
    out = dict(args)
    props: Mapping[str, Any] = schema.get("properties", {})
    for name in schema.get("required", ()):
        if name not in args or args[name] is None:
            problems.append(f"  - {name}: must have required properties {name}")
    for name, value in args.items():
        spec = props.get(name)
        if spec is None:
            if schema.get("additionalProperties") is False:
                problems.append(f"  - {name}: must NOT have additional properties")
            continue
        if value is None and name not in schema.get("required", ()):
            out.pop(name)
            continue
        typ = spec.get("type")
        if typ:
            ok, coerced = _coerce(value, typ)
            if not ok:
                problems.append(f"  - {name}: must be {typ}")
                continue
            out[name] = coerced
        enum = spec.get("enum")
        if enum is not None and out[name] not in enum:
            problems.append(f"  - {name}: must be equal to one of the allowed values")
        maximum = spec.get("maximum")
        if maximum is not None and isinstance(out[name], (int, float)) and out[name] > maximum:
            problems.append(f"  - {name}: must be <= {maximum}")
    if problems:
        raise ArgumentError(_render(tool, problems, args))
    return out


def _js_json_value(value: Any) -> Any:
    """What ``JSON.stringify`` prints for numbers: an integral float has no ``.0`` (``2``, not ``2.0``)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    if isinstance(value, dict):
        return {k: _js_json_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_js_json_value(v) for v in value]
    return value


def _render(tool: str, problems: list[str], args: Any) -> str:
    received = json.dumps(_js_json_value(args), indent=2, ensure_ascii=False)
    return f'Validation failed for tool "{tool}":\n' + "\n".join(problems) + f"\n\nReceived arguments:\n{received}"
