"""Kept-alive connections the server drops: retried once, never a false failure.

Small raw-asyncio servers on 127.0.0.1, in the client's own event loop: one
closes a connection silently when the request after its N-th answer comes,
one closes a connection idle for as long as the client waits between
requests, one resets after the first byte of an answer, and some announce
``Keep-Alive: timeout=…, max=…``. Answers are tiny, so 5,000 requests at 32
streams take a few seconds.
"""

from __future__ import annotations

import asyncio
import socket
import struct
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import pytest
import uvloop

from loadgen.client.aiohttp_transport import AiohttpTransport
from loadgen.client.h1 import H1Transport
from loadgen.client.transport import HttpRequest, TransportError

OK = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def run(coro: Coroutine[Any, Any, Any], limit_s: float = 60) -> Any:
    return uvloop.run(asyncio.wait_for(coro, limit_s))


async def read_request(reader: asyncio.StreamReader, timeout_s: float | None = None) -> bool:
    """One request's head and body; False if the client closed (or ``timeout_s`` passed)."""
    try:
        async with asyncio.timeout(timeout_s):
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            await reader.readexactly(length)
    except (TimeoutError, asyncio.IncompleteReadError, ConnectionError):
        return False
    return True


def reset(writer: asyncio.StreamWriter) -> None:
    """Close with an RST (SO_LINGER 0), as a server that drops a connection hard."""
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


class Server:
    """Counts the connections it accepted and the requests it answered."""

    def __init__(self) -> None:
        self.accepted = 0
        self.answered = 0
        self._server: asyncio.Server | None = None
        self.port = 0

    async def start(self, handler: Handler) -> str:
        async def counted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.accepted += 1
            try:
                await handler(reader, writer)
            finally:
                writer.transport.abort()

        self._server = await asyncio.start_server(counted, "127.0.0.1", 0, backlog=256)
        self.port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{self.port}/v1/completions"

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()


def request(url: str) -> HttpRequest:
    return HttpRequest(url, b'{"prompt": "hi"}', {"Content-Type": "application/json"})


async def load(
    transport: H1Transport | AiohttpTransport, url: str, total: int, streams: int, gap_s: float
) -> tuple[int, list[str], int]:
    """``total`` requests over ``streams`` streams, ``gap_s`` apart on each: (ok, errors,
    requests that said they were retried)."""
    ok, errors, retried = 0, [], 0
    todo = iter(range(total))

    async def stream() -> None:
        nonlocal ok, retried
        for _ in todo:
            try:
                async with transport.open(request(url)) as resp:
                    body = b"".join([data async for _, data, _ in resp.chunks()])
                    retried += resp.reconnects
                    assert resp.sent_ns is not None
                    if resp.reconnects:  # the retry's own send, after the retry began
                        assert resp.retry_start_ns is not None
                        assert resp.retry_start_ns <= resp.sent_ns
                    else:
                        assert resp.retry_start_ns is None
                    assert (resp.status, body) == (200, b"ok")
                    ok += 1
            except TransportError as exc:
                errors.append(str(exc))
            if gap_s:
                await asyncio.sleep(gap_s)

    await asyncio.gather(*(stream() for _ in range(streams)))
    return ok, errors, retried


def new_transport(kind: str) -> H1Transport | AiohttpTransport:
    if kind == "h1":
        return H1Transport(limit=64, connect_timeout_s=5)
    return AiohttpTransport(limit=64, connect_timeout_s=5)


#: requests per test (the acceptance: 5,000 at 32 streams)
TOTAL = {"h1": 5000, "aiohttp": 5000}


@pytest.mark.parametrize("kind", ["h1", "aiohttp"])
def test_a_server_closing_silently_after_n_answers_costs_no_request(kind: str) -> None:
    n = 5
    total = TOTAL[kind]

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for _ in range(n):
            if not await read_request(reader):
                return
            writer.write(OK)
            server.answered += 1
        await read_request(reader)  # the next request reaches it and is dropped, unanswered

    server = Server()

    async def main() -> tuple[int, list[str], int, int]:
        url = await server.start(handler)
        transport = new_transport(kind)
        ok, errors, retried = await load(transport, url, total, 32, 0)
        await transport.aclose()
        await server.stop()
        return ok, errors, retried, transport.reconnects

    ok, errors, retried, reconnects = run(main())
    assert errors == []
    assert ok == server.answered == total
    assert retried == reconnects > 0  # every request that met a dropped connection said so
    assert server.accepted >= total // n


