"""The exact transport: HTTP/1.1 on sockets loadgen reads itself, stamped by the kernel.

Why not aiohttp: uvloop reads a socket in C and hands Python only the bytes,
so the earliest stamp aiohttp allows is taken when the event loop gets round
to the connection, which under many streams (or one late wake-up of this
process) is a millisecond or more after the bytes came.
Reading each socket with ``recvmsg`` keeps the kernel's receive stamp
(``SO_TIMESTAMPNS``): the moment the last packet of that read reached the
socket, whatever the loop was doing then. It also skips aiohttp's per-chunk
stream machinery, which was half of the client's CPU time (docs/performance.md).

HTTP parsing is httptools (llhttp, the parser of Node.js and uvicorn). This
module owns the pool, connecting and the request bytes; one connection (its
socket, its one state, its parsing, whether it can be reused, its answer as
data) is ``connection``, its TLS session (the handshake included) ``tls``,
the request's bytes on their way out (a refusal that cuts them short, when a
large body's last byte left) ``body``.
Keep-alive connections are pooled per host; a pooled connection the server
has closed is dropped as soon as the close arrives, and each one is checked
(a peek at the socket) before it is reused. ``Connection: close`` and
``Keep-Alive: timeout=…, max=…`` are honoured: a connection is not reused
past the requests the server said it takes, nor once it has been idle for
nearly the timeout it announced. One retry, and only one: a request that
fails on a *reused* connection (reset, or closed before any byte of the
answer came: the server dropped it as the request went out) is sent once
more on a fresh connection, and so is one answered ``408`` on a reused
connection (the server's idle timer fired as the request came; Chromium and
Firefox retry it too); the answer says so (``reconnects``,
``retry_start_ns``) and its ``sent_ns`` is the retry's. Nothing is retried
once a byte of the answer has come, nor on a fresh connection: such a
request is a row. ``https://`` is decrypted in memory
(``ssl.MemoryBIO``), so a read keeps the stamp of its encrypted bytes; the
session is set up with ``target.tls`` (:class:`TlsOptions`). Where the kernel
gives no stamp (not Linux), a read is stamped when it is made.

Request phases: each connection keeps when its connect began (the name
resolved), when the TCP connect was done and when its TLS handshake was, and
hands them to the first request it carries (``Exchange.phases``); the answer's
first byte and complete head are the receive stamps of their reads. Three
clock reads a connection, none per token.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from loadgen.client.h1.body import send
from loadgen.client.h1.connection import Connection, Exchange, Key
from loadgen.client.h1.polls import Polls
from loadgen.client.h1.tls import handshake
from loadgen.client.transport import (
    STALE_STATUS,
    HttpRequest,
    ReadLag,
    TlsOptions,
    TransportError,
    describe,
)
from loadgen.clock import now_ns
from loadgen.netstamp import enable as enable_stamps

__all__ = ["H1Transport"]


@dataclass(slots=True, frozen=True)
class _Target:
    key: Key
    line: bytes  # the request line
    host: bytes  # the Host header line


class H1Transport:
    """Pooled HTTP/1.1 keep-alive connections to ``http://`` and ``https://`` targets."""

    exact_stamps = True  # each read carries the kernel's receive stamp (Linux)

    def __init__(
        self, *, limit: int, connect_timeout_s: float, tls: TlsOptions | None = None
    ) -> None:
        self.loop = asyncio.get_running_loop()
        self._tls_context = (tls or TlsOptions()).context(alpn=["http/1.1"])
        self._connect_timeout_s = connect_timeout_s
        self._limit = limit  # idle connections kept per host; 0: no limit
        self._idle: dict[Key, list[Connection]] = {}
        self._all: set[Connection] = set()
        self._targets: dict[str, _Target] = {}
        self._addrs: dict[Key, list[tuple[int, int, int, Any]]] = {}
        #: TCP connections opened so far (keep-alive working: about the concurrency)
        self.connects = 0
        #: requests sent again on a fresh connection after a kept-alive one failed
        self.reconnects = 0
        self.read_lag = ReadLag()
        self.polls = Polls.of(self.loop)

    @asynccontextmanager
    async def open(self, request: HttpRequest) -> AsyncIterator[Exchange]:
        target = self._target(request.url)
        payload = _request_bytes(target, request)
        conn, reused = await self._acquire(target.key)
        try:
            ex: Exchange | None = await self._attempt(conn, payload)
        except TransportError as exc:
            if not reused or exc.kind != "disconnected" or conn.ex is None or conn.ex.received:
                raise
            ex = None  # the server dropped a kept-alive connection as the request went out
        if ex is not None and reused and ex.status == STALE_STATUS:
            conn.close()  # its idle timer fired as the request came: the same stale case
            ex = None
        if ex is None:  # once more, on a fresh connection
            retry_ns = now_ns()
            self.reconnects += 1
            conn = await self._connect(target.key)
            self._all.add(conn)
            ex = await self._attempt(conn, payload)
            ex.reconnects = 1
            ex.retry_ns = retry_ns
        try:
            yield ex
        except BaseException:
            conn.close()
            raise
        conn.let_go()

    async def _attempt(self, conn: Connection, payload: bytes) -> Exchange:
        """Send the request on ``conn`` and wait for the answer's headers (else close it)."""
        ex = conn.start()
        try:
            await send(conn, ex, payload)
            await ex.wait_headers()
        except BaseException:
            conn.close()
            raise
        return ex

    def release(self, conn: Connection) -> None:
        """Pool a connection that may carry another request, if its host's pool has room."""
        idle = self._idle.setdefault(conn.key, [])
        if 0 < self._limit <= len(idle):
            conn.close()
            return
        conn.pool(now_ns())
        idle.append(conn)

    def forget(self, conn: Connection) -> None:
        """A connection closed itself."""
        self._all.discard(conn)

    async def _acquire(self, key: Key) -> tuple[Connection, bool]:
        """A connection for ``key`` and whether it carried a request before."""
        idle = self._idle.get(key)
        if idle:
            now = now_ns()
            while idle:
                conn = idle.pop()
                if conn.alive() and not conn.expired(now):
                    return conn, True
                conn.close()
        conn = await self._connect(key)
        self._all.add(conn)
        return conn, False

    async def _connect(self, key: Key) -> Connection:
        host, port, tls = key
        addrs = self._addrs.get(key)
        if addrs is None:
            try:
                infos = await self.loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except OSError as exc:
                raise TransportError("connect_error", describe(exc)) from None
            addrs = self._addrs[key] = [(f, t, p, a) for f, t, p, _, a in infos]
        last: OSError | None = None
        began = now_ns()  # the name is resolved (once a host): the connect phase begins
        for i, entry in enumerate(tuple(addrs)):  # a snapshot: others may reorder the cache
            family, type_, proto, addr = entry
            try:
                sock = socket.socket(family, type_, proto)
            except OSError as exc:  # out of file descriptors
                last = exc
                continue
            try:
                sock.setblocking(False)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                enable_stamps(sock)  # else reads are stamped when made
                async with asyncio.timeout(self._connect_timeout_s):
                    await self.loop.sock_connect(sock, addr)
                    connected = now_ns()
                    session = (
                        await handshake(self.loop, sock, self._tls_context, host) if tls else None
                    )
                    secured = now_ns() if tls else 0
            except TimeoutError:
                sock.close()
                raise TransportError(
                    "connect_timeout", f"no connection to {host}:{port} within timeouts_s.connect"
                ) from None
            except ssl.SSLError as exc:  # a certificate refused, or no TLS at all
                sock.close()
                raise TransportError("connect_error", f"TLS: {describe(exc)}") from None
            except OSError as exc:
                sock.close()
                last = exc
                continue
            except BaseException:
                sock.close()
                raise
            self.connects += 1
            if i:  # try the address that answered first next time (e.g. IPv4 for localhost)
                self._addrs[key] = [entry, *(a for a in self._addrs[key] if a != entry)]
            conn = Connection(sock, key, self, session)
            conn.connect_start_ns, conn.connect_ns, conn.tls_ns = began, connected, secured
            return conn
        reason = describe(last) if last is not None else "no address"
        raise TransportError("connect_error", f"{host}:{port}: {reason}")

    def _target(self, url: str) -> _Target:
        """Parsed once per distinct URL (a run has one or two), not once per request."""
        target = self._targets.get(url)
        if target is None:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise TransportError("connect_error", f"not an http:// or https:// URL: {url}")
            tls = parts.scheme == "https"
            port = parts.port or (443 if tls else 80)
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            host = parts.netloc.rpartition("@")[2]
            target = self._targets[url] = _Target(
                (parts.hostname, port, tls),
                f"POST {path} HTTP/1.1\r\n".encode(),
                f"Host: {host}\r\n".encode(),
            )
        return target

    async def aclose(self) -> None:
        for conn in list(self._all):
            conn.close()
        self._all.clear()
        self._idle.clear()


def _request_bytes(target: _Target, request: HttpRequest) -> bytes:
    """The request's bytes; the caller's Host and User-Agent win, Content-Length is ours."""
    headers = request.headers
    names = {name.lower() for name in headers}
    if "content-length" in names:
        headers = {k: v for k, v in headers.items() if k.lower() != "content-length"}
    lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    if lines.count("\n") != len(headers) or lines.count("\r") != len(headers):
        raise TransportError("protocol_error", "a header name or value holds a line break")
    defaults = b"" if "host" in names else target.host
    if "user-agent" not in names:
        defaults += b"User-Agent: loadgen\r\n"
    body = request.body
    return b"%s%s%sContent-Length: %d\r\n\r\n%s" % (
        target.line,
        defaults,
        lines.encode(),
        len(body),
        body,
    )
