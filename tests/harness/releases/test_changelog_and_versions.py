"""Release versions from the registry, the changelog inside the tarballs, and which of its entries
are about a tool."""

from __future__ import annotations

import pytest

from harness.errors import InfrastructureError, UsageError
from harness.releases.changelog import (
    Entry,
    entries_between,
    explaining,
    is_tool_entry,
    merge_changelogs,
    parse_changelog,
    shipped_in,
    tool_entries,
    tools_of,
)
from harness.releases.history import entry_key, parse_history
from harness.releases.versions import (
    PI_PACKAGES,
    ImplTemplate,
    parse_npm_versions,
    published,
    select_range,
    sort_versions,
)
from tests.support.releases import CHANGELOG, FakeRegistry


def test_published_versions_of_both_packages_in_version_order_without_prereleases() -> None:
    registry = FakeRegistry({PI_PACKAGES[0]: ["0.73.0", "0.9.1", "0.73.1"],
                             PI_PACKAGES[1]: ["1.0.0-rc.1", "0.74.0", "0.100.0", "0.99.1"]})
    assert published(registry, PI_PACKAGES) == ["0.9.1", "0.73.0", "0.73.1", "0.74.0", "0.99.1", "0.100.0"]
    assert registry.asked == list(PI_PACKAGES)


def test_range_selection_is_inclusive_and_checked() -> None:
    versions = sort_versions(["0.73.1", "0.79.1", "1.6.0", "0.85.0"])
    assert select_range(versions, "0.79.1", "1.6.0") == ["0.79.1", "0.85.0", "1.6.0"]
    assert select_range(versions, None, "0.79.1") == ["0.73.1", "0.79.1"]
    assert select_range(versions, "0.80.0", None) == ["0.85.0", "1.6.0"]
    with pytest.raises(UsageError, match=r"--from 1\.6\.0 is after --to 0\.79\.1"):
        select_range(versions, "1.6.0", "0.79.1")
    with pytest.raises(UsageError, match="not a release version"):
        select_range(versions, "latest", None)


def test_npm_view_output_is_a_list_or_one_string() -> None:
    assert parse_npm_versions('["0.1.0", "0.2.0"]', "p") == ["0.1.0", "0.2.0"]
    assert parse_npm_versions('"0.1.0"', "p") == ["0.1.0"]
    with pytest.raises(InfrastructureError, match="not JSON"):
        parse_npm_versions("npm ERR!", "p")


def test_the_template_needs_its_placeholder() -> None:
    assert ImplTemplate("pi@{version}").impl("0.79.1") == "pi@0.79.1"
    assert ImplTemplate("pi@{version}").is_pi
    assert not ImplTemplate("cmd:node a.mjs {version}").is_pi
    assert ImplTemplate("cmd:node a.mjs {version}").default_packages() == ()
    with pytest.raises(UsageError, match="must contain"):
        ImplTemplate("pi@1.0.0")


def test_changelog_entries_per_version_without_highlights() -> None:
    log = parse_changelog(CHANGELOG)
    assert list(log) == ["1.0.0", "0.99.0", "0.85.0", "0.84.0"]
    write = log["0.85.0"][0]
    assert write.section == "Fixed" and write.issues == ("8979",)
    assert write.summary == "Fixed the write tool reporting UTF-16 code-unit counts as byte counts by removing the misleading count"
    assert len(log["0.85.0"]) == 2  # the "New Features" highlight is not an entry


def test_continuation_lines_join_their_entry() -> None:
    log = parse_changelog("## [Unreleased]\n\n- ignored\n\n## [1.2.3]\n\n### Fixed\n\n- first line\n  second line\n- next\n")
    assert [e.text for e in log["1.2.3"]] == ["first line second line", "next"]
    assert "Unreleased" not in log


def test_the_newest_tarball_words_each_version() -> None:
    old = {"1.0.0": [Entry("1.0.0", "Fixed", "old wording")]}
    new = {"1.0.0": [Entry("1.0.0", "Fixed", "new wording")], "1.1.0": [Entry("1.1.0", "Fixed", "x")]}
    merged = merge_changelogs({"1.1.0": new, "1.0.0": old})
    assert [e.text for e in merged["1.0.0"]] == ["new wording"]
    assert list(merged) == ["1.0.0", "1.1.0"]


