"""What a recorded shell command needs of a replay (harness.importers.commands, .environment)."""

from __future__ import annotations

import pytest

from harness.importers.commands import analyse, mentioned_paths, shown_file, split_commands
from harness.importers.environment import aborted, decide, missing_on_recording_host
from harness.importers.trace import RecordedResult


@pytest.mark.parametrize(("command", "words"), [
    ("a && b || c; d | e & f", [["a"], ["b"], ["c"], ["d"], ["e"], ["f"]]),
    ("node --test test/ 2>&1 | tail -3", [["node", "--test", "test/"], ["tail", "-3"]]),
    ("echo \"a;b|c\" > out.txt", [["echo", "a;b|c"]]),
    ("FOO=1 sudo -E timeout 5 mix test", [["mix", "test"]]),
    ("python3 -c 'import a; print(a.b)'", [["python3", "-c", "import a; print(a.b)"]]),
])
def test_commands_split_on_separators_outside_quotes(command: str, words: list[list[str]]) -> None:
    assert split_commands(command) == words


@pytest.mark.parametrize("command", ["cat <<EOF\nx\nEOF", "echo $(date)", "echo `date`", "echo 'open"])
def test_what_the_lexer_cannot_follow_is_not_split(command: str) -> None:
    assert split_commands(command) is None
    assert analyse(command).broad_mutation  # and is taken to touch everything


@pytest.mark.parametrize(("command", "network"), [
    ("git push origin main", "git push: talks to a git remote"),
    ("curl -s https://example.com | head", "curl: network client"),
    ("npm install --save-dev c8", "npm install: installs packages from a registry"),
    ("pip install requests", "pip install: installs packages from a registry"),
    ("npx prettier --check src", "npx: fetches packages from a registry"),
    ("git commit -m x", ""),
    ("npm test", ""),
])
def test_network_commands_are_named(command: str, network: str) -> None:
    assert analyse(command).network == network


@pytest.mark.parametrize(("command", "outside"), [
    ("touch ~/x", ("the home directory (~/x)",)),
    ("cat $HOME/.npmrc", ("the home directory ($HOME/.npmrc)",)),
    ("cd .. && ls", ("a path above the workspace (..)",)),
    ("echo hi > /tmp/x", ("an absolute path outside the workspace (/tmp/x)",)),
    ("sudo make install", ("sudo (runs as another user)",)),
    ("ls 2>/dev/null; /usr/bin/env python3 x.py", ()),
    ("grep -c x src/a.py", ()),
])
def test_commands_reaching_outside_the_workspace_say_how(command: str, outside: tuple[str, ...]) -> None:
    assert analyse(command).outside == outside


@pytest.mark.parametrize(("command", "platform"), [
    ("sed -i '' 's/a/b/' f.txt", ("macos", "BSD sed -i '' (GNU sed reads '' as its script)")),
    ("grep x f | pbcopy", ("macos", "macOS pbcopy")),
    ("stat -f %z f", ("macos", "BSD stat -f")),
    ("open -a Safari index.html", ("macos", "macOS open")),
    ("sed -i 's/a/b/' f.txt", None),
])
def test_platform_bound_commands_name_their_platform(command: str, platform: tuple[str, str] | None) -> None:
    assert analyse(command).platform == platform


def test_programs_beyond_the_base_set_are_listed() -> None:
    assert analyse("python app.py && code --list-extensions | sort").programs == ("python", "code")
    assert analyse("grep -c x f && git status && python3 -V").programs == ()


def test_files_a_command_names_are_found_by_path_or_base_name() -> None:
    facts = analyse("sed -i 's/a/b/' src/app.py && wc -l README.md")
    assert mentioned_paths(facts, {"src/app.py", "README.md", "other.txt"}) == {"src/app.py", "README.md"}


def test_reading_commands_show_what_a_file_held() -> None:
    assert shown_file("cat a.py", "x\ny\n").text == "x\ny\n"  # type: ignore[union-attr]
    shown = shown_file("sed -n '3,4p' a.py", "c\nd\n")
    assert shown is not None and (shown.path, shown.start, shown.lines, shown.whole) == ("a.py", 3, ("c", "d"), False)
    assert shown_file("nl -ba a.py", "     1\tx\n     2\ty\n").lines == ("x", "y")  # type: ignore[union-attr]
    assert shown_file("head -n 2 a.py", "x\ny\n").lines == ("x", "y")  # type: ignore[union-attr]
    assert shown_file("cat a.py b.py", "x\n") is None
    assert shown_file("grep x a.py", "x\n") is None


def _result(text: str, is_error: bool = False) -> RecordedResult:
    return RecordedResult(text, is_error, 1)


def test_pi_command_aborted_and_a_program_missing_on_the_recording_host_are_recognised() -> None:
    assert aborted(_result("partial\n\nCommand aborted", True))
    assert not aborted(_result("Command aborted", False))
    assert missing_on_recording_host(_result("Exit code 127\n/bin/bash: line 1: python: command not found", True)) \
        == "python"
    assert missing_on_recording_host(_result("zsh: command not found: rg", True)) == "rg"
    assert missing_on_recording_host(_result("the word command not found: in a log", False)) is None


def _decide(command: str, *, git: bool = False, paths: tuple[str, ...] = (), background: bool = False,
            platform_any: bool = False, result: RecordedResult | None = None):
    return decide(analyse(command), result or _result(""), background=background, platform_any=platform_any,
                  git_repository=git, has_path=lambda p: p in paths)


def test_decisions_refuse_contain_or_condition() -> None:
    assert _decide("git push").skip.startswith("reaches the network (git push")
    assert _decide("tail /tmp/claude-1000/-p/tasks/a.output").skip.startswith(
        "reads a Claude Code background-task output file outside the workspace (/tmp/claude-1000/-p/tasks/a.output)")
    assert _decide("npm test").skip.startswith("needs the project's installed dependencies (node_modules")
    assert _decide("npm test", paths=("node_modules",)).when == {"programs": ["npm"]}
    assert _decide("git status").skip.startswith("needs a git repository")
    assert _decide("git status", git=True).skip == ""
    assert _decide("git init -q").skip == ""
    contained = _decide("touch ~/x")
    assert (contained.when, contained.contained) == ({"isolation": "container"},
                                                     "reaches outside the workspace: the home directory (~/x)")
    assert _decide("python3 -m http.server", background=True).when == {"isolation": "container"}
    assert _decide("sed -i '' s/a/b/ f").when == {"os": "macos"}
    assert _decide("sed -i '' s/a/b/ f", platform_any=True).when == {}
