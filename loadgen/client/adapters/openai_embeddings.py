"""OpenAI ``/v1/embeddings`` (vLLM's ``entrypoints/pooling/embed``), never streamed.

The body sends the request's inputs (``RequestSpec.inputs``) as ``input``, a
list of texts; ``extra_body`` goes on top (``encoding_format``,
``dimensions``, ``embed_dtype``). The answer's ``data[]`` holds one
``{"index", "embedding"}`` per input, the embedding a list of floats or, with
``encoding_format: base64``, a base64 string of the vector's bytes;
``usage.prompt_tokens`` counts the whole batch.

What is checked: every ``data[]`` item is an object with a distinct index and
an embedding; every embedding of the answer has the same dimension (a list's
length, or a base64 string's bytes / 4: float32, vLLM's default ``embed_dtype``;
with ``float16`` or ``bfloat16`` the figure is twice the real dimension, the
same on every answer, so the check still holds). The elements of a float list
are not each checked (a 4,096-wide batch of 32 would cost more than the
answer's parse): the first one is. The delta's ``inputs`` is the number of
vectors, ``vector_dim`` their dimension; the requester compares them with
what was sent and with the run's earlier answers (:mod:`loadgen.client.pooling`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loadgen.client.adapters.base import Delta
from loadgen.client.adapters.event_values import MalformedEvent, items, obj
from loadgen.client.adapters.pooling_common import (
    PoolingAdapter,
    answer_of,
    index_of,
    read_usage,
)

if TYPE_CHECKING:
    from loadgen.workload import RequestSpec

__all__ = ["OpenAIEmbeddings", "vector_dim"]

_BASE64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


def vector_dim(value: Any, name: str) -> int:
    """An embedding's dimension: a list's length, or a base64 string's float32 count."""
    if type(value) is list:
        if value and type(value[0]) not in (float, int):
            raise MalformedEvent(f"{name}: expected numbers")
        return len(value)
    if type(value) is str:
        n = len(value)
        if n % 4 or not _BASE64.issuperset(value[-4:].encode()):
            raise MalformedEvent(f"{name}: not a base64 vector")
        pad = 2 if value.endswith("==") else 1 if value.endswith("=") else 0
        return (n * 3 // 4 - pad) // 4
    raise MalformedEvent(f"{name}: expected a list of floats or a base64 string")


class OpenAIEmbeddings(PoolingAdapter):
    path = "/v1/embeddings"
    path_no_stream = "/v1/embeddings"

    def body(
        self,
        spec: RequestSpec,
        model: str,
        extra: dict[str, Any],
        stream: bool = False,
    ) -> dict[str, Any]:
        inputs = list(spec.inputs) if spec.inputs else [spec.prompt]
        return {"model": model, "input": inputs, **extra}

    def parse_body(self, body: bytes) -> Delta:
        answer, error = answer_of(body, "data")
        if error is not None:
            return error
        data = items(answer.get("data"), "data")
        dim: int | None = None
        seen: set[int] = set()
        for i, raw in enumerate(data):
            item = obj(raw, f"data[{i}]")
            index_of(item.get("index", i), f"data[{i}].index", seen)
            d = vector_dim(item.get("embedding"), f"data[{i}].embedding")
            if dim is None:
                dim = d
            elif d != dim:
                msg = f"data[{i}].embedding: dimension {d}, data[0]'s is {dim}"
                raise MalformedEvent(msg)
        delta = Delta(inputs=len(data), vector_dim=dim)
        read_usage(delta, answer.get("usage"))
        return delta
