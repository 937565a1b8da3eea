"""A pooling answer (embeddings, rerank) checked against its request and the run's others.

Two checks, each a failure of its own kind (a row with ``error_kind``, the run
goes on), after the adapter has read the body:

- ``wrong_vector_count``: the answer holds a different number of vectors
  (embeddings) or results (rerank) than the request sent inputs or documents.
  With ``top_n`` in ``extra_body`` (rerank) a full answer holds
  ``min(top_n, documents)`` results.
- ``vector_dim_mismatch``: an embedding's dimension differs from the first
  answer this requester saw (one per process: with ``load.workers`` each
  worker keeps its own reference, and the step summary lists every dimension
  its records carry, so a mismatch between workers still shows there).

An ``error`` body with a 2xx status is the server's failure (``stream_error``).
"""

from __future__ import annotations

from typing import Any

from loadgen.client.adapters.base import Delta

__all__ = ["PoolingCheck"]


class PoolingCheck:
    """One requester's reference dimension and the ``top_n`` its bodies carry."""

    __slots__ = ("dim", "top_n")

    def __init__(self, extra_body: dict[str, Any]) -> None:
        top_n = extra_body.get("top_n")
        #: a positive int top_n cuts a rerank answer (vLLM: 0 or absent = every document)
        self.top_n = top_n if type(top_n) is int and top_n > 0 else None
        #: the dimension of the first answer with vectors
        self.dim: int | None = None

    def failure(self, sent: int, d: Delta) -> tuple[str, str] | None:
        """(error kind, detail) when the answer ``d`` to ``sent`` inputs is wrong, else None."""
        if d.error is not None:
            return "stream_error", d.error
        expected = sent if self.top_n is None else min(sent, self.top_n)
        if d.inputs is not None and d.inputs != expected:
            return "wrong_vector_count", f"{d.inputs} in the answer for {sent} sent"
        if d.vector_dim is not None:
            if self.dim is None:
                self.dim = d.vector_dim
            elif d.vector_dim != self.dim:
                return (
                    "vector_dim_mismatch",
                    f"vectors of dimension {d.vector_dim}; the run's first answer had {self.dim}",
                )
        return None
