"""Host-side argument validation in pi's message format (spec common.7)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tools_impl.core.arguments import already_valid, validate_args, validate_converting
from tools_impl.core.errors import ArgumentError
from tools_impl.read import tool as read_tool

SCHEMA = {
    "properties": {"path": {"type": "string"}, "offset": {"type": "number"}, "flag": {"type": "boolean"},
                   "mode": {"type": "string", "enum": ["a", "b"]}},
    "required": ["path"],
    "additionalProperties": False,
}


def test_missing_required_property_message() -> None:
    with pytest.raises(ArgumentError) as info:
        validate_args("read", SCHEMA, {"offset": 5})
    assert str(info.value) == (
        'Validation failed for tool "read":\n'
        "  - path: must have required properties path\n\n"
        "Received arguments:\n"
        '{\n  "offset": 5\n}'
    )


def test_string_numbers_and_booleans_are_coerced() -> None:
    assert validate_args("read", SCHEMA, {"path": "a", "offset": "5", "flag": "true"}) == {
        "path": "a", "offset": 5, "flag": True}
    assert validate_args("read", SCHEMA, {"path": "a", "offset": "2.5"})["offset"] == 2.5


def test_wrong_type_enum_and_extra_properties_are_all_reported() -> None:
    with pytest.raises(ArgumentError) as info:
        validate_args("read", SCHEMA, {"path": ["x"], "offset": "abc", "mode": "c", "extra": 1})
    lines = str(info.value).split("\n")
    # TypeBox's order, as pi-ai 0.79.1 prints it: the object's own problems (required, then
    # additional properties) before those of its properties, in schema order
    assert lines[1:5] == [
        "  - root: must not have additional properties",
        "  - path: must be string",
        "  - offset: must be number",
        "  - mode: must be equal to one of the allowed values",
    ]


def test_non_object_arguments_are_rejected() -> None:
    with pytest.raises(ArgumentError) as info:
        validate_args("read", SCHEMA, ["a"])
    assert "  - root: must be object" in str(info.value)


PI_EDIT = {
    "properties": {
        "path": {"type": "string"},
        "edits": {"type": "array", "items": {"type": "object", "required": ["oldText", "newText"],
                                              "properties": {"oldText": {"type": "string"},
                                                             "newText": {"type": "string"}}}},
    },
    "required": ["path", "edits"],
    "additionalProperties": False,
}


def test_all_missing_properties_share_one_line_at_the_first_ones_path() -> None:
    """pi-ai renders a required error at instance path + first missing property, listing all."""
    with pytest.raises(ArgumentError) as info:
        validate_args("edit", PI_EDIT, {"file_path": "a", "old_string": "x"})
    assert str(info.value).split("\n")[:3] == [
        'Validation failed for tool "edit":',
        "  - path: must have required properties path, edits",
        "  - root: must not have additional properties",
    ]


def test_nested_item_errors_name_the_dotted_instance_path() -> None:
    with pytest.raises(ArgumentError) as info:
        validate_args("edit", PI_EDIT, {"path": "a", "edits": [{"oldText": "a", "newText": "b"}, {"oldText": "a"}]})
    assert str(info.value).split("\n")[1] == "  - edits.1.newText: must have required properties newText"
    with pytest.raises(ArgumentError) as info:
        validate_args("edit", PI_EDIT, {"path": "a", "edits": [{"oldText": 1, "newText": []}]})
    # a number is coerced to a string (as the host's coercion does); an array is not
    assert str(info.value).split("\n")[1:3] == ["  - edits.0.newText: must be string", ""]


def test_validation_text_prints_received_numbers_like_json_stringify() -> None:
    with pytest.raises(ArgumentError) as info:
        validate_args("read", read_tool.SCHEMA, {"offset": 2.0, "limit": 0.5})
    assert str(info.value) == (
        'Validation failed for tool "read":\n  - path: must have required properties path\n\n'
        'Received arguments:\n{\n  "offset": 2,\n  "limit": 0.5\n}'
    )


READ = {"properties": {"path": {"type": "string"}, "offset": {"type": "number"}, "limit": {"type": "number"}},
        "required": ["path"]}
WRITE = {"properties": {"path": {"type": "string"}, "content": {"type": "string"}}, "required": ["path", "content"]}


@pytest.mark.parametrize(("given", "coerced"), [
    # values recorded from pi-ai 0.79.1's validateToolArguments (TypeBox 1.1 Value.Convert)
    (None, 0), ("", 0), (" ", 0), (" 4 ", 4), ("0x10", 16), ("0b11", 3), ("1e1", 10), ("-0", 0), ("12n", 12),
    ("TRUE", 1), ("False", 0), (True, 1), (False, 0), ("1.5", 1.5), (9007199254740993, 9007199254740992.0),
])
def test_numbers_are_coerced_as_javascript_number_does(given: object, coerced: object) -> None:
    assert validate_args("read", READ, {"path": "a", "limit": given})["limit"] == coerced


@pytest.mark.parametrize("given", ["abc", "NaN", "Infinity", "1_000", "inf", "99999999999999999999n", [2], {"n": 1},
                                   10**400])
def test_what_javascript_cannot_turn_into_a_finite_number_is_refused(given: object) -> None:
    with pytest.raises(ArgumentError) as info:
        validate_args("read", READ, {"path": "a", "offset": given})
    assert str(info.value).split("\n")[1] == "  - offset: must be number"


def test_strings_take_null_booleans_and_javascript_number_printing() -> None:
    assert validate_args("write", WRITE, {"path": None, "content": True}) == {"path": "null", "content": "true"}
    assert validate_args("write", WRITE, {"path": 123456789012345678901, "content": 1e-7}) == {
        "path": "123456789012345680000", "content": "1e-7"}
    assert validate_args("write", WRITE, {"path": 10**400, "content": 1e21}) == {"path": "Infinity", "content": "1e+21"}


def test_a_single_edit_object_is_wrapped_and_null_becomes_a_refused_item() -> None:
    edit = {"oldText": "a", "newText": "b"}
    assert validate_args("edit", PI_EDIT, {"path": "a", "edits": edit}) == {"path": "a", "edits": [edit]}
    with pytest.raises(ArgumentError) as info:
        validate_args("edit", PI_EDIT, {"path": "a", "edits": None})
    assert str(info.value) == (
        'Validation failed for tool "edit":\n  - edits.0: must be object\n\n'
        'Received arguments:\n{\n  "path": "a",\n  "edits": null\n}')


def test_received_arguments_print_numbers_as_json_stringify_does() -> None:
    with pytest.raises(ArgumentError) as info:
        validate_args("write", WRITE, {"path": 1152921504606846976, "content": [], "x": 10**400})
    assert str(info.value).endswith(
        '{\n  "path": 1152921504606847000,\n  "content": [],\n  "x": null\n}')


_FAST_SCHEMA = {"properties": {"path": {"type": "string"}, "offset": {"type": "number"},
                               "n": {"type": "number", "maximum": 5}, "flag": {"type": "boolean"}},
                "required": ["path"]}
_FAST_VALUES = st.one_of(st.text(max_size=3), st.integers(-2**60, 2**60), st.floats(allow_nan=True),
                         st.booleans(), st.none())


@given(st.dictionaries(st.sampled_from(["path", "offset", "n", "flag", "other"]), _FAST_VALUES, max_size=4))
def test_the_shortcut_for_plain_arguments_returns_what_the_full_path_returns(args: dict[str, Any]) -> None:
    fast = already_valid(_FAST_SCHEMA, args)
    if fast is None:
        return
    full = validate_converting("t", _FAST_SCHEMA, args)
    assert fast == full
    assert [type(v) for v in fast.values()] == [type(v) for v in full.values()]
