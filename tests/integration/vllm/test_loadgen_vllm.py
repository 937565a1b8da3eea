"""loadgen against a real vLLM (0.32, CPU): whole scenarios through ``run_scenario``.

``test_vllm_raw.py`` pins what the server sends; these check what loadgen makes
of it: streaming records for completions and chat, token counts from ``usage``
with event counts kept beside them, exact lengths with ``ignore_eos`` and
``prompt_as: token_ids``, ``/metrics`` scraped into the step's telemetry, a
closed-loop sweep, HTTP errors as rows and the ``vllm`` metrics profile.

On 2 shared cores a vLLM-CPU stream may arrive in one burst (TTFT close to
E2E) and tokens may be merged into one event, so nothing here asserts a timing
shape or one event per token; timings are only checked for order and presence.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from loadgen.client import ADAPTERS, Requester, RequestTimeouts
from loadgen.client.h1 import H1Transport
from loadgen.metrics import summarize_step
from loadgen.metrics.profiles import PROFILES
from loadgen.records import Record, read_records
from loadgen.run import RunOptions, run_scenario
from loadgen.scenario import Scenario
from loadgen.summary import StepSummary, Summary
from loadgen.workload.plan import RequestSpec

if TYPE_CHECKING:  # the fixture's type; conftest is not imported at run time
    from conftest import VllmServer

pytestmark = pytest.mark.vllm

OUTPUT_TOKENS = 32
MAX_MODEL_LEN = 2048  # scripts/vllm-cpu.sh: --max-model-len 2048
#: runs of a load-sensitive test before it fails (see test_closed_loop_sweep)
SWEEP_ATTEMPTS = 3

Build = Callable[..., Scenario]
Result = tuple[Summary, list[Record]]


def run_in(out: Path, sc: Scenario, profile: str = "loadgen") -> Result:
    """Run ``sc`` into ``out`` (no plots: they cost seconds and are tested elsewhere)."""
    opts = RunOptions(out_dir=out, quiet=True, reports=False, metrics_profile=profile)
    summary = run_scenario(sc, opts)
    return summary, list(read_records(out / "records.jsonl"))


def vocab_size(server: VllmServer) -> int:
    config = json.loads((server.model_dir / "config.json").read_text())
    return int(config["vocab_size"])


def target(server: VllmServer, api: str = "openai-completions", **extra: Any) -> dict[str, Any]:
    return {
        "url": server.url,
        "api": api,
        "model": server.model,
        "extra_body": {"ignore_eos": True},
        "timeouts_s": {"first_token": 60, "idle": 30, "total": 120},
        **extra,
    }


def fixed(n: int) -> dict[str, Any]:
    return {"dist": "fixed", "value": n}


def closed(concurrency: list[int], requests: int) -> dict[str, Any]:
    return {"mode": "concurrency", "concurrency": concurrency, "requests_per_step": requests}


def assert_streamed(step: StepSummary, records: list[Record], n: int) -> None:
    """Every request ok, every latency metric present, stamps in order."""
    assert step.requests.total == n and step.requests.ok == n, step.requests
    assert step.ttft_ms.count == n and step.e2e_ms.count == n
    assert step.tpot_ms.count == n
    assert step.itl_ms.count > 0
    for r in records:
        assert r.ok and r.error_kind is None and r.http_status == 200, r
        assert r.first_token_ns is not None and r.last_token_ns is not None
        assert r.start_ns <= r.sent_ns <= r.first_token_ns <= r.last_token_ns <= r.end_ns
        assert r.token_ns == sorted(r.token_ns) and len(r.token_ns) == r.output_events
        assert r.finish_reason == "length"


def assert_counts_honest(step: StepSummary, records: list[Record]) -> None:
    """Token counts come from usage; event counts are kept, and mismatches counted as they are.

    vLLM may merge tokens into one event when its API server falls behind, so
    events <= usage tokens, but never more; and never far fewer (some events
    carry empty text: they still count).
    """
    ok = [r for r in records if r.ok]
    assert all(r.output_tokens_server is not None for r in ok)
    assert all(r.output_events <= (r.output_tokens_server or 0) for r in ok)
    tokens = step.tokens
    assert tokens.server_counts == len(ok)
    assert tokens.output_total == sum(r.output_tokens_server or 0 for r in ok)
    assert tokens.output_events_total == sum(r.output_events for r in ok)
    assert tokens.count_mismatches == sum(
        1 for r in ok if r.output_events != r.output_tokens_server
    )
    assert tokens.output_events_total >= tokens.output_total - max(2, tokens.output_total // 10)


@pytest.mark.parametrize("api", ["openai-completions", "openai-chat"])
def test_streaming_records(
    api: str, vllm_server: VllmServer, scenario: Build, tmp_path: Path
) -> None:
    n = 6
    sc = scenario(
        target=target(vllm_server, api),
        workload={"prompt_tokens": fixed(16), "output_tokens": fixed(OUTPUT_TOKENS)},
        load=closed([2], n),
    )
    summary, records = run_in(tmp_path, sc)
    assert summary.api == api and len(summary.steps) == 1
    step = summary.steps[0]
    assert_streamed(step, records, n)
    assert_counts_honest(step, records)
    # ignore_eos: exactly max_tokens each, counted from usage.
    assert all(r.output_tokens == OUTPUT_TOKENS for r in records)
    assert step.tokens.output_total == n * OUTPUT_TOKENS
    assert step.throughput.output_tokens_per_s > 0
    assert step.throughput.requests_per_s > 0


def test_ignore_eos_gives_every_requested_length(
    vllm_server: VllmServer, scenario: Build, tmp_path: Path
) -> None:
    n = 8
    sc = scenario(
        target=target(vllm_server),
        workload={
            "seed": 3,
            "prompt_tokens": fixed(8),
            "output_tokens": {"dist": "uniform", "min": 4, "max": 40},
        },
        load=closed([4], n),
    )
    summary, records = run_in(tmp_path, sc)
    assert summary.steps[0].requests.ok == n
    assert len({r.max_tokens for r in records}) > 1  # really different lengths
    for r in records:
        assert r.output_tokens_server == r.max_tokens, r
        assert r.finish_reason == "length"
    assert summary.steps[0].tokens.output_total == sum(r.max_tokens for r in records)
    assert_counts_honest(summary.steps[0], records)


def test_token_id_prompts_have_exact_lengths(
    vllm_server: VllmServer, scenario: Build, tmp_path: Path
) -> None:
    """``prompt_as: token_ids`` with the model's vocabulary: usage.prompt_tokens == requested."""
    n = 8
    sc = scenario(
        target=target(vllm_server),
        workload={
            "prompt_as": "token_ids",
            "vocab_size": vocab_size(vllm_server),
            "prompt_tokens": {"dist": "uniform", "min": 8, "max": 600},
            "output_tokens": fixed(4),
        },
        load=closed([4], n),
    )
    summary, records = run_in(tmp_path, sc)
    step = summary.steps[0]
    assert step.requests.ok == n
    assert len({r.prompt_tokens_requested for r in records}) > 1
    for r in records:
        assert r.prompt_tokens_server == r.prompt_tokens_requested, r
    assert step.tokens.input_total == sum(r.prompt_tokens_requested for r in records)


