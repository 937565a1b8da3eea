"""The h1 transport: HTTP/1.1 on sockets loadgen reads itself, each read stamped by the kernel.

Owns loadgen's own HTTP/1.1 client, the default transport. One connection
is one class with one owner (``connection``: its socket, its state, its
parser, the exchange in hand, the answer the caller reads); beside it stand
its TLS session (``tls``), the request's bytes on their way out (``body``)
and the pool of keep-alive connections with the retry (``transport``).
Others reach it through :class:`H1Transport`, the
:class:`~loadgen.client.transport.Transport` it is.
"""

from loadgen.client.h1.transport import H1Transport

__all__ = ["H1Transport"]
