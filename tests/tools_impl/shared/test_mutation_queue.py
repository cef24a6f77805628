"""The per-file mutation queue of write and edit (spec write.4): keys and waiting."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from tools_impl.shared.mutation_queue import MutationQueue, queue_key


def test_symlink_aliases_share_one_queue_key(tmp_path: Path) -> None:
    (tmp_path / "t.txt").write_text("x")
    os.symlink(tmp_path / "t.txt", tmp_path / "alias.txt")
    assert queue_key(str(tmp_path / "alias.txt")) == queue_key(str(tmp_path / "t.txt")) == str(tmp_path / "t.txt")
    assert queue_key(str(tmp_path / "missing.txt")) == str(tmp_path / "missing.txt")
    assert queue_key(str(tmp_path / "t.txt" / "under")) == str(tmp_path / "t.txt" / "under")


def test_an_alias_waits_for_the_queue_held_through_its_target(tmp_path: Path) -> None:
    (tmp_path / "t.txt").write_text("x")
    os.symlink(tmp_path / "t.txt", tmp_path / "alias.txt")
    entered = threading.Event()
    queue = MutationQueue()
    with queue.hold(str(tmp_path / "t.txt")):
        def other() -> None:
            with queue.hold(str(tmp_path / "alias.txt")):
                entered.set()
        t = threading.Thread(target=other)
        t.start()
        assert not entered.wait(0.3)
    assert entered.wait(5)
    t.join()
    free = threading.Event()
    with queue.hold(str(tmp_path / "t.txt")):
        def unrelated() -> None:
            with queue.hold(str(tmp_path / "other.txt")):
                free.set()
        t2 = threading.Thread(target=unrelated)
        t2.start()
        assert free.wait(5)
    t2.join()
