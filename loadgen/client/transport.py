"""The transport interface: send one request, yield ``(arrival_ns, bytes, slack_ns)`` as they come.

``slack_ns`` is the read's own error: how much earlier than ``arrival_ns`` the
read's first bytes may have come (docs/metrics.md, "Client error"). A transport
with :attr:`Transport.exact_stamps` stamps each read with the kernel's receive
stamp of its last bytes, so only the bytes before them can be early; one
without (its stamp is when the loop read them) may be early on every byte.

A transport owns one connection pool for a whole run, sized by the caller so
that it never caps the load. Library exceptions are turned into
:class:`TransportError` with a ``kind`` the records use, so nothing above this
layer knows which HTTP library ran.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Protocol

from loadgen.client.read_lag import ReadLag

__all__ = [
    "STALE_STATUS",
    "HttpRequest",
    "Phases",
    "ReadLag",
    "Response",
    "TlsOptions",
    "Transport",
    "TransportError",
    "describe",
]


#: A server's answer, on a reused connection, that it had timed the idle connection out
#: (``408 Request Timeout``, with ``Connection: close``) as the request came: the
#: transports send it again on a fresh connection, as after a silent close (browsers do
#: the same), and count it as a reconnect.
STALE_STATUS = 408


@dataclass(slots=True, frozen=True)
class HttpRequest:
    url: str
    body: bytes
    headers: dict[str, str]


@dataclass(slots=True)
class Phases:
    """How one request's connection and answer began, as far as the transport can tell.

    Stamps are :func:`loadgen.clock.now_ns` values (the h1 transport's first byte and
    head: the kernel's receive stamps). A field the transport cannot see is None; so
    are the connection's stamps of a request sent on a reused connection, and
    ``tls_ns`` of a plain ``http://`` one. ``Record``'s request phases are these.
    """

    new_connection: bool | None = None  # the request was the first on its connection
    connect_start_ns: int | None = None  # the transport began to connect (its name resolved)
    connect_ns: int | None = None  # the TCP connection was up
    tls_ns: int | None = None  # the TLS handshake was done
    first_byte_ns: int | None = None  # the answer's first byte came
    headers_ns: int | None = None  # the answer's header block was complete


@dataclass(slots=True, frozen=True)
class TlsOptions:
    """How an ``https://`` target's certificate is checked (``target.tls``)."""

    verify: bool = True
    ca_file: str | None = None

    def context(self, alpn: list[str] | None = None) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=self.ca_file)
        if not self.verify:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if alpn:
            ctx.set_alpn_protocols(alpn)
        return ctx


class TransportError(Exception):
    """A request failed below HTTP: ``kind`` is one of

    ``connect_error`` (refused, unreachable, DNS), ``connect_timeout``,
    ``disconnected`` (the server closed or reset the connection),
    ``protocol_error`` (the server broke HTTP), ``headers_too_large`` (a response
    header block past the transport's bound).
    """

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


class Response(Protocol):
    status: int

    @property
    def sent_ns(self) -> int | None:
        """When the request's last byte went to the socket, if the transport knows."""
        ...

    def chunks(self) -> AsyncIterator[tuple[int, bytes, int]]:
        """Body bytes as they arrive: each read stamped (:func:`loadgen.clock.now_ns`
        values), with how much earlier than its stamp its first bytes may have come."""
        ...

    async def read_prefix(self, limit: int) -> bytes:
        """Up to ``limit`` bytes of the body (for error rows)."""
        ...

    @property
    def reconnects(self) -> int:
        """1 when the request failed on a kept-alive connection before any byte of the
        answer came and this answer is that of its one retry on a fresh connection; else 0."""
        ...

    @property
    def retry_start_ns(self) -> int | None:
        """When that retry began (before its connect); None when there was none."""
        ...

    @property
    def phases(self) -> Phases:
        """The request's connection and answer stamps (read once the headers are in)."""
        ...

    def end_of_answer(self, trailing: bool) -> None:
        """The caller read the answer's last event (``[DONE]``); ``trailing``: bytes came
        after it. A server that sends past its answer is not trusted with another request:
        the connection is not reused if bytes followed it, now or before its body ends."""
        ...

    def abort(self) -> None:
        """The caller stops reading before the answer's end (``workload.cancel``): the
        connection is closed as the caller leaves, never drained nor reused, so the
        server sees the client go."""
        ...


class Transport(Protocol):
    #: a read's stamp is when its last bytes came (the kernel's receive stamp): the last
    #: event of a read that ends on an event's end has an exact stamp
    exact_stamps: bool

    @property
    def read_lag(self) -> ReadLag | None:
        """Read lags, where the transport knows when bytes arrived (else None)."""
        ...

    def open(self, request: HttpRequest) -> AbstractAsyncContextManager[Response]:
        """POST ``request``; the context yields once the response headers are in."""
        ...

    async def aclose(self) -> None: ...


def describe(exc: BaseException) -> str:
    """A library's exception as one short line, for a :class:`TransportError`'s detail."""
    text = str(exc) or type(exc).__name__
    return text.replace("\n", " ")[:200]
