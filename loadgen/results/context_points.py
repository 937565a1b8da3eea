"""TTFT against context size per session call: the points of the TTFT-vs-context plot.

Owns :class:`ContextPoints`: per step, for each successful measured call of a
session (``Record.session`` set), its prompt tokens (``Record.prompt_tokens``:
the context the server had to read), its TTFT (the profile's, as the step's
``ttft_ms`` and the CDFs) and the share of its prompt the server said it served
from its prefix cache (``cached_tokens_server / prompt_tokens``; NaN when the
server did not say). Filled by :class:`loadgen.results.samples.RunSamples` in
its one pass over records.jsonl.
"""

from __future__ import annotations

import math
from array import array

__all__ = ["MAX_POINTS", "ContextPoints"]

#: A panel draws at most this many points (every k-th call past it, in record order).
MAX_POINTS = 6000


class ContextPoints:
    """One step's (prompt tokens, TTFT ms, cached share or NaN) per session call."""

    __slots__ = ("cached_share", "prompt_tokens", "ttft_ms")

    def __init__(self) -> None:
        self.prompt_tokens = array("d")
        self.ttft_ms = array("d")
        self.cached_share = array("d")

    def __len__(self) -> int:
        return len(self.ttft_ms)

    def add(self, prompt_tokens: int, ttft_ms: float, cached_tokens: int | None) -> None:
        self.prompt_tokens.append(float(prompt_tokens))
        self.ttft_ms.append(ttft_ms)
        known = cached_tokens is not None and prompt_tokens > 0
        share = min(1.0, cached_tokens / prompt_tokens) if known and cached_tokens else 0.0
        self.cached_share.append(share if known else math.nan)

    def thinned(self) -> tuple[list[float], list[float], list[float]]:
        """(x, y, share) of at most :data:`MAX_POINTS` points: every k-th call."""
        k = max(1, math.ceil(len(self) / MAX_POINTS))
        return (
            list(self.prompt_tokens[::k]),
            list(self.ttft_ms[::k]),
            list(self.cached_share[::k]),
        )
