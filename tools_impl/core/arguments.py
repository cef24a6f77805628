"""Host-side argument validation with type coercion (spec common.7), as pi-ai's
``validateToolArguments`` performs it: the arguments are parsed as JavaScript numbers, converted to the schema
(TypeBox ``Value.Convert``, then pi-ai's own JSON-schema coercion pass), then checked; the
rendered problems use pi-ai's paths and TypeBox's wording, and the received arguments are
printed as ``JSON.stringify(args, null, 2)`` prints them.

Conversion rules, by schema type:
- ``string``: a number becomes its JavaScript ``String()`` (``1e21`` → ``"1e+21"``, an overflowed
  ``1e999`` → ``"Infinity"``), a boolean ``"true"``/``"false"``, ``null`` the four characters
  ``"null"``;
- ``number``: ``null`` → 0, a boolean → 1/0, a string → JavaScript ``Number()`` when finite
  (``""`` and ``" "`` → 0, ``"0x10"`` → 16, ``" 4 "`` → 4), else ``"true"``/``"false"`` in any
  case → 1/0, else a BigInt literal such as ``"12n"`` within the safe range; a non-finite number
  stays and fails the check;
- ``integer``: as ``number``, truncated;
- ``boolean``: ``null`` → false, 0/1, ``"true"``/``"false"`` in any case, ``"0"``/``"1"``;
- ``array``: anything that is not an array is wrapped (a single edit object → ``[edit]``,
  ``null`` → ``[null]``), then every item is converted;
- ``object``: the properties the schema names are converted; anything else stays.
Checks, per object: not an object → ``must be object``; then one ``required`` problem naming
the first missing property in its path and all of them in its message; then one
``must not have additional properties`` problem (``additionalProperties: false``); then each
property in schema order.

Validation is host behaviour, not tool behaviour; the tool server applies it so that a bad call
gets pi's error instead of a crash.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from tools_impl.core.errors import ArgumentError
from tools_impl.js.text import JS_WHITESPACE, js_number

ParamSchema = Mapping[str, Any]
MAX_SAFE_INTEGER = 2**53 - 1
_WS = "[" + re.escape(JS_WHITESPACE + "\u2028\u2029") + "]*"
_DECIMAL_RE = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|Infinity)")
_PREFIXED_RE = re.compile(r"0([xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)")
_BIGINT_RE = re.compile(r"-?(?:0|[1-9]\d*)n")
_BIGINT_DECIMAL_RE = re.compile(r"-?(?:0|[1-9]\d*)\.\d+")
_BIGINT_INTEGER_RE = re.compile(r"-?(?:0|[1-9]\d*)")
_TRIM_RE = re.compile(f"^{_WS}|{_WS}$")


def js_parsed(value: Any) -> Any:
    """``value`` as ``JSON.parse`` would hold it: every integer a double (above 2^53 rounded,
    beyond the double range ±infinity)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        if abs(value) <= MAX_SAFE_INTEGER:
            return value
        try:
            return float(value)
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    if isinstance(value, list):
        return [js_parsed(v) for v in value]
    if isinstance(value, dict):
        return {k: js_parsed(v) for k, v in value.items()}
    return value


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _finite(v: Any) -> bool:
    return _is_number(v) and math.isfinite(v)


def js_to_number(s: str) -> float | int:
    """JavaScript ``Number(s)`` (NaN for anything it does not parse)."""
    t = _TRIM_RE.sub("", s)
    if t == "":
        return 0
    if _DECIMAL_RE.fullmatch(t):
        if t.lstrip("+-") == "Infinity":
            return -math.inf if t.startswith("-") else math.inf
        num = float(t)
        return int(num) if num.is_integer() and abs(num) <= MAX_SAFE_INTEGER and "." not in t and "e" not in t.lower() else num
    m = _PREFIXED_RE.fullmatch(t)
    if m:
        base = {"x": 16, "o": 8, "b": 2}[m.group(1)[0].lower()]
        n = int(m.group(1)[1:], base)
        return n if n <= MAX_SAFE_INTEGER else js_parsed(n)
    return math.nan


def _string_to_number(s: str) -> tuple[bool, Any]:
    num = js_to_number(s)
    if math.isfinite(num):
        return True, num
    low = s.lower()
    if low in ("false", "true"):
        return True, int(low == "true")
    big: int | None = None
    if _BIGINT_RE.fullmatch(s):
        big = int(s[:-1])
    elif _BIGINT_DECIMAL_RE.fullmatch(s):
        big = int(s.split(".")[0])
    elif _BIGINT_INTEGER_RE.fullmatch(s):
        big = int(s)
    if big is not None and -MAX_SAFE_INTEGER <= big <= MAX_SAFE_INTEGER:
        return True, big
    return False, s


def _to_number(v: Any) -> Any:
    if isinstance(v, bool):
        return int(v)
    if v is None:
        return 0
    if isinstance(v, str):
        v = _string_to_number(v)[1]
    if isinstance(v, float) and v.is_integer() and abs(v) <= MAX_SAFE_INTEGER:
        return int(v)  # JavaScript has one number type: 2.0 is 2
    return v


def _to_string(v: Any) -> Any:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if _is_number(v):
        return js_number(v)
    return v


def _to_boolean(v: Any) -> Any:
    if isinstance(v, bool):
        return v
    if v is None:
        return False
    if _is_number(v) and v in (0, 1):
        return v == 1
    if isinstance(v, str):
        low = v.lower()
        if low in ("true", "false"):
            return low == "true"
        if v in ("0", "1"):
            return v == "1"
    return v


