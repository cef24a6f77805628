"""``toolproof fuzz``: generation, comparison, classes, the report, and the CI gate against pi."""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import UsageError
from harness.fuzz.cli import change_groups
from harness.fuzz.differential import Disagreement, DisagreementClass, class_key, run_fuzz
from harness.fuzz.execute import Case, Normaliser, Outcome, differences
from harness.fuzz.generate import generate, to_surface
from harness.fuzz.impls import resolve_impl
from tests.support.pi import pi_impl

CI_CALLS = 2000
CI_MIN_AGREEMENT = 99.9


def test_a_case_depends_only_on_seed_and_index() -> None:
    assert generate(7, 42) == generate(7, 42)
    assert generate(7, 42) != generate(8, 42)
    assert [generate(3, i).tool for i in range(5)] == [generate(3, i).tool for i in range(5)]


def test_generation_covers_the_input_classes() -> None:
    tags = Counter()
    for i in range(600):
        case = generate(0, i)
        for part in case.tag.replace("/", "+").replace(":", "+").split("+"):
            tags[part] += 1
    for cls in ("cjk", "fullwidth", "curly", "dashes", "special-spaces", "combining", "non-bmp", "ligatures",
                "unicode-new", "crlf", "cr", "mixed-eol", "bom", "long-line", "many-lines", "big", "invalid-utf8",
                "malformed", "file-url-malformed", "abs", "missing"):
        assert tags[cls] > 0, cls


def test_the_minimax_surface_gets_wrapper_edit_arguments() -> None:
    case = Case("edit", {"path": "a", "edits": [{"oldText": "x", "newText": "y"}]})
    assert to_surface(case, "minimax").args == {"file_path": "a", "old_string": "x", "new_string": "y"}
    assert to_surface(case, "pi") == case


def test_only_the_root_and_full_output_names_are_normalised() -> None:
    norm = Normaliser("/tmp/toolproof-ws-abc")
    assert norm.text("at /tmp/toolproof-ws-abc/a.txt, see /tmp/pi-bash-0123456789abcdef.log") == (
        "at $WORKSPACE/a.txt, see $TMP/pi-bash-XXXX.log")
    assert norm.value({"n": 2.0, "m": 2.5, "s": ["/tmp/toolproof-ws-abc"]}) == {"n": 2, "m": 2.5, "s": ["$WORKSPACE"]}


def test_differences_name_each_aspect_and_file() -> None:
    a = Outcome("result", content=({"type": "text", "text": "x"},), is_error=False, files=(("a", "b64:eA=="),))
    b = Outcome("error", kind="tool", message="boom", files=(("a", "b64:eQ=="), ("b", "dir")))
    assert differences(a, a) == []
    assert differences(a, b) == ["status", "kind", "message", "content", "is_error", "files:a", "files:b"]
    key = class_key(Disagreement(Case("read", {}, tag="cjk/crlf+malformed"), a, b, differences(a, b)))
    assert key == "read | malformed-args | content,files,is_error,kind,message,status | result≠error[tool]"
    other = Disagreement(Case("read", {}, tag="cjk/crlf+path:abs"), a, b, ["content"])
    assert class_key(other) == "read | path:abs | content"


def test_classes_differing_only_in_input_family_merge_into_one_change() -> None:
    classes = [DisagreementClass("write | well-formed | content", "write", ["content"], count=133),
               DisagreementClass("read | malformed-args | message", "read", ["message"], count=92),
               DisagreementClass("write | path:abs | content", "write", ["content"], count=23),
               DisagreementClass("bash | well-formed | content,status | error[tool]≠isError", "bash", [], count=30),
               DisagreementClass("bash | malformed-args | content,status | error[tool]≠isError", "bash", [], count=45)]
    assert change_groups(classes) == [("write | content", 156, [1, 3]),
                                      ("read | message", 92, [2]),
                                      ("bash | content,status | error[tool]≠isError", 75, [4, 5])]


def test_an_implementation_agrees_with_itself() -> None:
    upstream = resolve_impl("upstream")
    report = run_fuzz(upstream, upstream, 12, 5, tools=("read", "write", "edit"))
    assert (report.agreed, report.total, report.classes) == (12, 12, {})
    assert sum(n for _, n in report.per_tool.values()) == 12


def test_wrapper_against_upstream_writes_group_into_shrunk_classes(tmp_path: Path) -> None:
    out = io.StringIO()
    code = main(["fuzz", "--impl", "reference", "--oracle", "upstream", "--tool", "write", "--n", "12",
                 "--seed", "1", "--quiet", "--json", str(tmp_path / "r.json"), "--markdown", str(tmp_path / "r.md"),
                 "--min-agreement", "99.9"], out)
    text = out.getvalue()
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert code == 1 and "is below --min-agreement 99.9%" in text
    assert f"agreement {report['agreed']}/12 = " in text and report["total"] == 12 and report["agreed"] < 12
    assert report["classes"] and all(c["tool"] == "write" and c["example"]["case"]["tool"] == "write"
                                     for c in report["classes"])
    markdown = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "## Disagreement classes" in markdown and "## Changes (classes merged across input families)" in markdown
    assert sum(c["count"] for c in report["changes"]) == sum(c["count"] for c in report["classes"])
    assert "changes (" in text


def test_bad_options_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="unknown implementation 'x'"):
        resolve_impl("x")
    with pytest.raises(UsageError, match="name the image that holds the command"):
        resolve_impl("cmd:true", "docker")
    assert main(["fuzz", "--impl", "upstream", "--oracle", "upstream", "--n", "0"], io.StringIO()) == 2


@pytest.mark.slow
def test_ci_upstream_agrees_with_pi_0_79_1_on_at_least_99_9_percent_of_calls() -> None:
    """The fidelity gate (README "Fidelity"): 2000 generated calls, malformed arguments included."""
    report = run_fuzz(resolve_impl("upstream"), resolve_impl(pi_impl("0.79.1")), CI_CALLS, 0, jobs=2)
    classes = "; ".join(f"{c.key} ({c.count})" for c in report.classes.values())
    assert not report.infra, report.infra[:3]
    assert report.agreement >= CI_MIN_AGREEMENT, f"agreement {report.agreement:.2f}%: {classes}"
