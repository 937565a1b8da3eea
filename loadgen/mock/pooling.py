"""The pooling routes (``/v1/embeddings``, ``/rerank``): bodies in, one JSON answer out.

Owns validation of vLLM's embeddings and rerank bodies (``entrypoints/pooling/
embed`` and ``scoring``), the cost each request puts on the engine, and the
answers. A pooling request is one generation of a single step: its
``prompt_tokens`` are every input's words (embeddings) or every (query,
document) pair's (rerank: a cross-encoder reads the query once per document),
so the engine's step prefills ``batch x tokens`` at ``prefill_ms_per_token``,
and at the step's end :class:`PoolGen` writes the whole answer and its truth
record (``token_ns``: one stamp, when the answer was written; ``inputs``; and
``vector_dim``).

Vectors are deterministic: one seeded unit vector of ``--embedding-dim``
floats per server, each input's a rotation of it by a hash of its text (the
same text, the same vector; ``dimensions`` cuts it). Rerank scores are seeded
per request id and document.
"""

from __future__ import annotations

import base64
import math
import random
import struct
import time
import zlib
from dataclasses import dataclass, field
from typing import Any

import orjson

from loadgen.mock.events import Events
from loadgen.mock.gen import Gen
from loadgen.mock.http_framing import JSON_TYPE, simple_response, vllm_error
from loadgen.mock.request import GenSpec, Served, check_model, load_json

__all__ = [
    "API_EMBEDDINGS",
    "API_RERANK",
    "NO_EVENTS",
    "POOLING_ROUTES",
    "PoolGen",
    "PoolSpec",
    "Pooler",
    "parse_pooling",
]

API_EMBEDDINGS = "embeddings"
API_RERANK = "rerank"
#: path -> (method, api): the ROUTES lines of :mod:`loadgen.mock.server` for pooling
POOLING_ROUTES: dict[str, tuple[str, str]] = {
    "/v1/embeddings": ("POST", API_EMBEDDINGS),
    "/rerank": ("POST", API_RERANK),
    "/v1/rerank": ("POST", API_RERANK),
    "/v2/rerank": ("POST", API_RERANK),
}


@dataclass(slots=True)
class PoolSpec(GenSpec):
    """A pooling request, validated: one text per input (embeddings) or document (rerank)."""

    texts: list[str] = field(default_factory=list)
    query: str = ""
    encoding: str = "float"
    dimensions: int | None = None
    top_n: int = 0


