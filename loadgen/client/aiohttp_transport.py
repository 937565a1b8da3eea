"""The aiohttp transport (``target.transport: aiohttp``), one ``ClientSession`` per run.

The fastest library client measured, and the default before loadgen's own
``h1`` took its place: aiohttp cannot see the kernel's receive stamps, so its
stamps are taken when the event loop reads (docs/performance.md). It remains
for ``target.transport: aiohttp`` and where sockets have no ``recvmsg``. The
connector's limit is the run's largest concurrency (aiohttp's default of 100
would queue a 256-stream step), the read buffer is 4 MiB (default 64 KiB),
header lines are capped at ``MAX_HEADER_LINE`` (a longer status or header
line, or more than aiohttp's 128 headers, is ``headers_too_large``: at most
about 8 MiB of headers; aiohttp has no limit on the whole block), and
aiohttp's own read timeouts are off: loadgen enforces first-token, idle and
total deadlines itself.

Kept-alive connections: aiohttp reuses a pooled connection until it sees the
close, honours ``Connection: close``, ignores ``Keep-Alive: timeout=…, max=…``
(its own idle limit is 15 s) and retries only idempotent methods, never a
POST. So loadgen retries here: a request that fails as ``disconnected`` on a
connection that had carried a request before, with no byte arriving after
the request went out, is sent once more through a second session whose
connections are never reused (a fresh connection, as the h1 transport does);
the answer says so (``reconnects``, ``retry_start_ns``) and its ``sent_ns`` is
the retry's; so is a ``408`` answer on a reused connection (the h1
transports' ``STALE_STATUS``). A failure before aiohttp wrote the body (while
writing the headers) is not retried: it cannot be told to be on a reused
connection.

Redirects are not followed (``allow_redirects=False``): aiohttp would follow
a 307 to another origin with the request's headers, an ``X-Api-Key`` among
them (it strips only ``Authorization``). A 3xx is the request's answer, as
with the h1 and httpx transports.
"""

from __future__ import annotations

import asyncio
import functools
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aiohttp
from aiohttp.abc import AbstractStreamWriter
from aiohttp.client_proto import ResponseHandler
from aiohttp.http_exceptions import BadHttpMessage, LineTooLong
from aiohttp.payload import BytesPayload
from aiohttp.streams import StreamReader
from yarl import URL

from loadgen.client.transport import (
    STALE_STATUS,
    HttpRequest,
    Phases,
    ReadLag,
    TlsOptions,
    TransportError,
    describe,
)
from loadgen.clock import LATELY, now_ns

__all__ = ["AiohttpTransport"]

READ_BUFSIZE = 4 * 1024 * 1024
#: The longest status line or header line (aiohttp's ``max_line_size`` and
#: ``max_field_size``); the same 64 KiB as the h1 transport's whole header block.
MAX_HEADER_LINE = 64 * 1024


def _headers_too_large(exc: BaseException) -> bool:
    """aiohttp refused the answer's headers for their size (a line or their number)."""
    seen: BaseException | None = exc
    for _ in range(8):  # ClientResponseError <- HttpProcessingError <- the parser's error
        if seen is None:
            return False
        if isinstance(seen, LineTooLong):
            return True
        if isinstance(seen, BadHttpMessage) and "Too many headers" in seen.message:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


class _StampedBody(BytesPayload):
    """The request body; notes when it is handed to the socket.

    aiohttp (on Python < 3.12) writes the body from a task of its own, a loop
    iteration after ``post()`` is called; under load that can be a millisecond
    later. Stamping here makes ``sent_ns`` the moment the request left.
    """

    written_ns = 0
    #: the connection it went out on, whether that had carried a request before, and
    #: how many bytes that connection had received when it went
    conn: _StampingProtocol | None = None
    reused = False
    rx_at_send = 0

    def _note(self, writer: AbstractStreamWriter) -> None:
        self.written_ns = now_ns()  # the write below reaches the socket before it awaits
        proto = getattr(writer, "protocol", None)
        if isinstance(proto, _StampingProtocol):
            self.conn = proto
            self.reused = proto.requests > 0
            self.rx_at_send = proto.rx_bytes
            proto.requests += 1

    def unanswered_on_reused(self) -> bool:
        """It went out on a reused connection and no byte came back after it."""
        conn = self.conn
        return self.reused and conn is not None and conn.rx_bytes == self.rx_at_send

    async def write(self, writer: AbstractStreamWriter) -> None:
        self._note(writer)
        await super().write(writer)

    async def write_with_length(
        self, writer: AbstractStreamWriter, content_length: int | None
    ) -> None:
        self._note(writer)
        await super().write_with_length(writer, content_length)


