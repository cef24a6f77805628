"""What the server writes for a response: one JSON line, non-ASCII text as itself, a lone surrogate
escaped as ``\\uXXXX`` (JSON.stringify's way; it cannot be written as UTF-8)."""

from __future__ import annotations

import io
import json

from tools_impl.protocol import messages as m
from tools_impl.server.dispatch import Server


def _line(result: object) -> str:
    out = io.StringIO()
    Server(out).send(m.OkResponse(7, result))
    text = out.getvalue()
    assert text.endswith("\n") and text.count("\n") == 1
    return text[:-1]


def test_ascii_and_non_ascii_results_are_written_as_they_are() -> None:
    assert _line({"text": "plain"}) == '{"id": 7, "ok": true, "result": {"text": "plain"}}'
    assert _line({"text": "caf\u00e9 \u201cq\u201d \U0001f600"}) == (
        '{"id": 7, "ok": true, "result": {"text": "caf\u00e9 \u201cq\u201d \U0001f600"}}')


def test_a_lone_surrogate_is_escaped_and_the_rest_kept() -> None:
    line = _line({"text": "a\ud83d b \u00e9 \udc00"})
    assert line == '{"id": 7, "ok": true, "result": {"text": "a\\ud83d b \u00e9 \\udc00"}}'
    line.encode("utf-8")  # writable
    assert json.loads(line)["result"]["text"] == "a\ud83d b \u00e9 \udc00"