def test_server_metrics_are_scraped(
    vllm_server: VllmServer, scenario: Build, tmp_path: Path
) -> None:
    """``telemetry.server_metrics: target``: /metrics scraped into the step's ``server`` stats.

    vLLM-CPU's API server can be starved for seconds while it generates (see
    ``test_closed_loop_sweep``): a scrape then fails (a ``gap``) and a step may
    hold none. Such a run is repeated, at most ``SWEEP_ATTEMPTS`` times.
    """
    sc = scenario(
        target=target(vllm_server),
        workload={"prompt_tokens": fixed(64), "output_tokens": fixed(OUTPUT_TOKENS)},
        load={"concurrency": [4], "requests_per_step": None, "duration_s": 3},
        telemetry={"server_metrics": "target", "interval_s": 0.1},
    )
    for attempt in range(SWEEP_ATTEMPTS):
        out = tmp_path / f"attempt{attempt}"
        summary, _ = run_in(out, sc)
        step = summary.steps[0]
        assert step.requests.ok == step.requests.total > 0
        assert step.telemetry is not None
        server = step.telemetry.server
        if server is not None and server.scrapes >= 2:
            break
    assert server is not None, step.telemetry
    assert server.source == f"{vllm_server.url}/metrics"
    assert server.engine == "vllm"
    assert server.scrapes >= 2
    for gauge in ("running", "waiting", "kv_usage"):
        assert getattr(server, gauge) is not None, gauge
    assert 0 <= server.running.max <= 4  # never more than loadgen had in flight
    assert server.waiting.max == 0  # the default server runs 128 at once
    # Counters over the window: at most what the window's requests generated.
    assert 0 < server.generation_tokens <= step.tokens.output_total
    assert server.preemptions == 0
    lines = [json.loads(x) for x in (out / "telemetry.jsonl").read_text().splitlines()]
    scrapes = [x for x in lines if x["type"] == "server"]
    assert len(scrapes) >= server.scrapes
    assert all(x["engine"] == "vllm" and "generation_tokens_total" in x for x in scrapes)


