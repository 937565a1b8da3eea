"""One HTTP/1.1 connection of the h1 transport: reading with kernel stamps, parsing, TLS.

Owns a socket from connect to close. It reads with ``recvmsg`` and keeps the
kernel's receive stamp (``SO_TIMESTAMPNS``) of each read, decrypts TLS in
memory (``ssl.MemoryBIO``, so a read keeps the stamp of its encrypted bytes),
feeds httptools (llhttp), and hands each read's body to the caller as one
stamped piece (``h1_exchange.Exchange``, the transport's ``Response``). It also
skips 1xx answers, refuses bytes after a complete answer, pauses reading when
the caller falls far behind, ends an answer whose header block passes
``MAX_HEADER_BYTES`` (``headers_too_large``), drains an answer its caller
stopped reading, and sends through one queue so nothing cuts into a request on
its way out. Where
the kernel gives no stamp (not Linux), a read is stamped when it is made. The
pool around it is ``h1_transport``.

Imports: httptools, loadgen.clock, loadgen.client.transport, loadgen.client.h1_exchange.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import struct
import sys
from collections import deque
from typing import Protocol

import httptools

from loadgen.client.h1_exchange import Exchange
from loadgen.client.transport import ReadLag, TransportError, describe
from loadgen.clock import from_kernel_ns, now_ns

__all__ = [
    "MAX_HEADER_BYTES",
    "PAUSE_BYTES",
    "SO_TIMESTAMPNS",
    "Conn",
    "Key",
    "Owner",
    "Tls",
    "keep_alive",
]

#: The socket module names it only from Python 3.14 on; 35 is Linux's value (and
#: means something else elsewhere, so it is not guessed there).
SO_TIMESTAMPNS: int | None = getattr(
    socket, "SO_TIMESTAMPNS", 35 if sys.platform.startswith("linux") else None
)
_TIMESPEC = struct.Struct("@qq")
_ANC_SIZE = socket.CMSG_SPACE(_TIMESPEC.size)
READ_SIZE = 256 * 1024
#: Stop reading a connection while this much of its body waits for the consumer.
PAUSE_BYTES = 8 * 1024 * 1024
#: The most bytes one answer's header block (status line and header lines, and any 1xx
#: answers before it) may take; past it the request ends with ``headers_too_large``. It is
#: checked after each read, so httptools holds at most this plus one read (``READ_SIZE``).
MAX_HEADER_BYTES = 64 * 1024
#: A connection idle this close to the server's announced ``Keep-Alive: timeout`` is
#: not reused (the server's clock started when it wrote; ours when the caller let go):
#: a quarter of the timeout, at most one second.
IDLE_MARGIN_MAX_NS = 1_000_000_000

#: (host, port, TLS): one pool each
Key = tuple[str, int, bool]

#: A TLS session kept in memory: the object, its incoming and outgoing bytes
Tls = tuple[ssl.SSLObject, ssl.MemoryBIO, ssl.MemoryBIO]


class Owner(Protocol):
    """What a connection needs of its pool (``H1Transport``)."""

    loop: asyncio.AbstractEventLoop
    read_lag: ReadLag

    def release(self, conn: Conn, ex: Exchange) -> None: ...

    def forget(self, conn: Conn) -> None: ...


class _Stray(Exception):
    """A second answer began on a connection whose request was already answered."""


class _HeadersTooLarge(Exception):
    """The answer's header block passed ``MAX_HEADER_BYTES``."""

    def __init__(self) -> None:
        super().__init__(f"the response header block passed {MAX_HEADER_BYTES} bytes")


