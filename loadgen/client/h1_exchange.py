"""One request's answer on an h1 connection, as the caller sees it.

Owns the hand-over between a connection's reads and the caller: the status,
the stamped body pieces waiting to be taken, whether the answer is complete
or broke, and the one future the caller waits on. The connection
(``h1_conn.Conn``) fills it from its read callback; the caller drains it
through ``chunks()``. This is the h1 transport's ``Response``.

Imports: loadgen.client.transport.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from loadgen.client.transport import TransportError

if TYPE_CHECKING:  # the connection imports this module, not the other way round
    from loadgen.client.h1_conn import Conn

__all__ = ["Exchange", "refused"]


class Exchange:
    """One request's answer as it comes: the connection fills it, the caller drains it.

    This is the transport's :class:`~loadgen.client.transport.Response`.
    """

    __slots__ = (
        "buffered",
        "complete",
        "conn",
        "error",
        "framed",
        "head_fields",
        "head_read",
        "headers_done",
        "keep_alive",
        "pieces",
        "received",
        "reconnects",
        "retry_ns",
        "sent",
        "status",
        "waiter",
    )

    def __init__(self, conn: Conn) -> None:
        self.conn = conn
        self.status = 0
        self.sent = 0
        self.pieces: list[tuple[int, bytes]] = []
        self.buffered = 0
        self.waiter: asyncio.Future[None] | None = None
        self.headers_done = False
        self.head_read = 0  # bytes of reads that ended inside the header block
        self.head_fields = 0  # bytes of the header lines parsed so far
        self.complete = False
        self.keep_alive = False
        self.framed = False  # Content-Length or chunked: the body does not end at EOF
        self.error: TransportError | None = None
        self.received = False  # some byte of the answer came (then it is never retried)
        #: 1 when this answer came on a fresh connection after a kept-alive one failed
        self.reconnects = 0
        self.retry_ns = 0  # when that retry began (before its connect)

    @property
    def sent_ns(self) -> int | None:
        return self.sent or None

    @property
    def retry_start_ns(self) -> int | None:
        """When the retry that produced this answer began, or None if there was none."""
        return self.retry_ns or None

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


def refused(ex: Exchange) -> bool:
    """The answer is in and says no: the rest of the request is not wanted."""
    return ex.headers_done and ex.status >= 300
