"""The HTTP/2 transport (``target.http2: true``): httpx with h2.

Slower than h1 and aiohttp for many HTTP/1.1 streams (docs/performance.md),
so it is used only where HTTP/2 is wanted. Pool limits are the run's largest
concurrency and every httpx timeout but connect is off (httpx's defaults, 100
connections and 5 s, would cap or kill a long sweep). The HTTP versions the
server actually answered in (``HTTP/2``, or ``HTTP/1.1`` when it did not
negotiate h2) are kept in :attr:`HttpxTransport.http_versions`.

Kept-alive connections: httpcore drops a pooled HTTP/1.1 connection it sees
readable (closed) before reuse and honours ``Connection: close``, but ignores
``Keep-Alive: timeout=…, max=…`` (its own idle limit is ``keepalive_expiry``,
60 s) and does not retry a request whose connection the server closed as it
went out. So loadgen does, as the h1 transport does: each request carries an
httpcore trace (``extensions={"trace": ...}``) that says whether it opened a
connection; one that did not (a reused connection) and failed before the
answer's head (``disconnected``), or was answered ``408`` (``STALE_STATUS``),
is sent once more through a second client whose connections are never kept
(a fresh connection); the answer says so (``reconnects``, ``retry_start_ns``).
A request httpcore itself sent twice (a pooled connection that went away as
it was assigned) counts as a reconnect too. Redirects are not followed
(httpx's default): a 3xx is the request's answer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

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

__all__ = ["HttpxTransport"]


class _Trace:
    """httpcore's trace of one request: connections it opened, times it sent the head,
    and when its (last) connection's set-up began and ended, stamped as httpcore tells."""

    __slots__ = ("connect_ns", "connect_start_ns", "connects", "sends", "tls_ns")

    def __init__(self) -> None:
        self.connects = 0
        self.sends = 0
        self.connect_start_ns: int | None = None
        self.connect_ns: int | None = None
        self.tls_ns: int | None = None

    async def __call__(self, name: str, info: object) -> None:
        if name == "connection.connect_tcp.started":
            self.connects += 1
            self.connect_start_ns, self.connect_ns, self.tls_ns = now_ns(), None, None
        elif name == "connection.connect_tcp.complete":
            self.connect_ns = now_ns()
        elif name == "connection.start_tls.complete":
            self.tls_ns = now_ns()
        elif name.endswith(".send_request_headers.started"):
            self.sends += 1

    def phases(self) -> Phases:
        """A request that opened no connection went out on a reused one."""
        if not self.connects:
            return Phases(new_connection=False if self.sends else None)
        return Phases(True, self.connect_start_ns, self.connect_ns, self.tls_ns)

    @property
    def reused(self) -> bool:
        """The request went out on a connection that was open before it."""
        return self.connects == 0 and self.sends > 0


class _HttpxResponse:
    __slots__ = ("_resp", "phases", "reconnects", "retry_start_ns", "status")

    def __init__(
        self,
        resp: httpx.Response,
        reconnects: int = 0,
        retry_start_ns: int | None = None,
        phases: Phases | None = None,
    ) -> None:
        self._resp = resp
        self.status = resp.status_code
        self.reconnects = reconnects
        self.retry_start_ns = retry_start_ns
        self.phases = phases or Phases()

    def end_of_answer(self, trailing: bool) -> None:
        """Nothing to do: a stream left before its end closes its connection (httpcore)."""

    def abort(self) -> None:
        """Nothing to do: ``aclose`` of a stream not read to its end closes the connection
        (HTTP/1.1) or resets the stream (HTTP/2), and the server sees the client go."""

    @property
    def sent_ns(self) -> None:
        return None  # httpx has no hook at the socket write: loadgen's start stamp stands

    async def chunks(self) -> AsyncIterator[tuple[int, bytes, int]]:
        try:
            async for data in self._resp.aiter_raw():
                if data:
                    yield now_ns(), data, LATELY.ns  # the loop's stamp: as late as it runs
        except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
            raise TransportError("disconnected", describe(exc)) from None
        except httpx.HTTPError as exc:
            raise TransportError("protocol_error", describe(exc)) from None

    async def read_prefix(self, limit: int) -> bytes:
        out = b""
        try:
            async for data in self._resp.aiter_raw():
                out += data
                if len(out) >= limit:
                    break
        except httpx.HTTPError:
            pass
        return out[:limit]


