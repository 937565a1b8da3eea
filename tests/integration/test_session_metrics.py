"""Multi-turn sessions against the real mock: the step's sessions block agrees with records.jsonl.

The scenario is a file written here and read as a user's would be; the figures
are recomputed from the records the run wrote, by the definitions of
docs/metrics.md ("Sessions"), independently of loadgen.metrics.sessions.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from loadgen.records import Record, read_records
from loadgen.run import RunOptions, run_scenario
from loadgen.scenario import load_scenario

SCENARIO = """
name: session-metrics
target:
  url: mock
  api: openai-chat
  model: m
  mock: {args: ["--ttft-ms", "10", "--itl-ms", "8"]}
workload:
  seed: 3
  prompt_tokens: {dist: uniform, min: 20, max: 80}
  output_tokens: {dist: fixed, value: 4}
  sessions:
    turns: {dist: uniform, min: 2, max: 4}
    think_time_s: {dist: fixed, value: 0.03}
load: {mode: concurrency, concurrency: [3], requests_per_step: 8, warmup_requests: 2}
sla:
  ttft_ms: {p99: 2000}
  session_s: {p90: 20}
"""


def _p50(values: list[int]) -> float:
    return float(np.percentile(values, 50))


def test_the_sessions_block_is_what_the_records_say(tmp_path: Path) -> None:
    path = tmp_path / "sessions.yaml"
    path.write_text(SCENARIO)
    out = tmp_path / "out"
    summary = run_scenario(load_scenario(path), RunOptions(out_dir=out, quiet=True))
    records = list(read_records(out / "records.jsonl"))
    assert all(r.ok for r in records), [r.error_detail for r in records if not r.ok]
    step = summary.steps[0]
    s = step.sessions
    assert s is not None

    by_session: dict[int, list[Record]] = defaultdict(list)
    for r in records:
        assert r.session is not None and r.turn is not None
        by_session[r.session].append(r)
    measured = {k: v for k, v in by_session.items() if not any(r.warmup or r.ramp for r in v)}
    assert (s.measured, s.completed, s.failed) == (len(measured), len(measured), 0)
    assert s.left_out == len(by_session) - len(measured) == 2  # the warm-up sessions
    times = [max(r.end_ns for r in v) - min(r.start_ns for r in v) for v in measured.values()]
    assert s.time_ms.count == len(times)
    assert s.time_ms.p50 == pytest.approx(_p50(times) / 1e6)
    assert s.time_ms.max == pytest.approx(max(times) / 1e6)
    llm = [sum(r.end_ns - r.start_ns for r in v) for v in measured.values()]
    assert s.llm_ms.p50 == pytest.approx(_p50(llm) / 1e6)
    assert s.llm_share == pytest.approx(sum(llm) / sum(times))
    assert s.sub_agent_wait_share == 0.0
    # between turns: at least the 30 ms think time, so the rest is at least that
    gaps = sum(len(v) - 1 for v in measured.values())
    assert sum(times) - sum(llm) >= gaps * 30_000_000
    assert s.tools_other_share == pytest.approx(1 - sum(llm) / sum(times))
    calls = [len(v) for v in measured.values()]
    assert (s.calls_mean, s.calls_max) == (pytest.approx(np.mean(calls)), max(calls))
    ordered = [sorted(v, key=lambda r: r.start_ns) for v in measured.values()]
    assert s.first_prompt_tokens_p50 == _p50([v[0].prompt_tokens for v in ordered])
    assert s.last_prompt_tokens_p50 == _p50([v[-1].prompt_tokens for v in ordered])
    # a chat's context grows: each turn carries the earlier ones and their answers
    assert all(v[-1].prompt_tokens > v[0].prompt_tokens for v in ordered)
    assert s.sessions_per_s == pytest.approx(len(measured) / step.duration_s)
    assert s.good_sessions == len(measured)  # 20 s and 2 s bounds: every session within
    first_turns = [r for v in ordered for r in v if r.turn == 0]
    assert s.ttft_by_call["0"].count == len(first_turns)
    assert s.ttft_by_call["0"].p50 == pytest.approx(
        _p50([r.first_token_ns - r.sent_ns for r in first_turns]) / 1e6  # type: ignore[operator]
    )
    assert list(s.ttft_by_depth) == ["0"]
    assert s.ttft_by_depth["0"].count == sum(calls)

    (check,) = [c for c in step.sla.checks if c.metric == "session_s"]
    assert check.value == pytest.approx(s.time_ms.p90 / 1000)  # type: ignore[operator]
    assert check.verdict in ("met", "inconclusive")  # 8 sessions may not decide a p90

    row = next(csv.DictReader((out / "steps.csv").open()))
    assert int(row["sessions_completed"]) == s.completed
    assert float(row["session_time_ms_p90"]) == pytest.approx(s.time_ms.p90)
    assert (out / "plots" / "ttft_vs_context.png").stat().st_size > 10_000
    report = (out / "report.md").read_text()
    assert f"sessions: {s.completed} completed, 0 failed" in report
    assert "ttft_vs_context.png" in report
