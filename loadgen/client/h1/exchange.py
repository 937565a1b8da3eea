"""An h1 connection without its socket: its answer's parsing and its reuse.

Owns :class:`Core`, the part of a connection that does no I/O (sans-I/O, as
h11): it holds the connection's one ``state.State`` and moves it, is the
httptools (llhttp) callback target, bounds a header block and a chunked
body's trailer (``MAX_HEADER_BYTES``), pauses a body the caller falls behind on, and decides
reuse (``Connection: close``, ``Keep-Alive: max=…, timeout=…``, a request cut
short by a refusal, a body left unread, bytes past the answer's last event).
What it fills is one request's answer as data, ``answer.Exchange`` (the h1
transport's ``Response``); ``connection.Conn`` is a :class:`Core` with a socket.
"""

from __future__ import annotations

import asyncio

import httptools

from loadgen.client.h1.answer import Exchange
from loadgen.client.h1.state import Event, State, advance
from loadgen.client.transport import TransportError, describe

__all__ = [
    "IDLE_MARGIN_MAX_NS",
    "MAX_HEADER_BYTES",
    "PAUSE_BYTES",
    "Core",
    "keep_alive",
]

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


class Core:
    """A connection's state and parsing, fed one read at a time; also the httptools target.

    ``pause`` and ``resume`` only say whether the connection reads; ``connection.Conn``
    does the reading, and the closing (through :meth:`end`).
    """

    __slots__ = (
        "body",
        "connect_ns",
        "connect_start_ns",
        "ex",
        "idle_since",
        "keep_left",
        "keep_ns",
        "loop",
        "on_body",
        "parser",
        "reading",
        "state",
        "tls_ns",
    )

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
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
            ex.pieces.append((stamp, piece))
            ex.buffered += len(piece)
            if ex.buffered > PAUSE_BYTES:
                self.pause()
        if error is None:
            return None
        cause = error if isinstance(error, _HeadersTooLarge) else error.__context__
        if isinstance(cause, _HeadersTooLarge):  # raised in on_header, wrapped by httptools
            return TransportError("headers_too_large", str(cause))
        return TransportError("protocol_error", describe(error))

    def pause(self) -> None:
        self.reading = False

    def resume(self) -> None:
        self.reading = True

    def end(self, error: TransportError | None, by_server: bool) -> None:
        """The connection goes: a body the server's close delimits is complete; any other
        unfinished answer fails with ``error`` (or a ``disconnected`` saying where)."""
        ex, state = self.ex, self.state
        if ex is not None and State.HEAD <= state <= State.BODY and ex.error is None:
            if by_server and error is None and state is State.BODY and not ex.framed:
                state = advance(state, Event.END)
            else:
                where = "mid-body" if state is State.BODY else "before the response headers"
                who = "the server closed" if by_server else "loadgen closed"
                ex.error = error or TransportError("disconnected", f"{who} the connection {where}")
        self.state = advance(state, Event.CLOSE)

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

    def drain(self) -> None:
        """The caller let go of a framed body: what it left is dropped, the rest is read (to
        reuse the connection) and dropped as it comes."""
        self.state = advance(self.state, Event.LET_GO)
        assert self.ex is not None
        self.ex.pieces.clear()
        self.resume()

    def pool(self, now: int) -> None:
        """Back to the pool: idle from ``now``, reading (a close is seen at once)."""
        self.state = advance(self.state, Event.POOL)
        self.ex = None
        self.idle_since = now
        self.resume()


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
