"""A step's cached prompt tokens: the server's prefix cache as its answers tell it.

Over the successful measured requests, a request whose answer counted no cached
tokens counting 0 (vLLM counts them only with ``--enable-prompt-tokens-details``;
then every answer has a count, 0 included):

- hit rate = sum(cached_tokens_server) / sum(prompt_tokens)
- requests with hits = requests with cached_tokens_server > 0 / requests
- cached tokens per request = sum(cached_tokens_server) / requests
- session hit rate mean = mean over sessions of (the session's cached / prompt tokens)
- by turn: hit rate over the requests of turn (or, an agent's, call) ``i``, i < 10

None when no answer counted cached tokens.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from loadgen.metrics.columns import NONE
from loadgen.metrics.vector import Columns
from loadgen.summary import BY_TURN_MAX, CachedTokenStats

__all__ = ["cached_token_stats"]

Ints = npt.NDArray[np.int64]


def _rate(cached: Ints, prompt: Ints) -> float | None:
    total = int(prompt.sum())
    return int(cached.sum()) / total if total else None


def _by_turn(index: Ints, cached: Ints, prompt: Ints) -> list[float | None]:
    known = index != NONE
    if not known.any():
        return []
    top = min(int(index[known].max()), BY_TURN_MAX - 1)
    return [_rate(cached[index == i], prompt[index == i]) for i in range(top + 1)]


def _session_mean(session: Ints, cached: Ints, prompt: Ints) -> float | None:
    known = session != NONE
    if not known.any():
        return None
    ids, where = np.unique(session[known], return_inverse=True)
    hits = np.bincount(where, weights=cached[known], minlength=len(ids))
    tokens = np.bincount(where, weights=prompt[known], minlength=len(ids))
    some = tokens > 0
    return float((hits[some] / tokens[some]).mean()) if some.any() else None


def cached_token_stats(ok: Columns) -> CachedTokenStats | None:
    """The step's cached-token figures (formulas above); None when no answer counted any."""
    raw = ok["cached"]
    reported = raw != NONE
    if not len(ok) or not reported.any():
        return None
    cached = np.where(reported, raw, 0)
    prompt = ok["prompt_tokens"]
    n = len(ok)
    call, turn = ok["call"], ok["turn"]
    by_call = bool((call != NONE).any())
    index = call if by_call else turn
    by_turn = _by_turn(index, cached, prompt)
    return CachedTokenStats(
        hit_rate=_rate(cached, prompt) or 0.0,
        cached_tokens=int(cached.sum()),
        cached_tokens_per_request=int(cached.sum()) / n,
        requests_with_hits=int((cached > 0).sum()) / n,
        reported=int(reported.sum()),
        session_hit_rate_mean=_session_mean(ok["session"], cached, prompt),
        by_turn_of=("call" if by_call else "turn") if by_turn else None,
        by_turn=by_turn,
    )
