"""Edit receipts in ``details`` (spec edit.9), produced through ``diff.compute_receipts``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tools_impl.core.context import make_context
from tools_impl.core.profile import PATCH_EDIT_DIFF_BOUNDS, REFERENCE, UPSTREAM_PI, Profile
from tools_impl.edit import tool as edit


def details_of(root: Path, args: dict[str, object], profile: Profile = REFERENCE) -> dict[str, object]:
    result = edit.TOOL.call(args, make_context(str(root), {"HOME": str(root)}, profile))
    return dict(result.details or {})


def test_details_carry_numbered_diff_patch_and_first_changed_line(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    details = details_of(tmp_path, {"file_path": "f.txt", "old_string": "b", "new_string": "B"})
    assert details == {
        "diff": " 1 a\n-2 b\n+2 B\n 3 c",
        "patch": "--- f.txt\n+++ f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
        "firstChangedLine": 2,
    }


def test_receipts_are_computed_without_the_bom(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"\xef\xbb\xbfx\n")
    details = details_of(tmp_path, {"file_path": "f.txt", "old_string": "x", "new_string": "y"})
    assert details["patch"] == "--- f.txt\n+++ f.txt\n@@ -1,1 +1,1 @@\n-x\n+y\n"


def test_upstream_receipts_diff_the_normalised_base_against_the_result(tmp_path: Path) -> None:
    # pi diffs the content it spliced into, so the whole-file normalisation does not show.
    (tmp_path / "f.txt").write_bytes("k\u2019  \nv\n".encode())
    details = details_of(tmp_path, {"path": "f.txt", "edits": [{"oldText": "k'", "newText": "K"}]}, UPSTREAM_PI)
    assert details["patch"] == "--- f.txt\n+++ f.txt\n@@ -1,2 +1,2 @@\n-k'\n+K\n v\n"


def test_bounded_receipts_omit_an_oversized_diff_but_still_write(tmp_path: Path) -> None:
    old = "".join(f"{i}\n" for i in range(1200))
    (tmp_path / "f.txt").write_text(old)
    new = "".join(f"n{i}\n" for i in range(1200))
    # The edit-length bound is under test, not the clock: a generous timeout keeps a loaded
    # machine from reaching the timeout text first.
    profile = replace(REFERENCE.with_patches({PATCH_EDIT_DIFF_BOUNDS: True}), diff_timeout_ms=600_000)
    details = details_of(tmp_path, {"file_path": "f.txt", "old_string": old, "new_string": new}, profile)
    assert details["diff"] == "(diff omitted: more than 1000 lines changed)"
    assert "patch" not in details
    assert "diffOmitted" in details
    assert (tmp_path / "f.txt").read_text() == new
