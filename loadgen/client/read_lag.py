"""Read lag: how long received bytes waited in the socket before loadgen read them.

Owns :class:`ReadLag`. Every lag is kept as it was measured (8 bytes a read,
cleared at each step) so the p99 that gates the saturation flag is exact: a
histogram would report its bucket's edge (4.194304 ms = 2^22 ns was one).
"""

from __future__ import annotations

import math
from array import array

__all__ = ["ReadLag", "percentile"]


def percentile(values: list[int], q: float) -> float:
    """The ``q``-th percentile of ``values`` with linear interpolation (numpy's default).

    ``values`` must be sorted and non-empty.
    """
    pos = (len(values) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (pos - lo)


class ReadLag:
    """Read time minus the kernel's receive stamp, on every read (h1 transport).

    Kernel stamps make a late read harmless, except that bytes of several
    server writes read at once all get the last write's stamp; a large lag says
    that may have happened (a saturation signal, docs/metrics.md). A negative
    lag (a stamp a hair after the read) counts as 0.
    """

    __slots__ = ("lags_ns",)

    def __init__(self) -> None:
        self.lags_ns = array("q")

    def add(self, lag_ns: int) -> None:
        self.lags_ns.append(lag_ns if lag_ns > 0 else 0)

    def take(self) -> tuple[int, float, int]:
        """``(reads, p99 ns, max ns)`` since the last call, exact, and start again."""
        lags, self.lags_ns = self.lags_ns, array("q")
        if not lags:
            return 0, 0.0, 0
        ordered = sorted(lags)
        return len(ordered), percentile(ordered, 99.0), ordered[-1]
