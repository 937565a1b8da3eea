"""The request bootstrap behind ``compare --fail-if``: requests, not tokens, are resampled.

A run's requests are its independent units; the values of one request (its
ITL gaps) move together: a request on a busy batch has every gap slow. So a
resample draws whole requests with replacement and recomputes the statistic
over the pooled values of the drawn requests (the p99 of their gaps, or their
mean). Resampling the pooled gaps one by one treats 6,000 gaps of 60 requests
as 6,000 independent draws: the interval comes out several times too narrow,
and twin runs of one server are called different (issue 19).

Requests that ran together are not independent either: at concurrency 8 the
requests in flight get their tokens from the same engine steps, and a machine
that gets busier for a second slows every request of that second. So the
gate's unit is a **block of consecutive requests** (in records.jsonl's
order, which is the order they ended): a step's requests are cut into at
most :data:`BLOCKS` blocks (a step of 40 or fewer: one request a block), and
:func:`gate_interval` resamples blocks. On twin runs against the mock the
interval of the ITL p50 is about twice as wide as over single requests, and
holds the twins' run-to-run shift (``benchmarks/aa_gate.py``); where requests
are independent, blocks of them change little.

:class:`PerRequest` holds a step's values grouped by request: one flat
float64 array and offsets into it (request ``i`` owns
``values[offsets[i]:offsets[i + 1]]``), no per-request Python object. TTFT,
TPOT and E2E have one value a request; ITL under the ``loadgen`` and ``vllm``
profiles has one per gap.

A resampled percentile is the pooled sample's own (numpy's linear rule): the
values are sorted once, each resample weights every value by how many times
its request was drawn, and the order statistics are read off the cumulative
weights. A side with more than :data:`MAX_VALUES` values is cut to a random
subset of whole requests under that many first (without replacement), which
only widens the interval.

:func:`untestable` says when a side is too small for the interval to hold its
error rate (simulated in tests/unit/report/test_gate.py): fewer than
:data:`MIN_REQUESTS` requests, or, for a percentile, fewer than
:data:`TAIL_REQUESTS` requests with a value at or above it (a p99 of 20
requests is about their maximum: its bootstrap calls one twin pair in seven
different). A p99 of one value a request needs 101 requests, a p99.9 1,001.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from loadgen.results import StepSamples

__all__ = [
    "BLOCKS",
    "CONFIDENCE",
    "MAX_VALUES",
    "MIN_REQUESTS",
    "TAIL_REQUESTS",
    "PerRequest",
    "bootstrap_diff",
    "gate_interval",
    "per_request",
    "resampled",
    "untestable",
]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

CONFIDENCE = 0.95
#: values a side keeps for the bootstrap; past this, a random subset of whole requests
MAX_VALUES = 50_000
#: fewest requests a side needs for any statistic to be tested
MIN_REQUESTS = 20
#: fewest requests a side needs with a value at or above a tested percentile
TAIL_REQUESTS = 2
#: most units (blocks of consecutive requests) a side is resampled in
BLOCKS = 40
#: elements of one (resamples x values) block; bounds the bootstrap's memory (~100 MB)
_BLOCK = 2_000_000


@dataclass(frozen=True, slots=True)
class PerRequest:
    """A step's values of one metric, grouped by request (see the module)."""

    values: Floats
    offsets: Ints  # len = requests + 1, offsets[0] = 0, offsets[-1] = len(values)

    @classmethod
    def single(cls, values: npt.ArrayLike) -> PerRequest:
        """One value a request (TTFT, E2E, TPOT): each value its own unit."""
        v = np.asarray(values, dtype=np.float64)
        return cls(v, np.arange(v.size + 1, dtype=np.int64))

    @property
    def requests(self) -> int:
        return int(self.offsets.size - 1)

    def subset(self, requests: Ints) -> PerRequest:
        """The values of the given requests (positions), in that order."""
        counts = np.diff(self.offsets)[requests]
        starts = self.offsets[:-1][requests]
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        within = np.arange(int(offsets[-1])) - np.repeat(offsets[:-1], counts)
        return PerRequest(self.values[np.repeat(starts, counts) + within], offsets)

    def capped(self, rng: np.random.Generator, cap: int = MAX_VALUES) -> PerRequest:
        """A random subset of whole requests holding at most ``cap`` values (all when fewer)."""
        if self.values.size <= cap:
            return self
        order = rng.permutation(self.requests)
        keep = order[np.cumsum(np.diff(self.offsets)[order]) <= cap]
        return self.subset(np.sort(keep))

    def blocks(self, most: int = BLOCKS) -> PerRequest:
        """The same values in at most ``most`` units of consecutive requests, each of
        ``ceil(requests / most)`` requests (the last may be shorter)."""
        size = max(1, math.ceil(self.requests / most))
        if size == 1:
            return self
        cuts = np.append(np.arange(0, self.requests, size), self.requests)
        return PerRequest(self.values, self.offsets[cuts])

    def owners(self) -> Ints:
        """The request (position) of each value."""
        out: Ints = np.repeat(np.arange(self.requests, dtype=np.int64), np.diff(self.offsets))
        return out


def per_request(step: StepSamples, metric: str) -> PerRequest:
    """Every value of ``metric`` in a step's samples grouped by request: ITL's gaps by the
    request they came from; TTFT, TPOT and E2E one value a request."""
    values = step.values(metric)
    if metric != "itl_ms":
        return PerRequest.single(values)
    ends = np.frombuffer(step.itl_ends, dtype=np.int64) if step.itl_ends else np.zeros(0)
    return PerRequest(values, np.concatenate([[0], ends]).astype(np.int64))


