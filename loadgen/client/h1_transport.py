"""The exact transport: HTTP/1.1 on sockets loadgen reads itself, stamped by the kernel.

Why not aiohttp: uvloop reads a socket in C and hands
Python only the bytes, so the earliest stamp aiohttp allows is taken when the
event loop gets round to the connection, which under many streams (or one
late wake-up of this process) is a millisecond or more after the bytes came.
Reading each socket with ``recvmsg`` keeps the kernel's receive stamp
(``SO_TIMESTAMPNS``): the moment the last packet of that read reached the
socket, whatever the loop was doing then. It also skips aiohttp's per-chunk
stream machinery, which was half of the client's CPU time (docs/performance.md).

HTTP parsing is httptools (llhttp, the parser of Node.js and uvicorn); this
module owns only connections, the request bytes and the hand-over of stamped
body pieces. Keep-alive connections are pooled per host; a pooled connection
the server has closed is dropped as soon as the close arrives, and each one is
checked (a peek at the socket) before it is reused. Nothing is ever retried:
a request that fails is a row. ``https://`` is decrypted in memory
(``ssl.MemoryBIO``), so a read keeps the stamp of its encrypted bytes; the
session is set up with ``target.tls`` (:class:`TlsOptions`). Where the kernel
gives no stamp (not Linux), a read is stamped when it is made.

Imports: httptools, loadgen.clock, loadgen.client.transport.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import struct
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httptools

from loadgen.client.transport import HttpRequest, ReadLag, TlsOptions, TransportError
from loadgen.clock import from_kernel_ns, now_ns

__all__ = ["H1Transport"]

#: Linux's value; the socket module names it only from Python 3.14 on.
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
_TIMESPEC = struct.Struct("@qq")
_ANC_SIZE = socket.CMSG_SPACE(_TIMESPEC.size)
READ_SIZE = 256 * 1024
#: Stop reading a connection while this much of its body waits for the consumer.
PAUSE_BYTES = 8 * 1024 * 1024
#: How long a connection may take to finish an answer its caller stopped reading.
DRAIN_S = 2.0


#: (host, port, TLS): one pool each
Key = tuple[str, int, bool]


#: A TLS session kept in memory: the object, its incoming and outgoing bytes
_Tls = tuple[ssl.SSLObject, ssl.MemoryBIO, ssl.MemoryBIO]


@dataclass(slots=True, frozen=True)
class _Target:
    key: Key
    line: bytes  # the request line
    host: bytes  # the Host header line


class _Exchange:
    """One request's answer as it comes: the connection fills it, the caller drains it.

    This is the transport's :class:`~loadgen.client.transport.Response`.
    """

    __slots__ = (
        "buffered",
        "complete",
        "conn",
        "error",
        "framed",
        "headers_done",
        "keep_alive",
        "pieces",
        "sent",
        "status",
        "waiter",
    )

    def __init__(self, conn: _Conn) -> None:
        self.conn = conn
        self.status = 0
        self.sent = 0
        self.pieces: list[tuple[int, bytes]] = []
        self.buffered = 0
        self.waiter: asyncio.Future[None] | None = None
        self.headers_done = False
        self.complete = False
        self.keep_alive = False
        self.framed = False  # Content-Length or chunked: the body does not end at EOF
        self.error: TransportError | None = None

    @property
    def sent_ns(self) -> int | None:
        return self.sent or None

    def wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _wait(self) -> None:
        waiter = self.waiter = self.conn.loop.create_future()
        try:
            await waiter
        finally:
            self.waiter = None

    async def wait_headers(self) -> None:
        while not self.headers_done:
            if self.error is not None:
                raise self.error
            await self._wait()

    async def chunks(self) -> AsyncIterator[tuple[int, bytes]]:
        while True:
            if self.pieces:
                pieces = self.pieces
                self.pieces = []
                self.buffered = 0
                if not self.conn.reading:
                    self.conn.resume()
                for piece in pieces:
                    yield piece
            elif self.error is not None:
                raise self.error
            elif self.complete:
                return
            else:
                await self._wait()

    async def read_prefix(self, limit: int) -> bytes:
        out = b""
        try:
            async for _, data in self.chunks():
                out += data
                if len(out) >= limit:
                    break
        except TransportError:
            pass
        return out[:limit]


class _Stray(Exception):
    """A second answer began on a connection whose request was already answered."""


class _Conn:
    """One keep-alive connection; also the httptools callback target."""

    __slots__ = (
        "body",
        "closed",
        "drain_timer",
        "draining",
        "ex",
        "fd",
        "interim",
        "key",
        "loop",
        "outbox",
        "owner",
        "parser",
        "reading",
        "sock",
        "tls",
        "tls_in",
        "tls_out",
        "writer",
    )

    def __init__(
        self, sock: socket.socket, key: Key, owner: H1Transport, tls: _Tls | None = None
    ) -> None:
        self.sock = sock
        self.tls: ssl.SSLObject | None = None
        self.tls_in: ssl.MemoryBIO | None = None
        self.tls_out: ssl.MemoryBIO | None = None
        if tls is not None:
            self.tls, self.tls_in, self.tls_out = tls
        self.fd = sock.fileno()
        self.key = key
        self.owner = owner
        self.loop = owner.loop
        self.parser = httptools.HttpResponseParser(self)
        self.ex: _Exchange | None = None
        self.body: list[bytes] = []
        self.closed = False
        self.interim = False  # inside a 1xx answer, which precedes the real one
        self.draining = False  # the caller is done; reading the rest of the body to reuse us
        self.drain_timer: asyncio.TimerHandle | None = None
        self.outbox: deque[bytes] = deque()  # bytes the socket would not take yet, in order
        self.writer: asyncio.Task[None] | None = None  # sending the outbox
        self.loop.add_reader(self.fd, self._on_readable)
        self.reading = True

    # -- httptools callbacks

    def on_message_begin(self) -> None:
        ex = self.ex
        if ex is not None and ex.complete:
            raise _Stray("bytes after the complete answer")

    def on_header(self, name: bytes, value: bytes) -> None:
        ex = self.ex
        if ex is None:
            return
        name = name.lower()
        if name == b"content-length":
            ex.framed = True
        elif name == b"transfer-encoding":  # only chunked ends by itself; others end at close
            ex.framed = value.rstrip().lower().endswith(b"chunked")

    def on_headers_complete(self) -> None:
        ex = self.ex
        if ex is not None:
            status = self.parser.get_status_code()
            if 100 <= status < 200:  # 100 Continue, 103 Early Hints: the answer follows
                self.interim = True
                return
            ex.status = status
            ex.headers_done = True

    def on_body(self, body: bytes) -> None:
        if not self.draining:
            self.body.append(body)

    def on_message_complete(self) -> None:
        ex = self.ex
        if ex is None:
            return
        if self.interim:
            self.interim = False
            ex.framed = False
            return
        ex.complete = True
        ex.keep_alive = self.parser.should_keep_alive()

    # -- the socket

    def _on_readable(self) -> None:
        try:
            data, anc, _flags, _addr = self.sock.recvmsg(READ_SIZE, _ANC_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self.lost(TransportError("disconnected", _detail(exc)))
            return
        if anc and len(anc[0][2]) == _TIMESPEC.size:
            sec, nsec = _TIMESPEC.unpack(anc[0][2])
            stamp = from_kernel_ns(sec * 1_000_000_000 + nsec)
            self.owner.read_lag.add(now_ns() - stamp)
        else:
            stamp = now_ns()
        eof = not data
        if self.tls is not None and data:
            try:
                data, eof = self._decrypt(data)
            except ssl.SSLError as exc:
                self.lost(TransportError("protocol_error", f"TLS: {_detail(exc)}"))
                return
            if not data and not eof:
                return  # TLS housekeeping only (a session ticket): nothing for HTTP
        ex = self.ex
        if (eof and not data) or ex is None:  # EOF, or bytes nobody asked for: done
            self.lost(None)
            return
        error: Exception | None = None
        try:
            self.parser.feed_data(data)
        except Exception as exc:  # llhttp's errors, an upgrade, a stray second answer
            error = exc
        body = self.body
        if body:
            piece = body[0] if len(body) == 1 else b"".join(body)
            body.clear()
            ex.pieces.append((stamp, piece))
            ex.buffered += len(piece)
            if ex.buffered > PAUSE_BYTES:
                self.pause()
        if error is not None:  # after a complete answer this only closes the connection
            self.lost(TransportError("protocol_error", _detail(error)))
        elif eof:  # the server's TLS close_notify came with the last bytes
            self.lost(None)
        elif self.draining and ex.complete:
            self.draining = False
            if self.drain_timer is not None:
                self.drain_timer.cancel()
            self.owner.release(self, ex)
        else:
            ex.wake()

    def _decrypt(self, raw: bytes) -> tuple[bytes, bool]:
        """TLS records in, plaintext out; True once the server has closed the session."""
        assert self.tls is not None and self.tls_in is not None
        self.tls_in.write(raw)
        out: list[bytes] = []
        eof = False
        while True:
            try:
                chunk = self.tls.read(READ_SIZE)
            except ssl.SSLWantReadError:
                break
            except ssl.SSLZeroReturnError:
                eof = True
                break
            if not chunk:
                eof = True
                break
            out.append(chunk)
        self._flush_tls()  # a key update or an alert the read produced
        return b"".join(out), eof

    def _flush_tls(self) -> None:
        if self.tls_out is not None and self.tls_out.pending:
            with contextlib.suppress(OSError):  # the read side will see the connection go
                self.write(self.tls_out.read())

    def write(self, data: bytes) -> asyncio.Task[None] | None:
        """Send ``data`` after anything still queued; returns the task still sending it.

        One write path per connection, so TLS records the reader has to send (a
        key update) never cut into a request on its way out. Raises ``OSError``
        if the socket refuses at once.
        """
        if self.writer is None:
            try:
                sent = self.sock.send(data)
            except (BlockingIOError, InterruptedError):
                sent = 0
            if sent == len(data):
                return None
            self.outbox.append(data[sent:])
            self.writer = self.loop.create_task(self._write_out())
        else:
            self.outbox.append(data)
        return self.writer

    async def _write_out(self) -> None:
        try:
            while self.outbox:
                await self.loop.sock_sendall(self.sock, self.outbox.popleft())
        except OSError as exc:
            self.lost(TransportError("disconnected", _detail(exc)))
        finally:
            self.writer = None

    def encrypt(self, payload: bytes) -> bytes:
        if self.tls is None or self.tls_out is None:
            return payload
        self.tls.write(payload)
        return self.tls_out.read()

    def alive(self) -> bool:
        """Not closed by the server, even if the loop has not yet told us (one syscall)."""
        if self.closed:
            return False
        try:
            self.sock.recv(1, socket.MSG_PEEK)  # EOF or bytes nobody asked for: unusable
        except (BlockingIOError, InterruptedError):
            return True  # nothing waiting: the only good answer
        except OSError:
            return False
        if self.tls is not None:  # maybe a session ticket: read it; app data or EOF close us
            self._on_readable()
            return not self.closed
        return False

    def start(self) -> _Exchange:
        self.ex = _Exchange(self)
        return self.ex

    def pause(self) -> None:
        if self.reading and not self.closed:
            self.loop.remove_reader(self.fd)
            self.reading = False

    def resume(self) -> None:
        if not self.reading and not self.closed:
            self.loop.add_reader(self.fd, self._on_readable)
            self.reading = True

    def drain(self, timeout_s: float) -> None:
        """Read the rest of a finished-with answer, then go back to the pool (or close)."""
        assert self.ex is not None
        self.draining = True
        self.ex.pieces.clear()
        self.resume()
        self.drain_timer = self.loop.call_later(timeout_s, self._drain_expired)

    def _drain_expired(self) -> None:
        if self.draining:
            self.close()

    def lost(self, error: TransportError | None) -> None:
        """The server closed the connection (``error`` None) or it broke."""
        ex = self.ex
        if ex is not None and not ex.complete and ex.error is None:
            if error is None and ex.headers_done and not ex.framed:
                ex.complete = True  # a body delimited by the close itself
            else:
                where = "mid-body" if ex.headers_done else "before the response headers"
                ex.error = error or TransportError(
                    "disconnected", f"the server closed the connection {where}"
                )
        self.close()
        if ex is not None:
            ex.wake()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.draining = False
            if self.drain_timer is not None:
                self.drain_timer.cancel()
            if self.writer is not None:
                self.writer.cancel()
            if self.reading:
                self.loop.remove_reader(self.fd)
                self.reading = False
            self.sock.close()
            self.owner.forget(self)


class H1Transport:
    """Pooled HTTP/1.1 keep-alive connections to ``http://`` and ``https://`` targets."""

    def __init__(
        self, *, limit: int, connect_timeout_s: float, tls: TlsOptions | None = None
    ) -> None:
        self.loop = asyncio.get_running_loop()
        self._tls_context = (tls or TlsOptions()).context(alpn=["http/1.1"])
        self._connect_timeout_s = connect_timeout_s
        self._limit = limit  # idle connections kept per host; 0: no limit
        self._idle: dict[Key, list[_Conn]] = {}
        self._all: set[_Conn] = set()
        self._targets: dict[str, _Target] = {}
        self._addrs: dict[Key, list[tuple[int, int, int, Any]]] = {}
        #: TCP connections opened so far (keep-alive working: about the concurrency)
        self.connects = 0
        self.read_lag = ReadLag()

    @asynccontextmanager
    async def open(self, request: HttpRequest) -> AsyncIterator[_Exchange]:
        target = self._target(request.url)
        payload = _request_bytes(target, request)
        conn = await self._acquire(target.key)
        ex = conn.start()
        try:
            await self._send(conn, ex, payload)
            await ex.wait_headers()
        except BaseException:
            conn.close()
            raise
        try:
            yield ex
        except BaseException:
            conn.close()
            raise
        self._done(conn, ex)

    async def _send(self, conn: _Conn, ex: _Exchange, payload: bytes) -> None:
        try:
            ex.sent = now_ns()
            pending = conn.write(conn.encrypt(payload))
        except OSError as exc:
            raise TransportError("disconnected", _detail(exc)) from None
        if pending is not None:  # the rest goes out later; a failure closes the connection
            await asyncio.wait({pending})  # its cancellation (a close) is not ours
            if conn.closed:
                raise ex.error or TransportError("disconnected", "closed while sending")
            ex.sent = now_ns()

    def _done(self, conn: _Conn, ex: _Exchange) -> None:
        """The caller is through with the answer (it may stop at ``[DONE]``, before the
        body's last bytes: uvicorn writes the closing chunk on its own): reuse the
        connection once the answer is complete."""
        if conn.closed or ex.error is not None:
            conn.close()
        elif ex.complete:
            self.release(conn, ex)
        elif ex.headers_done and ex.framed:
            conn.drain(DRAIN_S)
        else:
            conn.close()

    def release(self, conn: _Conn, ex: _Exchange) -> None:
        """Pool a connection whose answer is complete, if it may carry another."""
        idle = self._idle.setdefault(conn.key, [])
        if not ex.keep_alive or conn.closed or 0 < self._limit <= len(idle):
            conn.close()
            return
        conn.ex = None
        conn.resume()
        idle.append(conn)

    def forget(self, conn: _Conn) -> None:
        """A connection closed itself."""
        self._all.discard(conn)

    async def _acquire(self, key: Key) -> _Conn:
        idle = self._idle.get(key)
        while idle:
            conn = idle.pop()
            if conn.alive():
                return conn
            conn.close()
        conn = await self._connect(key)
        self._all.add(conn)
        return conn

    async def _connect(self, key: Key) -> _Conn:
        host, port, tls = key
        addrs = self._addrs.get(key)
        if addrs is None:
            try:
                infos = await self.loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except OSError as exc:
                raise TransportError("connect_error", _detail(exc)) from None
            addrs = self._addrs[key] = [(f, t, p, a) for f, t, p, _, a in infos]
        last: OSError | None = None
        for family, type_, proto, addr in addrs:
            try:
                sock = socket.socket(family, type_, proto)
            except OSError as exc:  # out of file descriptors
                last = exc
                continue
            try:
                sock.setblocking(False)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                with contextlib.suppress(OSError):  # no kernel stamps: reads stamped when made
                    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
                async with asyncio.timeout(self._connect_timeout_s):
                    await self.loop.sock_connect(sock, addr)
                    session = await self._handshake(sock, host) if tls else None
            except TimeoutError:
                sock.close()
                raise TransportError(
                    "connect_timeout", f"no connection to {host}:{port} within timeouts_s.connect"
                ) from None
            except ssl.SSLError as exc:  # a certificate refused, or no TLS at all
                sock.close()
                raise TransportError("connect_error", f"TLS: {_detail(exc)}") from None
            except OSError as exc:
                sock.close()
                last = exc
                continue
            except BaseException:
                sock.close()
                raise
            self.connects += 1
            return _Conn(sock, key, self, session)
        detail = _detail(last) if last is not None else "no address"
        raise TransportError("connect_error", f"{host}:{port}: {detail}")

    async def _handshake(self, sock: socket.socket, host: str) -> _Tls:
        incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        session = self._tls_context.wrap_bio(incoming, outgoing, server_hostname=host)
        while True:
            try:
                session.do_handshake()
                break
            except ssl.SSLWantReadError:
                pass
            if outgoing.pending:
                await self.loop.sock_sendall(sock, outgoing.read())
            data = await self.loop.sock_recv(sock, 65536)
            if not data:
                raise ConnectionResetError("the server closed the connection in the TLS handshake")
            incoming.write(data)
        if outgoing.pending:
            await self.loop.sock_sendall(sock, outgoing.read())
        return session, incoming, outgoing

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


def _detail(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text.replace("\n", " ")[:200]
