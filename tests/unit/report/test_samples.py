"""The per-request samples behind CDFs and the bootstrap count what the metrics count."""

from __future__ import annotations

import pytest

from loadgen.records import Record
from loadgen.report.samples import read_samples, samples_from_records
from loadgen.summary import Summary

from .conftest import RICH_N, write_run


def test_ramp_up_requests_are_left_out(rich_data: tuple[Summary, list[Record]]) -> None:
    summary, records = rich_data
    samples = samples_from_records(records)
    step = summary.steps[0]
    ttft = samples.step(0).ttft_ms
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
    assert sorted(samples.step(0).ttft_ms) == pytest.approx([40.0 + j for j in range(RICH_N)])
    assert max(samples.step(0).ttft_ms) == step.ttft_answer_ms.max  # type: ignore[union-attr]
    assert max(samples.step(1).ttft_ms) == summary.steps[1].ttft_ms.max  # step 1: any token
    out = write_run(Path(str(tmp_path)) / "r", summary, records, telemetry=False)
    from_file = read_samples(out / "records.jsonl", [0])
    assert from_file is not None and from_file.step(0).ttft_ms == samples.step(0).ttft_ms
