"""A pooling API's step (embeddings, rerank): what its answers carried, beside the throughput.

Owns :class:`PoolingStats` and :data:`TOKEN_TIMING_FIELDS`, the step fields a
pooling answer has nothing for (one JSON body, no tokens generated): a
:class:`~loadgen.summary.StepSummary` with ``pooling`` set leaves them out of
summary.json (:func:`drop_token_timing`: its own, its endpoints' and models',
and ``output_tokens_per_s`` of every throughput), and every output shows E2E,
requests/s, inputs/s and input tokens/s in their place (docs/metrics.md,
"Pooling APIs").
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from loadgen.strict import Strict

__all__ = ["PART_TIMING_FIELDS", "TOKEN_TIMING_FIELDS", "PoolingStats", "drop_token_timing"]

#: StepSummary fields about token timing: absent from a pooling step's summary.json
TOKEN_TIMING_FIELDS = (
    "ttft_of",
    "ttft_ms",
    "ttft_from_scheduled_ms",
    "ttft_from_sent_ms",
    "ttft_reasoning_ms",
    "ttft_answer_ms",
    "ttft_by_turn",
    "itl_ms",
    "icl_ms",
    "tpot_ms",
)
#: EndpointStats / ModelStats fields about token timing: absent from a pooling step's parts
PART_TIMING_FIELDS = ("ttft_ms", "itl_ms", "tpot_ms")
#: Throughput fields a pooling step has nothing for (no token is generated)
THROUGHPUT_FIELDS = ("output_tokens_per_s",)


def drop_token_timing(step: dict[str, Any]) -> None:
    """A pooling step's summary.json dict without token timing or output tokens/s: its own
    :data:`TOKEN_TIMING_FIELDS`, each endpoint's and model's :data:`PART_TIMING_FIELDS`, and
    ``output_tokens_per_s`` of every throughput (the step's, its whole window's, its parts')."""
    for name in TOKEN_TIMING_FIELDS:
        step.pop(name, None)
    parts = [*(step.get("endpoints") or ()), *(step.get("models") or ())]
    for part in parts:
        for name in PART_TIMING_FIELDS:
            part.pop(name, None)
    for holder in (step, *parts):
        for key in ("throughput", "throughput_whole"):
            if isinstance(t := holder.get(key), dict):
                for name in THROUGHPUT_FIELDS:
                    t.pop(name, None)
    if isinstance(phases := step.get("phases"), dict):  # new vs reused: no TTFT either
        for group in ("new", "reused"):
            if isinstance(g := phases.get(group), dict):
                g.pop("ttft_ms_p50", None)


class PoolingStats(Strict):
    """What a pooling step's successful measured requests sent and got back."""

    api: str = Field(description="openai-embeddings or rerank.")
    inputs_total: int = Field(
        0, description="Inputs (embeddings) or documents (rerank) the requests sent."
    )
    inputs_mean: float | None = Field(
        None, description="Inputs or documents per request, on average."
    )
    input_tokens_per_input: float | None = Field(
        None,
        description="Prompt tokens per input or document (the server's count where it "
        "sent one), on average.",
    )
    vector_dims: dict[str, int] | None = Field(
        None,
        description="Embeddings: each vector dimension the measured answers carried -> how "
        "many answers had it; more than one key is a mismatch (warned).",
    )
