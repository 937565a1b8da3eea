"""The agent's accept loop: connection cap, header read timeout, back-off at the fd limit.

Owns the listening socket once serving starts. Each accepted connection is handed
to aiohttp's protocol (``runner.server``) through a thin wrapper that drops a
client which has not sent a complete request head within ``header_timeout_s``
of connecting, or of starting its next request on a kept-alive connection.
At ``max_connections`` open connections, a new one first takes the place of
the connection idle longest: one kept alive after its answer, with no request
begun for ``IDLE_GRACE_S`` and nothing left to write, is closed (HTTP lets a
server close an idle connection; a client opens another). So idle connections
(300 of them, one ``/health`` each and no token) cannot starve the pollers
that have work. Only when none is idle is the new one answered ``503`` at once
and closed. When ``accept()`` fails for lack of file descriptors (EMFILE,
ENFILE) the loop sleeps with a doubling back-off (to 1 s) instead of spinning,
and logs once per episode. :meth:`Listener.close` stops accepting and aborts
every connection, so shutdown never waits on clients.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Counters", "Limits", "Listener"]

log = logging.getLogger("loadgen.gpu_agent")

DEFAULT_MAX_CONNECTIONS = 256
DEFAULT_HEADER_TIMEOUT_S = 5.0
HEAD_END = b"\r\n\r\n"
OUT_OF_FDS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
BACKOFF_FIRST_S = 0.05
BACKOFF_MAX_S = 1.0
REJECT_LINGER_S = 1.0  # how long a refused connection may take to read its 503
#: a connection counts as idle this long after its last request head: its answer is out
#: (handlers never block), and nothing of its next request has come
IDLE_GRACE_S = 0.5
BUSY_BODY = b'{"error":"too many connections"}'
BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
    b"Content-Length: %d\r\nRetry-After: 1\r\nConnection: close\r\n\r\n%s"
) % (len(BUSY_BODY), BUSY_BODY)


@dataclass(slots=True, frozen=True)
class Limits:
    """``--max-connections`` and ``--header-timeout-s``."""

    max_connections: int = DEFAULT_MAX_CONNECTIONS
    header_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S


@dataclass(slots=True)
class Counters:
    """What ``/health`` reports under ``connections``."""

    open: int = 0
    refused_busy: int = 0
    evicted_idle: int = 0
    dropped_slow: int = 0
    out_of_fds: int = 0


class _Guarded(asyncio.Protocol):
    """Forwards to aiohttp's protocol; aborts when a request head is late."""

    def __init__(self, inner: asyncio.Protocol, timeout_s: float, owner: Listener) -> None:
        self._inner = inner
        self._timeout_s = timeout_s
        self._owner = owner
        self._transport: asyncio.Transport | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._tail = b""  # the last bytes of an unfinished head, to find a split HEAD_END
        self.heads = 0  # complete request heads received
        self.head_at = 0.0  # when the last one completed (loop time)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        self._owner._opened(self)
        self._arm()
        self._inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        buf = self._tail + data
        start = 0
        while start < len(buf):
            if self._timer is None:
                self._arm()  # bytes of a new request: its head must arrive in time
            end = buf.find(HEAD_END, start)
            if end < 0:
                break
            self._disarm()
            self.heads += 1
            self.head_at = asyncio.get_running_loop().time()
            start = end + len(HEAD_END)
        self._tail = buf[start:][-3:] if self._timer is not None else b""
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._owner._closed(self)
        self._inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()

    def abort(self) -> None:
        if self._transport is not None:
            self._transport.abort()

    def idle_since(self, now: float) -> float | None:
        """When this connection went idle after an answer; None while it is not idle."""
        transport = self._transport
        if self._timer is not None or not self.heads or transport is None:
            return None  # a request head on its way, or none ever sent (the timeout's case)
        if transport.is_closing() or transport.get_write_buffer_size():
            return None
        return self.head_at if now - self.head_at >= IDLE_GRACE_S else None

    def evict(self) -> None:
        """Close gracefully: nothing is in flight on an idle connection."""
        if self._transport is not None:
            self._transport.close()

    def _arm(self) -> None:
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(self._timeout_s, self._late)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _late(self) -> None:
        self._timer = None
        self._owner.counters.dropped_slow += 1
        log.debug("dropped a client that sent no complete request head in %ss", self._timeout_s)
        self.abort()


