"""The client: the only package that sends load."""

from loadgen.client.adapters import ADAPTERS, Adapter, Delta
from loadgen.client.request import Requester, RequestTimeouts
from loadgen.client.sse import SseSplitter
from loadgen.client.transport import HttpRequest, Response, Transport, TransportError

__all__ = [
    "ADAPTERS",
    "Adapter",
    "Delta",
    "HttpRequest",
    "RequestTimeouts",
    "Requester",
    "Response",
    "SseSplitter",
    "Transport",
    "TransportError",
    "make_transport",
]


def make_transport(*, http2: bool, limit: int, connect_timeout_s: float) -> Transport:
    """aiohttp for HTTP/1.1 (the fast path), httpx for HTTP/2 targets."""
    if http2:
        from loadgen.client.httpx_transport import HttpxTransport

        return HttpxTransport(limit=limit, connect_timeout_s=connect_timeout_s)
    from loadgen.client.aiohttp_transport import AiohttpTransport

    return AiohttpTransport(limit=limit, connect_timeout_s=connect_timeout_s)
