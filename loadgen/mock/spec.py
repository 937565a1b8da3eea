"""A simulated draft model: speculative decoding's drafts, acceptances and counters.

Owns :class:`SpecDecode` (``--spec-decode K:RATE``, engine mode). In each engine
step a running request that is decoding (it has its first token) drafts
``min(K, tokens it still needs - 1)`` tokens; each draft token is accepted
independently with probability RATE (seeded), and the step emits
``1 + accepted`` tokens for the request: the target model's own token plus the
accepted drafts, in one SSE event. So RATE is what vLLM reports as the
acceptance rate (accepted / drafted tokens), and the mean accepted length is
``1 + K * RATE`` while a request has room. (A real rejection sampler stops at
the first rejected draft; vLLM counts the accepted ones per position the same
way the mock does: positions 0 .. accepted - 1.)

The counters are vLLM 0.32's (``vllm/v1/spec_decode/metrics.py``):
``vllm:spec_decode_num_drafts_total``, ``..._num_draft_tokens_total``,
``..._num_accepted_tokens_total`` and ``..._num_accepted_tokens_per_pos_total``
with a ``position`` label.
"""

from __future__ import annotations

import random

__all__ = ["SpecDecode", "parse_spec_decode"]


def parse_spec_decode(text: str) -> tuple[int, float]:
    """``"3:0.7"`` -> (3, 0.7): K draft tokens per step (1..64), acceptance RATE in [0, 1]."""
    k_text, sep, rate_text = text.partition(":")
    try:
        k, rate = int(k_text), float(rate_text)
    except ValueError:
        k, rate = -1, -1.0
    if not sep or not 1 <= k <= 64 or not 0.0 <= rate <= 1.0:
        msg = f"bad --spec-decode {text!r}; expected K:RATE, K in 1..64, RATE in [0, 1]"
        raise ValueError(msg)
    return k, rate


class SpecDecode:
    """Drafts of every request, counted server-wide as vLLM counts them."""

    __slots__ = ("accepted", "draft_tokens", "drafts", "k", "per_pos", "rate", "rng")

    def __init__(self, k: int, rate: float, seed: int):
        self.k = k
        self.rate = rate
        self.rng = random.Random(f"{seed}:spec-decode")  # its own stream: other draws unchanged
        self.drafts = 0
        self.draft_tokens = 0
        self.accepted = 0
        self.per_pos = [0] * k

    def draft(self, room: int) -> tuple[int, int]:
        """One request's draft in one step, ``room`` tokens it may still take beyond the
        step's own: (drafted, accepted); (0, 0) when there is no room (no draft counted)."""
        n = min(self.k, room)
        if n <= 0:
            return 0, 0
        rnd, rate = self.rng.random, self.rate
        accepted = sum(1 for _ in range(n) if rnd() < rate)
        self.drafts += 1
        self.draft_tokens += n
        self.accepted += accepted
        for i in range(accepted):
            self.per_pos[i] += 1
        return n, accepted

    def families(self, labels: str) -> list[tuple[str, str, str, list[str]]]:
        """The counters as (name, type, help, samples), vLLM's names and help texts."""
        pos = [
            f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{{labels},position="{i}"}} '
            f"{float(n)}"
            for i, n in enumerate(self.per_pos)
        ]
        return [
            ("vllm:spec_decode_num_drafts", "counter", "Number of spec decoding drafts.",
             [f"vllm:spec_decode_num_drafts_total{{{labels}}} {float(self.drafts)}"]),
            ("vllm:spec_decode_num_draft_tokens", "counter", "Number of draft tokens.",
             [f"vllm:spec_decode_num_draft_tokens_total{{{labels}}} {float(self.draft_tokens)}"]),
            ("vllm:spec_decode_num_accepted_tokens", "counter", "Number of accepted tokens.",
             [f"vllm:spec_decode_num_accepted_tokens_total{{{labels}}} {float(self.accepted)}"]),
            ("vllm:spec_decode_num_accepted_tokens_per_pos", "counter",
             "Accepted tokens per draft position.", pos),
        ]  # fmt: skip