@pytest.mark.parametrize("kind", ["h1", "aiohttp"])
def test_a_server_with_an_idle_timeout_equal_to_the_gap_costs_no_request(kind: str) -> None:
    gap_s = 0.02
    total = TOTAL[kind]

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not await read_request(reader):
            return
        while True:
            writer.write(OK)
            server.answered += 1
            if not await read_request(reader, timeout_s=gap_s):
                reset(writer)  # a request that came just too late is reset, unread
                return

    server = Server()

    async def main() -> tuple[int, list[str], int, int]:
        url = await server.start(handler)
        transport = new_transport(kind)
        ok, errors, retried = await load(transport, url, total, 32, gap_s)
        await transport.aclose()
        await server.stop()
        return ok, errors, retried, transport.reconnects

    ok, errors, retried, reconnects = run(main())
    assert errors == []
    assert ok == server.answered == total
    assert retried == reconnects


@pytest.mark.parametrize("kind", ["h1", "aiohttp"])
def test_a_reset_after_the_first_byte_of_the_answer_is_a_failure(kind: str) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(OK)
        server.answered += 1
        await read_request(reader)
        writer.write(b"HTTP/1.1 2")
        await writer.drain()
        await asyncio.sleep(0.01)
        reset(writer)

    server = Server()

    async def main() -> tuple[int, list[str], int, int]:
        url = await server.start(handler)
        transport = new_transport(kind)
        out = await load(transport, url, 2, 1, 0)
        await transport.aclose()
        await server.stop()
        return (*out, transport.reconnects)

    ok, errors, retried, reconnects = run(main())
    assert ok == 1
    assert len(errors) == 1 and errors[0].startswith("disconnected")
    assert retried == reconnects == 0
    assert server.accepted == 1


@pytest.mark.parametrize("kind", ["h1", "aiohttp"])
def test_a_fresh_connection_that_fails_is_not_retried(kind: str) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)  # dropped, unanswered

    server = Server()

    async def main() -> tuple[int, list[str], int, int]:
        url = await server.start(handler)
        transport = new_transport(kind)
        out = await load(transport, url, 1, 1, 0)
        await transport.aclose()
        await server.stop()
        return (*out, transport.reconnects)

    ok, errors, retried, reconnects = run(main())
    assert (ok, retried, reconnects) == (0, 0, 0)
    assert len(errors) == 1 and errors[0].startswith("disconnected")
    assert server.accepted == 1


@pytest.mark.parametrize("style", ["counted down", "said once"])
def test_keep_alive_max_is_never_exceeded(style: str) -> None:
    """``max`` is the requests the server still takes: Apache counts it down each
    answer; a server may also say it once. Either way no request meets a close."""
    n = 4  # answers per connection: max=3 on the first

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for i in range(n):
            if not await read_request(reader):
                return
            left = n - 1 - i
            if style == "said once" and i:
                writer.write(OK)
            else:
                head = b"HTTP/1.1 200 OK\r\nKeep-Alive: timeout=60, max=%d\r\n" % left
                writer.write(head + b"content-length: 2\r\n\r\nok")
            server.answered += 1
        await read_request(reader)  # one more would be dropped

    server = Server()

    async def main() -> tuple[int, list[str], int, int]:
        url = await server.start(handler)
        transport = H1Transport(limit=4, connect_timeout_s=5)
        out = await load(transport, url, 4 * n, 1, 0)
        await transport.aclose()
        await server.stop()
        return (*out, transport.reconnects)

    ok, errors, retried, reconnects = run(main())
    assert (ok, errors, retried, reconnects) == (4 * n, [], 0, 0)
    assert server.accepted == 4


def test_a_connection_idle_near_the_announced_timeout_is_not_reused() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await read_request(reader):
            writer.write(b"HTTP/1.1 200 OK\r\nKeep-Alive: timeout=1\r\ncontent-length: 2\r\n\r\nok")
            server.answered += 1

    server = Server()

    async def main() -> tuple[int, int]:
        url = await server.start(handler)
        transport = H1Transport(limit=4, connect_timeout_s=5)
        ok, errors, _ = await load(transport, url, 2, 1, 0.1)  # 0.1 s idle: reused
        assert (ok, errors) == (2, [])
        accepted_after_two = server.accepted
        await asyncio.sleep(0.8)  # past 3/4 of the announced second: not reused
        ok, errors, _ = await load(transport, url, 1, 1, 0)
        assert (ok, errors) == (1, [])
        await transport.aclose()
        await server.stop()
        return accepted_after_two, transport.reconnects

    accepted_after_two, reconnects = run(main())
    assert accepted_after_two == 1
    assert server.accepted == 2
    assert reconnects == 0
