"""Embeddings and rerank end to end over real sockets: against the mock (its truth file
holding when each answer was written) and against a server whose vector dimension drifts.

What is held: records carry their inputs and the answer's dimension; summary.json has
requests/s, inputs/s, input tokens/s and E2E percentiles and no token-timing field; the
measured E2E agrees with the mock's truth within 1 ms at p99 (one run; the truth's
stamps are the kernel's, as in test_ground_truth.py); the mock's cost model
prices a request by its tokens (batch x tokens); a changed dimension is a failure of its
own kind.
"""

from __future__ import annotations

import asyncio
import csv
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import orjson
import pytest

from loadgen.records import Record
from loadgen.scenario import Scenario
from loadgen.summary import Summary
from tests.integration.rawserver import LoopServer

# durations held to tight bounds: run apart from the parallel tests (-m timing)
pytestmark = pytest.mark.timing

RunFixture = Callable[[Scenario], tuple[Summary, list[Record], Path]]
Make = Callable[..., Scenario]
MS = 1e6
BOUND_MS = 1.0

#: the mock's default profile (tiny-cpu): step = 6 + 0.5 x running + 0.05 x prefill tokens ms
STEP_BASE_MS, DECODE_MS, PREFILL_MS = 6.0, 0.5, 0.05

CASES = {
    "openai-embeddings": {"batch": {"dist": "uniform", "min": 1, "max": 12}},
    "rerank": {
        "documents": {"dist": "uniform", "min": 2, "max": 10},
        "query_tokens": {"dist": "fixed", "value": 8},
    },
}


def _sweep(
    run: RunFixture, scenario: Make, api: str, truth: Path
) -> tuple[Summary, list[Record], Path]:
    truth.unlink(missing_ok=True)
    sc = scenario(
        target={
            "api": api,
            "mock": {"args": ["--truth", str(truth), "--embedding-dim", "48"]},
        },
        workload={"prompt_tokens": {"dist": "uniform", "min": 16, "max": 64}, **CASES[api]},
        load={"concurrency": [1, 4], "requests_per_step": 40, "warmup_requests": 2},
        sla={"e2e_ms": {"p90": 5000}},
    )
    return run(sc, reports=True)


def _truth(path: Path) -> dict[str, dict[str, object]]:
    return {row["request_id"]: row for row in map(orjson.loads, path.read_bytes().splitlines())}


@pytest.mark.parametrize("api", sorted(CASES))
def test_a_pooling_sweep_against_the_mock(
    run: RunFixture, scenario: Make, tmp_path: Path, api: str
) -> None:
    truth_path = tmp_path / "truth.jsonl"
    summary, records, out = _sweep(run, scenario, api, truth_path)
    error = _check_run(summary, records, out, api, _truth(truth_path))
    print(f"{api}: |E2E - truth| p99 {error:.3f} ms")
    assert error < BOUND_MS