#: id(reader) -> (arrival ns, bytes) of each piece fed to it, for the readers we watch
_ARRIVALS: dict[int, deque[tuple[int, int]]] = {}


class _StampingReader(StreamReader):
    """aiohttp's body reader, stamping each piece of data as the parser feeds it.

    Fed from the protocol's ``data_received``, so the stamp is taken when the
    event loop hands over the socket's bytes, not when the reading coroutine
    gets its turn, which under many streams can be milliseconds later. No new
    slots: an existing reader's class is swapped to this one.
    """

    __slots__ = ()

    def feed_data(self, data: bytes, size: int = 0) -> bool:
        arrivals = _ARRIVALS.get(id(self))
        if arrivals is not None and data:
            arrivals.append((now_ns(), len(data)))
        return super().feed_data(data, size)


class _StampingProtocol(ResponseHandler):
    """aiohttp's connection protocol, noting when each batch of bytes arrived.

    The bytes that come with the response headers are parsed before loadgen
    sees the response; these stamps give them their true arrival time.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(loop)
        self.rx_ns: deque[int] = deque(maxlen=8)
        self.rx_bytes = 0
        self.requests = 0  # request bodies written on this connection

    def data_received(self, data: bytes) -> None:
        if data:  # aiohttp also calls this with b"" to resume its parser: not an arrival
            self.rx_ns.append(now_ns())
            self.rx_bytes += len(data)
        super().data_received(data)


def _first_arrival_after(resp: aiohttp.ClientResponse, sent_ns: int) -> int:
    """When the response's first bytes arrived: the first read after the request left."""
    conn = resp.connection
    proto = conn.protocol if conn is not None else None
    if isinstance(proto, _StampingProtocol):
        for t in proto.rx_ns:
            if t >= sent_ns:
                return t
    return now_ns()


class _AiohttpResponse:
    __slots__ = (
        "_arrivals",
        "_body",
        "_early",
        "_early_ns",
        "_resp",
        "reconnects",
        "retry_start_ns",
        "status",
        "stray",
    )

    def __init__(
        self, resp: aiohttp.ClientResponse, body: _StampedBody, retry_start_ns: int | None = None
    ) -> None:
        self._resp = resp
        self._body = body
        self.status = resp.status
        self.reconnects = 0 if retry_start_ns is None else 1
        self.retry_start_ns = retry_start_ns
        self.stray = False  # bytes came past the answer's last event: never reused
        self._arrivals: deque[tuple[int, int]] | None = None
        content = resp.content
        self._early = content.total_bytes  # fed before we could watch: came with the headers
        self._early_ns = _first_arrival_after(resp, body.written_ns)
        if type(content) is StreamReader:
            self._arrivals = deque()
            _ARRIVALS[id(content)] = self._arrivals
            content.__class__ = _StampingReader

    def release(self) -> None:
        _ARRIVALS.pop(id(self._resp.content), None)

    def end_of_answer(self, trailing: bool) -> None:
        """Bytes after the last event: the connection is closed, not pooled (bytes still
        unread at the end close it too: aiohttp pools only a body read to its end)."""
        if trailing:
            self.stray = True

    def abort(self) -> None:
        """Closed as the caller leaves (stray: never released to the pool)."""
        self.stray = True

    @property
    def sent_ns(self) -> int | None:
        return self._body.written_ns or None

    @property
    def phases(self) -> Phases:
        """Only whether its connection was new: aiohttp's connector stamps no set-up."""
        body = self._body
        return Phases(new_connection=None if body.conn is None else not body.reused)

    async def chunks(self) -> AsyncIterator[tuple[int, bytes, int]]:
        readany = self._resp.content.readany
        arrivals = self._arrivals
        try:
            while True:
                data = await readany()
                if not data:
                    return
                if not arrivals and not self._early:
                    yield now_ns(), data, LATELY.ns
                    continue
                for piece in self._split(data):
                    yield piece
        except (aiohttp.ClientPayloadError, aiohttp.ServerDisconnectedError) as exc:
            raise TransportError("disconnected", describe(exc)) from None
        except (ConnectionError, aiohttp.ClientOSError) as exc:
            raise TransportError("disconnected", describe(exc)) from None
        except aiohttp.ClientError as exc:
            raise TransportError("protocol_error", describe(exc)) from None

    def _split(self, data: bytes) -> list[tuple[int, bytes, int]]:
        """Cut what one read returned back into the pieces that arrived, each with its stamp
        (the loop's, so each may be as late as the loop lately ran: its slack)."""
        slack = LATELY.ns
        out: list[tuple[int, bytes, int]] = []
        off = 0
        if self._early:
            n = min(self._early, len(data))
            out.append((self._early_ns, data[:n], slack))
            self._early -= n
            off = n
        arrivals = self._arrivals
        while off < len(data) and arrivals:
            ns, n = arrivals.popleft()
            out.append((ns, data[off : off + n], slack))
            off += n
        if off < len(data):
            out.append((now_ns(), data[off:], slack))
        return out

    async def read_prefix(self, limit: int) -> bytes:
        try:
            return (await self._resp.content.read(limit)) or b""
        except (aiohttp.ClientError, ConnectionError):
            return b""


