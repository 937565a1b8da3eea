"""The mock's own TCP listener and connection transport, for exact receive stamps.

Owns accepting connections and moving their bytes. An event loop's built-in
transports read the socket themselves and pass on only the bytes, so the
receive time of a request could be stamped only when the loop got round to
the connection: late by whatever it was doing then (writing 64 streams'
tokens, or this process waking up late). Reading each socket with
``recvmsg`` keeps the kernel's stamp (``SO_TIMESTAMPNS``) of when the bytes
reached the socket, the true receive time for ``--truth``.

:class:`SockTransport` has the part of ``asyncio.Transport`` the mock uses
(``write``, ``close``, ``abort``, ``is_closing``, ``get_extra_info``) and
calls its protocol's ``data_received_at(data, ns)``. Writes go straight to the
socket; what the socket will not take waits and is sent when it is writable.
Where the kernel gives no stamp, a read is stamped when it is made.

:class:`TlsSockTransport` serves https the same way: TLS runs in memory
(``ssl.MemoryBIO``), so a request keeps the stamp of when its encrypted bytes
arrived.

With ``--truth`` (``listen(tx=True)``) each connection also asks the kernel
for a transmit stamp of each send (``SO_TIMESTAMPING``), numbers its writes
(``writes``) and answers ``tx_ns(ids)``: when those writes left the socket
(:mod:`loadgen.mock.txlog`). The stamps come on the socket's error queue, read
right after each send; such a socket is watched through a :class:`TxWatch`,
since the error queue's EPOLLERR would stop a uvloop watcher for good. Where
the kernel will not stamp, nothing changes and ``tx_ns`` answers None.

The kernel-stamp code (the socket options, the control messages, the
wall-to-monotonic offset) is ``loadgen.netstamp``'s, shared with the client;
the clocks it converts with are read here, as the mock keeps its own time.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import select
import socket
import ssl
import time
from collections.abc import Callable
from typing import Any, Protocol

from loadgen.mock.txlog import TxLog
from loadgen.netstamp import ANC_SIZE, TX_SENT, WallOffset, kernel_ns, tx_arm, tx_stamps
from loadgen.netstamp import enable as enable_stamps

__all__ = ["Listener", "SockTransport", "StampedProtocol", "TlsSockTransport", "listen"]

READ_SIZE = 256 * 1024
#: Writes a connection remembers for their stamps; older ones are forgotten past this.
TX_KEEP = 65536
#: After running out of descriptors or memory, wait this long before accepting again.
ACCEPT_RETRY_S = 0.1
_OUT_OF_RESOURCES = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}
_pc = time.perf_counter_ns
log = logging.getLogger("loadgen.mock")


class StampedProtocol(Protocol):
    def connection_made(self, transport: Any) -> None: ...
    def data_received_at(self, data: bytes, recv_ns: int) -> None: ...
    def connection_lost(self, exc: Exception | None) -> None: ...


#: Kernel stamps to monotonic ns; the mock reads its own clocks (it stands alone).
_OFFSET = WallOffset(_pc, time.time_ns)


class SockTransport:
    """One accepted connection."""

    __slots__ = (
        "_buffer", "_closing", "_dead", "_eof", "_fd", "_io", "_loop", "_protocol", "_sent",
        "_sock", "_tx", "_writing", "writes",
    )  # fmt: skip

    def __init__(
        self,
        sock: socket.socket,
        protocol: StampedProtocol,
        loop: asyncio.AbstractEventLoop,
        tx: TxWatch | None = None,
    ) -> None:
        self._sock = sock
        #: with ``tx``: the kernel stamps each send's leaving (else None: not asked, or refused)
        self._tx = TxLog() if tx is not None and tx_arm(sock, TX_SENT) else None
        #: who watches the socket: the loop, or (stamped) ``tx``, which the loop watches
        self._io: asyncio.AbstractEventLoop | TxWatch = (
            loop if self._tx is None or tx is None else tx
        )
        self._sent = 0  # bytes handed to the socket (sent or buffered), in stream order
        self.writes = 0  # write() calls so far: the id of the next one
        self._fd = sock.fileno()
        self._loop = loop
        self._protocol = protocol
        self._buffer = bytearray()
        self._closing = False
        self._dead = False
        self._writing = False  # a writer callback is registered
        self._eof = False  # write_eof: FIN once the buffer is sent
        protocol.connection_made(self)
        self._io.add_reader(self._fd, self._on_readable)

    def _on_readable(self) -> None:
        try:
            data, anc, _flags, _addr = self._sock.recvmsg(READ_SIZE, ANC_SIZE)
        except (BlockingIOError, InterruptedError):
            if self._tx is not None:  # asyncio: the error queue's EPOLLERR wakes the reader
                self._tx_drain()
            return
        except OSError as exc:
            self._finish(exc)
            return
        if not data:
            self._finish(None)
            return
        wall = kernel_ns(anc)
        now = _pc()
        stamp = now if wall is None else _OFFSET.to_monotonic(wall, now)
        self._received(data, stamp)

    def _received(self, data: bytes, stamp: int) -> None:
        if not self._closing:
            self._protocol.data_received_at(data, stamp)

    def write(self, data: bytes) -> None:
        """Send ``data`` (write id ``writes``, counted even if the connection is closing)."""
        self.writes += 1
        tx = self._tx
        if tx is None:
            self._write(data)
            return
        before = self._sent
        self._write(data)
        tx.ends.append(self._sent if self._sent > before else -1)
        if len(tx.ends) > TX_KEEP:
            tx.forget(tx.base + TX_KEEP // 2)

    def _write(self, data: bytes) -> None:
        if not self._closing:
            self._send(data)

    def _send(self, data: bytes) -> None:
        self._sent += len(data)
        if self._buffer:
            self._buffer += data
            return
        try:
            sent = self._sock.send(data)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError as exc:
            self._finish(exc)
            return
        if sent < len(data):
            self._buffer += memoryview(data)[sent:]
            self._io.add_writer(self._fd, self._on_writable)
            self._writing = True
        if self._tx is not None and not self._dead:
            self._tx_drain()

    def _on_writable(self) -> None:
        if not self._send_buffer():
            return
        if self._tx is not None and not self._dead:
            self._tx_drain()
        if not self._buffer:
            self._io.remove_writer(self._fd)
            self._writing = False
            self._drained()

    def _send_buffer(self) -> bool:
        """Send what the buffer holds, as much as the socket takes; False if nothing went."""
        try:
            sent = self._sock.send(self._buffer)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError as exc:
            self._finish(exc)
            return False
        del self._buffer[:sent]
        return True

    def _drained(self) -> None:
        """The buffer is empty: a close or half-close waiting for it goes ahead."""
        if self._closing:
            self._finish(None)
        elif self._eof:
            self._shut()

    # -- transmit stamps (with ``tx``) ------------------------------------------------------
    #
    # The error queue is read right after each send: on loopback the stamp is queued
    # before send() returns. A stamp that comes later (bytes the kernel held back, a
    # retransmission) raises EPOLLERR, which would stop a uvloop (libuv) watcher for good:
    # so a stamped socket is watched by a TxWatch (an epoll set the loop watches, which
    # reports its sockets' errors as readiness) and the reader drains the queue.

    def _tx_drain(self) -> None:
        tx = self._tx
        assert tx is not None
        for _kind, key, wall in tx_stamps(self._sock):
            tx.add(key, wall)

    def tx_ns(self, ids: list[int]) -> tuple[bool, list[int | None]] | None:
        """Monotonic transmit stamps of writes ``ids`` (``loadgen.mock.txlog.TxSource``)."""
        tx = self._tx
        if tx is None:
            return None
        if not self._dead:
            self._tx_drain()
        settled, out = tx.lookup(ids, lambda wall: _OFFSET.to_monotonic(wall, _pc()), self._dead)
        if settled and ids:
            tx.forget(max(ids) + 1)
        return settled, out

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        """Half-close: FIN once what is written so far has been sent; reading goes on."""
        self._eof = True
        if not self._buffer:
            self._shut()

    def _shut(self) -> None:
        if not self._dead:
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_WR)

    def get_write_buffer_size(self) -> int:
        return len(self._buffer)

    def is_closing(self) -> bool:
        return self._closing

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        if self._dead:  # the socket is closed: nothing to set or ask
            return default
        if name == "socket":
            return self._sock
        if name == "peername":
            return self._sock.getpeername()
        return default

    def close(self) -> None:
        """Close once what is written so far has been sent."""
        if self._closing:
            return
        self._closing = True
        if not self._buffer:
            self._finish(None)

    def abort(self) -> None:
        """Close now, dropping anything unsent."""
        self._closing = True
        self._finish(None)

    def _finish(self, exc: Exception | None) -> None:
        if self._dead:
            return
        self._dead = True
        self._closing = True
        if self._tx is not None:  # the last stamps, before the socket and its queue go
            self._tx_drain()
        self._io.remove_reader(self._fd)
        if self._writing:  # before the close: libuv must not poll a closed descriptor
            self._io.remove_writer(self._fd)
            self._writing = False
        self._buffer.clear()
        self._sock.close()
        self._loop.call_soon(self._protocol.connection_lost, exc)


class TlsSockTransport(SockTransport):
    """One accepted connection that speaks TLS: the protocol sees only plain bytes."""

    __slots__ = ("_incoming", "_outgoing", "_ready", "_tls")

    def __init__(
        self,
        sock: socket.socket,
        protocol: StampedProtocol,
        loop: asyncio.AbstractEventLoop,
        context: ssl.SSLContext,
        tx: TxWatch | None = None,
    ) -> None:
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._tls = context.wrap_bio(self._incoming, self._outgoing, server_side=True)
        self._ready = False  # the handshake is done
        super().__init__(sock, protocol, loop, tx)

    def can_write_eof(self) -> bool:
        return False  # a half-close under TLS would need close_notify first

    def _received(self, data: bytes, stamp: int) -> None:
        self._incoming.write(data)
        plain: list[bytes] = []
        eof = False
        try:
            if not self._ready:
                self._tls.do_handshake()
                self._ready = True
            while chunk := self._tls.read(READ_SIZE):
                plain.append(chunk)
            eof = True  # read() gives b"" only at the end of the stream
        except ssl.SSLZeroReturnError:  # the client's close_notify
            eof = True
        except ssl.SSLWantReadError:
            pass
        except ssl.SSLError as exc:
            log.debug("TLS error, closing: %s", exc)
            self._flush()  # the alert, if any
            self.abort()
            return
        self._flush()
        if plain and not self._closing:
            self._protocol.data_received_at(b"".join(plain), stamp)
        if eof:  # after what the protocol scheduled for that data, as a later read would be
            self._loop.call_soon(self.close)

    def _write(self, data: bytes) -> None:
        if self._closing or not self._ready:
            return
        try:
            self._tls.write(data)
        except ssl.SSLError as exc:
            log.debug("TLS error, closing: %s", exc)
            self.abort()
            return
        self._flush()

    def close(self) -> None:
        if not self._closing and self._ready:
            with contextlib.suppress(ssl.SSLError):  # it then waits for the client's; we do not
                self._tls.unwrap()  # queues our close_notify
            self._flush()
        super().close()

    def _flush(self) -> None:
        if self._outgoing.pending and not self._dead:
            self._send(self._outgoing.read())


class TxWatch:
    """Watches stamped sockets for the loop: one epoll set, which the loop watches.

    A socket with transmit stamps in its error queue polls EPOLLERR; a uvloop
    (libuv) watcher stops for good on that, asyncio's calls its reader. In this
    set the error is this set's readiness to the loop, and :meth:`_ready` calls
    the socket's reader (which reads the queue where there is nothing to read)
    and its writer, as the loop's ``add_reader``/``add_writer`` would. Level
    triggered, as the loop's are.
    """

    __slots__ = ("_callbacks", "_ep", "_loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._ep = select.epoll()
        self._callbacks: dict[int, list[Callable[[], None] | None]] = {}  # fd: [reader, writer]
        loop.add_reader(self._ep.fileno(), self._ready)

    def _set(self, fd: int, which: int, callback: Callable[[], None] | None) -> None:
        if self._ep.closed:  # the listener has closed: connections going after it
            self._callbacks.pop(fd, None)
            return
        slots = self._callbacks.get(fd)
        if slots is None:
            if callback is None:
                return
            slots = self._callbacks[fd] = [None, None]
            slots[which] = callback
            self._ep.register(fd, self._mask(slots))
            return
        slots[which] = callback
        if slots[0] is None and slots[1] is None:
            del self._callbacks[fd]
            with contextlib.suppress(OSError):  # closed already
                self._ep.unregister(fd)
        else:
            self._ep.modify(fd, self._mask(slots))

    @staticmethod
    def _mask(slots: list[Callable[[], None] | None]) -> int:
        return (select.EPOLLIN if slots[0] else 0) | (select.EPOLLOUT if slots[1] else 0)

    def add_reader(self, fd: int, callback: Callable[[], None]) -> None:
        self._set(fd, 0, callback)

    def remove_reader(self, fd: int) -> None:
        self._set(fd, 0, None)

    def add_writer(self, fd: int, callback: Callable[[], None]) -> None:
        self._set(fd, 1, callback)

    def remove_writer(self, fd: int) -> None:
        self._set(fd, 1, None)

    def _ready(self) -> None:
        for fd, events in self._ep.poll(0):
            slots = self._callbacks.get(fd)
            if slots is None:
                continue
            if events & _READ_EVENTS and (reader := slots[0]) is not None:
                reader()
            if events & _WRITE_EVENTS and (writer := slots[1]) is not None:
                writer()

    def close(self) -> None:
        if not self._ep.closed:
            self._loop.remove_reader(self._ep.fileno())
            self._ep.close()


#: what wakes a watched socket's reader (an error: the queue of stamps, or a reset) and writer
_READ_EVENTS = select.EPOLLIN | select.EPOLLERR | select.EPOLLHUP
_WRITE_EVENTS = select.EPOLLOUT | select.EPOLLERR | select.EPOLLHUP


class Listener:
    """Listening sockets that wrap each accepted connection in a :class:`SockTransport`.

    With ``tls`` (a server context), in a :class:`TlsSockTransport` instead.
    """

    def __init__(
        self,
        sockets: list[socket.socket],
        factory: Any,
        loop: asyncio.AbstractEventLoop,
        tls: ssl.SSLContext | None = None,
        tx: bool = False,
    ) -> None:
        self.sockets = sockets
        self._factory = factory
        self._loop = loop
        self._tls = tls
        #: with ``tx``: one watcher for every stamped connection (closed with the listener)
        self._tx = TxWatch(loop) if tx and hasattr(select, "epoll") else None  # Linux
        for sock in sockets:
            loop.add_reader(sock.fileno(), self._on_accept, sock)

    def _on_accept(self, sock: socket.socket) -> None:
        for _ in range(128):  # as many as are waiting, a bounded batch at a time
            try:
                conn, _addr = sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:  # the client gave up while queued
                continue
            except OSError as exc:
                if exc.errno in _OUT_OF_RESOURCES:  # stop polling a while rather than spin
                    self._loop.remove_reader(sock.fileno())
                    self._loop.call_later(ACCEPT_RETRY_S, self._resume, sock)
                return
            conn.setblocking(False)
            if conn.family in (socket.AF_INET, socket.AF_INET6):
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            enable_stamps(conn)  # else reads are stamped when made
            if self._tls is None:
                SockTransport(conn, self._factory(), self._loop, self._tx)
            else:
                TlsSockTransport(conn, self._factory(), self._loop, self._tls, self._tx)

    def _resume(self, sock: socket.socket) -> None:
        if sock.fileno() >= 0:
            self._loop.add_reader(sock.fileno(), self._on_accept, sock)

    def close(self) -> None:
        for sock in self.sockets:
            if sock.fileno() >= 0:
                self._loop.remove_reader(sock.fileno())
                sock.close()
        if self._tx is not None:
            self._tx.close()

    async def wait_closed(self) -> None:
        await asyncio.sleep(0)


async def listen(
    factory: Any,
    host: str,
    port: int,
    backlog: int,
    tls: ssl.SSLContext | None = None,
    tx: bool = False,
) -> Listener:
    """Bind every address of ``host:port`` (port 0: a free one, the same for all if it can);
    with ``tx`` each connection's sends are stamped by the kernel (``SockTransport.tx_ns``)."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    sockets: list[socket.socket] = []
    try:
        for family, type_, proto, _, addr in dict.fromkeys(
            (i[0], i[1], i[2], None, i[4]) for i in infos
        ):
            sock = socket.socket(family, type_, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            if port == 0 and len(sockets) > 1:  # the port the first one got
                addr = (addr[0], sockets[0].getsockname()[1], *addr[2:])
            sock.bind(addr)
            sock.listen(backlog)
            sock.setblocking(False)
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return Listener(sockets, factory, loop, tls, tx)
