"""When each of a connection's writes left, from the kernel's transmit stamps.

Owns :class:`TxLog`, one connection's record of its writes (the byte offset
each one ended at) and of the kernel's software transmit stamps
(``SO_TIMESTAMPING``, ``loadgen.netstamp.tx_stamps``), and the matching of the
two. A stamp is keyed by the offset of the last byte of the send it belongs to
(``OPT_ID``, counted from the arming, a 32-bit counter unwrapped here); write
``i``, ending at offset ``e``, left when the first stamp keyed ``>= e - 1`` was
taken: TCP sends its bytes in order, and where two sends shared a segment the
kernel stamps only the later one's key, which then stands for both.

Invariant: ``stamped`` (one past the highest stamped byte) only grows; a write
whose end is ``<= stamped`` is settled, its stamp known for good. Stamps stay
in CLOCK_REALTIME here; ``to_mono`` converts them when a truth line is written.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import Protocol

__all__ = ["TxLog", "TxSource"]

_MASK = (1 << 32) - 1
_HALF = 1 << 31


class TxSource(Protocol):
    """What a generation needs of its transport to have its writes' transmit stamps."""

    #: how many ``write`` calls so far; the id of the latest is ``writes - 1``
    writes: int

    def tx_ns(self, ids: Sequence[int]) -> tuple[bool, list[int | None]] | None:
        """Monotonic transmit stamps of writes ``ids``, None each where unknown, and whether
        all are settled (no stamp of theirs can come later); None: no stamps at all."""
        ...


class TxLog:
    """One connection's writes and their transmit stamps."""

    __slots__ = ("base", "ends", "keys", "stamped", "walls")

    def __init__(self) -> None:
        self.base = 0  # the id of ends[0]: older writes were dropped once read
        self.ends: list[int] = []  # per write: offset one past its last byte; -1: sent nothing
        self.keys: list[int] = []  # stamped last-byte offsets, unwrapped, ascending
        self.walls: list[int] = []  # their stamps, CLOCK_REALTIME ns
        self.stamped = 0

    def add(self, key32: int, wall: int) -> None:
        """One stamp from the error queue (its ``ee_data`` key, 32 bits)."""
        last = self.stamped - 1
        key = last + ((key32 - last + _HALF) & _MASK) - _HALF  # the nearest unwrapping
        if key < last:  # a repeat of an older segment's (a retransmission): keep the first
            return
        if key == last and self.keys:
            return
        self.keys.append(key)
        self.walls.append(wall)
        self.stamped = key + 1

    def settled(self, sent: int) -> bool:
        """Every byte of the first ``sent`` has its stamp."""
        return self.stamped >= sent

    def lookup(
        self, ids: Sequence[int], to_mono: Callable[[int], int], dead: bool
    ) -> tuple[bool, list[int | None]]:
        """Stamps of writes ``ids`` as monotonic ns (None: none), and whether all are settled
        (``dead``: the connection is gone, none can still come)."""
        out: list[int | None] = []
        settled = True
        seen: dict[int, int] = {}  # one conversion per stamp: a write's tokens share it exactly
        for i in ids:
            j = i - self.base
            if j >= len(self.ends):  # not written yet (a delayed write on its way)
                settled = settled and dead
                out.append(None)
                continue
            end = self.ends[j] if j >= 0 else -1
            if end <= 0:
                out.append(None)
                continue
            if end > self.stamped:
                settled = settled and dead
                out.append(None)
                continue
            wall = self.walls[bisect_left(self.keys, end - 1)]
            if wall not in seen:
                seen[wall] = to_mono(wall)
            out.append(seen[wall])
        return settled, out

    def forget(self, upto: int) -> None:
        """Drop writes before id ``upto`` and the stamps only they needed."""
        drop = upto - self.base
        if drop <= 0:
            return
        ended = [e for e in self.ends[:drop] if e > 0]
        del self.ends[:drop]
        self.base = upto
        if ended:
            k = bisect_left(self.keys, max(ended) - 1)
            del self.keys[:k], self.walls[:k]
