"""A minimal HTTP/1.1 server connection on a raw ``asyncio.Protocol``.

Owns request parsing (request line, headers, Content-Length bodies),
keep-alive and pipelining (one response at a time per connection, later
requests wait in the buffer), and the ``408`` of fault ``idle_408``. The
receive time of a request is the kernel's stamp of the read that completed
it (``sock``), or ``perf_counter_ns()`` when fed through plain
``data_received``. Chunked request bodies are refused with
411.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from loadgen.mock.http_framing import JSON_TYPE, HttpError, fastapi_error, simple_response

__all__ = ["MAX_BODY", "MAX_HEAD", "HttpConn", "Request", "parse_request"]

MAX_HEAD = 64 * 1024
MAX_BODY = 64 * 1024 * 1024
#: how long a connection closed by fault idle_408 still reads (and drops) what comes
LINGER_S = 1.0
_pc = time.perf_counter_ns


@dataclass(slots=True)
class Request:
    """One parsed request."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    keep_alive: bool
    recv_ns: int


def parse_request(buf: bytearray, recv_ns: int) -> Request | None:
    """Take one complete request off the front of ``buf``; None if incomplete."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        if len(buf) > MAX_HEAD:
            raise fastapi_error(431, "Request Header Fields Too Large")
        return None
    lines = buf[:end].decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise fastapi_error(400, "Invalid HTTP request line")
    method, target, version = parts
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise fastapi_error(411, "Length Required: loadgen-mock needs a Content-Length body")
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError:
        raise fastapi_error(400, "Invalid Content-Length") from None
    if length < 0 or length > MAX_BODY:
        raise fastapi_error(413, "Content Too Large")
    start = end + 4
    if len(buf) < start + length:
        return None
    body = bytes(buf[start : start + length])
    del buf[: start + length]
    conn_header = headers.get("connection", "").lower()
    http10 = version == "HTTP/1.0"
    keep_alive = conn_header == "keep-alive" if http10 else conn_header != "close"
    path = target.split("?", 1)[0]
    return Request(method, path, headers, body, keep_alive, recv_ns)


Handler = Callable[["HttpConn", Request], None]


class HttpConn(asyncio.Protocol):
    """One client connection; ``handler`` answers each request in turn.

    The handler must eventually call ``response_done()`` (or close the
    transport); until then further requests stay in the buffer.
    """

    def __init__(self, handler: Handler, on_lost: Callable[[HttpConn], None]):
        self.handler = handler
        self.on_lost = on_lost
        self.buf = bytearray()
        self.last_ns = 0  # receive stamp of the latest read: the one completing what is buffered
        self.busy = False
        self.in_loop = False
        self.pending = False  # a _process_pending call is scheduled
        self.keep_alive = True
        self.closed = False
        #: fault idle_408: once the response is whole, answer 408 and close, reading nothing
        self.close_after = False
        self.current: object | None = None  # the Gen in progress, if any
        self.transport: asyncio.Transport = None  # type: ignore[assignment]

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def data_received(self, data: bytes) -> None:
        self.data_received_at(data, _pc())

    def data_received_at(self, data: bytes, now: int) -> None:
        """``data`` reached the socket at ``now`` (the kernel's stamp, from ``sock``)."""
        # Stamp first, work later: when many requests arrive in one poll, handling
        # each in turn here would delay the others' reads by all that work.
        self.buf += data
        self.last_ns = now
        if not self.busy and not self.pending:
            self.pending = True
            asyncio.get_running_loop().call_soon(self._process_pending, now)

    def _process_pending(self, now: int) -> None:
        self.pending = False
        if not self.busy:
            self._process(now)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.on_lost(self)

    def response_done(self) -> None:
        """The current response is complete: close or serve the next request."""
        self.busy = False
        self.current = None
        if self.closed:
            return
        if not self.keep_alive:
            self.transport.close()
            return
        if self.close_after:
            self.busy = True  # nothing more is read
            asyncio.get_running_loop().call_soon(self._timed_out)
            return
        if self.buf and not self.in_loop:
            self._process(self.last_ns)

    def _timed_out(self) -> None:
        """Fault idle_408: what a server whose keep-alive timeout ran out sends on the
        idle connection, one loop turn after the response (a request already sent on it
        is never read: the client's stale-connection case), then it closes."""
        self.buf.clear()
        if self.closed:
            return
        self.transport.write(simple_response(408, b"", keep_alive=False))
        if not self.transport.can_write_eof():  # TLS: no half-close
            self.transport.close()
            return
        # A lingering close: FIN after the 408, then what the client sends is read and
        # dropped for a while, so that a request already on its way draws no RST
        # (which could discard the 408 before the client reads it).
        self.transport.write_eof()
        asyncio.get_running_loop().call_later(LINGER_S, self.transport.close)

    def send_simple(
        self,
        status: int,
        body: bytes,
        *,
        content_type: bytes = JSON_TYPE,
        extra: tuple[tuple[bytes, bytes], ...] = (),
    ) -> None:
        """Write a complete response and finish it."""
        response = simple_response(
            status, body, keep_alive=self.keep_alive, content_type=content_type, extra=extra
        )
        self.transport.write(response)
        self.response_done()

    def _process(self, now: int) -> None:
        self.in_loop = True
        try:
            while not self.busy and not self.closed and self.buf:
                try:
                    request = parse_request(self.buf, now)
                except HttpError as exc:
                    self.keep_alive = False
                    self.busy = True
                    self.send_simple(exc.status, exc.body)
                    return
                if request is None:
                    return
                self.busy = True
                self.keep_alive = request.keep_alive
                self.handler(self, request)
        finally:
            self.in_loop = False