def _percentile_of_weighted(sorted_values: Floats, weights: Ints, q: float) -> Floats:
    """Per row of ``weights`` (resamples x values, each value taken that many times): the
    ``q``-th percentile (numpy's linear rule) of the sample so made."""
    k, g = weights.shape
    cum = np.cumsum(weights, axis=1)
    n = cum[:, -1]
    h = (n - 1) * (q / 100.0)
    lo = np.floor(h).astype(np.int64)
    hi = np.minimum(lo + 1, n - 1)
    stride = int(n.max()) + 1  # rows made one increasing array, so one searchsorted serves all
    shift = np.arange(k, dtype=np.int64) * stride
    flat = (cum + shift[:, None]).ravel()
    base = np.arange(k, dtype=np.int64) * g

    def at(rank: Ints) -> Floats:
        pos = np.searchsorted(flat, rank + shift, side="right") - base
        out: Floats = sorted_values[pos]
        return out

    v_lo, v_hi = at(lo), at(hi)
    out: Floats = v_lo + (h - lo) * (v_hi - v_lo)
    return out


def resampled(
    side: PerRequest, q: float | None, resamples: int, rng: np.random.Generator
) -> Floats:
    """``resamples`` bootstrap values of the statistic (``q``: a percentile; None: the mean
    of the pooled values): whole requests drawn with replacement each time."""
    n = side.requests
    counts = np.diff(side.offsets)
    if q is None:
        sums = np.bincount(side.owners(), weights=side.values, minlength=n)
        out = np.empty(resamples)
        rows = max(1, _BLOCK // max(n, 1))
        for start in range(0, resamples, rows):
            idx = rng.integers(0, n, (min(rows, resamples - start), n))
            out[start : start + len(idx)] = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
        return out
    if side.values.size == n:  # one value a request: the plain bootstrap (the same draws)
        out = np.empty(resamples)
        rows = max(1, _BLOCK // max(n, 1))
        for start in range(0, resamples, rows):
            idx = rng.integers(0, n, (min(rows, resamples - start), n))
            out[start : start + len(idx)] = np.percentile(side.values[idx], q, axis=1)
        return out
    order = np.argsort(side.values, kind="stable")
    sorted_values, owner = side.values[order], side.owners()[order]
    out = np.empty(resamples)
    rows = max(1, _BLOCK // max(side.values.size, n, 1))
    for start in range(0, resamples, rows):
        k = min(rows, resamples - start)
        idx = rng.integers(0, n, (k, n)) + (np.arange(k, dtype=np.int64) * n)[:, None]
        drawn = np.bincount(idx.ravel(), minlength=k * n).reshape(k, n)
        out[start : start + k] = _percentile_of_weighted(sorted_values, drawn[:, owner], q)
    return out


def bootstrap_diff(
    base: PerRequest | npt.ArrayLike,
    new: PerRequest | npt.ArrayLike,
    q: float | None,
    *,
    resamples: int = 1000,
    seed: int = 0,
) -> tuple[float, float]:
    """The 95% percentile-bootstrap interval of ``stat(new) - stat(base)`` (seeded).

    ``q``: the percentile (None: the mean). A plain array is one value a request
    (:meth:`PerRequest.single`); resamples are drawn as the module says.
    """
    rng = np.random.default_rng(seed)
    a, b = (s if isinstance(s, PerRequest) else PerRequest.single(s) for s in (base, new))
    a, b = a.capped(rng), b.capped(rng)
    diffs = resampled(b, q, resamples, rng) - resampled(a, q, resamples, rng)
    diffs = diffs[np.isfinite(diffs)]  # a resample of requests with no value (ITL of 1 token)
    tail = (1 - CONFIDENCE) / 2
    lo, hi = np.quantile(diffs, [tail, 1 - tail])
    return float(lo), float(hi)


def untestable(side: PerRequest, q: float | None, stat: str) -> str | None:
    """Why ``side`` is too small for the bootstrap to hold its error rate, or None (the
    module's rule): ``'12 requests, too few to test a p99 (about 101 would)'``."""
    counts = np.diff(side.offsets)
    n = int(np.count_nonzero(counts))
    need = MIN_REQUESTS
    if q is not None and n:
        cut = float(np.percentile(side.values, q))
        tail = np.unique(side.owners()[side.values >= cut]).size
        if tail < TAIL_REQUESTS:
            need = max(need, math.ceil(n * TAIL_REQUESTS / max(tail, 1)))
            if counts.max(initial=0) <= 1:  # one value a request: the exact figure
                need = max(MIN_REQUESTS, math.ceil((TAIL_REQUESTS - 1) / (1 - q / 100) - 1e-9) + 1)
    if n >= need:
        return None
    return f"{n} request{'s' if n != 1 else ''}, too few to test {_name(stat)} (about {need} would)"


def _name(stat: str) -> str:
    return "a mean" if stat == "mean" else f"a {stat.replace('_', '.')}"


def gate_interval(
    base: PerRequest, new: PerRequest, stat: str, q: float | None, *, resamples: int, seed: int
) -> tuple[tuple[float, float] | None, str | None]:
    """The gate's test: (the 95% interval of ``stat(new) - stat(base)`` over blocks of
    consecutive requests, or None when untested; why it is untested, or None).
    ``stat`` names the statistic for the message, ``q`` its percentile (None: the mean)."""
    for run, side in (("the baseline", base), ("the newest run", new)):
        if (why := untestable(side, q, stat)) is not None:
            return None, f"{run} has {why}"
    return bootstrap_diff(base.blocks(), new.blocks(), q, resamples=resamples, seed=seed), None
