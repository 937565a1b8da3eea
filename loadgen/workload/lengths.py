"""Token-length distributions: scenario specs -> integer arrays.

Imports: numpy, loadgen.scenario.models.
"""

from __future__ import annotations

import numpy as np

from loadgen.scenario.models import FixedDist, UniformDist

__all__ = ["sample_lengths"]


def sample_lengths(spec: FixedDist | UniformDist, n: int, rng: np.random.Generator) -> list[int]:
    """Draw ``n`` token counts from ``spec``."""
    if isinstance(spec, FixedDist):
        return [spec.value] * n
    return [int(v) for v in rng.integers(spec.min, spec.max + 1, size=n)]
