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

Each profile is one row of :data:`PROFILES`: which stamp it counts from, where
its E2E ends, which TPOT and which ITL it takes. The methods of :class:`Profile`
apply the row to one record; :mod:`loadgen.metrics.vector` applies the same row
to a step's columns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from loadgen.metrics.latency import Stamp, first_token, itl_gaps_ns, tpot_ns
from loadgen.records import Record
from loadgen.vocab import PROFILE_NAMES

__all__ = ["PROFILES", "PROFILE_NAMES", "Profile"]

#: a stamp of a record, by its column name (``sent`` is ``Record.sent_ns``)
Origin = Literal["sent", "start"]
End = Literal["end", "last"]
#: ``between``: (last - first) / (n - 1), two token events at least (latency.tpot_ns);
#: ``vllm``: the same integers, without the two-events rule;
#: ``with_wait``: (last - start) / n, the first token's wait included
TpotRule = Literal["between", "vllm", "with_wait"]
#: ``gaps``: the gaps between token events, pooled; ``per_request``: one TPOT
#: (``between``) per request
ItlRule = Literal["gaps", "per_request"]


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    #: where TTFT and E2E count from: the send (``sent_ns``) or the start (``start_ns``)
    counts_from: Origin
    #: where E2E ends: the stream's end (``end_ns``) or the last token (``last_token_ns``)
    ends_at: End
    tpot_rule: TpotRule
    itl_rule: ItlRule
    #: what the profile changes, in one line for the reports (docs/metrics.md has the formulas)
    note: str = ""
    #: the pooled gaps are also reported as AIPerf's inter-chunk latency (``icl_ms``)
    names_icl: bool = False
    # -- pooling APIs (embeddings, rerank): no TTFT, so the note says where E2E counts from
    pooling_note: str = ""

    def origin(self, r: Record) -> int:
        """The stamp TTFT and E2E count from."""
        return r.sent_ns if self.counts_from == "sent" else r.start_ns

    def e2e(self, r: Record) -> int | None:
        """E2E = the end stamp (end, or the last token) - origin."""
        end = r.end_ns if self.ends_at == "end" else r.last_token_ns
        return None if end is None else end - self.origin(r)

    def tpot(self, r: Record) -> float | None:
        """TPOT by :attr:`tpot_rule`; None where the request has too few tokens."""
        n, first, last = r.output_tokens, r.first_token_ns, r.last_token_ns
        if self.tpot_rule == "between":
            return tpot_ns(r)
        if self.tpot_rule == "vllm":  # ((last - start) - (first - start)) / (n - 1)
            return None if n < 2 or first is None or last is None else (last - first) / (n - 1)
        return None if last is None or n < 1 else (last - r.start_ns) / n

    def itl(self, records: Sequence[Record]) -> list[float]:
        """ITL values of a step: pooled gaps, or one value per request."""
        if self.itl_rule == "gaps":
            return _pooled_gaps(records)
        return [v for r in records if (v := tpot_ns(r)) is not None]

    @property
    def icl(self) -> Callable[[Sequence[Record]], list[float]] | None:
        """AIPerf's inter-chunk latency (the pooled gaps), where the profile names it."""
        return _pooled_gaps if self.names_icl else None

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


def _pooled_gaps(records: Sequence[Record]) -> list[float]:
    return [float(g) for r in records for g in itl_gaps_ns(r)]


#: The profiles, in the order of :data:`loadgen.vocab.PROFILE_NAMES` (a test holds them equal).
PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile(
            "loadgen",
            "sent",
            "end",
            "between",
            "gaps",
            "loadgen's own formulas (TTFT from the send)",
            pooling_note="loadgen's own formulas (E2E from the send)",
        ),
        Profile(
            "vllm",
            "start",
            "last",
            "vllm",
            "gaps",
            "vLLM's benchmark formulas (TTFT from the request's start)",
            pooling_note="vLLM's benchmark formulas (E2E from the request's start)",
        ),
        Profile(
            "aiperf",
            "start",
            "last",
            "between",
            "per_request",
            "AIPerf's formulas (TTFT from the start, ITL one value per request)",
            names_icl=True,
            pooling_note="AIPerf's formulas (E2E from the start)",
        ),
        Profile(
            "guidellm",
            "start",
            "end",
            "with_wait",
            "per_request",
            "GuideLLM's formulas (TTFT from the start, TPOT with the first token's wait)",
            pooling_note="GuideLLM's formulas (E2E from the start)",
        ),
    )
}
