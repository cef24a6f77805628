"""Host-side argument validation with type coercion (spec §0.7), in pi's message format.

Validation is host behaviour, not tool behaviour; the tool server applies it so that a bad
call gets a clear error instead of a crash.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tools_impl.core.errors import ArgumentError

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
    """Validate and coerce ``args``; raise ``ArgumentError`` with pi's message on failure.

    Errors follow pi-ai's ``validateToolArguments`` rendering: one line per error,
    ``  - <path>: <message>``, where the path is the instance path joined with ``.`` (``root``
    when empty); a ``required`` error appends the first missing property to the path and lists
    all of them (``  - path: must have required properties path, edits``); additional
    properties give one ``must not have additional properties`` error at the object's path.
    """
    problems: list[str] = []
    out = _validate(schema, args, [], problems)
    if problems:
        raise ArgumentError(_render(tool, problems, args))
    assert isinstance(out, dict)
    return out


def _path(parts: list[str]) -> str:
    return ".".join(parts) or "root"


def _validate(schema: ParamSchema, value: Any, at: list[str], problems: list[str]) -> Any:
    """Check ``value`` against ``schema`` (object/array/scalar keywords we use); return the
    coerced value and append rendered problems."""
    typ = schema.get("type", "object" if "properties" in schema else None)
    if typ:
        ok, value = _coerce(value, typ)
        if not ok:
            problems.append(f"  - {_path(at)}: must be {typ}")
            return value
    if isinstance(value, dict) and ("properties" in schema or "required" in schema):
        return _validate_object(schema, value, at, problems)
    if isinstance(value, list) and "items" in schema:
        return [_validate(schema["items"], item, [*at, str(i)], problems) for i, item in enumerate(value)]
    enum = schema.get("enum")
    if enum is not None and value not in enum:
        problems.append(f"  - {_path(at)}: must be equal to one of the allowed values")
    maximum = schema.get("maximum")
    if maximum is not None and isinstance(value, (int, float)) and not isinstance(value, bool) and value > maximum:
        problems.append(f"  - {_path(at)}: must be <= {maximum}")
    return value


def _validate_object(schema: ParamSchema, value: dict[str, Any], at: list[str], problems: list[str]) -> dict[str, Any]:
    required = list(schema.get("required", ()))
    missing = [name for name in required if name not in value or value[name] is None]
    if missing:
        problems.append(f"  - {_path([*at, missing[0]])}: must have required properties {', '.join(missing)}")
    props: Mapping[str, Any] = schema.get("properties", {})
    out = dict(value)
    for name, spec in props.items():
        if name not in value:
            continue
        if value[name] is None:
            if name not in required:
                out.pop(name)  # an explicit null for an optional argument means "not given"
            continue
        out[name] = _validate(spec, value[name], [*at, name], problems)
    if schema.get("additionalProperties") is False and any(name not in props for name in value):
        problems.append(f"  - {_path(at)}: must not have additional properties")
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