class HttpxTransport:
    exact_stamps = False  # stamped as the loop reads
    read_lag: ReadLag | None = None  # stamps taken as the loop reads: no lag to see
    #: the protocols responses came in, as httpx names them (``HTTP/2``, ``HTTP/1.1``)
    http_versions: set[str]

    def __init__(
        self,
        *,
        limit: int,
        connect_timeout_s: float,
        http2: bool = True,
        tls: TlsOptions | None = None,
    ) -> None:
        self.http_versions = set()
        alpn = ["h2", "http/1.1"] if http2 else ["http/1.1"]
        self._options = {
            "verify": (tls or TlsOptions()).context(alpn=alpn),
            "http2": http2,
            "http1": True,
            "timeout": httpx.Timeout(None, connect=connect_timeout_s, pool=None),
        }
        self._limit = limit or None  # 0: no limit (httpx reads 0 as none at all)
        self._client = self._new_client(keep=True)
        self._retry_client: httpx.AsyncClient | None = None  # fresh connections only
        #: requests sent again on a fresh connection after a kept-alive one failed
        self.reconnects = 0

    def _new_client(self, *, keep: bool) -> httpx.AsyncClient:
        limits = httpx.Limits(
            max_connections=self._limit,
            max_keepalive_connections=self._limit if keep else 0,
            keepalive_expiry=60,
        )
        return httpx.AsyncClient(limits=limits, **self._options)  # type: ignore[arg-type]

    @asynccontextmanager
    async def open(self, request: HttpRequest) -> AsyncIterator[_HttpxResponse]:
        trace = _Trace()
        resp: httpx.Response | None
        try:
            resp = await self._send(self._client, request, trace)
        except TransportError as exc:
            if exc.kind != "disconnected" or not trace.reused:
                raise
            resp = None  # the server dropped a kept-alive connection as the request went out
        if resp is not None and resp.status_code == STALE_STATUS and trace.reused:
            await resp.aclose()  # its idle timer fired as the request came: the same case
            resp = None
        retry_ns: int | None = None
        if resp is None:  # once more, on a fresh connection
            retry_ns = now_ns()
            self.reconnects += 1
            if self._retry_client is None:
                self._retry_client = self._new_client(keep=False)
            trace = _Trace()
            resp = await self._send(self._retry_client, request, trace)
        elif trace.sends > 1:  # httpcore sent it again itself, on another connection
            self.reconnects += 1
        self.http_versions.add(resp.http_version)
        reconnects = 1 if retry_ns is not None or trace.sends > 1 else 0
        try:
            yield _HttpxResponse(resp, reconnects, retry_ns, trace.phases())
        finally:
            await resp.aclose()

    async def _send(
        self, client: httpx.AsyncClient, request: HttpRequest, trace: _Trace
    ) -> httpx.Response:
        req = client.build_request(
            "POST",
            request.url,
            content=request.body,
            headers=request.headers,
            extensions={"trace": trace},
        )
        try:
            return await client.send(req, stream=True)
        except httpx.ConnectTimeout as exc:
            raise TransportError("connect_timeout", describe(exc)) from None
        except httpx.ConnectError as exc:
            raise TransportError("connect_error", describe(exc) or "connect failed") from None
        except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
            raise TransportError("disconnected", describe(exc)) from None
        except httpx.HTTPError as exc:
            raise TransportError("protocol_error", describe(exc)) from None

    async def aclose(self) -> None:
        await self._client.aclose()
        if self._retry_client is not None:
            await self._retry_client.aclose()
