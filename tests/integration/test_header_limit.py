"""A response header block that never ends is a ``headers_too_large`` row, soon.

A raw asyncio server on 127.0.0.1 answers with a status line and then header
bytes without end (one line that never ends, or header lines without the blank
line), up to 8 MiB and then a close; or with a whole header block over the
limit followed by a body. The request through ``Requester`` is a
``headers_too_large`` row long before the 8 MiB, with both transports. A block
just under 64 KiB is still a good answer.
"""

from __future__ import annotations

import asyncio
import time

import pytest
import uvloop

from loadgen.client import ADAPTERS, Requester, RequestTimeouts
from loadgen.client.aiohttp_transport import AiohttpTransport
from loadgen.client.h1 import H1Transport
from loadgen.records import ERROR_KINDS, Record
from loadgen.workload.plan import RequestSpec

ENDLESS_BYTES = 8 * 1024 * 1024
LINE = b"x-filler: " + b"a" * 500 + b"\r\n"
SSE = b"data: " + b'{"choices":[{"text":"a","finish_reason":null}]}' + b"\n\ndata: [DONE]\n\n"


def _answer_head(shape: str) -> tuple[bytes, bytes]:
    """What the server sends first, and what it then repeats (b"" when nothing)."""
    status = b"HTTP/1.1 200 OK\r\n"
    if shape == "one_endless_line":
        return status + b"x-big: ", b"a" * 65536
    if shape == "endless_lines":
        return status, LINE * 128
    close = b"content-type: text/event-stream\r\nconnection: close\r\n"
    if shape == "whole_block_too_large":  # all of it at once, then a body
        return status + close + LINE * 400 + b"\r\n" + SSE, b""
    assert shape == "just_under"
    return status + close + LINE * 100 + b"\r\n" + SSE, b""


async def _serve_and_send(kind: str, shape: str) -> tuple[Record, float, int]:
    first, more = _answer_head(shape)
    written = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal written
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            await reader.readexactly(length)
            writer.write(first)
            written = len(first)
            while more and written < ENDLESS_BYTES:
                writer.write(more)
                written += len(more)
                await writer.drain()
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.transport.abort()

    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    transport = (
        H1Transport(limit=4, connect_timeout_s=5)
        if kind == "h1"
        else AiohttpTransport(limit=4, connect_timeout_s=5)
    )
    requester = Requester(
        transport,
        ADAPTERS["openai-completions"],
        base_url=f"http://127.0.0.1:{port}",
        model="m",
        extra_body={},
        headers={},
        timeouts=RequestTimeouts.from_seconds(20, 20, 30),
        run_id="t",
    )
    spec = RequestSpec(index=0, prompt="hi", prompt_tokens=1, max_tokens=4)
    start = time.perf_counter()
    rec = await requester.send(spec, 0)
    elapsed = time.perf_counter() - start
    await transport.aclose()
    server.close()
    await server.wait_closed()
    return rec, elapsed, written


@pytest.mark.parametrize("kind", ["h1", "aiohttp"])
@pytest.mark.parametrize("shape", ["one_endless_line", "endless_lines", "whole_block_too_large"])
def test_a_header_block_that_does_not_end_is_headers_too_large(kind: str, shape: str) -> None:
    assert "headers_too_large" in ERROR_KINDS
    rec, elapsed, _ = uvloop.run(asyncio.wait_for(_serve_and_send(kind, shape), 60))
    assert (rec.ok, rec.error_kind) == (False, "headers_too_large"), rec.error_detail
    assert elapsed < 5  # not after the 8 MiB: before the limit it was a late `disconnected`


@pytest.mark.parametrize("kind", ["h1", "aiohttp"])
def test_a_header_block_just_under_the_limit_is_fine(kind: str) -> None:
    rec, _, _ = uvloop.run(asyncio.wait_for(_serve_and_send(kind, "just_under"), 60))
    assert rec.ok, (rec.error_kind, rec.error_detail)
    assert rec.output_events == 1
