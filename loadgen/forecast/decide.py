"""Whether a step's request count can decide its percentile bounds, before any is sent.

A bound on a percentile is confirmed met when the distribution-free interval's
upper end is within it (:mod:`loadgen.metrics.confidence`). That end is an
order statistic that only exists from a certain sample size on: with every
value far within the bound, the fewest values that confirm it are

    N = requests_needed(1, 0, p, confidence)   (0 values beyond the bound)

the smallest N with ``1 - p**N >= 1 - alpha/2``: 36 for a p90, 72 for a p95
and 368 for a p99 at 95 %. Fewer values can still show a bound missed (the
interval's lower end beyond it), never met; values near the bound need more.
ITL bounds count gaps, ``output tokens - 1`` per request.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from loadgen.metrics import requests_needed
from loadgen.scenario import SlaSpec
from loadgen.vocab import PERCENTILE_OF, stat_label

__all__ = ["Shortfall", "bound_label", "fewest_to_confirm", "shortfalls"]

_METRICS = ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms")


def fewest_to_confirm(percentile: float, confidence: float) -> int:
    """The fewest values that can confirm a bound on the ``percentile`` (0-100) met."""
    need = requests_needed(1, 0, percentile / 100, confidence)
    if need is None:  # pragma: no cover - a share of 0 is always decided at some size
        raise ValueError(f"no sample confirms a p{percentile:g} at {confidence}")
    return need


def bound_label(metric: str, stat: str, bound: float) -> str:
    """``ttft_ms.p99 <= 400``, as the run's SLA lines name a bound."""
    return f"{metric}.{stat_label(stat)} <= {bound:g}"


@dataclass(frozen=True, slots=True)
class Shortfall:
    """A percentile bound that ``requests`` cannot confirm met: ``needed`` requests could."""

    metric: str
    stat: str
    bound: float
    requests: int
    needed: int
    confidence: float

    @property
    def label(self) -> str:
        return bound_label(self.metric, self.stat, self.bound)


def shortfalls(sla: SlaSpec, requests: int, gaps_per_request: float = 1.0) -> list[Shortfall]:
    """Each percentile bound of ``sla`` that ``requests`` measured requests cannot confirm met.

    ``gaps_per_request``: ITL values per request (mean output tokens less one).
    Bounds on the mean are left out (their interval is the normal approximation,
    whose width depends on the values).
    """
    out: list[Shortfall] = []
    for metric in _METRICS:
        for stat, bound in getattr(sla, metric).items():
            if stat not in PERCENTILE_OF:
                continue
            need = fewest_to_confirm(PERCENTILE_OF[stat], sla.confidence)
            if metric == "itl_ms":
                need = math.ceil(need / gaps_per_request) if gaps_per_request > 0 else 0
                if need == 0:
                    continue  # one-token answers have no gaps: no request decides it
            if requests < need:
                out.append(Shortfall(metric, stat, bound, requests, need, sla.confidence))
    return out
