"""The inputs of a pooling request (embeddings, rerank), seeded like every other draw.

A request drawn for a pooling API keeps its prompt (of ``workload.prompt_tokens``)
as its first input and gains the rest:

- ``openai-embeddings``: ``workload.batch`` inputs (default 1), each of its own
  ``prompt_tokens`` draw. ``RequestSpec.inputs`` holds them all (the prompt
  first); the planned prompt length is their sum, which is what vLLM's
  ``usage.prompt_tokens`` counts for the batch.
- ``rerank``: a query of ``workload.query_tokens`` (default 16) and
  ``workload.documents`` documents (default 8), each of its own
  ``prompt_tokens`` draw. ``RequestSpec.prompt`` is the query, ``inputs`` the
  documents (the first is the drawn prompt). A cross-encoder scores each
  (query, document) pair, so the planned length counts the query once per
  document: ``documents x query + sum(documents)`` (vLLM's ``usage.prompt_tokens``
  adds each pair's special tokens on top).

A pooling request generates nothing: its ``max_tokens`` is 1 (one answer; not
sent), which is also what the mock's timing model and ``loadgen workload``'s
forecast take it for.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from loadgen.scenario import Distribution, FixedDist, WorkloadSpec
from loadgen.workload.lengths import sample_lengths
from loadgen.workload.plan import RequestSpec

if TYPE_CHECKING:
    from loadgen.workload.prompts import PromptMaker

__all__ = ["DEFAULT_BATCH", "DEFAULT_DOCUMENTS", "DEFAULT_QUERY_TOKENS", "pooled", "pooling_dists"]

DEFAULT_BATCH = 1
DEFAULT_DOCUMENTS = 8
DEFAULT_QUERY_TOKENS = 16


def _fixed(value: int) -> Distribution:
    return FixedDist(dist="fixed", value=value)


def pooling_dists(spec: WorkloadSpec, api: str) -> dict[str, Distribution]:
    """The pooling fields ``api`` uses, their defaults filled in (empty for another api)."""
    if api == "openai-embeddings":
        return {"batch": spec.batch or _fixed(DEFAULT_BATCH)}
    if api == "rerank":
        return {
            "documents": spec.documents or _fixed(DEFAULT_DOCUMENTS),
            "query_tokens": spec.query_tokens or _fixed(DEFAULT_QUERY_TOKENS),
        }
    return {}


def _texts(maker: PromptMaker, lengths: list[int], rng: np.random.Generator) -> list[str]:
    out = []
    for n in lengths:
        text, _ = maker.prompt(n, rng)
        assert isinstance(text, str)  # a pooling workload is never chat
        out.append(text)
    return out


def pooled(
    spec: RequestSpec,
    api: str,
    workload: WorkloadSpec,
    maker: PromptMaker,
    rng: np.random.Generator,
) -> RequestSpec:
    """``spec`` with the inputs of one ``api`` request (see the module docstring)."""
    first = spec.prompt
    assert isinstance(first, str)
    dists = pooling_dists(workload, api)
    if api == "openai-embeddings":
        count = max(1, sample_lengths(dists["batch"], 1, rng)[0])
        more = sample_lengths(workload.prompt_tokens, count - 1, rng) if count > 1 else []
        texts = [first, *_texts(maker, more, rng)]
        planned = spec.prompt_tokens + sum(maker.count(t) for t in texts[1:])
        return dataclasses.replace(spec, inputs=tuple(texts), prompt_tokens=planned, max_tokens=1)
    count = max(1, sample_lengths(dists["documents"], 1, rng)[0])
    query_len = sample_lengths(dists["query_tokens"], 1, rng)[0]
    (query,) = _texts(maker, [query_len], rng)
    more = sample_lengths(workload.prompt_tokens, count - 1, rng) if count > 1 else []
    docs = [first, *_texts(maker, more, rng)]
    planned = count * maker.count(query) + spec.prompt_tokens
    planned += sum(maker.count(d) for d in docs[1:])
    return dataclasses.replace(
        spec, prompt=query, inputs=tuple(docs), prompt_tokens=planned, max_tokens=1
    )
