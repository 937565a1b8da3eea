"""/v1/embeddings and /rerank as vLLM 0.32 answers them: shapes, counts, seeded values, errors."""

from __future__ import annotations

import base64
import struct
from collections.abc import Callable

from mockhttp import MockProc, fetch_sync


def test_embeddings_answer_shape_and_seeded_vectors(start_mock: Callable[..., MockProc]) -> None:
    mock = start_mock("--ttft-ms", "0", "--embedding-dim", "12", "--seed", "5")
    body = {"model": "m", "input": ["a b c", "d e", "a b c"]}
    doc = fetch_sync(mock.port, "POST", "/v1/embeddings", body).json()
    assert list(doc) == ["id", "object", "created", "model", "data", "usage"]
    assert [d["index"] for d in doc["data"]] == [0, 1, 2]
    vecs = [d["embedding"] for d in doc["data"]]
    assert [len(v) for v in vecs] == [12, 12, 12]
    assert vecs[0] == vecs[2] != vecs[1]  # the same text, the same vector
    assert abs(sum(x * x for x in vecs[0]) - 1.0) < 1e-9  # unit length
    assert doc["usage"]["prompt_tokens"] == doc["usage"]["total_tokens"] == 8
    again = fetch_sync(mock.port, "POST", "/v1/embeddings", body).json()
    assert [d["embedding"] for d in again["data"]] == vecs


def test_embeddings_base64_and_dimensions(start_mock: Callable[..., MockProc]) -> None:
    mock = start_mock("--ttft-ms", "0", "--embedding-dim", "12")
    body = {"input": "x y", "encoding_format": "base64", "dimensions": 5}
    doc = fetch_sync(mock.port, "POST", "/v1/embeddings", body).json()
    raw = base64.b64decode(doc["data"][0]["embedding"])
    assert len(struct.unpack(f"<{len(raw) // 4}f", raw)) == 5
    too_wide = fetch_sync(mock.port, "POST", "/v1/embeddings", {"input": "x", "dimensions": 13})
    assert too_wide.status == 400 and "dimensions" in too_wide.json()["error"]["message"]
    bad = fetch_sync(mock.port, "POST", "/v1/embeddings", {"input": [1, 2]})
    assert bad.status == 400 and bad.json()["error"]["param"] == "input"


def test_rerank_scores_sorted_top_n_and_pair_tokens(start_mock: Callable[..., MockProc]) -> None:
    mock = start_mock("--ttft-ms", "0")
    body = {"model": "m", "query": "q r s", "documents": ["a", "b c", "d e f", "g"]}
    doc = fetch_sync(mock.port, "POST", "/rerank", body).json()
    assert list(doc) == ["id", "model", "usage", "results"]
    scores = [r["relevance_score"] for r in doc["results"]]
    assert scores == sorted(scores, reverse=True) and len(scores) == 4
    assert sorted(r["index"] for r in doc["results"]) == [0, 1, 2, 3]
    assert doc["usage"]["prompt_tokens"] == 4 * 3 + (1 + 2 + 3 + 1)  # the query per pair
    top = fetch_sync(mock.port, "POST", "/v1/rerank", {**body, "top_n": 2}).json()
    assert len(top["results"]) == 2
    assert fetch_sync(mock.port, "POST", "/rerank", {"documents": ["a"]}).status == 400
