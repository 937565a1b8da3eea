"""Which model of ``target.models`` each request of a step names.

A pure function of (workload seed, step, request index): request ``i`` of a
step draws from block ``i // BLOCK`` of its own random stream
(``numpy.random.default_rng([seed, step, MODEL_STREAM, block])``), so the
pick depends on nothing else that is drawn. Prompts, lengths and arrivals of
a seed are the same with or without a mix, and worker processes, each
planning the step itself, pick the same model for the same request. A
multi-turn session picks once, by its session index (its own stream), and
every turn names that model.

P(model k) = weight_k / sum of the weights.

:func:`loadgen.workload.step.plan_step` applies it to a step's plan.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["BLOCK", "MODEL_STREAM", "SESSION_STREAM", "ModelPicker"]

#: the random streams of the picks (beside step_rng's 0 = requests, 1 = arrivals)
MODEL_STREAM, SESSION_STREAM = 2_000_011, 2_000_013
#: picks drawn at once
BLOCK = 1024
#: blocks kept: indices grow, a step's (or a worker's share's) requests go in order
_KEPT = 8


class ModelPicker:
    """``picker(i)``: the model request (or session) ``i`` of one step names."""

    __slots__ = ("_blocks", "_cum", "_key", "names")

    def __init__(
        self, models: Sequence[tuple[str, float]], seed: int, step: int, stream: int
    ) -> None:
        if not models:
            raise ValueError("a model mix needs at least one model")
        weights = np.array([w for _, w in models], dtype=np.float64)
        total = float(weights.sum())
        if not (np.all(weights >= 0) and np.isfinite(total) and total > 0):
            raise ValueError(
                "model weights must be finite, not negative, and add up to more than 0"
            )
        self.names = tuple(n for n, _ in models)
        cum = np.cumsum(weights) / total
        cum[-1] = 1.0  # a uniform draw below 1 always lands inside
        self._cum = cum
        self._key = (seed, step, stream)
        self._blocks: dict[int, npt.NDArray[np.intp]] = {}

    def __call__(self, index: int) -> str:
        b, i = divmod(index, BLOCK)
        block = self._blocks.get(b)
        if block is None:
            if len(self._blocks) >= _KEPT:
                del self._blocks[min(self._blocks)]
            u = np.random.default_rng([*self._key, b]).random(BLOCK)
            # side="right": a model of weight 0 (a flat step of cum) is never picked
            block = self._blocks[b] = np.searchsorted(self._cum, u, side="right")
        return self.names[int(block[i])]
