"""One HTTP/1.1 connection with one owner: :class:`Connection`, its socket, its state, its parser.

Owns a connection from connect to close, in httpcore's shape: one class holds
the socket, the connection's one :class:`State` (moved only through
:func:`advance`, along ``TRANSITIONS``), its httptools (llhttp) parser, whose
callback target it is, and the request in hand, its :class:`Exchange` (the
answer as the caller sees it: the h1 transport's ``Response``).

Reads: each is a ``recvmsg`` that keeps the kernel's receive stamp
(``SO_TIMESTAMPNS``, through ``loadgen.netstamp``); TLS is decrypted in memory
(``ssl.MemoryBIO``), so a read keeps the stamp of its encrypted bytes; where
the kernel gives no stamp (not Linux), a read is stamped when it is made. The
read's body becomes one stamped piece of the exchange. Stamp first, parse
later: the stamp is taken before a byte is parsed.

Invariants: a header block (and a chunked body's trailer) is bounded by
``MAX_HEADER_BYTES``; reading pauses while ``PAUSE_BYTES`` of body wait for
the caller; an answer the caller stopped reading is drained (within
``DRAIN_S``) to reuse the connection; everything sent goes through one queue,
so nothing cuts into a request on its way out. Reuse is decided here
(``Connection: close``, ``Keep-Alive: max=…, timeout=…``, a request cut short
by a refusal, a body left unread, bytes past the answer's last event); the
pool around it (``transport``) asks.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from collections import deque
from collections.abc import AsyncIterator
from enum import IntEnum
from typing import Protocol

import httptools

from loadgen.client.h1.polls import Polls
from loadgen.client.h1.tls import Session
from loadgen.client.transport import Phases, ReadLag, TransportError, describe
from loadgen.clock import from_kernel_ns, now_ns
from loadgen.netstamp import ANC_SIZE, kernel_ns

__all__ = [
    "DRAIN_S",
    "IDLE_MARGIN_MAX_NS",
    "MAX_HEADER_BYTES",
    "PAUSE_BYTES",
    "READ_SIZE",
    "TRANSITIONS",
    "Connection",
    "Event",
    "Exchange",
    "Key",
    "Owner",
    "State",
    "advance",
    "keep_alive",
]

READ_SIZE = 256 * 1024
#: How long a connection may take to finish an answer its caller stopped reading.
DRAIN_S = 2.0
#: Stop reading a connection while this much of its body waits for the consumer.
PAUSE_BYTES = 8 * 1024 * 1024
#: The most bytes one answer's header block (status line and header lines, and any 1xx
#: answers before it) may take; past it the request ends with ``headers_too_large``. It is
#: checked after each read, so httptools holds at most this plus one read. A chunked body's
#: trailer (the header lines after its last, empty chunk) is held to the same bound: reads
#: of a body that bring no body byte are counted, and past it the request ends the same way.
MAX_HEADER_BYTES = 64 * 1024
#: A connection idle this close to the server's announced ``Keep-Alive: timeout`` is
#: not reused (the server's clock started when it wrote; ours when the caller let go):
#: a quarter of the timeout, at most one second.
IDLE_MARGIN_MAX_NS = 1_000_000_000

#: (host, port, TLS): one pool each
Key = tuple[str, int, bool]


# -- the state


class State(IntEnum):
    """Where a connection is; in this order, so ``< BODY`` is "the head is not in"."""

    NEW = 0  # connected, nothing sent
    HEAD = 1  # a request is out (or going out); its answer's head is not in
    INTERIM = 2  # inside a 1xx answer (100 Continue, 103 Early Hints): the real one follows
    BODY = 3  # the head is in; the body is coming
    DONE = 4  # the answer is complete; the caller may still be reading it
    DRAINING = 5  # the caller let go before the end: the rest is read to reuse the connection
    IDLE = 6  # in the pool, waiting for a request
    CLOSED = 7  # gone; an answer it had was complete, or failed (the exchange's error says)
    CLOSED_IN_BODY = 8  # gone mid-body: the head is in, the body ends in the exchange's error


class Event(IntEnum):
    """What happens to a connection (each moves it as ``TRANSITIONS`` says)."""

    SEND = 0  # a request goes out
    INTERIM = 1  # the head of a 1xx answer
    HEAD = 2  # the head of the answer
    END = 3  # the end of an answer (1xx, or the real one: framed, or by the server's close)
    LET_GO = 4  # the caller let go of a framed body it did not read to the end
    POOL = 5  # the connection goes back to the pool
    CLOSE = 6


_S, _E = State, Event
#: Every move a connection makes; anything else is a bug, and raises.
TRANSITIONS: dict[tuple[State, Event], State] = {
    (_S.NEW, _E.SEND): _S.HEAD,
    (_S.IDLE, _E.SEND): _S.HEAD,
    (_S.HEAD, _E.INTERIM): _S.INTERIM,
    (_S.INTERIM, _E.END): _S.HEAD,
    (_S.HEAD, _E.HEAD): _S.BODY,
    (_S.BODY, _E.END): _S.DONE,
    (_S.BODY, _E.LET_GO): _S.DRAINING,
    (_S.DRAINING, _E.END): _S.DONE,
    (_S.DONE, _E.POOL): _S.IDLE,
    **{(s, _E.CLOSE): _S.CLOSED for s in State if s < _S.CLOSED and s is not _S.BODY},
    (_S.BODY, _E.CLOSE): _S.CLOSED_IN_BODY,
}


def advance(state: State, event: Event) -> State:
    """The state ``event`` moves a connection in ``state`` to."""
    try:
        return TRANSITIONS[state, event]
    except KeyError:
        raise RuntimeError(f"h1 connection: no {event.name} in {state.name}") from None


#: Read on every read (an enum member is a slow class attribute in Python 3.11).
_BODY, _DONE, _DRAINING = State.BODY, State.DONE, State.DRAINING


class _Stray(Exception):
    """A second answer began on a connection whose request was already answered."""


class _HeadersTooLarge(Exception):
    """The answer's header block (or its chunked trailer) passed ``MAX_HEADER_BYTES``."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} passed {MAX_HEADER_BYTES} bytes")


