"""Server-sent events: bytes as they arrive -> the ``data`` payload of each event.

Pure and clock-free: the caller stamps each chunk before feeding it. Handles
events split across reads, several events in one read, ``\\r\\n``, ``\\r`` or
``\\n`` line ends, comments (``:`` lines), other fields (``event:``, ``id:``),
multi-line data (joined with ``\\n``), and ``data:`` with or without the
single leading space. An event with no ``data`` line is not dispatched, and an
event left incomplete when the stream ends is discarded, as the WHATWG spec
says.

Imports: the standard library only.
"""

from __future__ import annotations

__all__ = ["SseSplitter"]


class SseSplitter:
    """Incremental splitter; :meth:`feed` returns the payloads completed by a chunk."""

    __slots__ = ("_buf", "_pending")

    def __init__(self) -> None:
        self._buf = b""
        self._pending: list[bytes] | None = None  # data lines of an event split mid-way

    def feed(self, chunk: bytes) -> list[bytes]:
        data = self._buf + chunk if self._buf else chunk
        if b"\r" in data:
            if data.endswith(b"\r"):  # may be the first half of \r\n: decide next time
                self._buf = data
                data = data[:-1]
                hold_cr = True
            else:
                hold_cr = False
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        else:
            hold_cr = False
        cut = data.rfind(b"\n\n")
        if cut < 0:
            if not hold_cr:
                self._buf = data
            elif data:
                # keep the normalised text plus the held-back \r
                self._buf = data + b"\r"
            return []
        complete = data[:cut]
        rest = data[cut + 2 :]
        if hold_cr:
            rest += b"\r"
        self._buf = rest
        return self._events(complete)

    def finish(self) -> list[bytes]:
        """At the end of the stream: a held-back final ``\\r`` was a line end after all."""
        if self._buf.endswith(b"\r"):
            return self.feed(b"\n")
        return []

    def _events(self, complete: bytes) -> list[bytes]:
        out: list[bytes] = []
        for block in complete.split(b"\n\n"):
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
            out.append(b"\n".join(self._pending))
            self._pending = None
