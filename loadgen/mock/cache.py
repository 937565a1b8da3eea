"""The engine's prefix cache: full blocks of prompt tokens, chained hashes, LRU eviction.

Owns the model of vLLM's automatic prefix caching. A prompt's tokens (words of
text, or token ids) are cut into blocks of ``block_size``; block ``i`` is named
by ``hash((name of block i-1, its tokens))``, so a name stands for the whole
prefix up to the end of its block. Only full blocks are named. A request hits
the longest run of leading blocks that are cached, at most up to
``query_tokens - 1`` tokens (vLLM always recomputes the last token to get its
logits).

The cache lives in the engine's KV memory, as vLLM's does: a block is either
held by running requests (:meth:`acquire` on admission, :meth:`release` when the
request ends or is preempted; a held block is never evicted and is shared by
every running request that hit it) or free but still named (evictable). Free
named blocks fill the KV memory the running requests leave: :meth:`fit` evicts
the least recently freed ones until they fit in what is left, so a long running
context pushes cached prefixes out. ``capacity_tokens`` (``--prefix-cache-tokens``)
bounds the named blocks further when it is below the KV memory. A request's
blocks are freed last to first, so that its first block is the most recent and a
chain is evicted from its tail, as vLLM's free-block queue does.
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
    """Block-granular store of prefix-block hashes: held blocks and an LRU of free ones."""

    def __init__(self, capacity_tokens: int, block_size: int):
        self.block_size = block_size
        self.capacity = capacity_tokens // block_size  # named blocks at most, held or free
        self.blocks: OrderedDict[int, None] = OrderedDict()  # free named blocks, LRU first
        self.held: dict[int, int] = {}  # block -> running requests that hold it
        self.evicted = 0  # blocks evicted so far (by the cap or by running requests' KV)

    def lookup(self, hashes: list[int], query_tokens: int) -> int:
        """Tokens of the longest cached leading run of ``hashes`` (held or free).

        ``query_tokens`` is what the request needs computed (prompt, plus what it
        had generated before a preemption); the hit stays below it.
        """
        limit = min(len(hashes), (query_tokens - 1) // self.block_size)
        hit = 0
        blocks, held = self.blocks, self.held
        while hit < limit and (hashes[hit] in held or hashes[hit] in blocks):
            hit += 1
        return hit * self.block_size

    def acquire(self, hashes: list[int]) -> None:
        """A request is admitted: it holds every block of its prompt (cached or new)."""
        blocks, held = self.blocks, self.held
        for h in hashes:
            if h in held:
                held[h] += 1
            else:
                blocks.pop(h, None)
                held[h] = 1
        self._cap()

    def release(self, hashes: list[int]) -> None:
        """The request ended or was preempted: its blocks it alone held become free,
        still named, most recent first block (freed last to first)."""
        blocks, held = self.blocks, self.held
        for h in reversed(hashes):
            n = held.get(h, 0)
            if n > 1:
                held[h] = n - 1
            elif n == 1:
                del held[h]
                blocks[h] = None
        self._cap()

    def insert(self, hashes: list[int]) -> None:
        """Cache (or refresh) every block of a request that ran and ended."""
        self.acquire(hashes)
        self.release(hashes)

    def fit(self, free_tokens: int) -> None:
        """Evict the least recently freed blocks until the free named ones fit in
        ``free_tokens`` of KV memory (what the running requests leave)."""
        room = max(free_tokens, 0) // self.block_size
        blocks = self.blocks
        while len(blocks) > room:
            blocks.popitem(last=False)
            self.evicted += 1

    def _cap(self) -> None:
        """At most ``capacity`` named blocks: free ones go first, oldest first."""
        blocks = self.blocks
        while blocks and len(blocks) + len(self.held) > self.capacity:
            blocks.popitem(last=False)
            self.evicted += 1
