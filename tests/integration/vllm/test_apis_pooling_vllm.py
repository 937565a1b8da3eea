"""Embeddings and rerank on real vLLM: the tiny Llama served with ``--convert embed``.

One server of this module's own (``vllm_embed``), stopped when the module
ends. The requests go through the recording proxy (``tap.Tap``), so every
figure loadgen records is compared with the raw answer: the inputs it sent
and vLLM embedded or scored, the vector dimension (256, the model's hidden
size, on every answer), the server's ``usage.prompt_tokens``; and with the
model's tokenizer (``workload.tokenizer``) the planned lengths are exactly
what vLLM counts (rerank: plus each pair's own special tokens). The step's
pooling figures (inputs/s, the dimensions seen) add up from the records, and
``/metrics`` saw the same requests and prompt tokens.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import pytest

from loadgen.records import Record, read_records
from loadgen.run import RunOptions, run_scenario
from loadgen.scenario import Scenario
from loadgen.summary import Summary
from tests.integration.vllm.tap import Exchange, Tap, scrape

if TYPE_CHECKING:  # the fixture's type; conftest is not imported at run time
    from conftest import VllmServer

pytestmark = pytest.mark.vllm

Build = Callable[..., Scenario]
N = 16
QUERY = 8  # rerank: the query's tokens


def hidden_size(server: VllmServer) -> int:
    return int(json.loads((server.model_dir / "config.json").read_text())["hidden_size"])


def run_through_tap(
    server: VllmServer,
    scenario: Build,
    tmp_path: Path,
    api: str,
    workload: dict[str, Any],
    tokenizer: bool = True,
    prompt_tokens: tuple[int, int] = (8, 48),
) -> tuple[Summary, list[Record], dict[str, Exchange], dict[str, float]]:
    """A run through the proxy; also what ``/metrics`` grew by meanwhile."""
    with Tap(server.url) as tap:
        sc = scenario(
            target={
                "url": tap.root,
                "api": api,
                "model": server.model,
                "timeouts_s": {"first_token": 60, "idle": 30, "total": 120},
            },
            workload={
                "seed": 4,
                "prompt_tokens": {
                    "dist": "uniform",
                    "min": prompt_tokens[0],
                    "max": prompt_tokens[1],
                },
                **({"tokenizer": str(server.model_dir)} if tokenizer else {}),
                **workload,
            },
            load={"mode": "concurrency", "concurrency": [2], "requests_per_step": N},
        )
        before = scrape(server.url)
        summary = run_scenario(sc, RunOptions(out_dir=tmp_path, quiet=True, reports=False))
        wire = tap.exchanges()
    records = list(read_records(tmp_path / "records.jsonl"))
    # vLLM's engine runs each input as a request of its own (rerank on an embedding
    # model: each document and the query, embedded once per request)
    more = 1 if api == "rerank" else 0
    engine_requests = sum((r.inputs or 0) + more for r in records)
    deadline = time.monotonic() + 10  # the counters may trail the last answer a little
    while True:
        after = scrape(server.url)
        grew = {k: after[k] - before.get(k, 0.0) for k in after}
        if grew["vllm:request_success_total"] >= engine_requests or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert summary.steps[0].requests.ok == N, [r.error_detail for r in records]
    assert grew["vllm:request_success_total"] == engine_requests
    assert grew["vllm:prompt_tokens_total"] == sum(r.prompt_tokens_server or 0 for r in records)
    for r in records:
        assert r.ok and r.http_status == 200 and wire[r.request_id].status == 200
        assert r.output_events == 0 and r.token_ns == []  # nothing is generated
        assert r.start_ns <= r.sent_ns < r.end_ns
    raw = json.loads((tmp_path / "summary.json").read_text())["steps"][0]
    assert not [k for k in raw if k.startswith(("ttft", "itl", "tpot"))], sorted(raw)
    assert raw["e2e_ms"]["p50"] > 0 and raw["pooling"]["api"] == api
    step = summary.steps[0]
    assert step.pooling is not None
    assert step.pooling.inputs_total == sum(r.inputs or 0 for r in records)
    assert step.throughput.inputs_per_s is not None and step.throughput.inputs_per_s > 0
    return summary, records, wire, grew


def test_embeddings(vllm_embed: VllmServer, scenario: Build, tmp_path: Path) -> None:
    dim = hidden_size(vllm_embed)
    summary, records, wire, _ = run_through_tap(
        vllm_embed, scenario, tmp_path, "openai-embeddings",
        {"batch": {"dist": "uniform", "min": 1, "max": 6}},
    )  # fmt: skip
    for r in records:
        sent = wire[r.request_id].json_body()
        answer = orjson.loads(wire[r.request_id].answer)
        assert r.inputs == len(sent["input"]) == len(answer["data"])
        assert {len(d["embedding"]) for d in answer["data"]} == {dim}
        assert r.vector_dim == dim
        # usage counts the whole batch, each input with the BOS vLLM adds; planned exactly
        assert r.prompt_tokens_server == answer["usage"]["prompt_tokens"]
        assert r.prompt_tokens_server == r.prompt_tokens_requested
    assert len({r.inputs for r in records}) > 1  # batches really drawn per request
    step = summary.steps[0]
    assert step.pooling is not None and step.pooling.vector_dims == {str(dim): N}
    check = step.prompt_lengths
    assert check.compared == N and check.beyond_tolerance == 0 and check.worst_rel_diff == 0
    print(
        f"embeddings: {step.pooling.inputs_total} inputs in {N} requests, "
        f"{step.tokens.input_total} prompt tokens, dim {dim}"
    )


def test_rerank(vllm_embed: VllmServer, scenario: Build, tmp_path: Path) -> None:
    summary, records, wire, _ = run_through_tap(
        vllm_embed, scenario, tmp_path, "rerank",
        {
            "documents": {"dist": "uniform", "min": 2, "max": 6},
            "query_tokens": {"dist": "fixed", "value": QUERY},
        },
    )  # fmt: skip
    for r in records:
        sent = wire[r.request_id].json_body()
        answer = orjson.loads(wire[r.request_id].answer)
        assert r.inputs == len(sent["documents"]) == len(answer["results"])
        assert sorted(x["index"] for x in answer["results"]) == list(range(r.inputs))
        assert all(isinstance(x["relevance_score"], float) for x in answer["results"])
        assert r.prompt_tokens_server == answer["usage"]["prompt_tokens"]
        # loadgen plans a cross-encoder's count: the query once per document, plus the
        # documents. An embedding model serving /rerank embeds the query once, so usage
        # is the query and the documents, each exactly as planned
        assert r.prompt_tokens_server == r.prompt_tokens_requested - (r.inputs - 1) * QUERY
    assert len({r.inputs for r in records}) > 1
    step = summary.steps[0]
    assert step.pooling is not None and not step.pooling.vector_dims
    # the step's token figures come from usage, not from the plan; and the step says the
    # plan was off (by 8 x (documents - 1) of 50-340 tokens: always beyond its 2 %)
    assert step.tokens.input_total == sum(r.prompt_tokens_server or 0 for r in records)
    check = step.prompt_lengths
    assert check.compared == N and check.beyond_tolerance == N
    assert check.mean_rel_diff is not None and check.mean_rel_diff < 0
    print(
        f"rerank: {step.pooling.inputs_total} documents in {N} requests, "
        f"{step.tokens.input_total} prompt tokens; prompt lengths: {step.prompt_lengths}"
    )


def test_embeddings_calibrated_with_tokenize(
    vllm_embed: VllmServer, scenario: Build, tmp_path: Path
) -> None:
    """No tokenizer: word prompts, calibrated with the embedding server's /tokenize."""
    summary, records, wire, _ = run_through_tap(
        vllm_embed, scenario, tmp_path, "openai-embeddings",
        {"batch": {"dist": "uniform", "min": 1, "max": 4}}, tokenizer=False,
        prompt_tokens=(128, 256),
    )  # fmt: skip
    assert summary.prompt_length_source != "tokenizer"
    assert summary.calibration is not None and summary.calibration.engine == "vllm"
    for r in records:
        answer = orjson.loads(wire[r.request_id].answer)
        assert r.prompt_tokens_server == answer["usage"]["prompt_tokens"]
    check = summary.steps[0].prompt_lengths
    print(f"embeddings, calibrated: {summary.calibration}; prompt lengths: {check}")
    # words are not all alike: the approximation is near, not exact (seen: 5.5 % short
    # of the plan on average, worst 10 %), and the step says how near, request by request
    diffs = [(r.prompt_tokens_server or 0) / r.prompt_tokens_requested - 1 for r in records]
    assert check.compared == N and check.mean_rel_diff is not None
    assert check.mean_rel_diff == pytest.approx(sum(diffs) / N)
    assert check.beyond_tolerance == sum(abs(d) > check.tolerance for d in diffs)
    assert abs(check.mean_rel_diff) < 0.10
