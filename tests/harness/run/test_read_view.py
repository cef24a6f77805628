"""The read view (harness/run/read_view.py): a read's content and continuation, whichever dialect
presented it."""

from __future__ import annotations

import pytest

from harness.run.read_view import ReadView, read_view

CASES = [
    # pi: raw text
    ("two\nthree\n", ReadView("two\nthree\n", None)),
    ("one\n\n[3 more lines in file. Use offset=2 to continue.]",
     ReadView("one", 2, ("[3 more lines in file. Use offset=2 to continue.]",))),
    # MiniMax: numbered lines, the same notices
    ("     1→one\n     2→two\n", ReadView("one\ntwo\n", None)),
    ("     4→4\n     5→5\n", ReadView("4\n5\n", None)),
    ("   2.7→2\n   3.7→3\n", ReadView("2\n3\n", None)),
    ("     1→x\r\n     2→\n", ReadView("x\r\n\n", None)),
    ("     1→1\n\n[5 more lines in file. Use offset=2 to continue.]",
     ReadView("1", 2, ("[5 more lines in file. Use offset=2 to continue.]",))),
    # the wrapper's cap notice after the engine's: the outermost one says where to continue
    ("     1→a\n\n[Showing lines 1-1 of 9. Use offset=2 to continue.]\n\n"
     "[desktop read output truncated: original_bytes=99; if the omitted remainder is needed, continue with read "
     "using offset=5 and the same path.]",
     ReadView("a", 5, ("[Showing lines 1-1 of 9. Use offset=2 to continue.]",
                       "[desktop read output truncated: original_bytes=99; if the omitted remainder is needed, continue "
                       "with read using offset=5 and the same path.]"))),
    # a notice without an offset
    ("     1→aaa... (line truncated)\n\n[Lines [1] were truncated to 2000 chars.]",
     ReadView("aaa... (line truncated)", None, ("[Lines [1] were truncated to 2000 chars.]",))),
    # empty content, said two ways
    ("<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>",
     ReadView("", None, ("<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>",))),
    ("", ReadView("", None)),
    ("[Line 1 is 60.0KB, exceeds 50.0KB limit. Use bash: sed -n '1p' f | head -c 51200]",
     ReadView("", None, ("[Line 1 is 60.0KB, exceeds 50.0KB limit. Use bash: sed -n '1p' f | head -c 51200]",))),
    # numbers on only some lines are content, not prefixes
    ("1→a\nb\n", ReadView("1→a\nb\n", None)),
    ("12\tcat -n style\n13\tline\n", ReadView("cat -n style\nline\n", None)),
]


@pytest.mark.parametrize(("text", "view"), CASES)
def test_the_view_of_a_read(text: str, view: ReadView) -> None:
    assert read_view(text) == view
