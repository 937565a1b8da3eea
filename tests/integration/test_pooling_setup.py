"""Pre-flight and prompt calibration for the pooling APIs, over real sockets on 127.0.0.1.

What is held: with ``api: rerank`` the pre-flight asks the mock's /v1/models (vLLM serves it
beside /rerank), so ``target.model: auto`` picks the served model and a name it does not
serve is a warning; embeddings and rerank prompts are calibrated with the server's
``/tokenize`` in its prompt form (no chat template), named in the summary, and the
calibrated lengths then match the server's usage where the word approximation misses by 2x.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from loadgen.records import Record
from loadgen.scenario import Scenario
from loadgen.summary import Summary
from tests.integration.test_tokenize_engines import Handler, Imitation

RunFixture = Callable[[Scenario], tuple[Summary, list[Record], Path]]
Make = Callable[..., Scenario]


def test_rerank_asks_v1_models_so_model_auto_works(run: RunFixture, scenario: Make) -> None:
    sc = scenario(
        target={"api": "rerank", "model": "auto"},
        workload={"documents": {"dist": "fixed", "value": 3}},
        load={"concurrency": [1], "requests_per_step": 4},
    )
    summary, records, _ = run(sc)
    assert summary.target_check is not None
    assert summary.target_check.models == ["loadgen-mock"]
    assert summary.model == "loadgen-mock"
    assert [r.ok for r in records] == [True] * len(records) and records


def test_rerank_warns_of_a_model_the_server_does_not_list(run: RunFixture, scenario: Make) -> None:
    sc = scenario(
        target={"api": "rerank", "model": "ranker", "mock": {"args": ["--model", "other"]}},
        workload={"documents": {"dist": "fixed", "value": 2}},
        load={"concurrency": [1], "requests_per_step": 2},
    )
    summary, _, _ = run(sc)
    assert summary.target_check is not None
    assert summary.target_check.models == ["other"]
    assert any("'ranker' is not among the served models (other)" in w
               for w in summary.target_check.warnings), summary.target_check.warnings  # fmt: skip


def _words(text: str) -> int:
    return len(text.split())


def _tokens(text: str) -> int:
    """The imitation's tokenizer: a BOS and 2 tokens a word."""
    return 1 + 2 * _words(text)


class Pooling:
    """/tokenize (vLLM's prompt form only), /v1/embeddings and /rerank, counting alike."""

    def __init__(self) -> None:
        self.tokenize_bodies: list[dict[str, Any]] = []

    def tokenize(self, body: dict[str, Any]) -> tuple[int, Any]:
        self.tokenize_bodies.append(body)
        if not isinstance(body.get("prompt"), str):
            return 400, {"object": "error", "message": "expected a prompt", "code": 400}
        n = _tokens(body["prompt"])
        return 200, {"count": n, "max_model_len": 4096, "tokens": [7] * n}

    @staticmethod
    def embeddings(body: dict[str, Any]) -> tuple[int, Any]:
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        n = sum(_tokens(t) for t in texts)
        data = [
            {"index": i, "object": "embedding", "embedding": [0.5] * 8} for i in range(len(texts))
        ]
        usage = {"prompt_tokens": n, "total_tokens": n, "completion_tokens": 0}
        return 200, {"object": "list", "model": body["model"], "data": data, "usage": usage}

    @staticmethod
    def rerank(body: dict[str, Any]) -> tuple[int, Any]:
        docs = body["documents"]
        n = sum(_tokens(body["query"]) + _tokens(d) for d in docs)
        results = [{"index": i, "relevance_score": 0.5} for i in range(len(docs))]
        return 200, {"model": body["model"], "usage": {"prompt_tokens": n, "total_tokens": n},
                     "results": results}  # fmt: skip


@pytest.fixture
def pooling_server() -> Iterator[tuple[Pooling, Imitation]]:
    p = Pooling()
    routes: dict[str, Handler] = {
        "/tokenize": p.tokenize,
        "/v1/embeddings": p.embeddings,
        "/rerank": p.rerank,
    }
    with Imitation(routes) as server:
        yield p, server


WORKLOADS = {
    "openai-embeddings": {"batch": {"dist": "fixed", "value": 3}},
    "rerank": {
        "documents": {"dist": "fixed", "value": 3},
        "query_tokens": {"dist": "fixed", "value": 9},
    },
}


@pytest.mark.parametrize("api", sorted(WORKLOADS))
def test_pooling_prompts_are_calibrated_with_tokenize_in_its_prompt_form(
    run: RunFixture, scenario: Make, pooling_server: tuple[Pooling, Imitation], api: str
) -> None:
    p, server = pooling_server
    base = {
        "target": {"url": server.url, "api": api, "model": "m"},
        "load": {"concurrency": [1], "requests_per_step": 6},
    }
    workload = {"prompt_tokens": {"dist": "fixed", "value": 41}, **WORKLOADS[api]}
    summary, records, _ = run(scenario(workload=workload, **base))
    cal = summary.calibration
    assert cal is not None and cal.endpoint == "POST /tokenize" and cal.engine == "vllm"
    assert not cal.chat_template
    assert cal.per_word == pytest.approx(2.0) and cal.overhead == pytest.approx(1.0)
    assert summary.prompt_length_source == "server"
    assert p.tokenize_bodies and all("messages" not in b for b in p.tokenize_bodies)
    assert all(r.ok for r in records)
    step = summary.steps[0]
    assert step.prompt_lengths.beyond_tolerance == 0, step.prompt_lengths
    for r in records:  # 41 tokens a text as the server counts them
        assert r.prompt_tokens_server == r.prompt_tokens_requested

    # the word approximation (calibrate: false) misses by about 2x: what calibration fixes
    summary, _, _ = run(scenario(workload={**workload, "calibrate": False}, **base))
    assert summary.calibration is None
    assert summary.steps[0].prompt_lengths.beyond_tolerance == 6
