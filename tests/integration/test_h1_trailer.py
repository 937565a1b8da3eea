"""A chunked trailer that never ends is bounded by the header limit on the h1 reader.

The probe (issue #20): a server answers with a chunked stream, its last
(empty) chunk ``0\\r\\n``, then trailer bytes without end. The header bound
ran only before the head was in, so the h1 reader fed them all to httptools,
which held them as one growing header value: 2 GB at 16 streams until the
idle timeout. A raw asyncio server on 127.0.0.1 plays it here (one endless
trailer line, or endless trailer lines), bounded at ``SERVE_BYTES`` and then
a close. The request through ``Requester`` is a ``headers_too_large`` row soon,
and the server wrote far less than its bound (before: ``disconnected`` once the
server gave up, its 64 MiB read). Endless trailer *lines* were already held by
the count of header bytes that each parsed line adds (they now say "trailer");
one line that never ends was not. After ``[DONE]`` (the caller
let go, the connection drains) the answer stays good and the connection goes
at the bound, not after 2 s of drain. A small trailer is still fine.
"""

from __future__ import annotations

import asyncio
import time

import pytest
import uvloop

from loadgen.client import ADAPTERS, Requester, RequestTimeouts
from loadgen.client.h1 import H1Transport
from loadgen.records import ERROR_KINDS, Record
from loadgen.workload.plan import RequestSpec

SERVE_BYTES = 64 * 1024 * 1024
STOPPED_EARLY = 16 * 1024 * 1024  # the limit, a read and the loopback's socket buffers
HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
EVENT = b'data: {"choices":[{"text":"a","finish_reason":null}]}\n\n'
DONE = b"data: [DONE]\n\n"


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def _trailer(shape: str) -> tuple[bytes, bytes]:
    """The trailer's first bytes (after ``0\\r\\n``) and what then repeats (b"": nothing)."""
    if shape == "one_endless_line":
        return b"x-trailer: ", b"a" * 65536
    if shape == "endless_lines":
        return b"", b"x-trailer: " + b"a" * 500 + b"\r\n"
    assert shape == "small"
    return b"x-checksum: 1\r\n\r\n", b""


async def _serve_and_send(
    shape: str, done: bool, requests: int = 1
) -> tuple[list[Record], float, list[int]]:
    first, more = _trailer(shape)
    body = _chunk(EVENT * 3 + (DONE if done else b"")) + b"0\r\n" + first
    written: list[int] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sent = 0
        try:
            async with asyncio.timeout(30):
                while True:  # requests on a kept-alive connection, until it goes
                    head = await reader.readuntil(b"\r\n\r\n")
                    length = 0
                    for line in head.split(b"\r\n"):
                        name, _, value = line.partition(b":")
                        if name.strip().lower() == b"content-length":
                            length = int(value)
                    await reader.readexactly(length)
                    writer.write(HEAD + body)
                    sent = len(HEAD + body)
                    while more and sent < SERVE_BYTES:
                        writer.write(more * 16)
                        sent += len(more) * 16
                        await writer.drain()
                    await writer.drain()
                    if more:
                        break
        except (TimeoutError, ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            written.append(sent)
            writer.transport.abort()

    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    transport = H1Transport(limit=4, connect_timeout_s=5)
    requester = Requester(
        transport,
        ADAPTERS["openai-completions"],
        base_url=f"http://127.0.0.1:{port}",
        model="m",
        extra_body={},
        headers={},
        timeouts=RequestTimeouts.from_seconds(20, 10, 30),
        run_id="t",
    )
    records = []
    start = time.perf_counter()
    for i in range(requests):
        spec = RequestSpec(index=i, prompt="hi", prompt_tokens=1, max_tokens=4)
        records.append(await requester.send(spec, 0))
    await asyncio.sleep(0.5)  # a drain in progress finishes (or is cut) meanwhile
    elapsed = time.perf_counter() - start
    await transport.aclose()
    server.close()
    await server.wait_closed()
    return records, elapsed, written


@pytest.mark.parametrize("shape", ["one_endless_line", "endless_lines"])
def test_a_trailer_that_does_not_end_is_headers_too_large(shape: str) -> None:
    assert "headers_too_large" in ERROR_KINDS
    records, elapsed, written = uvloop.run(asyncio.wait_for(_serve_and_send(shape, False), 60))
    (rec,) = records
    assert (rec.ok, rec.error_kind) == (False, "headers_too_large"), rec.error_detail
    assert "trailer" in (rec.error_detail or "")
    assert elapsed < 5  # not the idle timeout (10 s)
    assert written and max(written) < STOPPED_EARLY  # before: all of SERVE_BYTES


@pytest.mark.parametrize("shape", ["one_endless_line", "endless_lines"])
def test_after_done_the_answer_is_kept_and_the_endless_trailer_cut(shape: str) -> None:
    """The caller stops at [DONE]; the drain meets the trailer and closes at the bound."""
    records, _, written = uvloop.run(asyncio.wait_for(_serve_and_send(shape, True), 60))
    (rec,) = records
    assert rec.ok, (rec.error_kind, rec.error_detail)
    assert rec.output_events == 3
    assert written and max(written) < STOPPED_EARLY  # before: the drain read 2 s of it


def test_a_small_trailer_is_fine_and_the_connection_is_reused() -> None:
    records, _, written = uvloop.run(asyncio.wait_for(_serve_and_send("small", True, 3), 60))
    assert all(r.ok for r in records), [(r.error_kind, r.error_detail) for r in records]
    assert [r.output_events for r in records] == [3, 3, 3]
    assert len(written) == 1  # one connection carried all three
