"""A pooling API's step (embeddings, rerank): what its answers carried, beside the throughput.

Owns :class:`PoolingStats` and :data:`TOKEN_TIMING_FIELDS`, the step fields a
pooling answer has nothing for (one JSON body, no tokens generated): a
:class:`~loadgen.summary.StepSummary` with ``pooling`` set leaves them out of
summary.json, and every output shows E2E, requests/s, inputs/s and input
tokens/s in their place (docs/metrics.md, "Pooling APIs").

Imports: pydantic, loadgen.strict.
"""

from __future__ import annotations

from pydantic import Field

from loadgen.strict import Strict

__all__ = ["TOKEN_TIMING_FIELDS", "PoolingStats"]

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
