"""The SSE splitter gives the same events however the stream is cut."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from loadgen.client.sse import SseSplitter

STREAM = (
    b'data: {"a":1}\r\n\r\n'
    b": keep-alive comment\r\n"
    b"data: x\r\ndata: y\r\n\r\n"
    b"event: message\nid: 7\ndata:z\n\n\n\n"
    b"retry: 10\n\n"
    b'data: {"text":"caf\xc3\xa9"}\r\r'
    b"data\n\n"
    b"data: [DONE]\n\n"
)
EXPECTED = [b'{"a":1}', b"x\ny", b"z", b'{"text":"caf\xc3\xa9"}', b"", b"[DONE]"]


def feed_all(chunks: list[bytes]) -> list[bytes]:
    splitter = SseSplitter()
    out: list[bytes] = []
    for chunk in chunks:
        out.extend(splitter.feed(chunk))
    out.extend(splitter.finish())
    return out


def test_whole_stream_at_once() -> None:
    assert feed_all([STREAM]) == EXPECTED


def test_every_single_cut_point() -> None:
    for i in range(len(STREAM) + 1):
        assert feed_all([STREAM[:i], STREAM[i:]]) == EXPECTED, i


def test_byte_by_byte() -> None:
    assert feed_all([STREAM[i : i + 1] for i in range(len(STREAM))]) == EXPECTED


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
@settings(max_examples=400, deadline=None)
def test_any_set_of_cuts(cuts: list[int]) -> None:
    points = [0, *sorted(cuts), len(STREAM)]
    chunks = [STREAM[a:b] for a, b in pairwise(points)]
    assert feed_all(chunks) == EXPECTED


@given(
    st.lists(
        st.binary(min_size=0, max_size=20).filter(lambda b: b"\n" not in b and b"\r" not in b),
        min_size=1,
        max_size=8,
    ),
    st.sampled_from([b"\n", b"\r\n", b"\r"]),
    st.data(),
)
@settings(max_examples=300, deadline=None)
def test_generated_streams_with_any_line_ending(
    payloads: list[bytes], eol: bytes, data: st.DataObject
) -> None:
    stream = b"".join(b"data: " + p + eol + eol for p in payloads)
    cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=10))
    points = [0, *sorted(cuts), len(stream)]
    chunks = [stream[a:b] for a, b in pairwise(points)]
    assert feed_all(chunks) == payloads


def test_incomplete_event_at_end_is_not_dispatched() -> None:
    assert feed_all([b"data: a\n\ndata: b\n"]) == [b"a"]
