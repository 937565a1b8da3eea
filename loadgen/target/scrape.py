"""One read of every endpoint's ``/metrics`` per step boundary, for the figures drawn from it.

Just before and just after each step the run asks each endpoint's ``/metrics``
once, in list order (:func:`scrape_boundary`). The prefix-cache counters
(:mod:`~loadgen.target.cache`), the speculative-decoding counters
(:mod:`~loadgen.target.spec_decode`) and the request-phase histograms
(:mod:`~loadgen.target.phases`) are pure parsers of those same texts
(:func:`read_boundary`). Each request carries the target's headers and TLS
options and is bounded as every scrape is (:data:`loadgen.control.METRICS`). An
endpoint that gives no text (nothing listening, a non-200 answer) is None
without a word; one cut off at loadgen's bound is a warning naming the URL and
the bound. Either way the parsers give None for what they cannot read, and the
step goes on without those figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from loadgen.client import TlsOptions
from loadgen.control import METRICS, ControlError, fetch
from loadgen.redact import warn
from loadgen.scenario import Scenario
from loadgen.target.cache import prefix_cache_all
from loadgen.target.options import target_headers, tls_options
from loadgen.target.phases import Scrape, phases_all
from loadgen.target.spec_decode import spec_decode_all

__all__ = ["Boundary", "fetch_metrics", "fetch_metrics_all", "read_boundary", "scrape_boundary"]

#: what a cut-off scrape costs the step, said after the URL and the bound
LEFT_OUT = (
    "the step's prefix-cache hit rate, speculative-decoding figures and time split are left out"
)


@dataclass(frozen=True, slots=True)
class Boundary:
    """What the endpoints' ``/metrics`` said at one step boundary, per figure (None: not read)."""

    prefix_cache: dict[str, float] | None
    spec_decode: dict[str, float] | None
    phases: Scrape | None


def fetch_metrics(url: str, headers: dict[str, str], tls: TlsOptions) -> str | None:
    """``url``'s ``/metrics`` text now; None when it gives none (a cut-off is a warning)."""
    try:
        where = url.rstrip("/") + "/metrics"
        reply = fetch("GET", where, METRICS, headers=headers, verify=tls.context())
    except ControlError as exc:
        if exc.limit_hit:  # a server without /metrics says nothing; one cut off is told
            warn(f"warning: {exc}; {LEFT_OUT}")
        return None
    if reply.status != 200:
        return None
    return reply.text


def fetch_metrics_all(sc: Scenario, urls: Sequence[str]) -> list[str | None]:
    """Every endpoint's ``/metrics`` text (:func:`fetch_metrics`), one GET each, in order."""
    headers, tls = target_headers(sc), tls_options(sc)
    return [fetch_metrics(u, headers, tls) for u in urls]


def read_boundary(texts: Sequence[str | None]) -> Boundary:
    """The three figures' readings from the endpoints' texts (one per endpoint)."""
    return Boundary(
        prefix_cache=prefix_cache_all(texts),
        spec_decode=spec_decode_all(texts),
        phases=phases_all(texts),
    )


def scrape_boundary(sc: Scenario, urls: Sequence[str]) -> Boundary:
    """One step boundary: :func:`fetch_metrics_all`, then :func:`read_boundary`."""
    return read_boundary(fetch_metrics_all(sc, urls))
