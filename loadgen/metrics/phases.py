"""A step's requests on new connections beside those on reused ones.

Over the successful measured requests, split by ``Record.new_connection``:

- connect time = connect_ns - connect_start_ns (a new connection's TCP connect)
- TLS handshake = tls_ns - connect_ns (a new https connection)
- TTFT here = first_token_ns - start_ns: from loadgen beginning the request, so a
  new connection's set-up is inside it (the step's TTFT counts from the send,
  or the schedule, and would hide it)

p50 and p99 are numpy's linear percentiles of the values known. None when no
request's transport said whether its connection was new.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from loadgen.clock import NS_PER_MS
from loadgen.metrics.columns import NONE
from loadgen.metrics.vector import Columns
from loadgen.summary import ConnectionPhases, PhaseGroup

__all__ = ["connection_phases"]

Ints = npt.NDArray[np.int64]


def _pct(values: Ints, q: float) -> float | None:
    if not len(values):
        return None
    return round(float(np.percentile(values / NS_PER_MS, q)), 3)


def _group(ok: Columns, rows: npt.NDArray[np.bool_], **setup: float | None) -> PhaseGroup:
    first = ok["first"][rows]
    ttft = (first - ok["start"][rows])[first != NONE]
    return PhaseGroup(requests=int(rows.sum()), ttft_ms_p50=_pct(ttft, 50), **setup)


def connection_phases(ok: Columns) -> ConnectionPhases | None:
    """The step's new- and reused-connection figures (formulas above)."""
    conn = ok.source.connections()
    known = conn >= 0
    if not len(ok) or not known.any():
        return None
    connect, tls = ok.source.setup("connect"), ok.source.setup("tls")
    new = _group(
        ok,
        conn == 1,
        connect_ms_p50=_pct(connect, 50),
        connect_ms_p99=_pct(connect, 99),
        tls_ms_p50=_pct(tls, 50),
        tls_ms_p99=_pct(tls, 99),
    )
    return ConnectionPhases(new=new, reused=_group(ok, conn == 0), unknown=int((~known).sum()))
