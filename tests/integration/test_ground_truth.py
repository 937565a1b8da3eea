"""Measured TTFT and ITL agree with what the mock server really did, within 1 ms at p99.

The mock writes its own truth (``--truth``): when it received each request and
when it wrote each token, stamped with the same monotonic clock as loadgen.
Matched by the ``x-request-id`` loadgen sends.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import orjson
import pytest

from loadgen.records import Record
from loadgen.scenario import Scenario
from loadgen.summary import Summary

RunFixture = Callable[[Scenario], tuple[Summary, list[Record], Path]]
Make = Callable[..., Scenario]
MS = 1e6


@pytest.mark.parametrize(("concurrency", "requests"), [(1, 24), (16, 96), (64, 192)])
def test_ttft_and_itl_match_server_truth(
    run: RunFixture, scenario: Make, tmp_path: Path, concurrency: int, requests: int
) -> None:
    truth_path = tmp_path / f"truth-{concurrency}.jsonl"
    sc = scenario(
        target={
            "extra_body": {"ignore_eos": True},
            "mock": {"args": ["--ttft-ms", "20", "--itl-ms", "5", "--truth", str(truth_path)]},
        },
        workload={"output_tokens": {"dist": "fixed", "value": 24}},
        load={
            "concurrency": [concurrency],
            "requests_per_step": requests,
            "warmup_requests": concurrency,
        },
    )
    summary, records, _ = run(sc)
    assert summary.steps[0].requests.failed == 0
    truth = {}
    for line in truth_path.read_bytes().splitlines():
        row = orjson.loads(line)
        truth[row["request_id"]] = row
    ttft_err, itl_err = [], []
    measured = [r for r in records if not r.warmup]
    assert len(measured) == requests
    for r in measured:
        t = truth[r.request_id]
        assert len(t["token_ns"]) == len(r.token_ns) == 24
        assert r.first_token_ns is not None
        ttft_err.append(abs((r.first_token_ns - r.sent_ns) - (t["token_ns"][0] - t["recv_ns"])))
        itl_err.extend(np.abs(np.diff(r.token_ns) - np.diff(t["token_ns"])).tolist())
    ttft_p99 = float(np.percentile(ttft_err, 99)) / MS
    itl_p99 = float(np.percentile(itl_err, 99)) / MS
    print(
        f"c={concurrency}: |TTFT - truth| p99 {ttft_p99:.3f} ms, |ITL - truth| p99 {itl_p99:.3f} ms"
    )
    assert ttft_p99 < 1.0
    assert itl_p99 < 1.0
