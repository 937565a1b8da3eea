"""Metric-definition profiles: the same records, measured the way another tool defines them.

Tools disagree on what ITL and TPOT mean, and on when a request starts. A
profile picks the formulas, so a loadgen summary can sit beside another tool's
report like for like (docs/metrics.md has the table). ``loadgen`` is the
default and is what every other document in this repository describes.

- loadgen: TTFT = first - sent; ITL = gaps between token events;
  TPOT = (last - first) / (n - 1); E2E = end - sent.
- vllm: TTFT = first - start; ITL = gaps between token events;
  TPOT = (last - start - TTFT) / (n - 1); E2E = last - start.
- aiperf: TTFT = first - start; ITL = (last - first) / (n - 1) per request;
  TPOT = the same; E2E = last - start; ICL = gaps between token events.
- guidellm: TTFT = first - start; ITL = (last - first) / (n - 1) per request;
  TPOT = (last - start) / n (the first token's wait included); E2E = end - start.

A profile's TTFT counts from its ``origin`` (``sent_ns`` or ``start_ns``) to
the first token, or to the first answer or reasoning token for the split
TTFTs: TTFT = stamp - origin.

Open loop (records with ``scheduled_ns``) and ``sla.latency_from: scheduled``
(the default): TTFT and E2E count from the intended send time instead, in
every profile: each gets ``lead = origin - scheduled_ns`` added, so
TTFT = stamp - scheduled_ns and E2E = the profile's end stamp - scheduled_ns
(coordinated omission, docs/metrics.md). ITL and TPOT do not move. Closed loop
has no ``scheduled_ns``: nothing changes.

``start_ns`` is when loadgen began the request (before the HTTP library ran),
which is where vLLM's, AIPerf's and GuideLLM's clients take their start stamp;
``sent_ns`` is when the request reached the socket. AIPerf's inter-chunk
latency (its "ICL") is the loadgen/vLLM ITL, reported as ``icl_ms``.

Imports: loadgen.records, loadgen.metrics.latency.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from loadgen.metrics.latency import Stamp, e2e_ns, first_token, itl_gaps_ns, tpot_ns
from loadgen.records import Record

__all__ = ["PROFILES", "PROFILE_NAMES", "Profile"]

PerRequest = Callable[[Record], float | None]


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    #: where TTFT counts from: the send (``sent_ns``) or the start (``start_ns``)
    origin: Callable[[Record], int]
    tpot: PerRequest
    e2e: PerRequest
    #: ITL values of a step: pooled gaps, or one value per request
    itl: Callable[[Sequence[Record]], list[float]]
    #: AIPerf's inter-chunk latency, where the profile names it separately
    icl: Callable[[Sequence[Record]], list[float]] | None = None

    def lead_ns(self, r: Record, latency_from: str = "scheduled") -> int:
        """lead = origin - scheduled_ns for an open-loop record with ``latency_from``
        ``scheduled``; 0 otherwise (closed loop, or ``sent``)."""
        if latency_from != "scheduled" or r.scheduled_ns is None:
            return 0
        return self.origin(r) - r.scheduled_ns

    def ttft(
        self, r: Record, first: Stamp = first_token, latency_from: str = "scheduled"
    ) -> int | None:
        """TTFT = the ``first`` stamp (first token by default) - origin + lead."""
        t = first(r)
        return None if t is None else t - self.origin(r) + self.lead_ns(r, latency_from)

    def latency(self, r: Record, latency_from: str = "scheduled") -> float | None:
        """E2E = the profile's E2E (end stamp - origin) + lead."""
        e = self.e2e(r)
        return None if e is None else e + self.lead_ns(r, latency_from)


def _sent(r: Record) -> int:
    return r.sent_ns


def _start(r: Record) -> int:
    return r.start_ns


def _pooled_gaps(records: Sequence[Record]) -> list[float]:
    return [float(g) for r in records for g in itl_gaps_ns(r)]


def _ttft_from_start(r: Record) -> int | None:
    """TTFT = first-token time - start time (before the HTTP library ran)."""
    return None if r.first_token_ns is None else r.first_token_ns - r.start_ns


def _to_last_token(r: Record) -> int | None:
    """E2E to the last token = last-token time - start time."""
    return None if r.last_token_ns is None else r.last_token_ns - r.start_ns


def _e2e_from_start(r: Record) -> int:
    """E2E = end time - start time."""
    return r.end_ns - r.start_ns


def _vllm_tpot(r: Record) -> float | None:
    """vLLM's TPOT = (latency - TTFT) / (n - 1), latency to the last token, from start."""
    n, last, ttft = r.output_tokens, _to_last_token(r), _ttft_from_start(r)
    if n < 2 or last is None or ttft is None:
        return None
    return (last - ttft) / (n - 1)


def _per_request_itl(records: Sequence[Record]) -> list[float]:
    return [v for r in records if (v := tpot_ns(r)) is not None]


def _guidellm_tpot(r: Record) -> float | None:
    """GuideLLM's TPOT = (last-token time - start) / n: the first token's wait included."""
    last, n = _to_last_token(r), r.output_tokens
    if last is None or n < 1:
        return None
    return last / n


PROFILES: dict[str, Profile] = {
    "loadgen": Profile("loadgen", _sent, tpot_ns, e2e_ns, _pooled_gaps),
    "vllm": Profile("vllm", _start, _vllm_tpot, _to_last_token, _pooled_gaps),
    "aiperf": Profile("aiperf", _start, tpot_ns, _to_last_token, _per_request_itl, _pooled_gaps),
    "guidellm": Profile("guidellm", _start, _guidellm_tpot, _e2e_from_start, _per_request_itl),
}
PROFILE_NAMES = tuple(PROFILES)
