"""Where the time went, end to end: loadgen against the real mock over 127.0.0.1.

The mock exports vLLM's queue, prefill and decode histograms from its engine's
own times (docs/mock.md), so over a step queue + prefill + decode adds up to the
server's E2E (a server frontend of 0), and the client, which also waits for the
network and its own parsing, sees more than the server: client E2E >= server E2E
(a known network delay, ``--network-delay-ms``, is checked in
test_network_delay.py). Two sequences at
once and four users: half of them wait, and the queue time shows it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from loadgen.records import Record
from loadgen.scenario import Scenario
from loadgen.summary import Summary

RunFixture = Callable[[Scenario], tuple[Summary, list[Record], Path]]
#: the mock's last write of an answer, as long as it may take (ms): the mock stamps its end
#: after the write returns, the client at the kernel's receive stamp of it
WRITE_MS = 0.2


def test_queue_prefill_decode_add_up_to_the_servers_e2e(
    run: RunFixture, scenario: Callable[..., Scenario]
) -> None:
    sc = scenario(
        target={
            "extra_body": {"ignore_eos": True},
            "mock": {"args": ["--max-num-seqs", "2", "--step-base-ms", "10"]},
        },
        workload={"output_tokens": {"dist": "fixed", "value": 12}},
        load={"concurrency": [4], "requests_per_step": 12, "warmup_requests": 0},
    )
    summary, records, _ = run(sc)
    step = summary.steps[0]
    assert step.requests.failed == 0
    split = step.time_split
    assert split is not None and split.engine == "vllm"
    parts = (split.queue, split.prefill, split.decode, split.server_e2e, split.server_ttft)
    assert all(p is not None for p in parts)
    queue, prefill, decode, e2e, ttft = parts
    assert queue and prefill and decode and e2e and ttft
    # every request of the step, warm-up or not, finished between the two scrapes
    assert queue.count == prefill.count == decode.count == e2e.count == len(records)
    assert queue.mean_ms and prefill.mean_ms and decode.mean_ms and e2e.mean_ms
    assert queue.mean_ms + prefill.mean_ms + decode.mean_ms == pytest.approx(e2e.mean_ms, rel=1e-6)
    assert queue.mean_ms > 10.0  # two of four wait for a slot: at least a 12-token answer
    assert decode.mean_ms >= 11 * 10.0  # 11 gaps of at least one 10 ms engine step
    assert e2e.p50_ms_approx is not None and e2e.p99_ms_approx is not None
    assert e2e.p50_ms_approx <= e2e.p99_ms_approx
    assert split.client_e2e_mean_ms == step.e2e_ms.mean
    # the client's end is the kernel's receive stamp of the mock's last write; the mock
    # stamps its end once that write has returned: it may read a hair (the write) longer
    assert split.client_e2e_mean_ms is not None
    assert split.client_e2e_mean_ms >= e2e.mean_ms - WRITE_MS
    assert split.network_ms is not None and split.network_ms >= -WRITE_MS
    # the mock's E2E is its engine's: no frontend time; the parts add up to the client's E2E
    assert split.frontend_ms == pytest.approx(0.0, abs=1e-6 * e2e.mean_ms)
    assert sum(split.part_means().values()) == pytest.approx(split.client_e2e_mean_ms, rel=1e-9)


def test_fixed_mode_has_no_queue_and_the_parts_still_add_up(
    run: RunFixture, scenario: Callable[..., Scenario]
) -> None:
    sc = scenario(
        target={  # ignore_eos: every answer its 8 tokens (the mock may stop earlier without)
            "extra_body": {"ignore_eos": True},
            "mock": {"args": ["--ttft-ms", "30", "--itl-ms", "10"]},
        },
        workload={"output_tokens": {"dist": "fixed", "value": 8}},
        load={"concurrency": [2], "requests_per_step": 6, "warmup_requests": 0},
    )
    summary, records, _ = run(sc)
    split = summary.steps[0].time_split
    assert split is not None and split.queue and split.prefill and split.decode
    assert split.server_e2e and split.server_e2e.mean_ms and split.prefill.mean_ms
    assert split.queue.count == len(records) and split.queue.mean_ms == 0.0
    assert split.prefill.mean_ms >= 30.0  # the fixed TTFT
    assert split.decode.mean_ms is not None  # the last token on its deadline: 30 + 7 * 10 ms
    assert split.prefill.mean_ms + split.decode.mean_ms >= 100.0
    total = split.queue.mean_ms + split.prefill.mean_ms + split.decode.mean_ms
    assert total == pytest.approx(split.server_e2e.mean_ms, rel=1e-6)
    assert split.network_ms is not None and split.network_ms >= -WRITE_MS
