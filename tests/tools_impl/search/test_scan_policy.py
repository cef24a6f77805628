"""The shared ripgrep scan policy: sensitive search roots (spec grep.3) and the exclude lists."""

from __future__ import annotations

import pytest

from tools_impl.search.scan_policy import (
    DEFAULT_BROAD_FILE_EXCLUDES,
    DEFAULT_SCAN_DIRECTORY_NAMES,
    LOCAL_SENSITIVE_GLOB_EXCLUDES,
    is_sensitive_search_path,
)


@pytest.mark.parametrize(
    "path",
    [
        "/ws/.git", "/ws/.git/", "/ws/.GIT", "/ws/.git/objects", "/home/u/.ssh", "/home/u/.ssh/keys",
        "C:\\Users\\u\\.aws", "/ws/.env", "/ws/.ENV.local", "/ws/id_rsa", "/ws/server.PEM", "/ws/.kube",
        "/ws/.npmrc", "/ws/.hg", "/ws/.jj/repo",
    ],
)
def test_sensitive_roots_are_detected_case_insensitively(path: str) -> None:
    assert is_sensitive_search_path(path) is True


@pytest.mark.parametrize(
    "path", ["/ws", "/ws/src", "/ws/node_modules", "/ws/.envrc", "/ws/git", "/ws/.github", "/ws/id_rsa.pub", "/"]
)
def test_ordinary_roots_are_not_sensitive(path: str) -> None:
    assert is_sensitive_search_path(path) is False


def test_probe_name_only_matters_for_patterns_with_a_slash() -> None:
    assert is_sensitive_search_path("/ws/.ssh", probe="other_probe") is True


def test_policy_lists_have_the_specified_sizes_and_order() -> None:
    assert len(DEFAULT_SCAN_DIRECTORY_NAMES) == 18
    assert DEFAULT_SCAN_DIRECTORY_NAMES[0] == ".worktrees" and DEFAULT_SCAN_DIRECTORY_NAMES[-1] == "coverage"
    assert len(LOCAL_SENSITIVE_GLOB_EXCLUDES) == 20
    assert LOCAL_SENSITIVE_GLOB_EXCLUDES[0] == "!**/.git/**" and LOCAL_SENSITIVE_GLOB_EXCLUDES[-1] == "!id_ed25519"
    assert len(DEFAULT_BROAD_FILE_EXCLUDES) == 5
