"""Hand-built results: records with known timings, summarised by the real metrics code."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from loadgen.metrics.sla import check_sla
from loadgen.metrics.step import summarize_step
from loadgen.records import Record
from loadgen.report.files import write_summary
from loadgen.scenario.models import SlaSpec
from loadgen.summary import LoadPoint, StepSummary, Summary, Verdict

MS = 1_000_000
T0 = 1_000 * MS  # monotonic ns of the run's start
SLA = {"ttft_ms": {"p99": 50.0}, "tpot_ms": {"p99": 10.0}, "max_error_rate": 0.1}
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
    """Steps c=1, 4, 16 (TTFT 10, 20, 60 ms: the last misses the SLA) and c=32 all failed."""
    sla = SlaSpec.model_validate(SLA)
    records: list[Record] = []
    steps: list[StepSummary] = []
    for i, (c, ttft) in enumerate(zip(CONCURRENCY, (10.0, 20.0, 60.0), strict=True)):
        recs = make_records(i, 20, ttft, 2.0 + i, T0 + i * 5_000 * MS)
        step = summarize_step(i, LoadPoint(mode="concurrency", concurrency=c), recs, sla)
        step.sla = check_sla(step, sla)
        step.cost = {"usd_per_hour": 2.0, "usd_per_million_output_tokens": 10.0 / (i + 1)}
        records += recs
        steps.append(step)
    recs = failed_records(3, 5, T0 + 15_000 * MS)
    dead = summarize_step(3, LoadPoint(mode="concurrency", concurrency=32), recs, sla)
    dead.sla = check_sla(dead, sla)
    records += recs
    steps.append(dead)
    steps[0].telemetry = {
        "total": {"gpus": 1, "util_pct": {"mean": 40.0, "max": 55.0},
                  "mem_used_bytes": {"peak": 8 * 2**30}, "power_w": {"mean": 150.0},
                  "energy_j": 300.0, "j_per_output_token": 3.0},
        "server": {"running": {"mean": 1.0, "max": 1.0}, "waiting": {"mean": 0.5, "max": 2.0},
                   "kv_usage": {"mean": 0.25, "max": 0.5}, "preemptions": 0},
    }  # fmt: skip
    steps[1].telemetry = {"total": {"gpus": 1, "util_pct": {"mean": 80.0, "max": 99.0}}}
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


def write_run(out: Path, summary: Summary, records: list[Record], telemetry: bool = True) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    write_summary(summary, out / "summary.json")
    (out / "records.jsonl").write_bytes(
        b"".join(orjson.dumps(r, option=orjson.OPT_APPEND_NEWLINE) for r in records)
    )
    (out / "scenario.yaml").write_text(
        "name: unit\nload: {mode: concurrency, requests_per_step: 20, warmup_requests: 0}\n"
        "workload: {prompt_tokens: {dist: fixed, value: 16}}\n"
    )
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
