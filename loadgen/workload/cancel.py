"""Which requests of a step the client aborts mid-stream (``workload.cancel``), and when.

A pure function of (workload seed, step, request index), as the model mix
(:mod:`loadgen.workload.model_mix`): request ``i`` of a step draws from block
``i // BLOCK`` of its own random stream
(``numpy.random.default_rng([seed, step, CANCEL_STREAM, block])``): a uniform
``u`` per request, and the point to stop at from ``after_tokens`` or
``after_s``. Request ``i`` is aborted when ``u < share``. Nothing else that
is drawn moves: prompts, lengths and arrivals of a seed are the same with or
without ``cancel``, and worker processes, each planning the step itself, abort
the same requests at the same point.

A multi-turn session draws per turn from the session's own stream
(``[seed, step, SESSION_CANCEL_STREAM, session index]``): each turn is aborted
with probability ``share``, so the share holds over the turns sent too (an
aborted turn ends its session: the turns after it are never sent).

P(aborted) = share; the point: after_tokens as drawn (token events received,
at least 1), or after_s x 1e9 ns since the request was sent.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from loadgen.scenario import CancelSpec
from loadgen.workload.lengths import sample_lengths, sample_seconds

__all__ = ["BLOCK", "CANCEL_STREAM", "SESSION_CANCEL_STREAM", "CancelPicker", "Stop"]

#: the random streams of the picks (beside model_mix's 2_000_011 and 2_000_013)
CANCEL_STREAM, SESSION_CANCEL_STREAM = 2_000_017, 2_000_019
#: picks drawn at once
BLOCK = 1024
#: blocks kept: indices grow, a step's (or a worker's share's) requests go in order
_KEPT = 8

#: where one request stops: (after_tokens, after_ns), one of them set; None: it is not aborted
Stop = tuple[int | None, int | None] | None


class CancelPicker:
    """``picker(i)``: where request ``i`` of one step is aborted (None: it is not);
    ``picker.turns(s, n)``: the same for the ``n`` turns of session ``s``."""

    __slots__ = ("_blocks", "_key", "_spec")

    def __init__(self, spec: CancelSpec, seed: int, step: int) -> None:
        self._spec = spec
        self._key = (seed, step)
        self._blocks: dict[int, tuple[npt.NDArray[np.bool_], list[int]]] = {}

    def _draw(self, rng: np.random.Generator, n: int) -> tuple[npt.NDArray[np.bool_], list[int]]:
        """Whether each of ``n`` requests is aborted, and its point (tokens, or ns)."""
        picked = rng.random(n) < self._spec.share
        after = self._spec.after_tokens
        if after is not None:
            return picked, sample_lengths(after, n, rng)
        assert self._spec.after_s is not None
        return picked, [round(s * 1e9) for s in sample_seconds(self._spec.after_s, n, rng)]

    def _stop(self, picked: bool, point: int) -> Stop:
        if not picked:
            return None
        return (point, None) if self._spec.after_tokens is not None else (None, point)

    def __call__(self, index: int) -> Stop:
        b, i = divmod(index, BLOCK)
        block = self._blocks.get(b)
        if block is None:
            if len(self._blocks) >= _KEPT:
                del self._blocks[min(self._blocks)]
            rng = np.random.default_rng([*self._key, CANCEL_STREAM, b])
            block = self._blocks[b] = self._draw(rng, BLOCK)
        return self._stop(bool(block[0][i]), block[1][i])

    def turns(self, session: int, n: int) -> tuple[Stop, ...]:
        """Where each of session ``session``'s ``n`` turns is aborted (None: not)."""
        rng = np.random.default_rng([*self._key, SESSION_CANCEL_STREAM, session])
        picked, points = self._draw(rng, n)
        return tuple(self._stop(bool(p), v) for p, v in zip(picked, points, strict=True))
