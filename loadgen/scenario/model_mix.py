"""``target.models``: several models (LoRA adapters, or models served behind one URL) and
the share of the requests each one gets.

Each request picks one model, seeded (:mod:`loadgen.workload.model_mix`); a
multi-turn session keeps its model for every turn. A weight is a relative
share: 3 and 1 send three requests of the first for one of the second. A
weight of 0 keeps a model in the list (the pre-flight check still asks the
server for it) but sends it nothing; the weights together must not be 0.
"""

from __future__ import annotations

import math

from pydantic import Field

from loadgen.strict import Spec

__all__ = ["MAX_MODELS", "ModelWeight", "check_mix"]

#: most entries of ``target.models``
MAX_MODELS = 64


class ModelWeight(Spec):
    name: str = Field(
        min_length=1, max_length=512, description="Model (or LoRA adapter) name sent in requests."
    )
    weight: float = Field(
        1.0,
        ge=0,
        le=1e9,
        description="Relative share of the requests (3 and 1: three of this for one of the "
        "other); 0 sends it none.",
    )


def check_mix(models: list[ModelWeight] | None) -> list[ModelWeight] | None:
    """Names once each, weights that add up to more than 0; a ValueError saying which not."""
    if models is None:
        return None
    if not models:
        raise ValueError("name at least one model (or give target.model instead)")
    seen: dict[str, int] = {}
    for i, m in enumerate(models):
        if m.name in seen:
            msg = f"[{i}] repeats [{seen[m.name]}] ({m.name!r}): list each model once"
            raise ValueError(msg)
        seen[m.name] = i
    total = math.fsum(m.weight for m in models)
    if not total > 0:
        raise ValueError("the weights sum to 0: give at least one model a weight above 0")
    return models