def test_unpublished_versions_fold_into_the_next_published_release() -> None:
    published_list = ["0.85.1", "0.86.1", "0.99.1", "1.3.0"]
    assert shipped_in("0.86.0", published_list) == "0.86.1"
    assert shipped_in("1.2.0", published_list) == "1.3.0"
    assert shipped_in("0.86.1", published_list) == "0.86.1"
    assert shipped_in("2.0.0", published_list) is None
    log = parse_changelog(CHANGELOG)
    assert [e.version for e in entries_between(log, "0.85.0", "1.0.0")] == ["0.99.0", "1.0.0"]


@pytest.mark.parametrize(("text", "tools", "tool_entry"), [
    ("Fixed the bash tool truncation line counts", ("bash",), True),
    ("Fixed `bash`, `edit`, `find`, `grep`, `ls`, `read`, and `write` tools ignoring `ctx.cwd`",
     ("read", "write", "edit", "bash", "grep", "find", "ls"), True),
    ("Fixed text files beginning with `GIF` being misclassified and omitted from `read` and CLI `@file` input",
     ("read",), True),
    ("Fixed the find tool's path patterns", ("find",), True),
    ("Fixed the find tool reporting the result limit, and `limit: 0` in find and ls returning every result",
     ("find", "ls"), True),
    ("Tool argument validation runs on `@earendil-works/pi-schema`. Plain JSON Schema tools, including MCP tools, "
     "now get the same coercion", ("validation",), True),
    ("Fixed non-positive bash tool timeouts to fail with a clear validation error", ("bash",), True),
    # another surface that calls the tools, in the entry's first sentence
    ("`bash` and `powershell` structured results, which codemode scripts receive, now hold up to 1 MiB",
     ("bash", "powershell"), False),
    ("Fixed the code mode tool description claiming every failed tool call rejects (e.g. `bash` with a nonzero exit)",
     ("bash",), False),
    ("Fixed `!` and RPC `bash` output keeping fragments of color codes", ("bash",), False),
    ("Fixed the Nix package putting its Node.js first on `PATH`, which made bash tool shells use Pi's Node",
     ("bash",), False),
    ("Fixed toggling thinking visibility clearing partial output from running Bash tools", ("bash",), False),
    ("Softened the bash tool's `PI_*` environment guideline", ("bash",), False),
    ("Collapsed bash results cache their preview", (), False),
    ("Added extension tool APIs for orchestrating tools: `isError` results", (), False),
])
def test_tool_entries_name_a_tool_and_are_not_about_another_surface(text: str, tools: tuple[str, ...],
                                                                     tool_entry: bool) -> None:
    entry = Entry("1.0.0", "Fixed", text)
    assert tools_of(entry) == tools
    assert is_tool_entry(entry) is tool_entry


def test_explaining_entries_match_the_change_tool_or_validation() -> None:
    log = parse_changelog(CHANGELOG)
    entries = entries_between(log, "0.84.0", "1.0.0")
    assert [e.summary[:20] for e in explaining(entries, ["write"])] == ["Fixed the write tool"]
    assert explaining(entries, ["bash"]) == []
    assert [e.version for e in tool_entries(log, "0.0.1", "9.0.0")] == ["0.85.0", "0.85.0"]


def test_history_rows_and_entry_keys() -> None:
    doc = """
| Changelog | Tool | Entry | Pinned by | Note |
| --- | --- | --- | --- | --- |
| `0.85.0 #8979 Fixed the write` | write | Fixed the write tool … | `pi/history/write-byte-count`, `fuzz: write \\| content` | |
| `0.82.0 Exposed PI_SESSION_ID PI_SESSION_FILE` | bash | Exposed … | — | not observable through the protocol: no session |
"""
    rows = parse_history(doc)
    assert [r.key for r in rows] == ["0.85.0 #8979 Fixed the write", "0.82.0 Exposed PI_SESSION_ID PI_SESSION_FILE"]
    assert rows[0].scenarios == ("pi/history/write-byte-count",) and rows[0].fuzz_classes == ("write | content",)
    assert rows[1].unobservable and not rows[1].pinned and rows[1].version == "0.82.0"
    entry = Entry("0.82.0", "Added", "Exposed `PI_SESSION_ID`, `PI_SESSION_FILE`, `PI_PROVIDER`, and more")
    assert entry_key(entry) == "0.82.0 Exposed PI_SESSION_ID PI_SESSION_FILE"
    assert entry_key(parse_changelog(CHANGELOG)["0.85.0"][0]) == "0.85.0 #8979 Fixed the write"
