"""TLS for an h1 connection, in memory: the handshake, then a session's records.

Owns :func:`handshake` (at connect, before the connection reads its socket)
and :class:`Session`: the ``ssl.SSLObject`` between two ``ssl.MemoryBIO``
buffers. The connection reads the socket itself and hands the encrypted bytes
here, so a read keeps the kernel's receive stamp of its encrypted bytes (an
``ssl.SSLSocket`` would read them itself, unstamped). Records the session has
to send back (a key update, an alert) wait in :attr:`Session.outgoing` for
the connection's one write path.
"""

from __future__ import annotations

import asyncio
import socket
import ssl

__all__ = ["Session", "handshake"]

#: The most plaintext one ``SSLObject.read`` returns (a read's records are all taken, in
#: as many of these as it takes).
_PLAINTEXT_READ = 256 * 1024


class Session:
    """One connection's TLS session: the object, its incoming and outgoing bytes."""

    __slots__ = ("incoming", "obj", "outgoing")

    def __init__(
        self, obj: ssl.SSLObject, incoming: ssl.MemoryBIO, outgoing: ssl.MemoryBIO
    ) -> None:
        self.obj = obj
        self.incoming = incoming
        self.outgoing = outgoing

    def decrypt(self, raw: bytes) -> tuple[bytes, bool]:
        """TLS records in, plaintext out; True once the server has closed the session.

        What the read produced to send back stays in :attr:`outgoing`. Raises
        ``ssl.SSLError`` on a record that does not decrypt.
        """
        self.incoming.write(raw)
        out: list[bytes] = []
        eof = False
        while True:
            try:
                chunk = self.obj.read(_PLAINTEXT_READ)
            except ssl.SSLWantReadError:
                break
            except ssl.SSLZeroReturnError:
                eof = True
                break
            if not chunk:
                eof = True
                break
            out.append(chunk)
        return b"".join(out), eof

    def encrypt(self, payload: bytes) -> bytes:
        self.obj.write(payload)
        return self.outgoing.read()


async def handshake(
    loop: asyncio.AbstractEventLoop, sock: socket.socket, context: ssl.SSLContext, host: str
) -> Session:
    """Set up a session on a connected ``sock``; raises ``ssl.SSLError`` (a certificate
    refused, or no TLS at all) or ``OSError``."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    session = context.wrap_bio(incoming, outgoing, server_hostname=host)
    while True:
        try:
            session.do_handshake()
            break
        except ssl.SSLWantReadError:
            pass
        if outgoing.pending:
            await loop.sock_sendall(sock, outgoing.read())
        data = await loop.sock_recv(sock, 65536)
        if not data:
            raise ConnectionResetError("the server closed the connection in the TLS handshake")
        incoming.write(data)
    if outgoing.pending:
        await loop.sock_sendall(sock, outgoing.read())
    return Session(session, incoming, outgoing)
