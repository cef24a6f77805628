"""Normalisation with the emulated runtime's Unicode data (spec common.4, Profile.unicode_version)."""

from __future__ import annotations

import unicodedata

import pytest

from tools_impl.core.profile import REFERENCE, UPSTREAM_PI
from tools_impl.edit.engine import Edit, apply_edits
from tools_impl.js import unicode

OUTLINED_A = "\U0001ccd6"  # OUTLINED LATIN CAPITAL LETTER A, assigned in Unicode 16: NFKC "A"


def test_both_profiles_name_the_unicode_version_of_node_22() -> None:
    assert REFERENCE.unicode_version == UPSTREAM_PI.unicode_version == "17.0.0"


def test_a_character_newer_than_the_standard_library_normalises_with_unicode_17() -> None:
    assert unicode.normalize("NFKC", "x" + OUTLINED_A) == "xA"
    if unicodedata.unidata_version < "16":
        assert unicodedata.normalize("NFKC", OUTLINED_A) == OUTLINED_A  # the gap the data closes


def test_the_fuzzy_edit_matches_through_the_new_character() -> None:
    out = apply_edits(f"name: {OUTLINED_A}1\n", [Edit("name: A1", "name: B1")], "f.txt", UPSTREAM_PI)
    assert out.new == "name: B1\n"


def test_missing_data_is_a_clear_error_only_for_characters_the_standard_library_lacks(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def unavailable(version: str) -> object:
        raise unicode.UnicodeDataUnavailable(f"Unicode {version} character data is not available")

    monkeypatch.setattr(unicode, "data_for", unavailable)
    with unicode.using("99.0.0"):
        assert unicode.normalize("NFKC", "ﬁ") == "fi"  # assigned long ago: stable, so exact
        with pytest.raises(unicode.UnicodeDataUnavailable, match=r"Unicode 99\.0\.0 character data"):
            unicode.normalize("NFKC", "\U000e0080")  # unassigned here


def test_the_error_message_says_how_to_install_the_data() -> None:
    with pytest.raises(unicode.UnicodeDataUnavailable) as info:
        unicode.data_for("1.2.3")
    assert "pip install 'unicodedata2==17.0.1'" in str(info.value)
    assert f"the standard library has {unicodedata.unidata_version}" in str(info.value)
