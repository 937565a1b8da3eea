"""Where a step's time went, by the server's own histograms: :class:`TimeSplit`.

Owns :class:`PhaseTime` (one phase's mean and approximate percentiles over a
step) and :class:`TimeSplit` (queue, prefill, decode and the server's E2E and
TTFT, with the client's E2E beside them; the server's frontend and the network
+ client as the differences, so the parts' means add up to the client's E2E
mean). Filled from the difference of the
server's histograms scraped before and after the step; the percentiles are
interpolated inside the server's buckets and only approximate; the means are
exact (sum / count of the delta).
"""

from __future__ import annotations

from pydantic import Field

from loadgen.strict import Strict

__all__ = ["PART_WORDS", "PHASES", "PhaseTime", "TimeSplit"]

#: the parts of a request's time, in the order of its life (and of the stacked bar)
PHASES = ("queue", "prefill", "decode", "frontend", "network")
#: part -> its words in every output
PART_WORDS = {
    "queue": "queue",
    "prefill": "prefill",
    "decode": "decode",
    "frontend": "server frontend",
    "network": "network + client",
}


class PhaseTime(Strict):
    """One histogram's delta over the step, in ms."""

    count: float = Field(description="Observations over the step (count delta).")
    mean_ms: float | None = Field(None, description="sum delta / count delta (exact).")
    p50_ms_approx: float | None = Field(
        None, description="Approximate median: linear interpolation in the server's bucket."
    )
    p90_ms_approx: float | None = Field(None, description="Approximate p90 (bucket interpolation).")
    p99_ms_approx: float | None = Field(None, description="Approximate p99 (bucket interpolation).")
    metric: str = Field(description="The server's histogram it came from.")


class TimeSplit(Strict):
    """The server's view of the step's requests beside the client's."""

    engine: str = Field(description="Whose metric names answered: vllm, sglang or tgi.")
    queue: PhaseTime | None = Field(None, description="Waiting to be scheduled.")
    prefill: PhaseTime | None = Field(None, description="Scheduled to first token.")
    decode: PhaseTime | None = Field(None, description="First token to last token.")
    server_e2e: PhaseTime | None = Field(None, description="The server's request latency.")
    server_ttft: PhaseTime | None = Field(None, description="The server's time to first token.")
    client_e2e_mean_ms: float | None = Field(
        None, description="The client's E2E mean over the step's successful measured requests."
    )
    network_ms: float | None = Field(
        None,
        description="Network + HTTP + client = client E2E mean - server E2E mean (means over "
        "slightly different request sets: the server counts warm-up and cooldown too).",
    )
    grew_most: str | None = Field(
        None,
        description="When the step missed the SLA: the part whose mean grew most against "
        "the last earlier step that met it (else the first earlier step with a split).",
    )
    # -- the server's own time outside its engine
    frontend_ms: float | None = Field(
        None,
        description="Server frontend = server E2E mean - (queue + prefill + decode means), "
        "on the same histogram delta: the server's time outside its engine's phases (vLLM: "
        "the API server's arrival, before tokenising, to the engine core queueing the request, "
        "and the engine's last token to the API server reading it). None unless the server "
        "exports all four.",
    )

    def seen_by_client(self, client_e2e_mean_ms: float | None) -> TimeSplit:
        """This split with the client's E2E mean beside it, and the network + client part
        (client E2E mean - server E2E mean) where both are known."""
        e2e = self.server_e2e
        network = None
        if e2e is not None and e2e.mean_ms is not None and client_e2e_mean_ms is not None:
            network = client_e2e_mean_ms - e2e.mean_ms
        return self.model_copy(
            update={"client_e2e_mean_ms": client_e2e_mean_ms, "network_ms": network}
        )

    def part_means(self) -> dict[str, float]:
        """The mean of each part the split has, ms (server frontend and network + client:
        the differences), in :data:`PHASES` order."""
        phases = {"queue": self.queue, "prefill": self.prefill, "decode": self.decode}
        out = {k: v.mean_ms for k, v in phases.items() if v is not None and v.mean_ms is not None}
        if self.frontend_ms is not None:
            out["frontend"] = self.frontend_ms
        if self.network_ms is not None:
            out["network"] = self.network_ms
        return out
