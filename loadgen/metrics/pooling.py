"""A pooling API's step (embeddings, rerank): inputs sent, vector dimensions seen.

- inputs_total = sum of ``Record.inputs`` over the successful measured requests
  (inputs for embeddings, documents for rerank); inputs_mean = inputs_total / requests.
- input_tokens_per_input = sum of ``Record.prompt_tokens`` / inputs_total.
- inputs/s (``Throughput.inputs_per_s``) is counted with the other rates, over
  the same window (:func:`loadgen.metrics.step.summarize_step`).
- vector_dims: the dimension of every measured answer that carried vectors,
  failed ones included (a ``vector_dim_mismatch`` is such a failure); more
  than one dimension is a warning: the requester checks the dimension per
  process, this sees every worker's.
"""

from __future__ import annotations

from loadgen.metrics import vector as v
from loadgen.metrics.columns import NONE, StepColumns
from loadgen.summary import PoolingStats

__all__ = ["dims_warning", "pooling_stats"]


def pooling_stats(ok: v.Columns, cols: StepColumns, api: str) -> PoolingStats:
    """The step's :class:`PoolingStats` from its successful requests' columns."""
    inputs = ok["inputs"]
    has = inputs != NONE
    total = int(inputs[has].sum())
    n = int(has.sum())
    tokens = int(ok["prompt_tokens"][has].sum())
    dims = {str(d): c for d, c in sorted(cols.vector_dims.items())}
    return PoolingStats(
        api=api,
        inputs_total=total,
        inputs_mean=total / n if n else None,
        input_tokens_per_input=tokens / total if total else None,
        vector_dims=dims or None,
    )


def dims_warning(stats: PoolingStats) -> str | None:
    """``answers carried vectors of 2 dimensions (64 x 98, 32 x 2)``, or None for one."""
    dims = stats.vector_dims or {}
    if len(dims) < 2:
        return None
    shown = ", ".join(f"{d} x {n}" for d, n in sorted(dims.items(), key=lambda kv: -kv[1]))
    return f"answers carried vectors of {len(dims)} dimensions ({shown}): a model mix-up?"
