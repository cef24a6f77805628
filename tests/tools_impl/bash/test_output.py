"""The bash output accumulator and formatOutput (spec bash.8, spec bash.9), without processes."""

from __future__ import annotations

import io
from collections.abc import Callable

from hypothesis import example, given
from hypothesis import strategies as st

from tools_impl.bash.output import (
    OutputAccumulator,
    append_status,
    format_output,
    full_output_path,
    node_tmpdir,
    per_stream_decoders,
    shared_decoder,
)


class _Sink(io.BytesIO):
    """A full-output sink that survives ``close()`` so tests can read it."""

    def close(self) -> None:
        self.closed_by_owner = True


def _memory_sinks() -> tuple[dict[str, _Sink], Callable[[str], _Sink]]:
    sinks: dict[str, _Sink] = {}

    def opener(path: str) -> _Sink:
        sinks[path] = _Sink()
        return sinks[path]

    return sinks, opener


def _acc(**kw: object) -> tuple[OutputAccumulator, dict[str, _Sink]]:
    sinks, opener = _memory_sinks()
    acc = OutputAccumulator(env={"TMPDIR": "/tmp/x"}, open_sink=opener, **kw)  # type: ignore[arg-type]
    return acc, sinks


def test_line_total_counts_newlines_plus_open_line() -> None:
    acc, _ = _acc()
    acc.push(b"a\nb")
    assert acc.total_lines == 2
    acc.push(b"\n")
    assert acc.total_lines == 2
    acc.push(b"\n")
    assert acc.total_lines == 3


def test_small_output_is_returned_unchanged_without_details() -> None:
    acc, sinks = _acc()
    acc.push(b"done\n")
    acc.finish()
    out = format_output(acc.snapshot(), "(no output)")
    assert out.text == "done\n"
    assert out.details is None
    assert sinks == {}


def test_empty_output_uses_empty_text() -> None:
    acc, _ = _acc()
    acc.finish()
    assert format_output(acc.snapshot(), "(no output)").text == "(no output)"
    assert append_status(format_output(acc.snapshot(), "").text, "Command aborted") == "Command aborted"


def test_append_status_separates_with_blank_line() -> None:
    assert append_status("done\n", "Command exited with code 5") == "done\n\n\nCommand exited with code 5"


def test_multibyte_character_split_across_chunks_decodes_once() -> None:
    acc, _ = _acc()
    data = "héllo €\n".encode()
    for i in range(len(data)):
        acc.push(data[i:i + 1])
    acc.finish()
    assert acc.snapshot().content == "héllo €\n"
    assert acc.decoded_bytes == len(data)


def test_separate_decoders_keep_interleaved_streams_intact() -> None:
    acc, _ = _acc(decoders=per_stream_decoders())
    euro = "€".encode()
    acc.push(euro[:1], "stdout")
    acc.push(euro[:2], "stderr")
    acc.push(euro[1:], "stdout")
    acc.push(euro[2:], "stderr")
    acc.finish()
    assert acc.snapshot().content == "€€"


def test_shared_decoder_mangles_interleaved_streams_like_upstream() -> None:
    acc, _ = _acc(decoders=shared_decoder())
    euro = "€".encode()
    acc.push(euro[:1], "stdout")
    acc.push(euro[:2], "stderr")
    acc.push(euro[1:], "stdout")
    acc.push(euro[2:], "stderr")
    acc.finish()
    assert "€€" not in acc.snapshot().content
    assert "\ufffd" in acc.snapshot().content


def test_per_stream_decoders_decode_each_stream_separately() -> None:
    def feed(separate: bool) -> str:
        decoders = per_stream_decoders() if separate else shared_decoder()
        acc = OutputAccumulator(env={"TMPDIR": "/nonexistent"}, decoders=decoders)
        out = [acc.push(b"\xc3", "stdout"), acc.push(b"x", "stderr"), acc.push(b"\xa9", "stdout"), acc.finish()]
        return "".join(out)

    assert feed(True) == "xé"
    assert feed(False) == "\ufffdx\ufffd"


def test_invalid_bytes_become_replacement_characters() -> None:
    acc, _ = _acc()
    acc.push(b"a\xffb")
    acc.finish()
    assert acc.snapshot().content == "a\ufffdb"
    assert acc.raw_bytes == 3
    assert acc.decoded_bytes == 5


