"""The per-request samples behind CDFs and the bootstrap count what the metrics count."""

from __future__ import annotations

import pytest

from loadgen.records import Record
from loadgen.results.samples import read_samples, samples_from_records
from loadgen.summary import Summary

from .conftest import RICH_N, write_run


def test_ramp_up_requests_are_left_out(rich_data: tuple[Summary, list[Record]]) -> None:
    summary, records = rich_data
    samples = samples_from_records(records)
    step = summary.steps[0]
    ttft = list(samples.step(0).values("ttft_ms"))
    assert len(ttft) == RICH_N == step.ttft_ms.count  # 2 ramp-up records not among them
    assert sorted(ttft) == pytest.approx(
        sorted((r.first_token_ns - r.sent_ns) / 1e6 for r in records[:RICH_N])  # type: ignore[operator]
    )
    assert max(ttft) == step.ttft_ms.max
    assert len(samples.sent_ns) == len(records)  # the timeline still sees them


def test_answer_steps_measure_ttft_to_the_answer(
    tmp_path: object, rich_data: tuple[Summary, list[Record]]
) -> None:
    from pathlib import Path

    summary, records = rich_data
    step = summary.steps[0]
    samples = samples_from_records(records, answer_steps=[0])
    assert sorted(samples.step(0).values("ttft_ms")) == pytest.approx(
        [40.0 + j for j in range(RICH_N)]
    )
    assert max(samples.step(0).values("ttft_ms")) == step.ttft_answer_ms.max  # type: ignore[union-attr]
    assert (
        max(samples.step(1).values("ttft_ms")) == summary.steps[1].ttft_ms.max
    )  # step 1: any token
    out = write_run(Path(str(tmp_path)) / "r", summary, records, telemetry=False)
    from_file = read_samples(out / "records.jsonl", [0])
    assert from_file is not None
    assert list(from_file.step(0).values("ttft_ms")) == list(samples.step(0).values("ttft_ms"))


@pytest.mark.parametrize("profile", ["loadgen", "vllm", "aiperf", "guidellm"])
@pytest.mark.parametrize("latency_from", ["scheduled", "sent"])
def test_samples_are_the_values_the_summary_was_made_of(
    tmp_path: object, profile: str, latency_from: str
) -> None:
    """Open loop, each request sent 30 + j ms after its intended time: the CDF's and the
    bootstrap's values are those behind ttft_ms and e2e_ms, under every profile."""
    import dataclasses
    from pathlib import Path

    from loadgen.metrics.profiles import PROFILES
    from loadgen.metrics.step import summarize_step
    from loadgen.results.samples import read_run_samples
    from loadgen.scenario import SlaSpec
    from loadgen.summary import LoadPoint

    from .conftest import MS, SLA, T0, bare_summary, make_records

    records = [
        dataclasses.replace(r, start_ns=r.sent_ns - 2 * MS, scheduled_ns=r.sent_ns - (30 + j) * MS)
        for j, r in enumerate(make_records(0, 20, 10.0, 2.0, T0))
    ]
    sla = SlaSpec.model_validate({**SLA, "latency_from": latency_from})
    load = LoadPoint(mode="rate", rate=10.0, arrival="poisson")
    step = summarize_step(0, load, records, sla, profile=PROFILES[profile])
    assert step.latency_from == latency_from
    out = write_run(Path(str(tmp_path)) / "r", bare_summary([step]), records, telemetry=False)
    summary = bare_summary([step])
    summary.metrics_profile = profile
    samples = read_run_samples(out, summary)
    assert samples is not None
    for metric in ("ttft_ms", "e2e_ms", "tpot_ms", "itl_ms"):
        values = samples.step(0).values(metric)
        assert len(values) == getattr(step, metric).count, metric
        assert max(values) == pytest.approx(getattr(step, metric).max), metric
