"""One HTTP/1.1 connection of the h1 transport: its socket, reads with kernel stamps, TLS.

Owns a socket from connect to close. It reads with ``recvmsg`` and keeps the
kernel's receive stamp (``SO_TIMESTAMPNS``, through ``loadgen.netstamp``) of
each read, decrypts TLS in memory (``ssl.MemoryBIO``, so a read keeps the
stamp of its encrypted bytes), and feeds each read to its :class:`Core`
(``exchange``: the parsing, the reuse decisions, the connection's one
``state.State``), which hands the read's body to the caller as one
stamped piece of the ``Exchange`` (``answer``). It pauses reading when the caller falls
far behind, drains an answer its caller stopped reading (within
``DRAIN_S``), and sends through one queue so nothing cuts into a request on
its way out. Where the kernel gives no stamp (not
Linux), a read is stamped when it is made. The pool around it is
``transport``, which asks it whether it can be reused.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from collections import deque
from typing import Protocol

from loadgen.client.h1.exchange import Core
from loadgen.client.h1.state import State
from loadgen.client.transport import ReadLag, TransportError, describe
from loadgen.clock import from_kernel_ns, now_ns
from loadgen.netstamp import ANC_SIZE, kernel_ns

__all__ = ["DRAIN_S", "READ_SIZE", "Conn", "Key", "Owner", "Tls"]

READ_SIZE = 256 * 1024
#: How long a connection may take to finish an answer its caller stopped reading.
DRAIN_S = 2.0
_DRAINING = State.DRAINING  # looked at on every read: an enum member is slow to get (3.11)

#: (host, port, TLS): one pool each
Key = tuple[str, int, bool]

#: A TLS session kept in memory: the object, its incoming and outgoing bytes
Tls = tuple[ssl.SSLObject, ssl.MemoryBIO, ssl.MemoryBIO]


class Owner(Protocol):
    """What a connection needs of its pool (``H1Transport``)."""

    loop: asyncio.AbstractEventLoop
    read_lag: ReadLag

    def release(self, conn: Conn) -> None:
        """Pool ``conn`` (its answer is complete and it may carry another) if there is room."""

    def forget(self, conn: Conn) -> None: ...


class Conn(Core):
    """One keep-alive connection: a :class:`Core` with a socket (and maybe TLS)."""

    __slots__ = (
        "drain_timer",
        "fd",
        "key",
        "outbox",
        "owner",
        "sock",
        "tls",
        "tls_in",
        "tls_out",
        "writer",
    )

    def __init__(self, sock: socket.socket, key: Key, owner: Owner, tls: Tls | None = None) -> None:
        super().__init__(owner.loop)
        self.sock = sock
        self.tls: ssl.SSLObject | None = None
        self.tls_in: ssl.MemoryBIO | None = None
        self.tls_out: ssl.MemoryBIO | None = None
        if tls is not None:
            self.tls, self.tls_in, self.tls_out = tls
        self.fd = sock.fileno()
        self.key = key
        self.owner = owner
        self.drain_timer: asyncio.TimerHandle | None = None
        self.outbox: deque[bytes] = deque()  # bytes the socket would not take yet, in order
        self.writer: asyncio.Task[None] | None = None  # sending the outbox
        self.loop.add_reader(self.fd, self._on_readable)

    # -- the socket

    def _on_readable(self) -> None:
        try:
            data, anc, _flags, _addr = self.sock.recvmsg(READ_SIZE, ANC_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self.lost(TransportError("disconnected", describe(exc)))
            return
        wall = kernel_ns(anc)
        if wall is None:
            stamp = now_ns()
        else:
            read_ns = now_ns()
            stamp = from_kernel_ns(wall, read_ns)
            self.owner.read_lag.add(read_ns - stamp)
        eof = not data
        if self.tls is not None and data:
            try:
                data, eof = self._decrypt(data)
            except ssl.SSLError as exc:
                self.lost(TransportError("protocol_error", f"TLS: {describe(exc)}"))
                return
            if not data and not eof:
                return  # TLS housekeeping only (a session ticket): nothing for HTTP
        ex = self.ex
        if (eof and not data) or ex is None:  # EOF, or bytes nobody asked for: done
            self.lost(None)
            return
        draining = self.state is _DRAINING
        error = self.feed(data, stamp)
        if error is not None:  # after a complete answer this only closes the connection
            self.lost(error)
        elif eof:  # the server's TLS close_notify came with the last bytes
            self.lost(None)
        elif draining and self.state is State.DONE:
            self.let_go()
        else:
            ex.wake()

    def _decrypt(self, raw: bytes) -> tuple[bytes, bool]:
        """TLS records in, plaintext out; True once the server has closed the session."""
        assert self.tls is not None and self.tls_in is not None
        self.tls_in.write(raw)
        out: list[bytes] = []
        eof = False
        while True:
            try:
                chunk = self.tls.read(READ_SIZE)
            except ssl.SSLWantReadError:
                break
            except ssl.SSLZeroReturnError:
                eof = True
                break
            if not chunk:
                eof = True
                break
            out.append(chunk)
        self._flush_tls()  # a key update or an alert the read produced
        return b"".join(out), eof

    def _flush_tls(self) -> None:
        if self.tls_out is not None and self.tls_out.pending:
            with contextlib.suppress(OSError):  # the read side will see the connection go
                self.write(self.tls_out.read())

    def write(self, data: bytes) -> asyncio.Task[None] | None:
        """Send ``data`` after anything still queued; returns the task still sending it.

        One write path per connection, so TLS records the reader has to send (a
        key update) never cut into a request on its way out. Raises ``OSError``
        if the socket refuses at once.
        """
        if self.writer is None:
            try:
                sent = self.sock.send(data)
            except (BlockingIOError, InterruptedError):
                sent = 0
            if sent == len(data):
                return None
            self.outbox.append(data[sent:])
            self.writer = self.loop.create_task(self._write_out())
        else:
            self.outbox.append(data)
        return self.writer

    async def _write_out(self) -> None:
        try:
            while self.outbox:
                await self.loop.sock_sendall(self.sock, self.outbox.popleft())
        except OSError as exc:
            if self.reading:  # an answer may have come before the close: read it first
                self._on_readable()
            if not self.closed:
                self.lost(TransportError("disconnected", describe(exc)))
        finally:
            self.writer = None

    def encrypt(self, payload: bytes) -> bytes:
        if self.tls is None or self.tls_out is None:
            return payload
        self.tls.write(payload)
        return self.tls_out.read()

    def alive(self) -> bool:
        """Not closed by the server, even if the loop has not yet told us (one syscall)."""
        if self.closed:
            return False
        try:
            self.sock.recv(1, socket.MSG_PEEK)  # EOF or bytes nobody asked for: unusable
        except (BlockingIOError, InterruptedError):
            return True  # nothing waiting: the only good answer
        except OSError:
            return False
        if self.tls is not None:  # maybe a session ticket: read it; app data or EOF close us
            self._on_readable()
            return not self.closed
        return False

    def pause(self) -> None:
        if self.reading and not self.closed:
            self.loop.remove_reader(self.fd)
            self.reading = False

    def resume(self) -> None:
        if not self.reading and not self.closed:
            self.loop.add_reader(self.fd, self._on_readable)
            self.reading = True

    def drop_unsent(self) -> None:
        """A refusal came before the whole request went out: the rest is not sent, and the
        connection is never reused."""
        assert self.ex is not None
        self.ex.cut = True
        self.outbox.clear()

    def let_go(self) -> None:
        """The caller is through with the answer: the pool, a drain, or the close."""
        then = self.after_caller()
        if then is State.IDLE:
            if self.drain_timer is not None:
                self.drain_timer.cancel()
                self.drain_timer = None
            self.owner.release(self)
        elif then is State.DRAINING:
            self.drain()
            self.drain_timer = self.loop.call_later(DRAIN_S, self._drain_expired)
        else:
            self.close()

    def _drain_expired(self) -> None:
        if self.state is State.DRAINING:
            self.close()

    def lost(self, error: TransportError | None) -> None:
        """The server closed the connection (``error`` None) or it broke."""
        self._shut(error, by_server=True)

    def close(self) -> None:
        """Close now; an unfinished answer fails (``disconnected``)."""
        self._shut(None, by_server=False)

    def _shut(self, error: TransportError | None, by_server: bool) -> None:
        ex = self.ex
        if not self.closed:
            self.end(error, by_server)
            if self.drain_timer is not None:
                self.drain_timer.cancel()
            if self.writer is not None:
                self.writer.cancel()
            if self.reading:
                self.loop.remove_reader(self.fd)
                self.reading = False
            self.sock.close()
            self.owner.forget(self)
        if ex is not None:
            ex.wake()
