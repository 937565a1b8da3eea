"""The prompt tokens the server served from its prefix cache, as its answers said.

Owns :class:`CachedTokenStats`, filled from each request's usage count
(``Record.cached_tokens_server``), the client's view of the server's prefix
cache; ``StepSummary.prefix_cache`` is the server's own counters.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from loadgen.strict import Strict

__all__ = ["BY_TURN_MAX", "CachedTokenStats"]

#: turns (or agent calls) the by-turn hit rates cover, the first ones
BY_TURN_MAX = 10


class CachedTokenStats(Strict):
    """Over the step's successful measured requests, when any answer counted cached tokens
    (a request whose answer did not count them counts 0)."""

    hit_rate: float = Field(
        description="Cached prompt tokens / prompt tokens, summed over the requests: the "
        "server's prefix-cache hit rate as its answers tell it."
    )
    cached_tokens: int = Field(description="Cached prompt tokens, summed.")
    cached_tokens_per_request: float = Field(description="Mean cached prompt tokens a request.")
    requests_with_hits: float = Field(
        description="Share of the requests with any cached prompt token (0..1)."
    )
    reported: int = Field(description="Requests whose answer counted its cached tokens.")
    session_hit_rate_mean: float | None = Field(
        None,
        description="Mean over the sessions (multi-turn or agent tasks) of each one's hit "
        "rate (its cached / prompt tokens); null without sessions.",
    )
    by_turn_of: Literal["turn", "call"] | None = Field(
        None,
        description="What by_turn is indexed by: the turn of a session, or an agent's call "
        "index; null without either.",
    )
    by_turn: list[float | None] = Field(
        default_factory=list,
        description=f"Hit rate of turn (or call) 0, 1, ... (the first {BY_TURN_MAX} at most); "
        "null where no request had that index.",
    )
