"""The default transport: aiohttp, one ``ClientSession`` per run.

Chosen for the hot path because it was the fastest streaming client measured
(docs/performance.md). The connector's limit is the run's largest
concurrency (aiohttp's default of 100 would queue a 256-stream step), the
read buffer is 4 MiB (default 64 KiB), header size limits are raised, and
aiohttp's own read timeouts are off: loadgen enforces first-token, idle and
total deadlines itself.

Imports: aiohttp, loadgen.clock, loadgen.client.transport.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aiohttp
from aiohttp.abc import AbstractStreamWriter
from aiohttp.payload import BytesPayload

from loadgen.client.transport import HttpRequest, TransportError
from loadgen.clock import now_ns

__all__ = ["AiohttpTransport"]

READ_BUFSIZE = 4 * 1024 * 1024


class _StampedBody(BytesPayload):
    """The request body; notes when it is handed to the socket.

    aiohttp (on Python < 3.12) writes the body from a task of its own, a loop
    iteration after ``post()`` is called; under load that can be a millisecond
    later. Stamping here makes ``sent_ns`` the moment the request left.
    """

    written_ns = 0

    async def write(self, writer: AbstractStreamWriter) -> None:
        self.written_ns = now_ns()  # the write below reaches the socket before it awaits
        await super().write(writer)

    async def write_with_length(
        self, writer: AbstractStreamWriter, content_length: int | None
    ) -> None:
        self.written_ns = now_ns()
        await super().write_with_length(writer, content_length)


class _AiohttpResponse:
    __slots__ = ("_body", "_resp", "status")

    def __init__(self, resp: aiohttp.ClientResponse, body: _StampedBody) -> None:
        self._resp = resp
        self._body = body
        self.status = resp.status

    @property
    def sent_ns(self) -> int | None:
        return self._body.written_ns or None

    async def chunks(self) -> AsyncIterator[tuple[int, bytes]]:
        readany = self._resp.content.readany
        try:
            while True:
                data = await readany()
                if not data:
                    return
                yield now_ns(), data
        except (aiohttp.ClientPayloadError, aiohttp.ServerDisconnectedError) as exc:
            raise TransportError("disconnected", _detail(exc)) from None
        except (ConnectionError, aiohttp.ClientOSError) as exc:
            raise TransportError("disconnected", _detail(exc)) from None
        except aiohttp.ClientError as exc:
            raise TransportError("protocol_error", _detail(exc)) from None

    async def read_prefix(self, limit: int) -> bytes:
        try:
            return (await self._resp.content.read(limit)) or b""
        except (aiohttp.ClientError, ConnectionError):
            return b""


class AiohttpTransport:
    def __init__(self, *, limit: int, connect_timeout_s: float) -> None:
        self._connector = aiohttp.TCPConnector(
            limit=limit, limit_per_host=0, ttl_dns_cache=None, enable_cleanup_closed=False
        )
        self._session = aiohttp.ClientSession(
            connector=self._connector,
            timeout=aiohttp.ClientTimeout(
                total=None, connect=None, sock_connect=connect_timeout_s, sock_read=None
            ),
            read_bufsize=READ_BUFSIZE,
            max_line_size=1 << 20,
            max_field_size=1 << 20,
            auto_decompress=False,
            skip_auto_headers=("User-Agent",),
            headers={"User-Agent": "loadgen"},
        )

    @asynccontextmanager
    async def open(self, request: HttpRequest) -> AsyncIterator[_AiohttpResponse]:
        body = _StampedBody(request.body, content_type="application/json")
        try:
            resp = await self._session.post(request.url, data=body, headers=request.headers)
        except aiohttp.ConnectionTimeoutError as exc:
            raise TransportError("connect_timeout", _detail(exc)) from None
        except aiohttp.ClientConnectorError as exc:
            raise TransportError("connect_error", _detail(exc)) from None
        except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError, ConnectionError) as exc:
            raise TransportError("disconnected", _detail(exc)) from None
        except aiohttp.ClientResponseError as exc:
            raise TransportError("protocol_error", _detail(exc)) from None
        except aiohttp.ClientError as exc:
            raise TransportError("connect_error", _detail(exc)) from None
        try:
            yield _AiohttpResponse(resp, body)
        finally:
            resp.release() if resp.content.at_eof() else resp.close()

    async def aclose(self) -> None:
        await self._session.close()
        await asyncio.sleep(0)


def _detail(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text.replace("\n", " ")[:200]