class _Busy(asyncio.Protocol):
    """Answers 503 at once, reads and discards what the client sends, then closes."""

    def __init__(self, owner: Listener) -> None:
        self._owner = owner

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._owner._busy += 1
        transport.write(BUSY)
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(REJECT_LINGER_S, transport.abort)
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        if HEAD_END in data:  # the request was read: closing now cannot reset the 503
            self._transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._owner._busy -= 1
        self._timer.cancel()


class Listener:
    """Serves ``protocol_factory`` on an already bound socket within :class:`Limits`."""

    def __init__(
        self,
        sock: socket.socket,
        protocol_factory: Callable[[], asyncio.Protocol],
        limits: Limits,
        counters: Counters | None = None,
    ) -> None:
        self._sock = sock
        self._factory = protocol_factory
        self.limits = limits
        self.counters = counters or Counters()
        self._conns: set[_Guarded] = set()
        self._busy = 0  # refused connections still reading their 503
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._sock.setblocking(False)
        self._task = asyncio.get_running_loop().create_task(self._accept_loop())

    async def close(self) -> None:
        """Stop accepting, close the listening socket and abort every connection."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        self._sock.close()
        for conn in list(self._conns):
            conn.abort()

    async def _accept_loop(self) -> None:
        loop = asyncio.get_running_loop()
        backoff = 0.0
        while True:
            try:
                conn, _ = await loop.sock_accept(self._sock)
            except OSError as exc:
                if exc.errno not in OUT_OF_FDS:
                    log.warning("accept failed: %s", exc)
                    await asyncio.sleep(BACKOFF_FIRST_S)
                    continue
                if backoff == 0.0:
                    self.counters.out_of_fds += 1
                    log.warning(
                        "out of file descriptors with %d connections open (%s); "
                        "pausing accept (raise ulimit -n or lower --max-connections)",
                        self.counters.open,
                        exc.strerror,
                    )
                backoff = min(BACKOFF_MAX_S, max(BACKOFF_FIRST_S, backoff * 2))
                await asyncio.sleep(backoff)
                continue
            backoff = 0.0
            await self._hand_over(conn)

    async def _hand_over(self, conn: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        busy = self.counters.open >= self.limits.max_connections and not self._evict_idle()
        if busy:
            self.counters.refused_busy += 1
            if self._busy >= self.limits.max_connections:  # a flood: no 503, just close
                conn.close()
                return

        def factory() -> asyncio.Protocol:
            if busy:
                return _Busy(self)
            return _Guarded(self._factory(), self.limits.header_timeout_s, self)

        try:
            await loop.connect_accepted_socket(factory, sock=conn)
        except OSError:  # the client is already gone
            conn.close()

    def _evict_idle(self) -> bool:
        """Close the connection idle longest to make room; False when none is idle."""
        now = asyncio.get_running_loop().time()
        oldest: tuple[float, _Guarded] | None = None
        for conn in self._conns:
            since = conn.idle_since(now)
            if since is not None and (oldest is None or since < oldest[0]):
                oldest = (since, conn)
        if oldest is None:
            return False
        oldest[1].evict()
        self._closed(oldest[1])  # its place is free now, not when the close is done
        self.counters.evicted_idle += 1
        return True

    def _opened(self, conn: _Guarded) -> None:
        self._conns.add(conn)
        self.counters.open += 1

    def _closed(self, conn: _Guarded) -> None:
        if conn in self._conns:
            self._conns.discard(conn)
            self.counters.open -= 1