class AiohttpTransport:
    exact_stamps = False  # stamped as the loop reads
    read_lag: ReadLag | None = None  # stamps taken as the loop reads: no lag to see

    def __init__(
        self, *, limit: int, connect_timeout_s: float, tls: TlsOptions | None = None
    ) -> None:
        self._urls: dict[str, URL] = {}
        self._limit = limit
        self._connect_timeout_s = connect_timeout_s
        self._ssl = (tls or TlsOptions()).context()
        self._session = self._new_session(force_close=False)
        self._retry_session: aiohttp.ClientSession | None = None  # fresh connections only
        #: requests sent again on a fresh connection after a kept-alive one failed
        self.reconnects = 0

    def _new_session(self, *, force_close: bool) -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(
            limit=self._limit,
            limit_per_host=0,
            ttl_dns_cache=None,
            enable_cleanup_closed=False,
            ssl=self._ssl,
            force_close=force_close,
        )
        if hasattr(connector, "_factory"):  # stamp bytes as they arrive (see above)
            loop = asyncio.get_running_loop()
            connector._factory = functools.partial(_StampingProtocol, loop=loop)  # type: ignore[assignment]
        return aiohttp.ClientSession(
            connector=connector,
            timeout=aiohttp.ClientTimeout(
                total=None, connect=None, sock_connect=self._connect_timeout_s, sock_read=None
            ),
            read_bufsize=READ_BUFSIZE,
            max_line_size=MAX_HEADER_LINE,
            max_field_size=MAX_HEADER_LINE,
            auto_decompress=False,
            cookie_jar=aiohttp.DummyCookieJar(),
            skip_auto_headers=("User-Agent",),
            headers={"User-Agent": "loadgen"},
        )

    @asynccontextmanager
    async def open(self, request: HttpRequest) -> AsyncIterator[_AiohttpResponse]:
        body = _StampedBody(request.body, content_type="application/json")
        retry_ns: int | None = None
        resp: aiohttp.ClientResponse | None
        try:
            resp = await self._post(self._session, request, body)
        except TransportError as exc:
            if exc.kind != "disconnected" or not body.unanswered_on_reused():
                raise
            resp = None  # the server dropped a kept-alive connection as the request went out
        if resp is not None and resp.status == STALE_STATUS and body.reused:
            resp.close()  # its idle timer fired as the request came: the same stale case
            resp = None
        if resp is None:  # once more, on a fresh connection
            retry_ns = now_ns()
            self.reconnects += 1
            if self._retry_session is None:
                self._retry_session = self._new_session(force_close=True)
            body = _StampedBody(request.body, content_type="application/json")
            resp = await self._post(self._retry_session, request, body)
        response = _AiohttpResponse(resp, body, retry_ns)
        try:
            yield response
        finally:
            response.release()
            resp.release() if resp.content.at_eof() and not response.stray else resp.close()

    async def _post(
        self, session: aiohttp.ClientSession, request: HttpRequest, body: _StampedBody
    ) -> aiohttp.ClientResponse:
        try:
            return await session.post(
                self._url(request.url), data=body, headers=request.headers, allow_redirects=False
            )
        except aiohttp.ConnectionTimeoutError as exc:
            raise TransportError("connect_timeout", describe(exc)) from None
        except aiohttp.ClientConnectorError as exc:
            raise TransportError("connect_error", describe(exc)) from None
        except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError, ConnectionError) as exc:
            raise TransportError("disconnected", describe(exc)) from None
        except aiohttp.ClientResponseError as exc:
            kind = "headers_too_large" if _headers_too_large(exc) else "protocol_error"
            raise TransportError(kind, describe(exc)) from None
        except aiohttp.ClientError as exc:
            raise TransportError("connect_error", describe(exc)) from None

    def _url(self, url: str) -> URL:
        """Parsed once per distinct URL (a run has one or two), not once per request."""
        parsed = self._urls.get(url)
        if parsed is None:
            parsed = self._urls[url] = URL(url)
        return parsed

    async def aclose(self) -> None:
        await self._session.close()
        if self._retry_session is not None:
            await self._retry_session.close()
        await asyncio.sleep(0)
