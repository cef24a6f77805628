"""Claude Code BashTool profile (spec classify): read-only classification, fail-safe security parse,
rule matching, timeouts, and the ``classify`` entry point."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tools_impl.classify import claude_code as claude_bash
from tools_impl.classify.claude_code import (
    BASH_READ_COMMANDS_KNOWN,
    CLAUDE_CODE,
    ClaudeBashProfile,
    classify,
    is_read_only,
    match_wildcard_pattern,
    parse_for_security,
    resolve_timeout_ms,
    split_command,
)


def test_profile_constants() -> None:
    assert (CLAUDE_CODE.default_timeout_ms, CLAUDE_CODE.max_timeout_ms) == (120_000, 600_000)
    assert CLAUDE_CODE.auto_background_after_ms == 15_000
    assert CLAUDE_CODE.max_result_chars == 100_000
    with pytest.raises(dataclasses.FrozenInstanceError):
        CLAUDE_CODE.max_timeout_ms = 1  # type: ignore[misc]


def test_known_read_commands_are_listed_first() -> None:
    assert BASH_READ_COMMANDS_KNOWN == ("cat", "head", "tail", "wc", "stat", "file", "jq", "awk", "sort", "uniq")


# ------------------------------------------------------------------ spec examples


def test_spec_example_ls_echo_wc_is_read_only() -> None:
    r = classify('ls src && echo "---" && wc -l README.md', [], {})
    assert r["read_only"] is True
    assert r["concurrency_safe"] is True
    assert r["permission"] == "allow"
    assert r["parse_kind"] == "simple"
    assert r["subcommands"] == ["ls src", "echo ---", "wc -l README.md"]


def test_spec_example_ls_and_git_push_is_not_read_only_and_rule_applies() -> None:
    r = classify("ls && git push", ["git push:*"], {})
    assert r["read_only"] is False
    assert r["concurrency_safe"] is False
    assert r["subcommands"] == ["ls", "git push"]
    assert r["matched_rules"] == ["git push:*"]
    assert r["permission"] == "rule"


def test_leading_assignments_are_stripped_from_subcommands() -> None:
    assert parse_for_security("FOO=1 BAR=2 git push origin").subcommands == ("git push origin",)


def test_no_matching_rule_means_ask() -> None:
    r = classify("make install", ["git push:*"], {})
    assert (r["read_only"], r["matched_rules"], r["permission"]) == (False, [], "ask")


# ------------------------------------------------------------------ splitting


def test_quoted_operators_do_not_split() -> None:
    parts = split_command("echo 'a && b | c' ; grep \"x;y\" f || cat a\\&b")
    assert [(p.text, p.operator) for p in parts] == [
        ("echo 'a && b | c'", ";"),
        ('grep "x;y" f', "||"),
        ("cat a\\&b", ""),
    ]
    assert is_read_only("echo 'rm -rf / && x'").read_only is True


def test_all_operators_split_and_fd_redirects_do_not() -> None:
    parts = split_command("ls 2>&1 | wc -l; cat a & tail b\nhead c |& sort && du")
    assert [(p.text, p.operator) for p in parts] == [
        ("ls 2>&1", "|"),
        ("wc -l", ";"),
        ("cat a", "&"),
        ("tail b", "\n"),
        ("head c", "|&"),
        ("sort", "&&"),
        ("du", ""),
    ]


# ------------------------------------------------------------------ read-only rules


@pytest.mark.parametrize(
    "command",
    [
        "cat $(rm -rf x)",
        "cat `rm x`",
        'echo "$(touch f)"',
        "diff <(ls) <(ls -a)",
        "ls > out.txt",
        "cat a >> b",
        "ls &> log",
        "find . -name '*.tmp' -delete",
        "find . -exec rm {} ;",
        "sort -o out in",
        "sort --output=out in",
        "uniq in out",
        "rg --pre ./x foo",
        "awk '{ system(\"rm f\") }' f",
        "cat <<EOF\nhi\nEOF",
        "cd /tmp && ls",
        "sudo cat /etc/shadow",
        "xargs rm",
        "/bin/ls",
        "echo 'unbalanced",
        "",
    ],
)
def test_not_read_only(command: str) -> None:
    assert is_read_only(command).read_only is False


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "grep -rn TODO src | sort | uniq -c | head -20",
        "find . -name '*.py' | wc -l",
        "cat a.txt >/dev/null 2>&1",
        "jq .name package.json",
        "tree -L 2 && du -sh .",
        "which python3; whereis ls",
        "FOO=1 cat x",
        "echo hi",
        "true && :",
    ],
)
def test_read_only(command: str) -> None:
    assert is_read_only(command).read_only is True


def test_cd_option_and_flag() -> None:
    assert is_read_only("cd src && ls").has_cd is True
    relaxed = dataclasses.replace(CLAUDE_CODE, cd_forfeits_read_only=False)
    assert is_read_only("cd src && ls", relaxed).read_only is True


def test_all_neutral_verdict_option() -> None:
    assert is_read_only("echo a; printf b").read_only is True
    strict = dataclasses.replace(CLAUDE_CODE, all_neutral_read_only=False)
    assert is_read_only("echo a; printf b", strict).read_only is False
    assert is_read_only("echo a; ls", strict).read_only is True


def test_extended_read_set_option() -> None:
    assert is_read_only("cut -d: -f1 /etc/passwd").read_only is True
    known_only = dataclasses.replace(CLAUDE_CODE, extended_read_commands=False)
    assert is_read_only("cut -d: -f1 /etc/passwd", known_only).read_only is False


def test_read_only_permission_option_falls_through_to_rules() -> None:
    r = classify("cat file", ["cat:*"], {"read_only_permission": "rules"})
    assert (r["read_only"], r["permission"]) == (True, "rule")
    r = classify("cat file", [], {"read_only_permission": "rules"})
    assert (r["read_only"], r["permission"]) == (True, "ask")


# ------------------------------------------------------------------ security parse (fail-safe)


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("echo $(rm -rf x)", "too_complex"),
        ("ls $HOME", "too_complex"),
        ('echo "${x}"', "too_complex"),
        ("(cd x && ls)", "too_complex"),
        ("{ ls; }", "too_complex"),
        ("if true; then ls; fi", "too_complex"),
        ("for f in *; do rm $f; done", "too_complex"),
        ("f() { rm x; }; f", "too_complex"),
        ("cat <<EOF\nx\nEOF\n", "too_complex"),
        ("cat <<< hi", "too_complex"),
        ("ls > $OUT", "too_complex"),
        ("ls > out.txt", "too_complex"),
        ("! ls", "too_complex"),
        ("[[ -f x ]] && ls", "too_complex"),
        ("echo 'unclosed", "parse_error"),
        ("ls &&", "parse_error"),
    ],
)
def test_non_simple_parse_matches_every_rule(command: str, kind: str) -> None:
    r = classify(command, ["git push:*", "npm test"], {})
    assert r["parse_kind"] == kind
    assert r["subcommands"] == []
    assert r["matched_rules"] == ["git push:*", "npm test"]


def test_simple_parse_unquotes_and_keeps_safe_redirects() -> None:
    parsed = parse_for_security("git commit -m 'a b' \"c d\" e\\ f 2>&1 </dev/null | tee >/dev/null")
    assert parsed.kind == "simple"
    assert parsed.subcommands == ("git commit -m a b c d e f", "tee")


def test_missing_tree_sitter_is_unavailable_and_fails_safe(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> None:
        raise ImportError("No module named 'tree_sitter_bash'")

    monkeypatch.setattr(claude_bash, "_get_parser", missing)
    r = classify("ls", ["git push:*"], {})
    assert r["parse_kind"] == "unavailable"
    assert "tree-sitter-bash" in r["parse_reason"]
    assert r["matched_rules"] == ["git push:*"]
    assert r["read_only"] is True


# ------------------------------------------------------------------ rule syntax


@pytest.mark.parametrize(
    ("rule", "sub", "expected"),
    [
        ("git push:*", "git push", True),
        ("git push:*", "git push --force origin", True),
        ("git push:*", "git pushx", False),
        ("Bash(git push:*)", "git push origin", True),
        ("npm run *", "npm run build", True),
        ("npm run *", "npm test", False),
        ("*", "anything at all", True),
        ("npm test", "npm test", True),
        ("npm test", "npm test --watch", False),
    ],
)
def test_wildcard_rules(rule: str, sub: str, expected: bool) -> None:
    assert match_wildcard_pattern(rule, sub) is expected


def test_wildcard_syntax_option() -> None:
    assert match_wildcard_pattern("git push:*", "git push x", "glob") is False
    assert match_wildcard_pattern("npm *", "npm x", "prefix") is False


# ------------------------------------------------------------------ timeouts / options


def test_timeouts() -> None:
    assert resolve_timeout_ms(None) == 120_000
    assert resolve_timeout_ms(5000) == 5000
    assert resolve_timeout_ms(10**9) == 600_000
    r = classify("ls", [], {"timeout_ms": 700_000})
    assert r["timeouts"] == {
        "default_ms": 120_000,
        "max_ms": 600_000,
        "effective_ms": 600_000,
        "auto_background_after_ms": 15_000,
    }
    assert r["auto_background"] == {"eligible": True, "after_ms": 15_000}
    assert classify("sleep 60", [], {"auto_background_excluded": ["sleep"]})["auto_background"]["eligible"] is False
    assert classify("ls", [], {"background_tasks_disabled": True})["auto_background"]["eligible"] is False


def test_unknown_option_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown option 'bogus'"):
        classify("ls", [], {"bogus": 1})


def test_profile_is_a_frozen_dataclass_with_options() -> None:
    assert dataclasses.is_dataclass(ClaudeBashProfile)
    assert {"cd_forfeits_read_only", "all_neutral_read_only", "wildcard_syntax"} <= {
        f.name for f in dataclasses.fields(ClaudeBashProfile)
    }


# ------------------------------------------------------------------ the spec's examples through classify


def verdict(command: str, rules: list[str] | None = None, **options: Any) -> dict[str, Any]:
    """``classify`` with no rules and no options unless given."""
    return classify(command, rules or [], options)


def test_claude_read_only_examples() -> None:
    assert verdict('ls src && echo "---" && wc -l README.md')["read_only"] is True
    assert verdict("ls && git push")["read_only"] is False
    for cmd in ("find . -name x", "grep -r a .", "rg a", "which ls", "cat f", "head f", "tail f", "wc f",
                "stat f", "file f", "jq . f", "awk '{print $1}' f", "sort f", "uniq f", "tree", "du -sh ."):
        assert verdict(cmd)["read_only"] is True, cmd


def test_claude_read_only_is_concurrency_safe_and_allowed_by_default() -> None:
    ro = verdict("cat README.md")
    assert (ro["read_only"], ro["concurrency_safe"], ro["permission"]) == (True, True, "allow")
    rw = verdict("git push")
    assert (rw["read_only"], rw["concurrency_safe"], rw["permission"]) == (False, False, "ask")


def test_claude_security_parse_subcommands_and_rule_matching() -> None:
    res = verdict("ls && git push", ["git push"])
    assert (res["parse_kind"], res["subcommands"], res["matched_rules"]) == ("simple", ["ls", "git push"],
                                                                             ["git push"])
    assert verdict("FOO=1 BAR=2 git status")["subcommands"] == ["git status"]


def test_claude_security_parse_fails_safe() -> None:
    res = verdict("echo $(whoami) && if true; then ls; fi", ["never-matches-anything"])
    assert res["parse_kind"] != "simple"
    assert res["matched_rules"] == ["never-matches-anything"]


def test_claude_timeouts() -> None:
    assert verdict("ls")["timeouts"]["effective_ms"] == 120_000
    assert verdict("ls", timeout_ms=30_000)["timeouts"]["effective_ms"] == 30_000
    assert verdict("ls", timeout_ms=900_000)["timeouts"]["effective_ms"] == 600_000
    res = verdict("ls")
    assert (res["timeouts"]["default_ms"], res["timeouts"]["max_ms"], res["auto_background"]["after_ms"],
            res["max_result_chars"]) == (120_000, 600_000, 15_000, 100_000)


def test_claude_auto_background_eligibility_follows_the_disable_switch() -> None:
    assert verdict("npm test")["auto_background"]["eligible"] is True
    assert verdict("npm test", background_tasks_disabled=True)["auto_background"]["eligible"] is False


def test_claude_explicit_timeout_is_used_as_given() -> None:
    assert verdict("ls", timeout_ms=1500.5)["timeouts"]["effective_ms"] == 1500.5


# ------------------------------------------------------------------ property

READ_ONLY_SEGMENTS = ["ls", "ls -la src", "cat a.txt", "grep -n x f", "wc -l f", "echo hi", "head -3 f", "du -sh ."]
WRITE_SEGMENTS = ["rm -rf x", "git push", "touch f", "mv a b", "npm install", "sed -i s/a/b/ f", "python3 x.py"]
OPERATORS = [" && ", " || ", "; ", " | ", " & ", "\n", " |& "]


@given(
    segments=st.lists(
        st.tuples(st.sampled_from(READ_ONLY_SEGMENTS + WRITE_SEGMENTS), st.sampled_from(OPERATORS)),
        min_size=1,
        max_size=6,
    )
)
def test_read_only_classifier_never_calls_a_command_with_a_non_read_only_segment_read_only(
    segments: list[tuple[str, str]],
) -> None:
    """Any compound command that contains at least one write segment is not read-only; one made
    only of read-only segments is."""
    command = "".join(seg + op for seg, op in segments[:-1]) + segments[-1][0]
    has_write = any(seg in WRITE_SEGMENTS for seg, _ in segments)
    assert is_read_only(command).read_only is (not has_write)