def convert(schema: ParamSchema, value: Any) -> Any:
    """The converted value (a new object; ``value`` is not modified)."""
    typ = schema.get("type", "object" if "properties" in schema else None)
    if typ == "string":
        return _to_string(value)
    if typ == "number":
        return _to_number(value)
    if typ == "integer":
        num = _to_number(value)
        return math.trunc(num) if _finite(num) else num
    if typ == "boolean":
        return _to_boolean(value)
    if typ == "array":
        items = value if isinstance(value, list) else [value]
        item_schema = schema.get("items")
        return [convert(item_schema, v) for v in items] if isinstance(item_schema, Mapping) else list(items)
    if typ == "object" and isinstance(value, dict):
        props: Mapping[str, Any] = schema.get("properties", {})
        return {k: convert(props[k], v) if k in props else v for k, v in value.items()}
    return value


def _path(parts: list[str]) -> str:
    return ".".join(parts) or "root"


def check(schema: ParamSchema, value: Any, at: list[str] | None = None) -> list[str]:
    """The rendered problems (``  - <path>: <message>``) of a converted value, in TypeBox order."""
    at = at or []
    typ = schema.get("type", "object" if "properties" in schema else None)
    problems: list[str] = []
    ok = {
        "string": lambda v: isinstance(v, str),
        "number": _finite,
        "integer": lambda v: _finite(v) and float(v).is_integer(),
        "boolean": lambda v: isinstance(v, bool),
        "array": lambda v: isinstance(v, list),
        "object": lambda v: isinstance(v, dict),
    }.get(str(typ), lambda v: True)
    if not ok(value):
        return [f"  - {_path(at)}: must be {typ}"]
    if isinstance(value, dict):
        props: Mapping[str, Any] = schema.get("properties", {})
        missing = [k for k in schema.get("required", ()) if k not in value]
        if missing:
            problems.append(f"  - {_path([*at, missing[0]])}: must have required properties {', '.join(missing)}")
        if schema.get("additionalProperties") is False and any(k not in props for k in value):
            problems.append(f"  - {_path(at)}: must not have additional properties")
        for name, spec in props.items():
            if name in value:
                problems += check(spec, value[name], [*at, name])
        return problems
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(value):
            problems += check(schema["items"], item, [*at, str(i)])
        return problems
    enum = schema.get("enum")
    if enum is not None and value not in enum:
        problems.append(f"  - {_path(at)}: must be equal to one of the allowed values")
    maximum = schema.get("maximum")
    if maximum is not None and _is_number(value) and value > maximum:
        problems.append(f"  - {_path(at)}: must be <= {js_number(maximum)}")
    return problems


def _json_number(v: float | int) -> str:
    return js_number(v) if math.isfinite(v) else "null"


def js_stringify(value: Any, indent: int = 2, level: int = 0) -> str:
    """``JSON.stringify(value, null, indent)``: JavaScript number printing, non-finite → ``null``."""
    pad = " " * (indent * (level + 1))
    end = " " * (indent * level)
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if _is_number(value):
        return _json_number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        if not value:
            return "[]"
        return "[\n" + ",\n".join(pad + js_stringify(v, indent, level + 1) for v in value) + "\n" + end + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{pad}{json.dumps(str(k), ensure_ascii=False)}: {js_stringify(v, indent, level + 1)}"
                 for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + end + "}"
    return json.dumps(value, ensure_ascii=False, default=str)


_PLAIN_SPEC_KEYS = frozenset({"type", "description"})


def already_valid(schema: ParamSchema, args: Any) -> dict[str, Any] | None:
    """A copy of ``args`` when conversion could not change them and the check could not fail:
    an object with every required property, each property one the schema names with a plain
    ``string`` or ``number`` schema (no enum, no bound) holding a ``str`` or a safe ``int``
    respectively. ``None``: take the full path."""
    if type(args) is not dict:
        return None
    props = schema.get("properties")
    if props is None or schema.get("type", "object") != "object":
        return None
    for name, value in args.items():
        spec = props.get(name)
        if spec is None or not _PLAIN_SPEC_KEYS.issuperset(spec):
            return None
        typ = spec.get("type")
        if typ == "string":
            if type(value) is not str:
                return None
        elif typ == "number":
            if type(value) is not int or abs(value) > MAX_SAFE_INTEGER:
                return None
        else:
            return None
    for name in schema.get("required", ()):
        if name not in args:
            return None
    return dict(args)


def validate_args(tool: str, schema: ParamSchema, args: Any) -> dict[str, Any]:
    """Coerce and check ``args``; return the converted arguments, or raise ``ArgumentError``
    with pi-ai's message: ``Validation failed for tool "<tool>":``, one ``  - <path>: <message>``
    line per problem, and the received arguments as ``JSON.stringify`` prints them."""
    plain = already_valid(schema, args)
    return plain if plain is not None else validate_converting(tool, schema, args)


def validate_converting(tool: str, schema: ParamSchema, args: Any) -> dict[str, Any]:
    """``validate_args`` always through conversion and the check (what the shortcut must equal)."""
    parsed = js_parsed(args)
    out = convert(schema, parsed)
    problems = check(schema, out)
    if problems:
        raise ArgumentError(f'Validation failed for tool "{tool}":\n' + "\n".join(problems)
                            + "\n\nReceived arguments:\n" + js_stringify(parsed))
    assert isinstance(out, dict)
    return out
