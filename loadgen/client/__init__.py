"""The client: the only package that sends load.

Owns one request from its send to its record: the transports (our HTTP/1.1
reader with kernel receive stamps, aiohttp, httpx), the SSE splitter, the
protocol adapters and the :class:`Requester` that times each stream.

May import: loadgen.clock, netstamp, records, workload, errors.
"""

import socket

from loadgen.client.adapters import ADAPTERS, Adapter, Delta, make_adapter
from loadgen.client.adapters.base import is_messages
from loadgen.client.request import Requester, RequestLimits, RequestTimeouts
from loadgen.client.sse import SseSplitter
from loadgen.client.transport import (
    HttpRequest,
    Response,
    TlsOptions,
    Transport,
    TransportError,
)
from loadgen.client.validity import OutputCheck

__all__ = [
    "ADAPTERS",
    "Adapter",
    "Delta",
    "HttpRequest",
    "OutputCheck",
    "RequestLimits",
    "RequestTimeouts",
    "Requester",
    "Response",
    "SseSplitter",
    "TlsOptions",
    "Transport",
    "TransportError",
    "is_messages",
    "make_adapter",
    "make_transport",
    "transport_kind",
]


def transport_kind(choice: str, *, url: str, http2: bool) -> str:
    """Resolve ``target.transport``: ``auto`` is h1, or httpx for HTTP/2 (aiohttp where
    sockets have no ``recvmsg``)."""
    if choice != "auto":
        return choice
    if http2:
        return "httpx"
    if not hasattr(socket.socket, "recvmsg"):  # Windows has none
        return "aiohttp"
    return "h1"


def make_transport(
    kind: str,
    *,
    http2: bool = False,
    limit: int,
    connect_timeout_s: float,
    tls: TlsOptions | None = None,
) -> Transport:
    """The transport ``kind`` (see :func:`transport_kind`); must run inside the event loop."""
    if kind == "h1":
        from loadgen.client.h1 import H1Transport

        return H1Transport(limit=limit, connect_timeout_s=connect_timeout_s, tls=tls)
    if kind == "httpx":
        from loadgen.client.httpx_transport import HttpxTransport

        return HttpxTransport(
            limit=limit, connect_timeout_s=connect_timeout_s, http2=http2, tls=tls
        )
    from loadgen.client.aiohttp_transport import AiohttpTransport

    return AiohttpTransport(limit=limit, connect_timeout_s=connect_timeout_s, tls=tls)
