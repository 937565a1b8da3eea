"""loadgen's own error on a step's timings: each reading's bound, and each statistic's band.

The client records, per token event, how much earlier than its stamp it may
have come (``Record.token_slack_ns``: it shared a read, and that read's stamp,
with a later event; it came after the connection's previous read), and how
much earlier than ``end_ns`` the answer's end came (``end_slack_ns``). Readings
are stamps subtracted, so each reading's bound follows from its stamps' (the
profile's formulas, :mod:`loadgen.metrics.profiles`):

- TTFT = first - origin: up to the first event's slack too high (the origin,
  the send, is stamped as the request's last byte left);
- E2E = end - origin: up to the end's slack too high (the last token's, where
  the profile ends E2E there);
- ITL gap i = t[i] - t[i-1]: up to slack[i] too long, slack[i-1] too short;
- TPOT = (last - first) / (n - 1): up to last's slack / (n - 1) too high and
  first's / (n - 1) too low (``with_wait``: last's / n too high).

A statistic's band is the statistic over the readings moved each by its own
bound, one way (low) and the other (high): the server's value lies within
it, whatever the errors were. Open loop's readings from the intended send
also carry the sender's lateness, which ``client.send_lag_p99_ms`` reports.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from loadgen.metrics import vector as v
from loadgen.metrics.columns import NONE
from loadgen.metrics.profiles import PROFILES
from loadgen.metrics.stats import CONFIDENCE, distribution_ms
from loadgen.summary import ClientError, Distribution, ErrorBound
from loadgen.vocab import PERCENTILE_OF

#: the statistics a band is given for
_STATS = ("mean", *PERCENTILE_OF, "max")

__all__ = ["client_error"]

Floats = npt.NDArray[np.float64]
_MS = 1e6


def client_error(
    ok: v.Columns, profile: str, ttft_of: str, latency_from: str, confidence: float = CONFIDENCE
) -> ClientError:
    """The step's error bounds per metric (ms), from its successful requests' slack; the
    bands' intervals at ``confidence``."""
    out = ClientError()
    p = PROFILES[profile]
    if len(ok):
        ttft, has = v.ttft_rows(ok, profile, ttft_of, latency_from)
        first = ok["answer_slack" if ttft_of == "answer" else "first_slack"]
        out.ttft_ms = _bound(ttft[has], first[has], None, confidence)
        e2e, has = v.e2e(ok, profile)
        e2e = e2e + v.lead(ok, profile, latency_from)
        end = ok["end_slack"] if p.ends_at == "end" else ok["last_slack"]
        out.e2e_ms = _bound(e2e[has], end[has], None, confidence)
        tpot, has = v.tpot_rows(ok, profile)
        if has.any():
            n = ok["output_tokens"]
            if p.tpot_rule == "with_wait":
                low, high = ok["last_slack"] / np.where(has, n, 1), None
            else:
                per = np.where(has, n - 1, 1)
                low, high = ok["last_slack"] / per, ok["first_slack"] / per
            high_has = None if high is None else high[has]
            out.tpot_ms = _bound(tpot[has], low[has], high_has, confidence)
        out.itl_ms = _itl(ok, profile, confidence)
    return out


def _itl(ok: v.Columns, profile: str, confidence: float) -> ErrorBound | None:
    """The pooled gaps' bounds; the per-request rule's are TPOT's."""
    if PROFILES[profile].itl_rule == "per_request":
        tpot, has = v.tpot_rows(ok, "loadgen")
        if not has.any():
            return None
        per = np.where(has, ok["output_tokens"] - 1, 1)
        low, high = ok["last_slack"] / per, ok["first_slack"] / per
        return _bound(tpot[has], low[has], high[has], confidence)
    gaps = ok.source.gaps()
    if not gaps.size:
        return None
    at, shorter, longer = ok.source.gap_slack()
    if not at.size:
        return _exact(gaps.size)
    # sparse: the pool may hold millions of gaps, of which only these may be off
    n = gaps.size
    width = np.sort(np.maximum(shorter, longer)).astype(np.float64)
    p50, p99 = (_padded_percentile(width, n, q) for q in (50.0, 99.0))
    y = gaps.astype(np.float64)
    y[at] -= shorter
    early = distribution_ms(y, confidence)
    y[at] += shorter + longer
    late = distribution_ms(y, confidence)
    return ErrorBound(
        readings=n,
        uncertain=int(np.count_nonzero(width)),
        p50=p50 / _MS,
        p99=p99 / _MS,
        max=float(width[-1]) / _MS,
        **_bands(early, late),
    )


def _padded_percentile(ascending: Floats, n: int, q: float) -> float:
    """The ``q``-th percentile (numpy's linear rule) of ``ascending`` with ``n - len`` zeros
    before it."""
    zeros = n - ascending.size
    pos = (n - 1) * q / 100.0
    lo = int(np.floor(pos))
    hi = min(lo + 1, n - 1)

    def at(i: int) -> float:
        return 0.0 if i < zeros else float(ascending[i - zeros])

    return at(lo) + (at(hi) - at(lo)) * (pos - lo)


def _exact(readings: int) -> ErrorBound:
    return ErrorBound(readings=readings, uncertain=0, p50=0.0, p99=0.0, max=0.0)


def _bound(
    values: npt.NDArray[np.number],
    low: npt.NDArray[np.number],
    high: Floats | None,
    confidence: float,
) -> ErrorBound | None:
    """Readings ``values`` (ns) that may be up to ``low`` too high and ``high`` too low."""
    n = len(values)
    if not n:
        return None
    lo = np.asarray(low, dtype=np.float64)
    hi = np.zeros(n) if high is None else np.asarray(high, dtype=np.float64)
    lo[lo == NONE] = 0.0
    width = np.maximum(lo, hi)
    uncertain = int(np.count_nonzero(width))
    if not uncertain:
        return _exact(n)
    p50, p99 = np.percentile(width, [50, 99])
    y = np.asarray(values, dtype=np.float64)
    return ErrorBound(
        readings=n,
        uncertain=uncertain,
        p50=float(p50) / _MS,
        p99=float(p99) / _MS,
        max=float(width.max()) / _MS,
        **_bands(distribution_ms(y - lo, confidence), distribution_ms(y + hi, confidence)),
    )


def _bands(early: Distribution, late: Distribution) -> dict[str, dict[str, list[float | None]]]:
    """``band`` and ``interval`` of an :class:`ErrorBound`: each statistic of the readings
    moved early and late (ms), and the low end of the early one's interval with the high
    end of the late one's (a statistic without an interval, the max: its values)."""
    band: dict[str, list[float | None]] = {}
    interval: dict[str, list[float | None]] = {}
    for stat in _STATS:
        a, b = getattr(early, stat), getattr(late, stat)
        band[stat] = [_round(a), _round(b)]
        pair_a = getattr(early.ci, stat, None) if early.ci is not None else None
        pair_b = getattr(late.ci, stat, None) if late.ci is not None else None
        ends = [pair_a[0] if pair_a else a, pair_b[1] if pair_b else b]
        interval[stat] = [_round(x) for x in ends]
    return {"band": band, "interval": interval}


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 6)