def _check_run(
    summary: Summary,
    records: list[Record],
    out: Path,
    api: str,
    truth: dict[str, dict[str, object]],
) -> float:
    """Every claim about one run; returns its |E2E - truth| p99 in ms."""
    assert [s.requests.failed for s in summary.steps] == [0, 0]
    measured = [r for r in records if not r.warmup]
    assert len(measured) == 80
    word_limit = 12 if api == "openai-embeddings" else 10
    for r in measured:
        t = truth[r.request_id]
        assert r.ok and r.inputs is not None and 1 <= r.inputs <= word_limit
        assert r.inputs == t["inputs"]
        assert r.vector_dim == (48 if api == "openai-embeddings" else None) == t["vector_dim"]
        assert r.prompt_tokens_server == r.prompt_tokens_requested == t["prompt_tokens"]
        assert r.output_events == 0 and r.token_ns == []
    assert len({r.inputs for r in measured}) > 1  # drawn per request

    raw = json.loads((out / "summary.json").read_text())
    for step in raw["steps"]:
        assert not [k for k in step if k.startswith(("ttft", "itl", "tpot", "icl"))], step.keys()
        assert step["throughput"]["requests_per_s"] > 0
        assert step["throughput"]["inputs_per_s"] > step["throughput"]["requests_per_s"] * 0.9
        assert step["throughput"]["input_tokens_per_s"] > step["throughput"]["inputs_per_s"]
        assert step["e2e_ms"]["p50"] > 0 and step["e2e_ms"]["p99"] >= step["e2e_ms"]["p50"]
        assert step["pooling"]["api"] == api
        if api == "openai-embeddings":
            assert step["pooling"]["vector_dims"] == {"48": 40}
    s0 = summary.steps[0]
    ok0 = [r for r in measured if r.step == 0]
    assert s0.pooling is not None and s0.pooling.inputs_total == sum(r.inputs or 0 for r in ok0)
    assert s0.throughput.inputs_per_s is not None
    ratio = s0.throughput.inputs_per_s / s0.throughput.requests_per_s
    assert ratio == pytest.approx(s0.pooling.inputs_mean, rel=0.15)

    with (out / "steps.csv").open() as fh:
        header = next(csv.reader(fh))
    assert {"inputs_per_s", "requests_per_s", "input_tokens_per_s", "e2e_ms_p99"} <= set(header)
    assert not [c for c in header if c.startswith(("ttft", "itl", "tpot", "output_tokens"))]
    report = (out / "report.md").read_text()
    assert "TTFT p" not in report and "ITL" not in report and "E2E p50 (ms)" in report
    assert (out / "plots" / "latency_throughput.png").is_file()

    # the cost model: at one user, a request is one engine step prefilling its tokens
    one = [r for r in ok0]
    model_ms = [STEP_BASE_MS + DECODE_MS + PREFILL_MS * r.prompt_tokens for r in one]
    served_ms = [
        (truth[r.request_id]["token_ns"][0] - truth[r.request_id]["recv_ns"]) / MS for r in one
    ]  # type: ignore[index, operator]
    assert np.median(np.array(served_ms) / np.array(model_ms)) == pytest.approx(1.0, abs=0.15)
    bigger = np.corrcoef([r.prompt_tokens for r in one], served_ms)[0, 1]
    assert bigger > 0.9  # more inputs x tokens, longer prefill

    err = []
    for r in measured:
        t = truth[r.request_id]
        assert r.first_token_ns is not None
        assert t["token_stamp"] == "kernel", t  # when the answer left: the kernel's stamp
        served = t["token_ns"][0] - t["recv_ns"]  # type: ignore[index, operator]
        err.append(abs((r.first_token_ns - r.sent_ns) - served))
    return float(np.percentile(err, 99)) / MS


class DriftingDims(LoopServer):
    """Answers /v1/embeddings with 8-wide vectors, every third request 16-wide."""

    def __init__(self) -> None:
        super().__init__()
        self.served = 0

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                body = orjson.loads(await reader.readexactly(length)) if length else {}
                if not head.startswith(b"POST /v1/embeddings"):
                    writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                    continue
                self.served += 1
                dim = 16 if self.served % 3 == 0 else 8
                inputs = body.get("input", [])
                answer = orjson.dumps(
                    {
                        "data": [
                            {"index": i, "embedding": [0.5] * dim} for i in range(len(inputs))
                        ],
                        "usage": {
                            "prompt_tokens": 4 * len(inputs),
                            "total_tokens": 4 * len(inputs),
                        },
                    }
                )
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    + f"content-length: {len(answer)}\r\n\r\n".encode()
                    + answer
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()


def test_a_changed_vector_dimension_is_caught(run: RunFixture, scenario: Make) -> None:
    server = DriftingDims()
    server.start()
    try:
        summary, records, _ = run(
            scenario(
                target={"url": server.root, "api": "openai-embeddings", "model": "m"},
                workload={"calibrate": False, "batch": {"dist": "fixed", "value": 2}},
                load={"concurrency": [1], "requests_per_step": 12},
            )
        )
    finally:
        server.stop()
    bad = [r for r in records if not r.ok]
    assert bad and all(r.error_kind == "vector_dim_mismatch" for r in bad)
    assert all(r.vector_dim == 16 for r in bad)
    assert all(r.ok and r.vector_dim == 8 for r in records if r not in bad)
    assert len(bad) == 4  # every third of 12
    step = summary.steps[0]
    assert step.requests.errors == {"vector_dim_mismatch": 4}
    assert step.pooling is not None and step.pooling.vector_dims == {"8": 8, "16": 4}
    assert any("2 dimensions" in w for w in step.warnings)
