"""Server-sent events: bytes as they arrive -> the ``data`` payload of each event.

Pure and clock-free: the caller stamps each chunk before feeding it. Handles
events split across reads, several events in one read, ``\\r\\n``, ``\\r`` or
``\\n`` line ends, comments (``:`` lines), other fields (``event:``, ``id:``),
multi-line data (joined with ``\\n``), and ``data:`` with or without the
single leading space. An event with no ``data`` line is not dispatched, and an
event left incomplete when the stream ends is discarded, as the WHATWG spec
says; so is a UTF-8 byte order mark that opens the stream (the spec strips
one). An event of type ``error`` (an ``event: error`` line: servers send one
when the engine fails mid-stream) is dispatched as an :class:`ErrorEvent`,
its data (the server's message) as the bytes; other event types are data like
any other.

Linear in the bytes received: line ends are normalised chunk by chunk as they
arrive (a ``\\r`` that ends a chunk is a line end at once; a ``\\n`` that opens
the next chunk is then dropped), and only the new bytes (plus one) are searched
for the end of an event. One event may not exceed ``max_event`` bytes:
:class:`EventTooLarge` is raised as soon as the bytes held for one event pass it.
"""

from __future__ import annotations

__all__ = ["BOM", "MAX_EVENT_BYTES", "ErrorEvent", "EventTooLarge", "SseSplitter"]

#: default bound on one event's size
MAX_EVENT_BYTES = 1 << 20
#: the UTF-8 byte order mark, stripped once from the start of a stream
BOM = b"\xef\xbb\xbf"


class EventTooLarge(ValueError):
    """The bytes of one event passed the splitter's ``max_event``."""


class ErrorEvent(bytes):
    """The data of an ``event: error`` event: the server says the request failed."""

    __slots__ = ()


class SseSplitter:
    """Incremental splitter; :meth:`feed` returns the payloads completed by a chunk.

    :attr:`errors` turns True once an :class:`ErrorEvent` has been returned
    (the caller then looks at each payload's type; before, it need not).
    """

    __slots__ = ("_buf", "_cr", "_event", "_head", "_max", "_pending", "errors")

    #: the buffer's type (a test swaps in one that counts the bytes searched)
    _Buffer = bytearray

    def __init__(self, max_event: int = MAX_EVENT_BYTES) -> None:
        self._buf = self._Buffer()  # normalised bytes of the event in progress (only \n)
        self._cr = False  # the last chunk ended with \r: a leading \n of the next is its pair
        self._max = max_event
        self._pending: list[bytes] | None = None  # data lines of an event split mid-way
        self._event = b""  # the type of the event in progress (an `event:` line)
        #: the stream's first bytes while they may still be a byte order mark; None after
        self._head: bytes | None = b""
        self.errors = False

    def feed(self, chunk: bytes) -> list[bytes]:
        if not chunk:
            return []
        if self._head is not None:  # the stream's first bytes
            chunk = self._head + chunk
            if len(chunk) < len(BOM) and BOM.startswith(chunk):
                self._head = chunk  # maybe a BOM cut across reads: wait for the rest
                return []
            self._head = None
            if chunk.startswith(BOM):
                chunk = chunk[len(BOM) :]
                if not chunk:
                    return []
        if self._cr and chunk[0] == 0x0A:
            chunk = chunk[1:]
        self._cr = False
        if b"\r" in chunk:
            self._cr = chunk[-1] == 0x0D
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        buf = self._buf
        if not buf:
            cut = chunk.rfind(b"\n\n")
            if cut < 0:
                buf += chunk
                self._check(len(buf))
                return []
            if cut + 2 < len(chunk):
                buf += chunk[cut + 2 :]
                self._check(len(buf))
            return self._events(chunk[:cut])
        start = len(buf) - 1  # an event end may straddle the old bytes and the new
        buf += chunk
        cut = buf.rfind(b"\n\n", start)
        if cut < 0:
            self._check(len(buf))
            return []
        complete = bytes(buf[:cut])
        del buf[: cut + 2]
        self._check(len(buf))
        return self._events(complete)

    @property
    def holding(self) -> bool:
        """Bytes of an unfinished event are held (the stream has more than it dispatched)."""
        return bool(self._buf) or self._pending is not None

    def finish(self) -> list[bytes]:
        """At the end of the stream: nothing more can complete (kept for callers' symmetry)."""
        return []

    def _check(self, size: int) -> None:
        if size > self._max:
            self._buf = self._Buffer()
            msg = f"one event passed {self._max} bytes"
            raise EventTooLarge(msg)

    def _events(self, complete: bytes) -> list[bytes]:
        out: list[bytes] = []
        if len(complete) > self._max:  # rare: a chunk brought several events or a big one
            blocks = complete.split(b"\n\n")
            for block in blocks:
                self._check(len(block))
        else:
            blocks = complete.split(b"\n\n")
        for block in blocks:
            if block.startswith(b"data: ") and b"\n" not in block and self._pending is None:
                out.append(block[6:])  # the common case: one `data: ...` line
                continue
            self._block(block, out)
        return out

    def _block(self, block: bytes, out: list[bytes]) -> None:
        lines = block.split(b"\n")
        # Every block ends an event, except that empty lines inside also end one.
        for line in lines:
            if not line:
                self._dispatch(out)
                continue
            if line.startswith(b":"):
                continue
            name, sep, value = line.partition(b":")
            if name != b"data":
                if name == b"event":
                    self._event = value[1:] if value.startswith(b" ") else value
                continue
            if sep and value.startswith(b" "):
                value = value[1:]
            if self._pending is None:
                self._pending = [value]
            else:
                self._pending.append(value)
        self._dispatch(out)

    def _dispatch(self, out: list[bytes]) -> None:
        if self._pending is not None:
            data = b"\n".join(self._pending)
            self._pending = None
            if self._event == b"error":
                self.errors = True
                data = ErrorEvent(data)
            out.append(data)
        self._event = b""
