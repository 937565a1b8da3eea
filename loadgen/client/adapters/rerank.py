"""vLLM's ``/rerank`` (Jina/Cohere shape, ``entrypoints/pooling/scoring``), never streamed.

The body sends ``query`` (the request's prompt) and ``documents`` (its
inputs, ``RequestSpec.inputs``); ``extra_body`` goes on top (``top_n``). The
answer's ``results[]`` holds ``{"index", "document", "relevance_score"}`` per
document, sorted by score, cut to ``top_n`` when one is given;
``usage.prompt_tokens`` (= ``total_tokens``) counts every (query, document)
pair's tokens.

What is checked: every result is an object with a distinct index and a
numeric ``relevance_score``. The delta's ``inputs`` is the number of results;
the requester compares it with the documents sent (:mod:`loadgen.client.pooling`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loadgen.client.adapters.base import Delta, as_text
from loadgen.client.adapters.event_values import MalformedEvent, items, obj
from loadgen.client.adapters.pooling_common import (
    PoolingAdapter,
    answer_of,
    index_of,
    read_usage,
)

if TYPE_CHECKING:
    from loadgen.workload import RequestSpec

__all__ = ["Rerank"]


class Rerank(PoolingAdapter):
    path = "/rerank"
    path_no_stream = "/rerank"

    def body(
        self,
        spec: RequestSpec,
        model: str,
        extra: dict[str, Any],
        stream: bool = False,
    ) -> dict[str, Any]:
        query = as_text(spec.prompt, "rerank")
        return {"model": model, "query": query, "documents": list(spec.inputs), **extra}

    def parse_body(self, body: bytes) -> Delta:
        answer, error = answer_of(body, "results")
        if error is not None:
            return error
        results = items(answer.get("results"), "results")
        seen: set[int] = set()
        for i, raw in enumerate(results):
            item = obj(raw, f"results[{i}]")
            index_of(item.get("index"), f"results[{i}].index", seen)
            score = item.get("relevance_score")
            if type(score) not in (float, int):
                raise MalformedEvent(f"results[{i}].relevance_score: expected a number")
        delta = Delta(inputs=len(results))
        read_usage(delta, answer.get("usage"))
        return delta
