"""minimatch compatibility of ``tools_impl.search.minimatch`` and the glob tool's pattern questions.

The MINIMATCH_TABLE rows (pattern, path, nocase, expected) were checked against minimatch 9.0.9
``makeRe(pattern, {dot: true, nocase}).test(path)``; the REGEX_VS_MATCH rows against both that and
``minimatch(path, pattern, {dot: true, nocase})``, which differ where ``**`` meets a partial segment.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tools_impl.search.minimatch import (
    InvalidGlob,
    brace_expand,
    first_magic_index,
    has_magic,
    is_broad_file_scan,
    make_re,
    minimatch,
    regex_match,
    validate_glob,
)

MINIMATCH_TABLE = [
    ('*', 'a', False, True),
    ('*', '.a', False, True),
    ('*', '.', False, False),
    ('*', '..', False, False),
    ('*', 'a/b', False, False),
    ('*', '', False, False),
    ('**', 'a/b/c', False, True),
    ('**', '.x/y', False, True),
    ('**', 'a/../b', False, False),
    ('**/*.ts', 'a.ts', False, True),
    ('**/*.ts', 'src/x/a.ts', False, True),
    ('**/*.ts', 'src/.hidden/a.ts', False, True),
    ('**/*.ts', 'a.tsx', False, False),
    ('**/*.ts', '.ts', False, True),
    ('src/**', 'src', False, True),
    ('src/**', 'src/a/b', False, True),
    ('src/**', 'srcx/a', False, True),
    ('a/**/b', 'a/b', False, True),
    ('a/**/b', 'a/x/y/b', False, True),
    ('a/**/b', 'a/./b', False, True),
    ('a/**/b', 'a/../b', False, True),
    ('*.{js,ts}', 'a.js', False, True),
    ('*.{js,ts}', 'a.ts', False, True),
    ('*.{js,ts}', 'a.css', False, False),
    ('{a,b}/**', 'a/x', False, True),
    ('{a,b}/**', 'c/x', False, False),
    ('a{b,c{d,e}f}g', 'acdfg', False, True),
    ('a{b,c{d,e}f}g', 'abg', False, True),
    ('a{b,c{d,e}f}g', 'acfg', False, False),
    ('{1..3}x', '2x', False, True),
    ('{1..3}x', '4x', False, False),
    ('{01..03}', '02', False, True),
    ('{a..c}', 'b', False, True),
    ('x{a}y', 'x{a}y', False, True),
    ('a{,b}', 'a', False, True),
    ('a{,b}', 'ab', False, True),
    ('.git', '.git', False, True),
    ('.git', '.GIT', False, False),
    ('[abc]x', 'bx', False, True),
    ('[abc]x', 'dx', False, False),
    ('[!a]', 'b', False, True),
    ('[!a]', 'a', False, False),
    ('[^a-c]*', 'd1', False, True),
    ('[^a-c]*', 'b1', False, False),
    ('[a-]', '-', False, True),
    ('[]a]', ']', False, True),
    ('[z-a]', 'z', False, False),
    ('[a', '[a', False, True),
    ('?', 'a', False, True),
    ('?', 'ab', False, False),
    ('?', '.', False, False),
    ('a?c', 'abc', False, True),
    ('a?c', 'a/c', False, False),
    ('a\\*b', 'a*b', False, True),
    ('a\\*b', 'axb', False, False),
    ('!*.ts', 'a.ts', False, False),
    ('!*.ts', 'a.js', False, True),
    ('!!a', 'a', False, True),
    ('+(a|b)', 'abab', False, True),
    ('+(a|b)', '', False, False),
    ('*(a|b)x', 'x', False, True),
    ('?(a)b', 'ab', False, True),
    ('?(a)b', 'aab', False, False),
    ('@(a|b)/c', 'b/c', False, True),
    ('a!(b)c', 'abc', False, False),
    ('a!(b)c', 'axc', False, True),
    ('x/!(*.js)', 'x/a.ts', False, True),
    ('x/!(*.js)', 'x/a.js', False, False),
    ('!(*.d).ts', 'a.ts', False, True),
    ('**/.env', '.env', False, True),
    ('**/.env', 'd/.env', False, True),
    ('**/node_modules/**', 'q/node_modules/r/s', False, True),
    ('#comment', '#comment', False, False),
    ('a/*/c', 'a/z/c', False, True),
    ('a/*/c', 'a/z/y/c', False, False),
    ('/abs/*', '/abs/q', False, True),
    ('.env', '.ENV', True, True),
    ('id_rsa', 'ID_RSA', True, True),
    ('**/.ssh/**', '/home/U/.SSH/x', True, True),
    ('*.PEM', 'k.pem', True, True),
]


@pytest.mark.parametrize(("pattern", "path", "nocase", "expected"), MINIMATCH_TABLE)
def test_make_re_agrees_with_minimatch_dot_true(pattern: str, path: str, nocase: bool, expected: bool) -> None:
    assert regex_match(path, pattern, dot=True, nocase=nocase) is expected


REGEX_VS_MATCH = [
    ("**/.git/**", ".github", False, True, False),
    ("**/.git/**", "/ws/.github/__p__", False, True, False),
    ("**/.git/**", "/ws/.git/__p__", False, True, True),
    ("**/.git/**", "/ws/.git", False, True, False),
    ("src/**", "srcfoo", False, True, False),
    ("src/**", "src/a/b", False, True, True),
    ("a/**/b", "a/x/y/b", False, True, True),
    ("a/**/b", "a/./b", False, True, False),
    ("**", "a/./b", False, False, False),
    ("*", "a/", False, False, True),
    ("a/*", "a/b/", False, False, True),
    ("*.{js,ts}", "a.ts", False, True, True),
    ("!*.ts", "a.ts", False, False, False),
    ("!*.ts", "a.js", False, True, True),
    ("**/.ssh/**", "/home/U/.SSH/x", True, True, True),
]


@pytest.mark.parametrize(("pattern", "path", "nocase", "by_regex", "by_match"), REGEX_VS_MATCH)
def test_regex_and_segment_matching_follow_their_minimatch_counterparts(
    pattern: str, path: str, nocase: bool, by_regex: bool, by_match: bool
) -> None:
    assert regex_match(path, pattern, nocase=nocase) is by_regex
    assert minimatch(path, pattern, nocase=nocase) is by_match


@pytest.mark.parametrize(
    ("pattern", "expanded"),
    [
        ("a{b,c}d", ["abd", "acd"]),
        ("a{b,c{d,e}f}g", ["abg", "acdfg", "acefg"]),
        ("{1..3}", ["1", "2", "3"]),
        ("{01..03}", ["01", "02", "03"]),
        ("{3..1}", ["3", "2", "1"]),
        ("{1..7..3}", ["1", "4", "7"]),
        ("{a..c}", ["a", "b", "c"]),
        ("a{b}c", ["a{b}c"]),
        ("a{,b}", ["a", "ab"]),
        ("{a,b", ["{a,b"]),
        ("a\\{b,c}", ["a{b,c}"]),
        ("x{a,b}y{1,2}", ["xay1", "xay2", "xby1", "xby2"]),
        ("${a,b}", ["${a,b}"]),
        ("plain", ["plain"]),
    ],
)
def test_brace_expand_follows_brace_expansion_package(pattern: str, expanded: list[str]) -> None:
    assert brace_expand(pattern) == expanded


def test_comment_and_empty_patterns_match_nothing() -> None:
    assert make_re("#x") is None
    assert make_re("") is None
    assert minimatch("#x", "#x") is False
    assert minimatch("", "") is True


def test_dot_false_hides_dotfiles_from_star() -> None:
    assert regex_match(".a", "*", dot=False) is False
    assert minimatch(".a", "*", dot=False) is False
    assert minimatch("a", "*", dot=False) is True
    assert regex_match("x/.a/b", "**/b", dot=False) is False
    assert minimatch("x/.a/b", "**/b", dot=False) is False


def test_dollar_does_not_match_before_trailing_newline() -> None:
    assert regex_match("a.ts\n", "*.ts") is False


@pytest.mark.parametrize(
    ("pattern", "index"),
    [("src/a.ts", -1), ("src/*.ts", 4), ("a?b", 1), ("x/[ab]", 2), ("x/{a,b}", 2), ("x/!(a)", 2),
     ("x/+(a)", 2), ("x/@(a)", 2), ("x/!a", -1)],
)
def test_first_magic_index_counts_extglob_openers(pattern: str, index: int) -> None:
    assert first_magic_index(pattern) == index
    assert has_magic(pattern) is (index >= 0)


@pytest.mark.parametrize(
    ("pattern", "broad"),
    [
        ("**/*", True), ("*.*", True), ("src/**", True), ("*", True), ("!foo.ts", True),
        ("**/*.ts", False), ("src/*.{ts,js}", False), ("src/*.{ts,*}", True), ("foo", False),
        ("a.?", True), ("*.t?", False), ("*.", True), ("[ab]", True), ("docs/README.md", False),
    ],
)
def test_is_broad_file_scan_examines_each_brace_alternative_leaf(pattern: str, broad: bool) -> None:
    assert is_broad_file_scan(pattern) is broad


@pytest.mark.parametrize("pattern", ["{a", "a}", "{a,{b}", "[a", "a]", "[z-a]", "*.[]"])
def test_malformed_globs_are_invalid(pattern: str) -> None:
    with pytest.raises(InvalidGlob):
        validate_glob(pattern)
    with pytest.raises(InvalidGlob):
        is_broad_file_scan(pattern)


@pytest.mark.parametrize("pattern", ["[]a]", "[!]]", "[a-]", "a\\{b", "[[:alpha:]]", "{a,b}/[x-z]*"])
def test_well_formed_globs_are_valid(pattern: str) -> None:
    validate_glob(pattern)


_LITERAL_SEGMENT = st.text(
    alphabet=st.characters(blacklist_characters="*?[]{}()!+@\\/#,\x00\n\r\u2028\u2029", blacklist_categories=("Cs",)),
    min_size=1,
    max_size=8,
).filter(lambda s: s not in (".", ".."))


@given(st.lists(_LITERAL_SEGMENT, min_size=1, max_size=4))
def test_a_literal_path_without_magic_always_matches_itself(segments: list[str]) -> None:
    """Invariant: with no magic characters, a pattern is an exact path matcher for itself."""
    path = "/".join(segments)
    assert minimatch(path, path)
    assert minimatch(path, path, nocase=True)
    assert regex_match(path, path)


@given(st.lists(_LITERAL_SEGMENT, min_size=1, max_size=4))
def test_globstar_prefix_matches_any_literal_path_ending(segments: list[str]) -> None:
    """Invariant: ``**/<leaf>`` matches every path whose last segment is ``<leaf>``."""
    path = "/".join(segments)
    assert minimatch(path, "**/" + segments[-1])
    assert regex_match(path, "**/" + segments[-1])
