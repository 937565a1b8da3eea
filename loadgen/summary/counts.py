"""What a step did, counted: its load point, requests, throughput, tokens, prompt lengths.

Owns :class:`LoadPoint`, :class:`RequestCounts`, :class:`Throughput`,
:class:`TokenCounts`, :class:`PromptLengthCheck` and :class:`PrefixCacheStats`.
Rates are per second.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from loadgen.strict import Strict

__all__ = [
    "LoadPoint",
    "PrefixCacheStats",
    "PromptLengthCheck",
    "RequestCounts",
    "Throughput",
    "TokenCounts",
]


class LoadPoint(Strict):
    mode: str
    concurrency: int | None = None
    rate: float | None = None
    time_scale: float | None = Field(
        None,
        description="Trace replay: the factor gaps between the trace's arrivals were "
        "multiplied by (0.5 = twice the recorded rate).",
    )
    arrival: str | None = None
    burstiness: float | None = None
    max_concurrency: int | None = None


class RequestCounts(Strict):
    total: int = 0
    ok: int = 0
    failed: int = 0
    warmup: int = 0
    ramp: int = Field(
        0, description="Requests started during load.ramp_up_s: recorded, not in any metric."
    )
    cancelled: int = 0  # in flight when the run was interrupted; not in any metric
    reconnects: int = Field(
        0,
        description="Measured requests sent again on a fresh connection because the server "
        "dropped the kept-alive one before answering (not failures).",
    )
    errors: dict[str, int] = Field(default_factory=dict)
    error_rate: float = 0.0
    # -- users who stop (workload.cancel)
    cancelled_by_client: int = Field(
        0,
        description="Measured requests the client aborted mid-stream on purpose "
        "(workload.cancel): in total, neither ok nor failed, in no latency metric.",
    )
    cancelled_by_client_share: float = Field(
        0.0, description="cancelled_by_client / total (0 when nothing was measured)."
    )


class Throughput(Strict):
    requests_per_s: float = 0.0
    output_tokens_per_s: float = 0.0
    input_tokens_per_s: float = 0.0
    goodput_requests_per_s: float | None = None
    #: requests_per_s's confidence interval (the count as Poisson; docs/metrics.md)
    requests_per_s_ci: list[float | None] | None = None
    window: Literal["steady", "whole"] = Field(
        "whole",
        description="What the rates are over: the step's steady window (requests that "
        "completed in it / its length) or its whole window (docs/metrics.md).",
    )
    # -- pooling APIs (embeddings, rerank)
    inputs_per_s: float | None = Field(
        None,
        description="Pooling APIs: inputs (embeddings) or documents (rerank) per second; "
        "null for a generating API.",
    )


class TokenCounts(Strict):
    output_total: int = 0
    input_total: int = 0
    output_events_total: int = 0
    count_mismatches: int = 0
    server_counts: int = 0  # requests whose counts came from the server's usage block
    prompt_requested_total: int = Field(
        0, description="Sum of the requested (planned) prompt lengths of successful requests."
    )
    reasoning_total: int = Field(
        0,
        description="Reasoning tokens of successful requests: the server's "
        "completion_tokens_details.reasoning_tokens where sent, else reasoning events.",
    )
    short_outputs: int = Field(
        0, description="Successful requests whose output_tokens < max_tokens."
    )
    full_output_expected: bool = Field(
        False,
        description="The request body forced full outputs (ignore_eos, or min_tokens = "
        "max_tokens), so any short output is flagged in the step's warnings.",
    )
    # -- users who stop (workload.cancel)
    cancelled_output_total: int = Field(
        0,
        description="Output tokens the requests the client aborted had received: not in "
        "output_total nor in output_tokens_per_s.",
    )


class PromptLengthCheck(Strict):
    """The server's prompt token count against the requested length, per request.

    Relative difference = (server - requested) / requested.
    """

    compared: int = Field(
        0, description="Successful requests with a server prompt count (usage.prompt_tokens)."
    )
    mean_rel_diff: float | None = Field(
        None, description="Mean relative difference over the compared requests."
    )
    worst_rel_diff: float | None = Field(
        None, description="The relative difference largest in absolute value, with its sign."
    )
    beyond_tolerance: int = Field(
        0, description="Compared requests whose |relative difference| exceeds tolerance."
    )
    tolerance: float = Field(0.02, description="Relative tolerance; 0 means any difference counts.")


class PrefixCacheStats(Strict):
    """The server's prefix-cache counters over the step (filled from server metrics)."""

    queries_tokens: float | None = Field(
        None, description="Prompt tokens looked up in the prefix cache during the step."
    )
    hits_tokens: float | None = Field(None, description="Of those, tokens found in the cache.")
    hit_rate: float | None = Field(None, description="hits_tokens / queries_tokens.")
    source: str = Field(description="Where the numbers came from (e.g. the metric names).")
