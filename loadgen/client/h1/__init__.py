"""The h1 transport: HTTP/1.1 on sockets loadgen reads itself, each read stamped by the kernel.

Owns loadgen's own HTTP/1.1 client, the default transport: the pool of
keep-alive connections and the request's bytes (``transport``), one
connection with its socket, its state and its parser (``connection``), and a
large request body's send (``body``). Others reach it through
:class:`H1Transport`, the :class:`~loadgen.client.transport.Transport` it is.
"""

from loadgen.client.h1.transport import H1Transport

__all__ = ["H1Transport"]