class Conn:
    """One keep-alive connection; also the httptools callback target."""

    __slots__ = (
        "body",
        "closed",
        "drain_timer",
        "draining",
        "ex",
        "fd",
        "idle_since",
        "interim",
        "keep_left",
        "keep_ns",
        "key",
        "loop",
        "outbox",
        "owner",
        "parser",
        "reading",
        "reusable",
        "sock",
        "tls",
        "tls_in",
        "tls_out",
        "writer",
    )

    def __init__(self, sock: socket.socket, key: Key, owner: Owner, tls: Tls | None = None) -> None:
        self.sock = sock
        self.tls: ssl.SSLObject | None = None
        self.tls_in: ssl.MemoryBIO | None = None
        self.tls_out: ssl.MemoryBIO | None = None
        if tls is not None:
            self.tls, self.tls_in, self.tls_out = tls
        self.fd = sock.fileno()
        self.key = key
        self.owner = owner
        self.loop = owner.loop
        self.parser = httptools.HttpResponseParser(self)
        self.ex: Exchange | None = None
        self.body: list[bytes] = []
        self.closed = False
        self.reusable = True  # False once an answer came before the whole request went out
        self.interim = False  # inside a 1xx answer, which precedes the real one
        self.draining = False  # the caller is done; reading the rest of the body to reuse us
        self.drain_timer: asyncio.TimerHandle | None = None
        self.outbox: deque[bytes] = deque()  # bytes the socket would not take yet, in order
        self.writer: asyncio.Task[None] | None = None  # sending the outbox
        #: what the server's ``Keep-Alive`` announced: requests it still takes, idle limit
        self.keep_left: int | None = None
        self.keep_ns: int | None = None
        self.idle_since = 0  # when the connection last went back to the pool
        self.loop.add_reader(self.fd, self._on_readable)
        self.reading = True

    # -- httptools callbacks

    def on_message_begin(self) -> None:
        ex = self.ex
        if ex is not None and ex.complete:
            raise _Stray("bytes after the complete answer")

    def on_header(self, name: bytes, value: bytes) -> None:
        ex = self.ex
        if ex is None:
            return
        ex.head_fields += len(name) + len(value) + 4  # ": " and CRLF
        if ex.head_fields > MAX_HEADER_BYTES:  # many headers that came in one read
            raise _HeadersTooLarge
        name = name.lower()
        if name == b"content-length":
            ex.framed = True
        elif name == b"transfer-encoding":  # only chunked ends by itself; others end at close
            ex.framed = value.rstrip().lower().endswith(b"chunked")
        elif name == b"keep-alive":
            timeout_s, left = keep_alive(value)
            if timeout_s is not None:
                self.keep_ns = timeout_s * 1_000_000_000
            if left is not None:
                self.keep_left = left

    def on_headers_complete(self) -> None:
        ex = self.ex
        if ex is not None:
            status = self.parser.get_status_code()
            if 100 <= status < 200:  # 100 Continue, 103 Early Hints: the answer follows
                self.interim = True
                return
            ex.status = status
            ex.headers_done = True

    def on_body(self, body: bytes) -> None:
        if not self.draining:
            self.body.append(body)

    def on_message_complete(self) -> None:
        ex = self.ex
        if ex is None:
            return
        if self.interim:
            self.interim = False
            ex.framed = False
            return
        ex.complete = True
        ex.keep_alive = self.parser.should_keep_alive()

    # -- the socket

    def _on_readable(self) -> None:
        try:
            data, anc, _flags, _addr = self.sock.recvmsg(READ_SIZE, _ANC_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self.lost(TransportError("disconnected", describe(exc)))
            return
        if anc and len(anc[0][2]) == _TIMESPEC.size:
            sec, nsec = _TIMESPEC.unpack(anc[0][2])
            read_ns = now_ns()
            stamp = from_kernel_ns(sec * 1_000_000_000 + nsec, read_ns)
            self.owner.read_lag.add(read_ns - stamp)
        else:
            stamp = now_ns()
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
        ex.received = True
        in_head = not ex.headers_done
        error: Exception | None = None
        try:
            self.parser.feed_data(data)
        except Exception as exc:  # llhttp's errors, an upgrade, a stray second answer
            error = exc
        if in_head and error is None and not ex.headers_done:  # all of it was header block
            ex.head_read += len(data)
            if ex.head_read > MAX_HEADER_BYTES:  # a header block that does not end
                error = _HeadersTooLarge()
        body = self.body
        if body:
            piece = body[0] if len(body) == 1 else b"".join(body)
            body.clear()
            ex.pieces.append((stamp, piece))
            ex.buffered += len(piece)
            if ex.buffered > PAUSE_BYTES:
                self.pause()
        if error is not None:  # after a complete answer this only closes the connection
            cause = error if isinstance(error, _HeadersTooLarge) else error.__context__
            if isinstance(cause, _HeadersTooLarge):  # raised in on_header, wrapped by httptools
                self.lost(TransportError("headers_too_large", str(cause)))
            else:
                self.lost(TransportError("protocol_error", describe(error)))
        elif eof:  # the server's TLS close_notify came with the last bytes
            self.lost(None)
        elif self.draining and ex.complete:
            self.draining = False
            if self.drain_timer is not None:
                self.drain_timer.cancel()
            self.owner.release(self, ex)
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

    def start(self) -> Exchange:
        if self.keep_left is not None:
            self.keep_left -= 1
        self.ex = Exchange(self)
        return self.ex

    def spent(self) -> bool:
        """The server said it takes no more requests on this connection."""
        return self.keep_left is not None and self.keep_left <= 0

    def expired(self, now: int) -> bool:
        """Idle for (nearly) as long as the server's ``Keep-Alive: timeout`` allows."""
        keep = self.keep_ns
        if keep is None:
            return False
        return now - self.idle_since >= keep - min(keep // 4, IDLE_MARGIN_MAX_NS)

    def pause(self) -> None:
        if self.reading and not self.closed:
            self.loop.remove_reader(self.fd)
            self.reading = False

    def resume(self) -> None:
        if not self.reading and not self.closed:
            self.loop.add_reader(self.fd, self._on_readable)
            self.reading = True

    def drain(self, timeout_s: float) -> None:
        """Read the rest of a finished-with answer, then go back to the pool (or close)."""
        assert self.ex is not None
        self.draining = True
        self.ex.pieces.clear()
        self.resume()
        self.drain_timer = self.loop.call_later(timeout_s, self._drain_expired)

    def _drain_expired(self) -> None:
        if self.draining:
            self.close()

    def lost(self, error: TransportError | None) -> None:
        """The server closed the connection (``error`` None) or it broke."""
        ex = self.ex
        if ex is not None and not ex.complete and ex.error is None:
            if error is None and ex.headers_done and not ex.framed:
                ex.complete = True  # a body delimited by the close itself
            else:
                where = "mid-body" if ex.headers_done else "before the response headers"
                ex.error = error or TransportError(
                    "disconnected", f"the server closed the connection {where}"
                )
        self.close()
        if ex is not None:
            ex.wake()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.draining = False
            if self.drain_timer is not None:
                self.drain_timer.cancel()
            if self.writer is not None:
                self.writer.cancel()
            if self.reading:
                self.loop.remove_reader(self.fd)
                self.reading = False
            self.sock.close()
            self.owner.forget(self)


def keep_alive(value: bytes) -> tuple[int | None, int | None]:
    """``(timeout s, max)`` of a ``Keep-Alive`` header (``timeout=5, max=100``).

    ``max`` is the number of further requests the server takes on the
    connection (Apache counts it down from ``MaxKeepAliveRequests``). A value
    that is not a small non-negative integer is ignored.
    """
    timeout_s: int | None = None
    left: int | None = None
    for part in value.split(b","):
        name, _, number = part.partition(b"=")
        number = number.strip().strip(b'"')
        if not (number.isdigit() and len(number) <= 9):
            continue
        name = name.strip().lower()
        if name == b"timeout":
            timeout_s = int(number)
        elif name == b"max":
            left = int(number)
    return timeout_s, left