def _texts(value: Any, name: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and value and all(isinstance(t, str) for t in value):
        return value
    raise vllm_error(400, f"{name} must be a string or a non-empty list of strings", name)


def _optional_int(data: dict[str, Any], key: str, low: int) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise vllm_error(400, f"{key} must be an integer >= {low}, got {value!r}", key)
    return value


def parse_pooling(
    body: bytes, api: str, served_model: Served, max_model_len: int, dim: int
) -> PoolSpec:
    """Validate an embeddings (``input``) or rerank (``query``, ``documents``) body;
    ``dim``: the served vectors' dimension (``dimensions`` may not pass it)."""
    data = load_json(body, tgi=False)
    model = check_model(data, served_model)
    if api == API_EMBEDDINGS:
        texts = _texts(data.get("input"), "input")
        query = ""
        lengths = [len(t.split()) for t in texts]
    else:
        if not isinstance(data.get("query"), str):
            raise vllm_error(400, "query must be a string", "query")
        query = data["query"]
        texts = _texts(data.get("documents"), "documents")
        q = len(query.split())
        lengths = [q + len(t.split()) for t in texts]
    longest = max(lengths)
    if longest > max_model_len:
        msg = (
            f"This model's maximum context length is {max_model_len} tokens. However, "
            f"you requested {longest} tokens in one input."
        )
        raise vllm_error(400, msg, "input")
    encoding = data.get("encoding_format", "float")
    if encoding not in ("float", "base64"):
        raise vllm_error(400, "encoding_format must be float or base64", "encoding_format")
    dimensions = _optional_int(data, "dimensions", 1)
    if dimensions is not None and dimensions > dim:
        msg = f"dimensions {dimensions} is more than the model's {dim}"
        raise vllm_error(400, msg, "dimensions")
    return PoolSpec(
        api=api,
        stream=False,
        model=model,
        prompt_tokens=sum(lengths),
        max_tokens=1,
        texts=texts,
        query=query,
        encoding=encoding,
        dimensions=dimensions,
        top_n=_optional_int(data, "top_n", 0) or 0,
    )


class Pooler:
    """Server-wide: the seeded base vector and the seed of the scores."""

    __slots__ = ("base", "dim", "seed")

    def __init__(self, dim: int, seed: int) -> None:
        rng = random.Random(f"{seed}:embedding")
        raw = [rng.gauss(0.0, 1.0) for _ in range(dim)]
        norm = math.sqrt(sum(x * x for x in raw)) or 1.0
        self.base = [x / norm for x in raw]
        self.dim = dim
        self.seed = seed

    def vector(self, text: str, dimensions: int | None) -> list[float]:
        k = zlib.crc32(text.encode()) % self.dim
        vec = self.base[k:] + self.base[:k]
        return vec if dimensions is None else vec[:dimensions]

    def embeddings(self, spec: PoolSpec, rid: str) -> bytes:
        data = []
        for i, text in enumerate(spec.texts):
            vec: list[float] | str = self.vector(text, spec.dimensions)
            if spec.encoding == "base64":
                raw = struct.pack(f"<{len(vec)}f", *vec)
                vec = base64.b64encode(raw).decode()
            data.append({"index": i, "object": "embedding", "embedding": vec})
        n = spec.prompt_tokens
        usage = {"prompt_tokens": n, "total_tokens": n, "completion_tokens": 0}
        return orjson.dumps(
            {
                "id": f"embd-{rid}",
                "object": "list",
                "created": int(time.time()),
                "model": spec.model,
                "data": data,
                "usage": {**usage, "prompt_tokens_details": None},
            }
        )

    def rerank(self, spec: PoolSpec, rid: str) -> bytes:
        rng = random.Random(f"{self.seed}:{rid}:rerank")
        scored = sorted(
            ((rng.random(), i, t) for i, t in enumerate(spec.texts)), key=lambda x: -x[0]
        )
        if 0 < spec.top_n < len(scored):
            scored = scored[: spec.top_n]
        results = [
            {"index": i, "document": {"text": t, "multi_modal": None}, "relevance_score": s}
            for s, i, t in scored
        ]
        n = spec.prompt_tokens
        return orjson.dumps(
            {
                "id": f"rerank-{rid}",
                "model": spec.model,
                "usage": {"prompt_tokens": n, "total_tokens": n},
                "results": results,
            }
        )


class PoolGen(Gen):
    """A pooling request: one engine step (its prefill), then the whole answer at once."""

    __slots__ = ("pooler",)

    def __init__(self, *args: Any, pooler: Pooler, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.pooler = pooler

    def emit(self) -> bool:
        if self.dead:
            return True
        spec = self.spec
        assert isinstance(spec, PoolSpec)
        rid = self.rid or f"{self.offset:x}"
        if spec.api == API_EMBEDDINGS:
            body = self.pooler.embeddings(spec, rid)
        else:
            body = self.pooler.rerank(spec, rid)
        data = simple_response(200, body, keep_alive=self.conn.keep_alive, content_type=JSON_TYPE)
        now = time.perf_counter_ns()  # before the write, as the streaming path stamps
        self.conn.transport.write(data)
        self._wrote(now)
        self._first(now)
        self._complete()
        return True

    def cache_hit(self, tokens: int, created: int) -> None:
        """As :meth:`Gen.cache_hit`, but the shared ``NO_EVENTS`` is left alone (a pooling
        answer has no usage of cached tokens)."""
        if not self.admitted:
            self.admitted = True
            self.cached = tokens

    def _record(self, status: int, reason: str, end_ns: int) -> None:
        self.ctx.metrics.finished(self.recv_ns, end_ns, 0, reason)
        if self.ctx.truth is not None:
            spec = self.spec
            assert isinstance(spec, PoolSpec)
            dim = None
            if spec.api == API_EMBEDDINGS:
                dim = spec.dimensions or self.pooler.dim
            self.ctx.truth.add(
                {
                    "request_id": self.rid,
                    "path": self.path,
                    "recv_ns": self.recv_ns,
                    "token_ns": self.token_ns,
                    "prompt_tokens": spec.prompt_tokens,
                    "cached_tokens": self.cached,
                    "output_tokens": 0,
                    "reasoning_tokens": 0,
                    "status": status,
                    "fault": self.fault,
                    "end_ns": end_ns,
                    "inputs": len(spec.texts),
                    "vector_dim": dim,
                },
                self.tx,
                self.token_w,
            )


#: a pooling answer has no token events: the base encoder stands in for one
NO_EVENTS = Events()