@pytest.mark.slow  # the second server (`--max-num-seqs 4`), shared with test_vllm_raw.py
def test_server_metrics_see_the_queue(
    vllm_server_seqs4: VllmServer, scenario: Build, tmp_path: Path
) -> None:
    """8 closed-loop streams on a server that runs 4: the scrapes show 4 running, some waiting."""
    sc = scenario(
        target=target(vllm_server_seqs4),
        workload={"prompt_tokens": fixed(16), "output_tokens": fixed(128)},
        load=closed([8], 24),
        telemetry={"server_metrics": "target", "interval_s": 0.05},
    )
    summary, _ = run_in(tmp_path, sc)
    step = summary.steps[0]
    assert step.requests.ok == 24
    assert step.telemetry is not None
    server = step.telemetry.server
    assert server is not None and server.scrapes >= 2
    assert server.running.max == 4
    assert server.waiting.max >= 1


def test_closed_loop_sweep(vllm_server: VllmServer, scenario: Build, tmp_path: Path) -> None:
    """1/4/16 streams: every step clean, more throughput with 16 streams than 1, a verdict.

    On these 2 cores vLLM-CPU sometimes runs a whole step one request at a
    time: its engine core busy-waits (``sched_yield``) on the second core while
    the worker computes on the first, starving the API server and the client,
    so concurrent requests reach the engine one by one and c=16 measures the
    same throughput as c=1 (seen in about a third of the sweeps; a separate
    process sleeping 5 ms wakes up to 0.5 s late meanwhile). The same starving
    can hold loadgen's own reads back past its saturation bound, and the step
    is then rightly inconclusive, not met (a clean-clone CI run: read lag p99
    8.1 ms at c=1, bound 8). The sweep is rerun in either case, at most
    ``SWEEP_ATTEMPTS`` times; one must have every step met and show the batching.
    """
    sc = scenario(
        target=target(vllm_server),
        workload={"prompt_tokens": fixed(16), "output_tokens": fixed(64)},
        load=closed([1, 4, 16], 16),
    )
    seen: list[list[float]] = []
    for attempt in range(SWEEP_ATTEMPTS):
        summary, records = run_in(tmp_path / f"attempt{attempt}", sc)
        assert [s.load.concurrency for s in summary.steps] == [1, 4, 16]
        for step in summary.steps:
            step_records = [r for r in records if r.step == step.index]
            assert_streamed(step, step_records, 16)
            assert_counts_honest(step, step_records)
        starved = [s for s in summary.steps if s.sla.cause == "saturated"]
        if starved:  # loadgen was held back, and its warnings say why: try again
            assert all(s.client.warnings for s in starved)
            seen.append([-1.0])
            continue
        assert all(step.meets_sla for step in summary.steps)
        assert summary.verdict is not None
        assert summary.verdict.max_passing == 16
        assert summary.verdict.stopped_early is None
        assert summary.verdict.text
        rps = [s.throughput.requests_per_s for s in summary.steps]
        seen.append([round(x, 1) for x in rps])
        if rps[2] > 1.5 * rps[0]:
            return
    pytest.fail(
        "16 streams were never faster than 1 with loadgen unsaturated (req/s at 1/4/16 per "
        f"attempt, [-1.0] where loadgen was saturated: {seen})"
    )


