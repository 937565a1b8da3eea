"""A simulated network path between client and mock: ``--network-delay-ms D``.

Owns :class:`DelayLine`, one first-in first-out queue of timed actions for the
whole server, and the two shims that route a connection's traffic through it:
:class:`DelayedConn` (the protocol a transport sees: what the client sent reaches
the HTTP layer ``D`` after the kernel stamped it, stamped ``stamp + D``: the
server's clock starts there) and :class:`DelayedTransport` (the transport the HTTP
layer sees: each write, half-close, close and abort is done ``D`` after the
server asked for it). Every action is shifted by the same ``D``, so the gaps
between tokens are unchanged and each connection's bytes keep their order;
one queue serves every connection, since with one constant delay the due times
come out in the order they were queued (an inbound read's due time is its kernel
stamp's, a hair earlier than its turn: it waits that hair behind earlier items).

Only HTTP bytes travel the path: the TCP connect and the TLS handshake (done in
:mod:`loadgen.mock.sock`) are not delayed. Waits go through :class:`loadgen.mock.timer.Timer`
(sub-millisecond), not the event loop's millisecond timers.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from loadgen.mock.timer import SPIN_NS, Timer, spin_until

__all__ = ["DelayLine", "DelayedConn", "DelayedTransport", "StampedConn"]

_pc = time.perf_counter_ns


class StampedConn(Protocol):
    """What the shim passes on to: the HTTP connection (``loadgen.mock.http.HttpConn``)."""

    def connection_made(self, transport: Any) -> None: ...
    def data_received_at(self, data: bytes, now: int) -> None: ...
    def connection_lost(self, exc: Exception | None) -> None: ...


class DelayLine:
    """Runs each queued action at its due time (``perf_counter_ns``), in queue order."""

    __slots__ = ("closed", "delay_ns", "queue", "timer")

    def __init__(self, delay_ns: int, loop: asyncio.AbstractEventLoop) -> None:
        self.delay_ns = delay_ns
        self.queue: deque[tuple[int, Callable[..., None], tuple[Any, ...]]] = deque()
        self.closed = False
        self.timer = Timer(loop, self.run)  # its own helper thread

    def at(self, due_ns: int, fn: Callable[..., None], *args: Any) -> None:
        """Call ``fn(*args)`` at ``due_ns``, after everything queued before it."""
        if self.closed:
            return
        if not self.queue:
            self.timer.arm(due_ns)
        self.queue.append((due_ns, fn, args))

    def later(self, fn: Callable[..., None], *args: Any) -> None:
        """Call ``fn(*args)`` one delay from now."""
        self.at(_pc() + self.delay_ns, fn, *args)

    def run(self) -> None:
        """The timer's callback: every due action, in order; re-arm for the next one."""
        queue = self.queue
        while queue:
            due = queue[0][0]
            now = _pc()
            if due > now:
                if due - now > SPIN_NS:
                    self.timer.arm(due)
                    return
                spin_until(due)
            _, fn, args = queue.popleft()
            fn(*args)

    def close(self) -> None:
        """Drop what is still queued and stop the timer (the server is stopping)."""
        self.closed = True
        self.queue.clear()
        self.timer.close()


class DelayedTransport:
    """The part of ``asyncio.Transport`` the mock uses, each action one delay late."""

    __slots__ = ("_closing", "_inner", "_line", "writes")

    def __init__(self, inner: Any, line: DelayLine) -> None:
        self._inner = inner
        self._line = line
        self._closing = False  # close or abort asked for (it may still be on its way)
        #: write() calls so far; the socket's transport numbers the same writes alike (each
        #: reaches it, in order; one after a close never does, nor is it asked about)
        self.writes = 0

    def write(self, data: bytes) -> None:
        self.writes += 1
        if not self._closing:
            self._line.later(self._inner.write, data)

    def tx_ns(self, ids: list[int]) -> tuple[bool, list[int | None]] | None:
        """The socket's transmit stamps of these writes (``loadgen.mock.txlog.TxSource``):
        when they left, one delay after they were asked for."""
        tx_ns = getattr(self._inner, "tx_ns", None)
        return None if tx_ns is None else tx_ns(ids)

    def write_eof(self) -> None:
        self._line.later(self._inner.write_eof)

    def can_write_eof(self) -> bool:
        return bool(self._inner.can_write_eof())

    def close(self) -> None:
        if not self._closing:
            self._closing = True
            self._line.later(self._inner.close)

    def abort(self) -> None:
        self._closing = True
        if self._line.closed:  # the server is stopping: at once
            self._inner.abort()
        else:
            self._line.later(self._inner.abort)

    def is_closing(self) -> bool:
        return self._closing or bool(self._inner.is_closing())

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._inner.get_extra_info(name, default)

    def get_write_buffer_size(self) -> int:
        return int(self._inner.get_write_buffer_size())


class DelayedConn:
    """Sits between a transport and its HTTP connection: what arrives is one delay late."""

    __slots__ = ("conn", "line")

    def __init__(self, conn: StampedConn, line: DelayLine) -> None:
        self.conn = conn
        self.line = line

    def connection_made(self, transport: Any) -> None:
        self.conn.connection_made(DelayedTransport(transport, self.line))

    def data_received_at(self, data: bytes, recv_ns: int) -> None:
        due = recv_ns + self.line.delay_ns
        self.line.at(due, self.conn.data_received_at, data, due)

    def connection_lost(self, exc: Exception | None) -> None:
        # after the data that came before it; at once when the server is stopping
        if self.line.closed:
            self.conn.connection_lost(exc)
        else:
            self.line.later(self.conn.connection_lost, exc)
