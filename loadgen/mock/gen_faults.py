"""A streaming generation that carries one mid-stream or framing fault.

Owns :class:`FaultyStreamGen`, the faults that strike inside a stream:
``disconnect`` and ``stall`` (at :func:`loadgen.mock.faults.fault_position`),
``malformed`` (a broken event), ``error_event`` (an ``event: error`` frame, then
the trailer), ``split`` (events cut across HTTP chunks and TCP writes),
``no_done`` (no ``[DONE]``) and ``bom`` (a UTF-8 BOM first). Kept apart from
:mod:`loadgen.mock.gen`'s ``StreamGen`` so its hot path stays branch-free; it
writes token by token, as a fault may strike between any two.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from itertools import pairwise
from typing import Any

from loadgen.mock.faults import fault_position
from loadgen.mock.gen import Gen, StreamGen
from loadgen.mock.http_framing import CHUNK_END, chunk, unchunk

__all__ = ["BOM", "FaultyStreamGen"]

#: the UTF-8 byte order mark (fault bom: the SSE standard says a client strips one)
BOM = b"\xef\xbb\xbf"

log = logging.getLogger("loadgen.mock")
_pc = time.perf_counter_ns


class FaultyStreamGen(StreamGen):
    """Streaming response carrying one mid-stream or framing fault."""

    __slots__ = ("at", "held", "pending")

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.at = fault_position(self.n_out)
        self.held: list[bytes] | None = None
        self.pending: deque[tuple[bytes, bool]] = deque()

    def emit(self) -> bool:
        if self.dead:
            return True
        k = self.emitted
        last = k + 1 >= self.n_out
        if k == self.at and self.fault in ("disconnect", "stall"):
            self._strike(k)
            if self.dead:
                return True
        if k == self.at and self.fault == "error_event":
            self._error_event(k)
            return True
        self.emitted = k + 1
        if last:
            data = self._ending(k, done=self.fault != "no_done")
        elif k == self.at and self.fault == "malformed":
            data = (self.opening if k == 0 else b"") + self.events.malformed()
        else:
            data = self._token(k)
        if k == 0 and self.fault == "bom":
            data = chunk(BOM) + data  # the body opens with a BOM, before the first data:
        self._out(data, last)
        return last

    def _error_event(self, k: int) -> None:
        """The engine fails after ``k`` tokens: an ``event: error`` frame, then the
        stream's trailer (usage if asked, ``[DONE]``: vLLM's end) and the end of the
        body (the connection stays usable)."""
        log.warning("fault %s request=%s after %d tokens", self.fault, self.rid, k)
        message = f"injected fault error_event (loadgen-mock) after {k} tokens"
        frame = (self.opening if k == 0 else b"") + self.events.error_event(message)
        self.dead = True
        self.write(frame + self.events.trailer(k, True))
        self._record(500, "error", _pc())
        self.conn.response_done()

    emit_n = Gen.emit_n  # token by token: a fault may strike between any two
    emit_group = Gen.emit_group

    def _strike(self, k: int) -> None:
        log.warning("fault %s request=%s after %d tokens", self.fault, self.rid, k)
        if self.fault == "disconnect":
            self.dead = True
            self.conn.transport.close()
            self._record(200, "abort", _pc())
        else:
            self.held = []
            self.ctx.loop.call_later(self.ctx.stall_s, self._release)

    def _out(self, data: bytes, last: bool) -> None:
        if self.held is not None:
            self.held.append(data)
            return
        if self.fault == "split":
            self._split(data, last)
            return
        now = _pc()
        self.write(data)
        self._stamp(last, now)

    def _stamp(self, last: bool, now: int) -> None:
        self._wrote(now)  # the write just made (a split event's last piece)
        if len(self.token_ns) == 1:
            self._first(now)
        if last:
            self._complete()

    def _release(self) -> None:
        held, self.held = self.held or [], None
        if self.dead or self.conn.transport.is_closing():
            return
        for i, data in enumerate(held):
            self._out(data, i == len(held) - 1 and self.emitted >= self.n_out)

    def _split(self, data: bytes, last: bool) -> None:
        """Cut the SSE bytes at odd offsets, each piece its own HTTP chunk and TCP write.

        The pieces go out one loop turn apart, so a client sees an event arrive
        in parts, across chunk boundaries as a re-chunking proxy would make them.
        """
        payload, ended = unchunk(data)
        n = len(payload)
        cuts = sorted({(7 * n // 13) | 1, (11 * n // 17) | 1} - {0, n})
        bounds = [0, *cuts, n]
        pieces = [chunk(payload[a:b]) for a, b in pairwise(bounds)]
        if ended:
            pieces[-1] += CHUNK_END
        was_idle = not self.pending
        for i, piece in enumerate(pieces):
            self.pending.append((piece, i == len(pieces) - 1))
        if last:
            self.pending.append((b"", True))  # marks completion after the stamp
        if was_idle:
            self._drain()

    def _drain(self) -> None:
        if not self.pending or self.conn.transport.is_closing():
            return
        piece, ends_event = self.pending.popleft()
        if piece:
            now = _pc()
            self.write(piece)
            if ends_event:
                self._stamp(False, now)
        elif ends_event:
            self._complete()
            return
        if self.pending:
            self.ctx.loop.call_soon(self._drain)