def test_trailing_incomplete_sequence_is_flushed_at_finish() -> None:
    acc, _ = _acc()
    acc.push(b"x\xe2\x82")
    acc.finish()
    assert acc.snapshot().content == "x\ufffd"


def test_line_truncation_notice_for_2500_lines() -> None:
    acc, sinks = _acc()
    data = "".join(f"{i}\n" for i in range(1, 2501)).encode()
    acc.push(data[:7000])
    acc.push(data[7000:])
    acc.finish()
    out = format_output(acc.snapshot(), "(no output)")
    path = acc.full_output_path
    assert path is not None and path.startswith("/tmp/x/pi-bash-") and path.endswith(".log")
    assert out.text.endswith(f"2500\n\n[Showing lines 501-2500 of 2500. Full output: {path}]")
    assert out.text.startswith("501\n")
    assert out.details is not None
    assert out.details["fullOutputPath"] == path
    assert out.details["truncation"]["truncatedBy"] == "lines"
    assert sinks[path].getvalue() == data


def test_byte_truncation_notice_names_the_limit() -> None:
    acc, _ = _acc()
    line = "x" * 99 + "\n"
    acc.push((line * 600).encode())
    acc.finish()
    out = format_output(acc.snapshot(), "(no output)")
    assert out.text.endswith(f"\n\n[Showing lines 89-600 of 600 (50.0KB limit). Full output: {acc.full_output_path}]")


def test_single_long_line_gives_last_line_partial_notice() -> None:
    acc, _ = _acc()
    acc.push(b"y" * 60000)
    acc.finish()
    out = format_output(acc.snapshot(), "(no output)")
    assert out.text == "y" * 51200 + (
        f"\n\n[Showing last 50.0KB of line 1 (line is 58.6KB). Full output: {acc.full_output_path}]")


def test_single_long_line_with_final_newline_reports_open_line_of_zero_bytes() -> None:
    acc, _ = _acc()
    acc.push(b"y" * 60000 + b"\n")
    acc.finish()
    out = format_output(acc.snapshot(), "(no output)")
    assert out.text.endswith(f"[Showing last 50.0KB of line 1 (line is 0B). Full output: {acc.full_output_path}]")


def test_full_output_file_opens_only_past_the_limits() -> None:
    acc, sinks = _acc()
    acc.push(b"a" * 51200)
    assert acc.full_output_path is None
    acc.push(b"b")
    assert acc.full_output_path is not None
    acc.push(b"c")
    acc.finish()
    assert sinks[acc.full_output_path].getvalue() == b"a" * 51200 + b"bc"


def test_full_output_file_receives_raw_undecoded_bytes() -> None:
    acc, sinks = _acc()
    raw = b"\xff" * 20000  # 20000 raw bytes decode to 60000 UTF-8 bytes of U+FFFD
    acc.push(raw)
    acc.finish()
    assert acc.full_output_path is not None
    assert sinks[acc.full_output_path].getvalue() == raw


def test_rolling_tail_drops_partial_first_line_after_cut() -> None:
    acc, _ = _acc()
    acc.push(b"head-line-" + b"z" * 150_000 + b"\n")
    acc.push(b"last\n" * 20_000)
    acc.finish()
    assert not acc.tail_text().startswith("z")
    snap = acc.snapshot()
    assert snap.content.endswith("last")
    assert snap.total_lines == 20_001


def test_a_stream_that_is_only_the_start_of_a_sequence_still_ends_in_one_replacement_character() -> None:
    """Node's TextDecoder: the end of the stream flushes an incomplete sequence as U+FFFD, also
    when it is all the stream holds (and could still have been a BOM)."""
    for head in (b"\xef", b"\xef\xbb", b"\xe2\x82", b"\xf0\x9f\x98"):
        acc, _ = _acc(decoders=shared_decoder())
        assert acc.push(head) == ""
        assert acc.finish() == "\ufffd"
        assert (acc.snapshot().content, acc.decoded_bytes, acc.total_lines) == ("\ufffd", 3, 1)


def test_a_bom_split_across_chunks_is_still_dropped() -> None:
    acc, _ = _acc(decoders=shared_decoder())
    out = [acc.push(b"\xef"), acc.push(b"\xbb"), acc.push(b"\xbfok"), acc.finish()]
    assert "".join(out) == "ok"
    assert acc.decoded_bytes == 2


