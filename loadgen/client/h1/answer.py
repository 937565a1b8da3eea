"""One h1 request's answer as data: :class:`Exchange`, the h1 transport's ``Response``.

Owns what the caller sees of an answer: its status, the stamped body pieces
waiting for the caller (handed over a read's worth at a time by
:meth:`Exchange.chunks`), the error it ended with, its request phases, and
whether the answer says no (:func:`refused`). It does no I/O and parses
nothing: its connection (``exchange.Core``, ``connection.Conn`` with its
socket) fills it, and how far the answer has got is that connection's one
``state.State``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from loadgen.client.h1.state import State
from loadgen.client.transport import Phases, TransportError

if TYPE_CHECKING:
    from loadgen.client.h1.exchange import Core

__all__ = ["Exchange", "refused"]

#: Read once a chunk (an enum member is a slow class attribute in Python 3.11).
_DONE = State.DONE


class Exchange:
    """One request's answer as it comes: the connection fills it, the caller drains it.

    This is the transport's :class:`~loadgen.client.transport.Response`. It holds
    data only; how far the answer has got is its connection's :class:`State`.
    """

    __slots__ = (
        "aborted",
        "buffered",
        "conn",
        "cut",
        "ended",
        "error",
        "first_byte",
        "framed",
        "framing",
        "fresh",
        "head_at",
        "head_fields",
        "keep_alive",
        "pieces",
        "received",
        "reconnects",
        "retry_ns",
        "sent",
        "status",
        "stray",
        "waiter",
    )

    def __init__(self, conn: Core) -> None:
        self.conn = conn
        self.status = 0  # set when the head is in
        self.sent = 0
        self.cut = False  # the rest of the request was dropped (a refusal came first)
        self.ended = False  # the caller read the answer's last event ([DONE])
        self.stray = False  # body bytes came past that event: the connection is not reused
        self.pieces: list[tuple[int, bytes]] = []
        self.buffered = 0
        self.waiter: asyncio.Future[None] | None = None
        self.received = 0  # bytes of the answer so far (any: then it is never retried)
        self.head_fields = 0  # bytes of the header lines parsed so far
        self.framed = False  # Content-Length or chunked: the body does not end at EOF
        self.framing = 0  # bytes of the body's reads since its last body byte (a trailer's)
        self.keep_alive = False  # the complete answer lets the connection carry another
        self.error: TransportError | None = None
        #: 1 when this answer came on a fresh connection after a kept-alive one failed
        self.reconnects = 0
        self.retry_ns = 0  # when that retry began (before its connect)
        self.aborted = False  # the caller stopped reading on purpose: closed, never reused
        self.fresh = False  # the first request on its connection
        self.first_byte = 0  # the receive stamp of the answer's first read (1xx included)
        self.head_at = 0  # that of the read that completed its header block

    @property
    def sent_ns(self) -> int | None:
        return self.sent or None

    @property
    def phases(self) -> Phases:
        """Its connection's set-up stamps if it was the first request on it; its answer's."""
        conn = self.conn
        fresh = self.fresh
        return Phases(
            new_connection=fresh,
            connect_start_ns=(conn.connect_start_ns or None) if fresh else None,
            connect_ns=(conn.connect_ns or None) if fresh else None,
            tls_ns=(conn.tls_ns or None) if fresh else None,
            first_byte_ns=self.first_byte or None,
            headers_ns=self.head_at or None,
        )

    @property
    def retry_start_ns(self) -> int | None:
        """When the retry that produced this answer began, or None if there was none."""
        return self.retry_ns or None

    def end_of_answer(self, trailing: bool) -> None:
        """The caller read the answer's last event; ``trailing``: bytes came after it."""
        self.ended = True
        if trailing:
            self.stray = True

    def abort(self) -> None:
        """The caller stops reading: the connection closes as it lets go (the server sees
        the client go), rather than draining the body to reuse it."""
        self.aborted = True

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
        conn = self.conn
        while not conn.head_in():
            if self.error is not None:
                raise self.error
            await self._wait()

    async def chunks(self) -> AsyncIterator[tuple[int, bytes]]:
        conn = self.conn
        while True:
            if self.pieces:
                pieces = self.pieces
                self.pieces = []
                self.buffered = 0
                if not conn.reading:
                    conn.resume()
                for piece in pieces:
                    yield piece
            elif self.error is not None:
                raise self.error
            elif conn.state >= _DONE:  # complete: a failed one has its error
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
    return ex.status >= 300  # set only once the head is in
