"""The HTTP/2 transport (``target.http2: true``): httpx with h2.

Slower than h1 and aiohttp for many HTTP/1.1 streams (docs/performance.md),
so it is used only where HTTP/2 is wanted. Pool limits are the run's largest
concurrency and every httpx timeout but connect is off (httpx's defaults, 100
connections and 5 s, would cap or kill a long sweep). The HTTP versions the
server actually answered in (``HTTP/2``, or ``HTTP/1.1`` when it did not
negotiate h2) are kept in :attr:`HttpxTransport.http_versions`.

Kept-alive connections: nothing is retried here. httpcore drops a pooled
HTTP/1.1 connection it sees readable (closed) before reuse and honours
``Connection: close``, but ignores ``Keep-Alive: timeout=…, max=…`` (its own
idle limit is ``keepalive_expiry``, 60 s) and does not retry a request whose
connection the server closed as it went out; httpx's errors do not say
whether the connection was reused or whether a byte of the answer had come,
so such a request stays a ``disconnected`` row (``reconnects`` is always 0).

Imports: httpx, loadgen.clock, loadgen.client.transport.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

from loadgen.client.transport import (
    HttpRequest,
    ReadLag,
    TlsOptions,
    TransportError,
    describe,
)
from loadgen.clock import now_ns

__all__ = ["HttpxTransport"]


class _HttpxResponse:
    __slots__ = ("_resp", "status")

    reconnects = 0  # never retried (see the module's docstring)
    retry_start_ns = None

    def __init__(self, resp: httpx.Response) -> None:
        self._resp = resp
        self.status = resp.status_code

    @property
    def sent_ns(self) -> None:
        return None  # httpx has no hook at the socket write: loadgen's start stamp stands

    async def chunks(self) -> AsyncIterator[tuple[int, bytes]]:
        try:
            async for data in self._resp.aiter_raw():
                if data:
                    yield now_ns(), data
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
        self._client = httpx.AsyncClient(
            verify=(tls or TlsOptions()).context(alpn=alpn),
            http2=http2,
            http1=True,
            limits=httpx.Limits(
                max_connections=limit or None,  # 0: no limit (httpx reads 0 as none at all)
                max_keepalive_connections=limit or None,
                keepalive_expiry=60,
            ),
            timeout=httpx.Timeout(None, connect=connect_timeout_s, pool=None),
        )

    @asynccontextmanager
    async def open(self, request: HttpRequest) -> AsyncIterator[_HttpxResponse]:
        req = self._client.build_request(
            "POST", request.url, content=request.body, headers=request.headers
        )
        try:
            resp = await self._client.send(req, stream=True)
        except httpx.ConnectTimeout as exc:
            raise TransportError("connect_timeout", describe(exc)) from None
        except httpx.ConnectError as exc:
            raise TransportError("connect_error", describe(exc) or "connect failed") from None
        except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
            raise TransportError("disconnected", describe(exc)) from None
        except httpx.HTTPError as exc:
            raise TransportError("protocol_error", describe(exc)) from None
        self.http_versions.add(resp.http_version)
        try:
            yield _HttpxResponse(resp)
        finally:
            await resp.aclose()

    async def aclose(self) -> None:
        await self._client.aclose()
