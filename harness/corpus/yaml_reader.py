"""The YAML reader shared by scenario and baseline files: a document is composed into nodes (so
every mapping key and sequence item keeps its line) and walked by a ``YamlReader``, which builds
values and collects every problem as ``file:line: field: what was expected`` — one pass reports
them all, never a traceback.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import yaml

from harness.errors import ScenarioError

MAX_MODE = 0o7777

Node = yaml.Node
Pairs = dict[str, tuple[Node, Node]]
T = TypeVar("T")


def describe_value(value: Any, node: Node | None = None) -> str:
    """What a value is, for "expected X, got Y" messages."""
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a number ({value:g})"
    if isinstance(value, str):
        return f"a string ({value!r})"
    return type(value).__name__


def suggest(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest choice, or nothing."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


class YamlReader:
    """Walks composed YAML nodes, constructing values and collecting problems."""

    def __init__(self, path: str, loader: yaml.SafeLoader) -> None:
        self.path = path
        self.loader = loader
        self.problems: list[str] = []

    # -- reporting ------------------------------------------------------------------------
    def problem(self, node: Node | int, field: str, message: str) -> None:
        line = node if isinstance(node, int) else node.start_mark.line + 1
        self.problems.append(f"{self.path}:{line}: {field}: {message}")

    def expected(self, node: Node, field: str, what: str) -> None:
        self.problem(node, field, f"expected {what}, got {describe_value(self.value(node), node)}")

    # -- values ---------------------------------------------------------------------------
    def value(self, node: Node) -> Any:
        if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
            return None
        try:
            return self.loader.construct_object(node, deep=True)
        except yaml.YAMLError as exc:
            return f"<invalid: {exc}>"

    def plain(self, node: Node, field: str) -> Any:
        """Any JSON-like value (args, details); mapping keys must be strings."""
        if isinstance(node, yaml.MappingNode):
            out: dict[str, Any] = {}
            for k, v in node.value:
                key = self.value(k)
                if not isinstance(key, str):
                    self.problem(k, field, f"expected string keys, got {describe_value(key, k)}")
                    continue
                out[key] = self.plain(v, f"{field}.{key}")
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self.plain(v, f"{field}[{i}]") for i, v in enumerate(node.value, 1)]
        value = self.value(node)
        if not isinstance(value, (str, int, float, bool, type(None))):
            self.expected(node, field, "a JSON value (string, number, boolean, null, list or mapping)")
            return None
        return value

    def mapping(self, node: Node, field: str, allowed: Iterable[str] | None) -> Pairs | None:
        if not isinstance(node, yaml.MappingNode):
            self.expected(node, field, "a mapping")
            return None
        allowed_list = list(allowed) if allowed is not None else None
        pairs: Pairs = {}
        for k, v in node.value:
            key = self.value(k)
            sub = f"{field}.{key}" if field else str(key)
            if not isinstance(key, str):
                self.problem(k, field or "(document)", f"expected string keys, got {describe_value(key, k)}")
                continue
            if key in pairs:
                self.problem(k, sub, f"duplicate key (first at line {pairs[key][0].start_mark.line + 1})")
                continue
            if allowed_list is not None and key not in allowed_list:
                hint = suggest(key, allowed_list)
                self.problem(k, sub, "unknown key" + (hint or "; expected one of: " + ", ".join(allowed_list)))
                continue
            pairs[key] = (k, v)
        return pairs

    def sequence(self, node: Node, field: str) -> list[Node] | None:
        if not isinstance(node, yaml.SequenceNode):
            self.expected(node, field, "a list")
            return None
        return list(node.value)

    def string(self, node: Node, field: str, choices: tuple[str, ...] | None = None,
               allow_empty: bool = True) -> str | None:
        value = self.value(node)
        if not isinstance(node, yaml.ScalarNode) or not isinstance(value, str):
            if choices:
                self.expected(node, field, "one of " + ", ".join(choices))
            else:
                self.expected(node, field, "a string")
            return None
        if choices and value not in choices:
            self.problem(node, field, f"expected one of {', '.join(choices)}; got {value!r}{suggest(value, choices)}")
            return None
        if not allow_empty and not value:
            self.problem(node, field, "expected a non-empty string")
            return None
        return value

    def boolean(self, node: Node, field: str) -> bool | None:
        value = self.value(node)
        if not isinstance(value, bool) or not isinstance(node, yaml.ScalarNode):
            self.expected(node, field, "a boolean (true or false)")
            return None
        return value

    def number(self, node: Node, field: str, minimum: float | None = None) -> float | None:
        value = self.value(node)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not isinstance(node, yaml.ScalarNode):
            self.expected(node, field, "a number")
            return None
        if minimum is not None and value < minimum:
            self.problem(node, field, f"expected a number >= {minimum:g}, got {value:g}")
            return None
        return float(value)

    def integer(self, node: Node, field: str, minimum: int | None = None) -> int | None:
        value = self.value(node)
        if isinstance(value, bool) or not isinstance(value, int):
            self.expected(node, field, "an integer")
            return None
        if minimum is not None and value < minimum:
            self.problem(node, field, f"expected an integer >= {minimum}, got {value}")
            return None
        return value

    def strings(self, node: Node, field: str, choices: tuple[str, ...] | None = None,
                allow_scalar: bool = False) -> tuple[str, ...] | None:
        if allow_scalar and isinstance(node, yaml.ScalarNode):
            one = self.string(node, field, choices)
            return None if one is None else (one,)
        items = self.sequence(node, field)
        if items is None:
            return None
        out: list[str] = []
        for i, item in enumerate(items, 1):
            s = self.string(item, f"{field}[{i}]", choices)
            if s is not None:
                out.append(s)
        return tuple(out)

    def mode(self, node: Node, field: str) -> int | None:
        value = self.value(node)
        if isinstance(value, int) and not isinstance(value, bool):
            mode = value
        elif isinstance(value, str) and re.fullmatch(r"(0o|0)?[0-7]{1,4}", value):
            mode = int(value[2:] if value.startswith("0o") else value, 8)
        else:
            self.expected(node, field, "a permission mode (an integer such as 0o644 or a string such as \"0644\")")
            return None
        if not 0 <= mode <= MAX_MODE:
            self.problem(node, field, f"expected a permission mode between 0 and 0o7777, got {mode:#o}")
            return None
        return mode

    def rel_path(self, node: Node, field: str) -> str | None:
        p = self.string(node, field, allow_empty=False)
        if p is None:
            return None
        parts = p.replace("\\", "/").split("/")
        if p.startswith("/") or re.match(r"^[A-Za-z]:", p) or ".." in parts:
            self.problem(node, field, f"expected a relative path inside the workspace, got {p!r}")
            return None
        return p



def problem_line(problem: str) -> int:
    """The line number of a ``path:line: …`` problem (the path itself may contain colons)."""
    m = re.search(r":(\d+): ", problem)
    return int(m.group(1)) if m else 0


def parse_yaml_document(text: str, path: str, build: Callable[[YamlReader, Node], T]) -> tuple[T, list[str]]:
    """Compose one YAML document and run ``build`` over its root node with a fresh ``YamlReader``;
    returns what ``build`` returned and the problems it collected. A YAML syntax error (at its
    line) or an empty document raises ``ScenarioError``. Shared by scenario and baseline files."""
    loader = yaml.SafeLoader(text)
    try:
        try:
            root = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = mark.line + 1 if mark else 1
            raise ScenarioError([f"{path}:{line}: (yaml): {exc.problem or exc.context}"]) from None
        except yaml.YAMLError as exc:
            raise ScenarioError([f"{path}:1: (yaml): {exc}"]) from None
        if root is None:
            raise ScenarioError([f"{path}:1: (document): expected a mapping, got an empty file"])
        r = YamlReader(path, loader)
        return build(r, root), r.problems
    finally:
        loader.dispose()


def read_document_text(path: str) -> str:
    """A scenario or baseline file's text; unreadable files raise a one-line ``ScenarioError``."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError([f"{path}:1: (file): cannot read: {exc}"]) from None
