"""The SSE splitter is linear in the bytes it receives and bounds one event's size.

Linearity is checked structurally, not by timing: a buffer that counts the
bytes each search looks at shows every byte is searched a bounded number of
times, however long the event grows.
"""

from __future__ import annotations

from typing import SupportsIndex

import pytest

from loadgen.client.sse import MAX_EVENT_BYTES, EventTooLarge, SseSplitter

KIB = 1024
MIB = 1024 * KIB


class CountingBuffer(bytearray):
    """A bytearray that adds up the bytes each ``rfind`` could look at."""

    searched = 0

    def rfind(  # type: ignore[override]
        self, sub: bytes, start: SupportsIndex | None = None, end: None = None
    ) -> int:
        begin = 0 if start is None else max(int(start), 0)
        CountingBuffer.searched += len(self) - begin
        return super().rfind(sub, begin)


class CountingSplitter(SseSplitter):
    __slots__ = ()
    _Buffer = CountingBuffer


def searched_for(event_bytes: int, chunk: int = 4 * KIB) -> tuple[int, int]:
    """Bytes searched to split one ``event_bytes`` event fed in ``chunk``-byte pieces."""
    stream = b"data: " + b"x" * event_bytes + b"\n\n"
    CountingBuffer.searched = 0
    splitter = CountingSplitter(max_event=8 * MIB)
    out: list[bytes] = []
    for i in range(0, len(stream), chunk):
        out.extend(splitter.feed(stream[i : i + chunk]))
    assert out == [b"x" * event_bytes]
    return CountingBuffer.searched, len(stream)


def test_a_4_mib_event_in_4_kib_chunks_is_searched_linearly() -> None:
    searched, fed = searched_for(4 * MIB)
    # each feed searches its own bytes plus one byte of the old: <= fed + one per chunk
    assert searched <= fed + fed // (4 * KIB) + 1
    small, small_fed = searched_for(1 * MIB)
    assert searched / small < 1.1 * fed / small_fed  # 4x the bytes, ~4x the work, not 16x


def test_crlf_split_across_chunks_is_one_line_end() -> None:
    splitter = SseSplitter()
    assert splitter.feed(b"data: a\r") == []
    assert splitter.feed(b"\n\r") == [b"a"]
    assert splitter.feed(b"\ndata: b\r\n\r\n") == [b"b"]


def test_an_event_past_the_limit_raises_before_it_ends() -> None:
    splitter = SseSplitter(max_event=64 * KIB)
    splitter.feed(b"data: " + b"x" * (32 * KIB))
    with pytest.raises(EventTooLarge, match="65536 bytes"):
        splitter.feed(b"x" * (40 * KIB))


def test_a_whole_oversized_event_in_one_chunk_raises() -> None:
    splitter = SseSplitter(max_event=1 * KIB)
    with pytest.raises(EventTooLarge):
        splitter.feed(b"data: ok\n\ndata: " + b"x" * (2 * KIB) + b"\n\n")


def test_many_small_events_in_one_chunk_are_not_too_large() -> None:
    splitter = SseSplitter(max_event=1 * KIB)
    events = b"".join(b"data: %d\n\n" % i for i in range(1000))  # ~9 KiB in one chunk
    assert len(splitter.feed(events)) == 1000


def test_an_event_at_the_default_limit_passes() -> None:
    payload = b"y" * (MAX_EVENT_BYTES - len(b"data: ") - 1)
    splitter = SseSplitter()
    out: list[bytes] = []
    stream = b"data: " + payload + b"\n\n"
    for i in range(0, len(stream), 64 * KIB):
        out.extend(splitter.feed(stream[i : i + 64 * KIB]))
    assert out == [payload]
