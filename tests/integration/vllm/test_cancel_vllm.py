"""Users who stop (workload.cancel) against a real vLLM (CPU): an aborted stream frees its
slot on the server. loadgen closes the connection after N token events; vLLM sees the
disconnect and aborts the request, so ``vllm:num_requests_running`` drops long before the
answer's full length could have been generated; the records say cancelled_by_client.

Only ever run under ``flock /tmp/vllm.lock`` on a shared host (docs/vllm-cpu.md).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from loadgen.client import ADAPTERS, Requester, RequestTimeouts
from loadgen.client.h1 import H1Transport
from loadgen.client.h1.connection import DRAIN_S
from loadgen.records import Record, read_records
from loadgen.run import RunOptions, run_scenario
from loadgen.scenario import Scenario
from loadgen.workload.plan import RequestSpec

if TYPE_CHECKING:  # the fixture's type; conftest is not imported at run time
    from conftest import VllmServer

pytestmark = pytest.mark.vllm

#: long enough that generating it all takes vLLM-CPU far longer than the checks wait
LONG = 1500
#: after the abort, how long vLLM may take to drop the request (measured: ~0.1 s). Below
#: the h1 transport's DRAIN_S: a connection drained rather than closed would keep the
#: request running until the drain gives up (measured: 2.1 s), and fail this
FREED_WITHIN_S = 1.0
assert FREED_WITHIN_S < DRAIN_S


async def running(client: httpx.AsyncClient) -> float:
    for line in (await client.get("/metrics")).text.splitlines():
        if line.startswith("vllm:num_requests_running{"):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError("no vllm:num_requests_running in /metrics")


async def wait_running(client: httpx.AsyncClient, want: float, within_s: float) -> float:
    """Seconds until the gauge reads ``want`` (scraped every 50 ms); fails after ``within_s``."""
    t0 = time.monotonic()
    while (got := await running(client)) != want:
        assert time.monotonic() - t0 < within_s, f"running {got}, expected {want}"
        await asyncio.sleep(0.05)
    return time.monotonic() - t0


def test_an_aborted_stream_frees_its_slot(vllm_server: VllmServer) -> None:
    """The gauge is read while loadgen's transport is still open: it is the abort that
    closed the connection, not the end of the run."""

    async def main() -> tuple[Record, float, int]:
        client = httpx.AsyncClient(base_url=vllm_server.url, timeout=30)
        await wait_running(client, 0, 60)  # nothing of an earlier test still runs
        transport = H1Transport(limit=4, connect_timeout_s=10)
        requester = Requester(
            transport,
            ADAPTERS["openai-completions"],
            base_url=vllm_server.url,
            model=vllm_server.model,
            extra_body={"ignore_eos": True},
            headers={},
            timeouts=RequestTimeouts.from_seconds(60, 30, 300),
            run_id="cancel",
        )
        spec = RequestSpec(0, "tell me a long story", 5, LONG, cancel_after_tokens=4)
        rec = await requester.send(spec, 0)
        freed_s = await wait_running(client, 0, FREED_WITHIN_S)
        await transport.aclose()
        await client.aclose()
        return rec, freed_s, transport.connects

    rec, freed_s, connects = asyncio.run(main())
    assert rec.cancelled_by_client and not rec.ok and rec.error_kind is None, rec.error_detail
    assert rec.http_status == 200 and 4 <= rec.output_events <= 8  # a merged event may carry more
    assert rec.output_events == len(rec.token_ns) and rec.end_ns >= rec.token_ns[-1]
    # the whole answer would have taken far longer than the slot took to free
    per_token_s = (rec.token_ns[-1] - rec.token_ns[0]) / 1e9 / max(1, len(rec.token_ns) - 1)
    print(f"freed in {freed_s:.2f} s; {per_token_s * 1e3:.1f} ms a token")
    assert freed_s < FREED_WITHIN_S < per_token_s * LONG or per_token_s == 0
    assert connects == 1


def test_a_run_with_cancel_counts_them_and_leaves_nothing_running(
    vllm_server: VllmServer, scenario: Callable[..., Scenario], tmp_path: Path
) -> None:
    """Every request cut after 2-6 tokens: records and summary count them apart."""
    sc = scenario(
        target={
            "url": vllm_server.url,
            "api": "openai-chat",
            "model": vllm_server.model,
            "extra_body": {"ignore_eos": True},
            "timeouts_s": {"first_token": 60, "idle": 30, "total": 300},
        },
        workload={
            "seed": 1,
            "prompt_tokens": {"dist": "fixed", "value": 16},
            "output_tokens": {"dist": "fixed", "value": LONG},
            "cancel": {"share": 1, "after_tokens": {"dist": "uniform", "min": 2, "max": 6}},
        },
        load={"mode": "concurrency", "concurrency": [2], "requests_per_step": 6},
    )
    summary = run_scenario(sc, RunOptions(out_dir=tmp_path, quiet=True, reports=False))
    records = list(read_records(tmp_path / "records.jsonl"))
    # (the run has closed its connections by now: this test is about the records)
    assert len(records) == 6 and all(r.cancelled_by_client for r in records)
    assert all(2 <= r.output_events <= 10 and r.error_kind is None for r in records)
    (step,) = summary.steps
    assert step.requests.cancelled_by_client == 6 and step.requests.failed == 0
    assert step.requests.cancelled_by_client_share == 1.0
    assert step.tokens.cancelled_output_total == sum(r.output_tokens for r in records)
    assert step.ttft_ms.count == 0  # no complete answer: no latency