def test_each_stream_decoder_flushes_its_own_incomplete_sequence_at_the_end() -> None:
    acc, _ = _acc(decoders=per_stream_decoders())
    acc.push(b"\xef", "stdout")  # could have been the start of stdout's BOM
    acc.push(b"e\xf0\x9f", "stderr")
    assert acc.finish() == "\ufffd\ufffd"
    assert acc.snapshot().content == "e\ufffd\ufffd"
    assert acc.decoded_bytes == 7
    facts = acc.stream_facts()
    assert (facts.stdout, facts.stderr) == ("\ufffd", "e\ufffd")


def test_output_that_outgrows_the_limits_only_when_flushed_still_gets_its_full_output_file() -> None:
    """pi's ``finish()`` opens the temp file when the flushed text crosses a limit: nine bytes and
    the first byte of a character are within 10 bytes until the U+FFFD makes them 12."""
    acc, sinks = _acc(max_bytes=10)
    acc.push(b"123456789")
    acc.push(b"\xe2")
    assert sinks == {}
    acc.finish()
    snap = acc.snapshot()
    assert snap.truncated and snap.total_bytes == 12
    assert snap.full_output_path is not None and list(sinks) == [snap.full_output_path]
    assert sinks[snap.full_output_path].getvalue() == b"123456789\xe2"
    assert format_output(snap, "").text.endswith(f"Full output: {snap.full_output_path}]")


def test_a_flushed_character_that_opens_one_line_too_many_gets_the_full_output_file() -> None:
    acc, sinks = _acc(max_lines=2)
    acc.push(b"a\nb\n\xc3")
    assert sinks == {}
    acc.finish()
    snap = acc.snapshot()
    assert snap.truncated and snap.total_lines == 3
    assert list(sinks) == [snap.full_output_path]
    assert sinks[str(snap.full_output_path)].getvalue() == b"a\nb\n\xc3"


def test_node_tmpdir_follows_node_order() -> None:
    assert node_tmpdir({"TMPDIR": "/a/", "TMP": "/b"}, "linux") == "/a"
    assert node_tmpdir({"TMP": "/b"}, "linux") == "/b"
    assert node_tmpdir({}, "linux") == "/tmp"
    assert node_tmpdir({"TEMP": "C:\\T\\"}, "win32") == "C:\\T"
    assert node_tmpdir({"SystemRoot": "C:\\Windows"}, "win32") == "C:\\Windows\\temp"


def test_full_output_path_has_sixteen_hex_characters() -> None:
    p = full_output_path({"TMPDIR": "/t"}, "pi-bash", "linux")
    name = p.rsplit("/", 1)[1]
    assert name.startswith("pi-bash-") and name.endswith(".log")
    token = name[len("pi-bash-"):-len(".log")]
    assert len(token) == 16 and all(c in "0123456789abcdef" for c in token)


_chunks = st.lists(st.binary(max_size=64) | st.sampled_from(["é".encode(), "€\n".encode(), b"\n", b"\xf0\x9f"]),
                   max_size=40)


@given(_chunks, st.lists(st.integers(0, 64 * 40), max_size=10))
@example([b"\xef"], [])  # a stream that ends inside a UTF-8 sequence (found by this test)
@example([b"\xef\xbb"], [1])  # ... split, and a prefix of the BOM
@example([b"\xef\xbb\xbf", b"\xe2\x82"], [1, 2])  # a BOM split three ways, then a cut-off character
def test_accumulator_totals_equal_those_of_the_concatenated_stream_for_any_chunking(
        chunks: list[bytes], cuts: list[int]) -> None:
    """Raw bytes, decoded bytes and lines do not depend on where the stream was split; the text
    is Node's ``TextDecoder`` on the whole stream (a leading BOM dropped, an incomplete last
    sequence one U+FFFD)."""
    stream = b"".join(chunks)
    acc, _ = _acc(decoders=shared_decoder())
    prev = 0
    for c in [*sorted(c % (len(stream) + 1) for c in cuts), len(stream)]:
        acc.push(stream[prev:c])
        prev = c
    acc.finish()
    text = stream.decode("utf-8", "replace").removeprefix("\ufeff")
    assert acc.raw_bytes == len(stream)
    assert acc.decoded_bytes == len(text.encode())
    expected_lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    assert acc.total_lines == expected_lines
    assert acc.snapshot().content == text