_HEAD_BLOCK = "the response header block"
_TRAILER = "the chunked body's trailer (what follows its last chunk)"


class Owner(Protocol):
    """What a connection needs of its pool (``H1Transport``)."""

    loop: asyncio.AbstractEventLoop
    read_lag: ReadLag
    polls: Polls  # the earliest this pass's reads' bytes can have come

    def release(self, conn: Connection) -> None:
        """Pool ``conn`` (its answer is complete and it may carry another) if there is room."""

    def forget(self, conn: Connection) -> None: ...


# -- the connection


class Connection:
    """One keep-alive connection: its socket (and maybe TLS), its state, its parser, the
    request in hand; also the httptools callback target.

    :meth:`feed` parses one read without I/O (the tests feed it bytes directly);
    ``_on_readable`` makes the read that feeds it.
    """

    __slots__ = (
        "body",
        "connect_ns",
        "connect_start_ns",
        "drain_timer",
        "ex",
        "fd",
        "idle_since",
        "keep_left",
        "keep_ns",
        "key",
        "loop",
        "on_body",
        "outbox",
        "owner",
        "parser",
        "reading",
        "sock",
        "state",
        "tls",
        "tls_ns",
        "writer",
    )

    def __init__(
        self, sock: socket.socket, key: Key, owner: Owner, tls: Session | None = None
    ) -> None:
        self.loop = owner.loop
        self.state = State.NEW
        self.ex: Exchange | None = None  # the request in hand, until the connection is pooled
        self.body: list[bytes] = []  # body bytes of the read being parsed
        #: httptools takes its callbacks when the parser is made: the hottest (once a
        #: chunk) is the list's own append; a drained body is dropped in :meth:`feed`
        self.on_body = self.body.append
        self.parser = httptools.HttpResponseParser(self)
        #: what the server's ``Keep-Alive`` announced: requests it still takes, idle limit
        self.keep_left: int | None = None
        self.keep_ns: int | None = None
        self.idle_since = 0  # when the connection last went back to the pool
        self.reading = True
        #: how it was set up (the transport stamps them; 0: not known, TLS: plain http)
        self.connect_start_ns = 0
        self.connect_ns = 0
        self.tls_ns = 0
        self.sock = sock
        self.tls = tls  # https: the session its reads are decrypted in (``tls``)
        self.fd = sock.fileno()
        self.key = key
        self.owner = owner
        self.drain_timer: asyncio.TimerHandle | None = None
        self.outbox: deque[bytes] = deque()  # bytes the socket would not take yet, in order
        self.writer: asyncio.Task[None] | None = None  # sending the outbox
        self.loop.add_reader(self.fd, self._on_readable)

    @property
    def closed(self) -> bool:
        return self.state >= State.CLOSED

    def start(self) -> Exchange:
        """A request goes out on this (new or pooled) connection: its answer, to fill."""
        fresh = self.state is State.NEW
        self.state = advance(self.state, Event.SEND)
        if self.keep_left is not None:
            self.keep_left -= 1
        ex = self.ex = Exchange(self)
        ex.fresh = fresh
        return ex

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
                data, eof = self.tls.decrypt(data)
            except ssl.SSLError as exc:
                self.lost(TransportError("protocol_error", f"TLS: {describe(exc)}"))
                return
            self._flush_tls()  # a key update or an alert the read produced
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

    def _flush_tls(self) -> None:
        tls = self.tls
        if tls is not None and tls.outgoing.pending:
            with contextlib.suppress(OSError):  # the read side will see the connection go
                self.write(tls.outgoing.read())

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
        tls = self.tls
        return payload if tls is None else tls.encrypt(payload)

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

    # -- httptools callbacks

    def on_message_begin(self) -> None:
        if self.state is _DONE:
            raise _Stray("bytes after the complete answer")

    def on_header(self, name: bytes, value: bytes) -> None:
        ex = self.ex
        if ex is None:
            return
        ex.head_fields += len(name) + len(value) + 4  # ": " and CRLF
        if ex.head_fields > MAX_HEADER_BYTES:  # many headers that came in one read
            raise _HeadersTooLarge(_TRAILER if self.state >= _BODY else _HEAD_BLOCK)
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
        if ex is None:
            return
        status = self.parser.get_status_code()
        if 100 <= status < 200:  # 100 Continue, 103 Early Hints: the answer follows
            self.state = advance(self.state, Event.INTERIM)
            return
        ex.status = status
        self.state = advance(self.state, Event.HEAD)

    def on_message_complete(self) -> None:
        ex = self.ex
        if ex is None:
            return
        if self.state is State.INTERIM:
            ex.framed = False
        else:
            ex.keep_alive = self.parser.should_keep_alive()
        self.state = advance(self.state, Event.END)

    # -- reads

    def feed(self, data: bytes, stamp: int) -> TransportError | None:
        """Parse one read of the answer, whose bytes came at ``stamp``; the error that ends it.

        The read's body becomes one stamped piece of the exchange; past
        ``PAUSE_BYTES`` waiting for the caller, the connection pauses.
        """
        ex = self.ex
        assert ex is not None
        ex.received += len(data)
        state = self.state
        in_head = state < _BODY
        if in_head and not ex.first_byte:
            ex.first_byte = stamp
        error: Exception | None = None
        try:
            self.parser.feed_data(data)
        except Exception as exc:  # llhttp's errors, an upgrade, a stray second answer
            error = exc
        if in_head and self.state >= _BODY:  # this read completed the header block
            ex.head_at = stamp
        # every read so far was all header block: one that does not end is refused
        if in_head and error is None and self.state < _BODY and ex.received > MAX_HEADER_BYTES:
            error = _HeadersTooLarge(_HEAD_BLOCK)
        body = self.body
        if body:
            ex.framing = 0
        elif not in_head and (self.state is _BODY or self.state is _DRAINING):
            ex.framing += len(data)  # a read of chunk framing alone: a trailer that goes on
            if ex.framing > MAX_HEADER_BYTES and error is None:
                error = _HeadersTooLarge(_TRAILER)
        if body and state is _DRAINING:  # the caller let go: nobody wants it
            if ex.ended:  # bytes past the answer's last event: the server is not to be trusted
                ex.stray = True
            body.clear()
        elif body:
            piece = body[0] if len(body) == 1 else b"".join(body)
            body.clear()
            # its bytes came after the answer's previous read (TCP keeps their order),
            # after the request went, and after the loop's poll says: the first of them
            # at most this much earlier than the stamp
            floor = max(ex.last_read or ex.sent, self.owner.polls.floor_ns)
            ex.pieces.append((stamp, piece, stamp - floor if floor and stamp > floor else 0))
            ex.buffered += len(piece)
            if ex.buffered > PAUSE_BYTES:
                self.pause()
        ex.last_read = stamp
        if error is None:
            return None
        cause = error if isinstance(error, _HeadersTooLarge) else error.__context__
        if isinstance(cause, _HeadersTooLarge):  # raised in on_header, wrapped by httptools
            return TransportError("headers_too_large", str(cause))
        return TransportError("protocol_error", describe(error))

    # -- reuse

    def head_in(self) -> bool:
        """The answer's head has come (whatever became of the connection since)."""
        state = self.state
        if state is State.CLOSED:
            return self.ex is not None and self.ex.error is None  # complete
        return state >= State.BODY

    def spent(self) -> bool:
        """The server said it takes no more requests on this connection."""
        return self.keep_left is not None and self.keep_left <= 0

    def expired(self, now: int) -> bool:
        """Idle for (nearly) as long as the server's ``Keep-Alive: timeout`` allows."""
        keep = self.keep_ns
        if keep is None:
            return False
        return now - self.idle_since >= keep - min(keep // 4, IDLE_MARGIN_MAX_NS)

    def after_caller(self) -> State:
        """Where the connection goes once the caller is through with the answer (it may stop
        at ``[DONE]``, before the body's last bytes): IDLE (the pool, if it has room),
        DRAINING (a framed body is read to its end first) or CLOSED."""
        ex = self.ex
        if ex is None or ex.cut or ex.aborted:  # request dropped, or answer abandoned
            return State.CLOSED
        if ex.ended and ex.pieces:  # body bytes past the answer's last event, unread
            ex.stray = True
        if ex.stray:  # the server sent past its answer: what follows may pass for the next
            return State.CLOSED
        if self.state is State.DONE:
            keep = ex.keep_alive and not self.spent()
            return State.IDLE if keep else State.CLOSED
        if self.state is State.BODY and ex.framed:
            return State.DRAINING
        return State.CLOSED

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

    def drain(self) -> None:
        """The caller let go of a framed body: what it left is dropped, the rest is read (to
        reuse the connection) and dropped as it comes."""
        self.state = advance(self.state, Event.LET_GO)
        assert self.ex is not None
        self.ex.pieces.clear()
        self.resume()

    def _drain_expired(self) -> None:
        if self.state is State.DRAINING:
            self.close()

    def pool(self, now: int) -> None:
        """Back to the pool: idle from ``now``, reading (a close is seen at once)."""
        self.state = advance(self.state, Event.POOL)
        self.ex = None
        self.idle_since = now
        self.resume()

    # -- the close

    def lost(self, error: TransportError | None) -> None:
        """The server closed the connection (``error`` None) or it broke."""
        self._shut(error, by_server=True)

    def close(self) -> None:
        """Close now; an unfinished answer fails (``disconnected``)."""
        self._shut(None, by_server=False)

    def end(self, error: TransportError | None, by_server: bool) -> None:
        """The connection's state at its close (no I/O): a body the server's close delimits
        is complete; any other unfinished answer fails with ``error`` (or a
        ``disconnected`` saying where)."""
        ex, state = self.ex, self.state
        if ex is not None and State.HEAD <= state <= State.BODY and ex.error is None:
            if by_server and error is None and state is State.BODY and not ex.framed:
                state = advance(state, Event.END)
            else:
                where = "mid-body" if state is State.BODY else "before the response headers"
                who = "the server closed" if by_server else "loadgen closed"
                ex.error = error or TransportError("disconnected", f"{who} the connection {where}")
        self.state = advance(state, Event.CLOSE)

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


# -- the exchange


class Exchange:
    """One request's answer as it comes: its connection fills it, the caller drains it.

    This is the transport's :class:`~loadgen.client.transport.Response`: the
    status, the stamped body pieces waiting for the caller (handed over a
    read's worth at a time by :meth:`chunks`), the error it ended with, its
    request phases. It holds data only; how far the answer has got is its
    connection's :class:`State`.
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
        "last_read",
        "pieces",
        "received",
        "reconnects",
        "retry_ns",
        "sent",
        "status",
        "stray",
        "waiter",
    )

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.status = 0  # set when the head is in
        self.sent = 0
        self.cut = False  # the rest of the request was dropped (a refusal came first)
        self.ended = False  # the caller read the answer's last event ([DONE])
        self.stray = False  # body bytes came past that event: the connection is not reused
        #: the answer's body reads waiting for the caller: (stamp, bytes, slack: how much
        #: earlier than the stamp the first of them may have come)
        self.pieces: list[tuple[int, bytes, int]] = []
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
        self.last_read = 0  # the receive stamp of the answer's latest read

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

    async def chunks(self) -> AsyncIterator[tuple[int, bytes, int]]:
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
            async for piece in self.chunks():
                out += piece[1]
                if len(out) >= limit:
                    break
        except TransportError:
            pass
        return out[:limit]


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