@pytest.mark.parametrize(
    ("case", "status", "words"),
    [("unknown_model", 404, "does not exist"), ("prompt_too_long", 400, "maximum context length")],
)
def test_http_errors_are_rows(
    case: str,
    status: int,
    words: str,
    vllm_server: VllmServer,
    scenario: Build,
    tmp_path: Path,
) -> None:
    n = 3
    workload: dict[str, Any] = {"prompt_tokens": fixed(8), "output_tokens": fixed(8)}
    tgt = target(vllm_server)
    if case == "unknown_model":
        tgt["model"] = "no-such-model"
    else:  # longer than the context: a 400 before any stream starts
        workload |= {
            "prompt_as": "token_ids",
            "vocab_size": vocab_size(vllm_server),
            "prompt_tokens": fixed(MAX_MODEL_LEN + 100),
        }
    sc = scenario(target=tgt, workload=workload, load=closed([1], n))
    summary, records = run_in(tmp_path, sc)
    step = summary.steps[0]
    kind = f"http_{status}"
    assert step.requests.total == n and step.requests.failed == n
    assert step.requests.errors == {kind: n}
    assert step.requests.error_rate == 1.0
    assert step.ttft_ms.count == 0 and step.throughput.requests_per_s == 0
    assert not step.meets_sla  # no successful request never passes
    assert len(records) == n
    for r in records:
        assert not r.ok and r.error_kind == kind and r.http_status == status
        assert r.error_detail is not None and words in r.error_detail, r.error_detail
        assert r.first_token_ns is None and r.output_events == 0
    assert summary.verdict is not None and summary.verdict.max_passing is None


def test_vllm_metrics_profile(vllm_server: VllmServer, scenario: Build, tmp_path: Path) -> None:
    """``metrics_profile="vllm"``: TTFT and E2E from the start stamp, vLLM's TPOT.

    The same records summarised with the default profile give the loadgen
    numbers: TTFT from the socket write is never longer, ITL (event gaps) is
    the same in both.
    """
    n = 8
    sc = scenario(
        target=target(vllm_server),
        workload={
            "prompt_as": "token_ids",
            "vocab_size": vocab_size(vllm_server),
            "prompt_tokens": fixed(64),
            "output_tokens": fixed(OUTPUT_TOKENS),
        },
        load=closed([4], n),
    )
    summary, records = run_in(tmp_path, sc, profile="vllm")
    assert summary.metrics_profile == "vllm"
    written = json.loads((tmp_path / "summary.json").read_text())
    assert written["metrics_profile"] == "vllm"
    step = summary.steps[0]
    assert_streamed(step, records, n)

    ms = 1e-6
    ttft = [(r.first_token_ns or 0) - r.start_ns for r in records]
    e2e = [(r.last_token_ns or 0) - r.start_ns for r in records]
    tpot = [(e - t) / (OUTPUT_TOKENS - 1) for e, t in zip(e2e, ttft, strict=True)]
    assert step.ttft_ms.mean == pytest.approx(sum(ttft) / n * ms)
    assert step.e2e_ms.max == pytest.approx(max(e2e) * ms)
    assert step.tpot_ms.mean == pytest.approx(sum(tpot) / n * ms)

    default = summarize_step(
        0, step.load, records, sc.sla, profile=PROFILES["loadgen"], expect_full_output=True
    )
    assert default.ttft_ms.mean is not None and step.ttft_ms.mean is not None
    assert default.ttft_ms.mean <= step.ttft_ms.mean
    assert default.itl_ms == step.itl_ms
    assert default.tokens == step.tokens


def test_h1_keeps_one_connection_across_requests(vllm_server: VllmServer) -> None:
    """uvicorn writes a stream's closing chunk on its own, after ``[DONE]``, where the
    Requester stops reading: the connection must still go back to the pool, not a
    new TCP connection per request."""

    async def main() -> tuple[list[Record], int]:
        transport = H1Transport(limit=1, connect_timeout_s=10)
        requester = Requester(
            transport,
            ADAPTERS["openai-completions"],
            base_url=vllm_server.url,
            model=vllm_server.model,
            extra_body={"ignore_eos": True},
            headers={},
            timeouts=RequestTimeouts.from_seconds(60, 30, 120),
            run_id="reuse",
        )
        records = []
        for i in range(5):
            records.append(await requester.send(RequestSpec(i, "hello there", 2, 8), 0))
            await asyncio.sleep(0.05)  # the closing chunk has long arrived
        await transport.aclose()
        return records, transport.connects

    records, connects = asyncio.run(main())
    assert [r.ok for r in records] == [True] * 5, [r.error_detail for r in records]
    assert connects == 1
