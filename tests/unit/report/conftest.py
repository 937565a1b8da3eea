"""Hand-built results: records with known timings, summarised by the real metrics code.

``build_run``: a plain sweep (concurrency 1, 4, 16, 32), none of the per-run
workload fields or the per-step figures of sessions, reasoning, ramp-up,
prefix caching or traces. ``build_rich_run``: a sessions step and a trace
step that carry every one of them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from loadgen.metrics.sla import check_sla
from loadgen.metrics.step import summarize_step
from loadgen.records import Record
from loadgen.results.files import write_resolved_scenario, write_summary
from loadgen.scenario import Scenario, SlaSpec
from loadgen.summary import (
    Cost,
    Distribution,
    GpuTotal,
    LoadPoint,
    MeanMax,
    PrefixCacheStats,
    RequestCounts,
    StepSummary,
    StepTelemetry,
    Summary,
    TelemetryWindow,
    Throughput,
    Verdict,
)

MS = 1_000_000
T0 = 1_000 * MS  # monotonic ns of the run's start
#: p50 bounds, which 20 requests a step can decide at 95% (a p99 would need about 368)
SLA = {"ttft_ms": {"p50": 50.0}, "tpot_ms": {"p50": 10.0}, "max_error_rate": 0.1}
CONCURRENCY = (1, 4, 16)
WALL = 1_700_000_000 * 10**9


def make_records(step: int, n: int, ttft_ms: float, itl_ms: float, start_ns: int) -> list[Record]:
    """n ok requests, one after another 100 ms apart: TTFT ttft_ms + j, 5 tokens itl_ms apart."""
    out = []
    for j in range(n):
        sent = start_ns + j * 100 * MS
        first = sent + round((ttft_ms + j) * MS)
        tokens = [first + round(k * itl_ms * MS) for k in range(5)]
        out.append(
            Record(
                step=step, id=j, warmup=False, request_id=f"{step}-{j}",
                prompt_tokens_requested=16, max_tokens=5, sent_ns=sent, headers_ns=sent,
                first_token_ns=first, last_token_ns=tokens[-1], end_ns=tokens[-1] + MS,
                token_ns=tokens, output_events=5, output_tokens_server=5, ok=True,
                finish_reason="length",
            )
        )  # fmt: skip
    return out


def failed_records(step: int, n: int, start_ns: int) -> list[Record]:
    return [
        Record(
            step=step, id=j, warmup=False, request_id=f"{step}-{j}", prompt_tokens_requested=16,
            max_tokens=5, sent_ns=start_ns + j * MS, end_ns=start_ns + (j + 2) * MS,
            error_kind="http_503", http_status=503,
        )
        for j in range(n)
    ]  # fmt: skip


def build_run() -> tuple[Summary, list[Record]]:
    """Steps c=1, 4 (TTFT 10, 20 ms: met), c=16 (TTFT 60 ms: missed; its client marked
    saturated after it was judged, for the warnings) and c=32 all failed (missed)."""
    sla = SlaSpec.model_validate(SLA)
    records: list[Record] = []
    steps: list[StepSummary] = []
    for i, (c, ttft) in enumerate(zip(CONCURRENCY, (10.0, 20.0, 60.0), strict=True)):
        recs = make_records(i, 20, ttft, 2.0 + i, T0 + i * 5_000 * MS)
        step = summarize_step(i, LoadPoint(mode="concurrency", concurrency=c), recs, sla)
        step.sla = check_sla(step, sla)
        step.cost = Cost(usd_per_hour=2.0, usd_per_million_output_tokens=10.0 / (i + 1))
        records += recs
        steps.append(step)
    recs = failed_records(3, 5, T0 + 15_000 * MS)
    dead = summarize_step(3, LoadPoint(mode="concurrency", concurrency=32), recs, sla)
    dead.sla = check_sla(dead, sla)
    records += recs
    steps.append(dead)
    steps[0].telemetry = StepTelemetry.model_validate({
        "window": {"start_ns": T0, "end_ns": T0 + 5_000 * MS, "duration_s": 5.0},
        "output_tokens": 100,
        "total": {"gpus": 1, "util_pct": {"mean": 40.0, "max": 55.0},
                  "mem_used_bytes": {"peak": 8 * 2**30}, "power_w": {"mean": 150.0},
                  "energy_j": 300.0, "energy_coverage": 1.0, "j_per_output_token": 3.0},
        "server": {"source": "http://h/metrics", "scrapes": 5,
                   "running": {"mean": 1.0, "max": 1.0}, "waiting": {"mean": 0.5, "max": 2.0},
                   "kv_usage": {"mean": 0.25, "max": 0.5}, "preemptions": 0},
    })  # fmt: skip
    steps[1].telemetry = StepTelemetry(
        window=TelemetryWindow(start_ns=T0, end_ns=T0 + 5_000 * MS, duration_s=5.0),
        output_tokens=100,
        total=GpuTotal(gpus=1, util_pct=MeanMax(mean=80.0, max=99.0), energy_coverage=0.0),
    )
    steps[2].client.saturated = True
    steps[2].client.warnings = ["loadgen CPU 97% of a core"]
    summary = Summary(
        loadgen_version="0.1.0", name="unit", run_id="r1", target_url="mock",
        api="openai-chat", model="m", clock_anchor={"monotonic_ns": T0, "wall_ns": WALL},
        steps=steps, sla=SLA,
        verdict=Verdict(mode="concurrency", max_passing=4, goodput_requests_per_s=9.5,
                        text="max concurrency meeting the SLA: 4; goodput there: 9.5 req/s"),
    )  # fmt: skip
    return summary, records


#: the scenario write_run saves as the run's resolved scenario.yaml
SCENARIO = Scenario.model_validate(
    {
        "name": "unit",
        "target": {"url": "mock"},
        "load": {"mode": "concurrency", "concurrency": [1, 4, 16, 32], "requests_per_step": 20,
                 "warmup_requests": 0},
        "workload": {"prompt_tokens": {"dist": "fixed", "value": 16}},
    }
)  # fmt: skip


def write_run(out: Path, summary: Summary, records: list[Record], telemetry: bool = True) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    write_summary(summary, out / "summary.json")
    (out / "records.jsonl").write_bytes(
        b"".join(orjson.dumps(r, option=orjson.OPT_APPEND_NEWLINE) for r in records)
    )
    write_resolved_scenario(SCENARIO, out / "scenario.yaml")
    if telemetry:
        rows = [
            {"type": "meta", "format": 1},
            *({"type": "server", "source": "s", "t_ns": T0 + k * 1_000 * MS, "running": k % 3,
               "waiting": k % 2, "kv_usage": 0.1 * (k % 5)} for k in range(16)),
            *({"type": "gpu", "source": "a", "gpu": 0, "t_ns": T0 + k * 1_000 * MS,
               "util_gpu_pct": 10.0 * k} for k in range(10)),
        ]  # fmt: skip
        (out / "telemetry.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return out


#: The rich run's workload, shaped as loadgen.workload.describe.describe_workload writes it.
WORKLOAD = {
    "prompt_length_source": "approximate",
    "prompt_tokens": "fixed 100",
    "output_tokens": "fixed 5",
    "prefix": {"groups": 4, "tokens": 64, "share": None},
    "sessions": {"turns": "fixed 3", "think_time_s": "exponential mean 2 s"},
}
RICH_N = 20  # measured requests of the sessions step


def rich_records(step: int, n: int, start_ns: int, *, sessions: bool) -> list[Record]:
    """n ok requests 100 ms apart, each a reasoning token 5 + 10 x (j % 3) + j // 3 ms after
    the send, then its first answer token at 40 + j ms and 3 more 2 ms apart; the server
    counts a prompt of
    100 + j % 5 tokens for 100 asked (mean +2%, worst +4%, 2 in 5 beyond 2%); every
    fourth request ends after 3 of its 5 tokens; with ``sessions``, turn j % 3 of
    session j // 3. Then two ramp-up requests, which no metric counts."""
    out = []
    for j in range(n + 2):
        sent = start_ns + j * 100 * MS
        answer = sent + (40 + j) * MS
        tokens = [sent + (5 + 10 * (j % 3) + j // 3) * MS, *(answer + k * 2 * MS for k in range(4))]
        out.append(
            Record(
                step=step, id=j, warmup=False, request_id=f"{step}-{j}", ramp=j >= n,
                session=j // 3 if sessions else None, turn=j % 3 if sessions else None,
                prompt_tokens_requested=100, prompt_tokens_server=100 + j % 5, max_tokens=5,
                sent_ns=sent, headers_ns=sent, first_token_ns=tokens[0],
                first_reasoning_ns=tokens[0], first_answer_ns=answer, last_token_ns=tokens[-1],
                end_ns=tokens[-1] + MS, token_ns=tokens, output_events=5, reasoning_events=1,
                output_tokens_server=3 if j % 4 == 0 else 5, ok=True, finish_reason="length",
            )
        )  # fmt: skip
    return out


def build_rich_run() -> tuple[Summary, list[Record]]:
    """Step 0: concurrency 4 with sessions, reasoning, ramp-up, a prefix cache at 62.5%
    and forced full outputs that came back short; step 1: a trace replayed at x0.5."""
    sla = SlaSpec.model_validate(SLA)
    rec0 = rich_records(0, RICH_N, T0, sessions=True)
    rec1 = rich_records(1, 10, T0 + 5_000 * MS, sessions=False)
    s0 = summarize_step(
        0, LoadPoint(mode="concurrency", concurrency=4), rec0, sla, expect_full_output=True
    )
    s0.prefix_cache = PrefixCacheStats(
        queries_tokens=8000.0, hits_tokens=5000.0, hit_rate=0.625,
        source="vllm:prefix_cache_queries_total",
    )  # fmt: skip
    s1 = summarize_step(1, LoadPoint(mode="trace", time_scale=0.5), rec1, sla)
    s1.warnings.append("12 trace rows beyond the window were not replayed")
    summary = Summary(
        loadgen_version="0.1.0", name="rich", run_id="r2", target_url="mock",
        api="openai-chat", model="m", clock_anchor={"monotonic_ns": T0, "wall_ns": WALL},
        steps=[s0, s1], sla=SLA, prompt_length_source="approximate", workload=dict(WORKLOAD),
    )  # fmt: skip
    return summary, rec0 + rec1


def bare_step(index: int, mode: str, value: float, ttft: float, role: str = "step") -> StepSummary:
    """A step with only what plots and compare read: load, counts, latency, throughput."""
    load = (
        LoadPoint(mode=mode, concurrency=int(value))
        if mode == "concurrency"
        else LoadPoint(mode=mode, rate=value, arrival="poisson")
    )
    rps = value if mode == "rate" else min(value, 20.0)
    return StepSummary(
        index=index,
        role=role,
        load=load,
        requests=RequestCounts(total=10, ok=10),
        ttft_ms=Distribution(count=10, p50=ttft / 2, p99=ttft),
        tpot_ms=Distribution(count=10, p50=5.0, p99=6.0),
        itl_ms=Distribution(count=10, p50=5.0, p99=6.0),
        throughput=Throughput(
            requests_per_s=rps, output_tokens_per_s=10 * rps, goodput_requests_per_s=rps
        ),
    )


def bare_summary(steps: list[StepSummary], verdict: Verdict | None = None, **kw: object) -> Summary:
    return Summary(
        loadgen_version="0.1.0", name="order", run_id="r", target_url="mock", api="openai-chat",
        model="m", clock_anchor={"monotonic_ns": T0, "wall_ns": 0}, steps=steps,
        sla={"ttft_ms": {"p99": 100.0}}, verdict=verdict, **kw,  # type: ignore[arg-type]
    )  # fmt: skip


@pytest.fixture
def rich_data() -> tuple[Summary, list[Record]]:
    return build_rich_run()


@pytest.fixture
def run_data() -> tuple[Summary, list[Record]]:
    return build_run()


@pytest.fixture
def results_dir(tmp_path: Path) -> Path:
    summary, records = build_run()
    return write_run(tmp_path / "run", summary, records)


@pytest.fixture
def make_run(tmp_path: Path) -> Callable[..., Path]:
    def make(name: str, summary: Summary, records: list[Record], telemetry: bool = False) -> Path:
        return write_run(tmp_path / name, summary, records, telemetry)

    return make
