"""The engine's prefix cache: full blocks of prompt tokens, chained hashes, LRU eviction.

Owns the model of vLLM's automatic prefix caching. A prompt's tokens (words of
text, or token ids) are cut into blocks of ``block_size``; block ``i`` is named
by ``hash((name of block i-1, its tokens))``, so a name stands for the whole
prefix up to the end of its block. Only full blocks are named. A request hits
the longest run of leading blocks that are cached, at most up to
``query_tokens - 1`` tokens (vLLM always recomputes the last token to get its
logits). Admitting a request caches all its blocks; the store holds
``capacity_tokens // block_size`` blocks and evicts the least recently used.
A request's blocks are touched last to first, so that its first block is the
most recent and a chain is evicted from its tail, as vLLM's free-block queue
does. Imports only the standard library.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

__all__ = ["PrefixCache", "block_hashes"]


def block_hashes(tokens: Sequence[str] | Sequence[int], block_size: int) -> list[int]:
    """Chained hashes of the full blocks of ``tokens`` (a last partial block has none)."""
    out: list[int] = []
    parent = 0
    for start in range(0, len(tokens) - block_size + 1, block_size):
        parent = hash((parent, tuple(tokens[start : start + block_size])))
        out.append(parent)
    return out


class PrefixCache:
    """Block-granular LRU store of prefix-block hashes."""

    def __init__(self, capacity_tokens: int, block_size: int):
        self.block_size = block_size
        self.capacity = capacity_tokens // block_size
        self.blocks: OrderedDict[int, None] = OrderedDict()

    def lookup(self, hashes: list[int], query_tokens: int) -> int:
        """Tokens of the longest cached leading run of ``hashes``.

        ``query_tokens`` is what the request needs computed (prompt, plus what it
        had generated before a preemption); the hit stays below it.
        """
        limit = min(len(hashes), (query_tokens - 1) // self.block_size)
        hit = 0
        blocks = self.blocks
        while hit < limit and hashes[hit] in blocks:
            hit += 1
        return hit * self.block_size

    def insert(self, hashes: list[int]) -> None:
        """Cache (or refresh) every block of a request; evict the least recent."""
        blocks = self.blocks
        for h in reversed(hashes):
            if h in blocks:
                blocks.move_to_end(h)
            else:
                blocks[h] = None
        while len(blocks) > self.capacity:
            blocks.popitem(last=False)
