"""Speculative decoding over a step, from the server's counters.

Owns :class:`SpecDecodeStats`: the differences of vLLM's cumulative
``spec_decode_*`` counters over the step (scraped just before and just after
it), and the client's tokens per event beside them.
"""

from __future__ import annotations

from pydantic import Field

from loadgen.strict import Strict

__all__ = ["SpecDecodeStats"]


class SpecDecodeStats(Strict):
    """The server's draft counters over the step (docs/metrics.md, speculative decoding).

    acceptance rate = accepted_tokens / draft_tokens;
    mean accepted length = 1 + accepted_tokens / drafts (the target model's own token
    counted, as vLLM counts it); emitted_tokens = drafts + accepted_tokens.
    """

    drafts: float = Field(description="Drafts verified: one per request per decoding step.")
    draft_tokens: float = Field(description="Tokens the draft model proposed.")
    accepted_tokens: float = Field(description="Of those, tokens the target model accepted.")
    emitted_tokens: float = Field(
        description="Tokens the drafted steps emitted: drafts + accepted_tokens."
    )
    acceptance_rate: float | None = Field(
        None, description="accepted_tokens / draft_tokens; null when nothing was drafted."
    )
    mean_accepted_length: float | None = Field(
        None, description="1 + accepted_tokens / drafts; null when nothing was drafted."
    )
    acceptance_by_position: list[float] | None = Field(
        None,
        description="Per draft position i: drafts whose token i was accepted / drafts; null "
        "when the server exports no per-position counter or nothing was drafted.",
    )
    tokens_per_event: float | None = Field(
        None,
        description="The client's view: output tokens / token events of the step's "
        "successful requests (several tokens per event = accepted drafts).",
    )
    source: str = Field(description="Where the numbers came from (the metric names' stem).")
