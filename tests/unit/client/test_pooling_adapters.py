"""The embeddings and rerank adapters read answers as vLLM 0.32 writes them, and say no to
what is not one; the requester's check fails a wrong count or a changed dimension."""

from __future__ import annotations

import base64
import struct
from typing import Any

import orjson
import pytest

from loadgen.client.adapters import ADAPTERS, Delta
from loadgen.client.adapters.event_values import MalformedEvent
from loadgen.client.pooling import PoolingCheck
from loadgen.workload.plan import RequestSpec

embed = ADAPTERS["openai-embeddings"]
rerank = ADAPTERS["rerank"]


def _embedding_answer(vectors: list[Any], prompt_tokens: int = 12) -> bytes:
    """vLLM's EmbeddingResponse (entrypoints/pooling/embed/protocol.py), model_dump'ed."""
    return orjson.dumps(
        {
            "id": "embd-abc",
            "object": "list",
            "created": 1,
            "model": "m",
            "data": [
                {"index": i, "object": "embedding", "embedding": v} for i, v in enumerate(vectors)
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "total_tokens": prompt_tokens,
                "completion_tokens": 0,
                "prompt_tokens_details": None,
            },
        }
    )


def _rerank_answer(indexes: list[int], prompt_tokens: int = 40) -> bytes:
    """vLLM's RerankResponse (entrypoints/pooling/scoring/protocol.py), sorted by score."""
    results = [
        {
            "index": i,
            "document": {"text": f"d{i}", "multi_modal": None},
            "relevance_score": 1 / (k + 2),
        }
        for k, i in enumerate(indexes)
    ]
    return orjson.dumps(
        {
            "id": "rerank-x",
            "model": "m",
            "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens},
            "results": results,
        }
    )


def test_embeddings_body_sends_every_input() -> None:
    spec = RequestSpec(0, "a b", 5, 1, inputs=("a b", "c d e"))
    body = embed.body(spec, "m", {"encoding_format": "base64"}, stream=True)
    assert body == {"model": "m", "input": ["a b", "c d e"], "encoding_format": "base64"}
    assert embed.path == embed.path_no_stream == "/v1/embeddings"


def test_embeddings_answer_of_floats() -> None:
    d = embed.parse_body(_embedding_answer([[0.1] * 8, [0.2] * 8, [0.3] * 8], 30))
    assert (d.inputs, d.vector_dim, d.prompt_tokens, d.completion_tokens) == (3, 8, 30, None)
    assert d.error is None and d.tokens == 0


def test_embeddings_answer_in_base64_counts_float32s() -> None:
    vec = base64.b64encode(struct.pack("<5f", *[0.5] * 5)).decode()  # vLLM's default dtype
    d = embed.parse_body(_embedding_answer([vec, vec]))
    assert (d.inputs, d.vector_dim) == (2, 5)


@pytest.mark.parametrize(
    ("vectors", "says"),
    [
        ([[0.1] * 8, [0.1] * 4], "data[1].embedding: dimension 4, data[0]'s is 8"),
        ([["x"] * 3], "data[0].embedding: expected numbers"),
        ([{"v": 1}], "expected a list of floats or a base64 string"),
        (["abc"], "not a base64 vector"),
    ],
)
def test_embeddings_answer_that_is_not_one(vectors: list[Any], says: str) -> None:
    with pytest.raises(MalformedEvent, match=says.replace("[", r"\[").replace("]", r"\]")):
        embed.parse_body(_embedding_answer(vectors))


def test_embeddings_index_repeated_is_malformed() -> None:
    body = orjson.dumps({"data": [{"index": 0, "embedding": [1.0]}] * 2, "usage": None})
    with pytest.raises(MalformedEvent, match="index 0 repeats"):
        embed.parse_body(body)


def test_an_error_body_is_the_servers_error() -> None:
    body = orjson.dumps({"error": {"message": "too long", "type": "BadRequestError", "code": 400}})
    assert embed.parse_body(body).error == "too long"
    assert rerank.parse_body(body).error == "too long"


def test_a_usage_block_that_cannot_be_believed_is_ignored_not_fatal() -> None:
    body = orjson.dumps(
        {"data": [{"index": 0, "embedding": [1.0]}], "usage": {"prompt_tokens": "9"}}
    )
    d = embed.parse_body(body)
    assert d.prompt_tokens is None and d.usage_ignored is not None and d.inputs == 1


def test_pooling_apis_do_not_stream() -> None:
    for adapter in (embed, rerank):
        with pytest.raises(MalformedEvent):
            adapter.parse(b"{}")


def test_rerank_body_and_answer() -> None:
    spec = RequestSpec(0, "the query", 20, 1, inputs=("d0", "d1", "d2"))
    body = rerank.body(spec, "m", {"top_n": 2})
    assert body == {"model": "m", "query": "the query", "documents": ["d0", "d1", "d2"], "top_n": 2}
    assert rerank.path == "/rerank"
    d = rerank.parse_body(_rerank_answer([2, 0, 1], 44))
    assert (d.inputs, d.prompt_tokens, d.vector_dim) == (3, 44, None)


def test_rerank_answer_that_is_not_one() -> None:
    bad = orjson.loads(_rerank_answer([0, 1]))
    bad["results"][1]["relevance_score"] = "high"
    with pytest.raises(MalformedEvent, match=r"results\[1\].relevance_score"):
        rerank.parse_body(orjson.dumps(bad))
    with pytest.raises(MalformedEvent, match="index 1 repeats"):
        rerank.parse_body(_rerank_answer([1, 1]))


def test_the_check_fails_a_wrong_count() -> None:
    check = PoolingCheck({})
    assert check.failure(3, Delta(inputs=3, vector_dim=8)) is None
    kind, detail = check.failure(3, Delta(inputs=2, vector_dim=8)) or ("", "")
    assert kind == "wrong_vector_count" and "2 in the answer for 3 sent" in detail


def test_the_check_takes_top_n_into_account() -> None:
    assert PoolingCheck({"top_n": 2}).failure(5, Delta(inputs=2)) is None
    assert PoolingCheck({"top_n": 9}).failure(5, Delta(inputs=5)) is None
    assert PoolingCheck({"top_n": 0}).failure(5, Delta(inputs=2)) is not None  # 0: every document


def test_the_check_fails_a_changed_dimension() -> None:
    check = PoolingCheck({})
    assert check.failure(1, Delta(inputs=1, vector_dim=64)) is None
    assert check.failure(1, Delta(inputs=1, vector_dim=64)) is None
    kind, detail = check.failure(1, Delta(inputs=1, vector_dim=32)) or ("", "")
    assert kind == "vector_dim_mismatch" and "32" in detail and "64" in detail
