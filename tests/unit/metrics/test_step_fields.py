"""Step metrics for ramp-up, reasoning, sessions, prompt lengths and short outputs,
on hand-built records; and files from an older loadgen still load."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from loadgen.metrics import summarize_step
from loadgen.metrics.profiles import PROFILES
from loadgen.metrics.step import step_cost
from loadgen.records import Record, read_records
from loadgen.scenario import SlaSpec
from loadgen.summary import Cost, LoadPoint, Mean, MeanMax, StepSummary, Summary, Throughput

MS = 1_000_000
LP = LoadPoint(mode="concurrency", concurrency=1)


def rec(i: int, sent_ms: float, first_ms: float, **kw: Any) -> Record:
    """An ok request sent at sent_ms, tokens at first_ms and first_ms + 10, ended 1 ms later."""
    sent, first = round(sent_ms * MS), round(first_ms * MS)
    tokens = [first, first + 10 * MS]
    fields: dict[str, Any] = dict(
        step=0, id=i, warmup=False, request_id=f"r{i}", prompt_tokens_requested=100,
        max_tokens=2, start_ns=sent, sent_ns=sent, first_token_ns=first, first_answer_ns=first,
        last_token_ns=tokens[-1], end_ns=tokens[-1] + MS, token_ns=tokens, output_events=2,
        ok=True,
    )  # fmt: skip
    fields.update(kw)
    return Record(**fields)


def reasoning_rec(i: int, sent_ms: float, answer_ms: float, **kw: Any) -> Record:
    """Reasoning from 10 ms after the send, the answer at answer_ms: 2 reasoning events."""
    first = round((sent_ms + 10) * MS)
    split = {"first_reasoning_ns": first, "first_answer_ns": round(answer_ms * MS)}
    return rec(i, sent_ms, sent_ms + 10, **{**split, "reasoning_events": 2, **kw})


def summarize(records: list[Record], sla: dict[str, Any] | None = None, **kw: Any) -> StepSummary:
    return summarize_step(0, LP, records, SlaSpec.model_validate(sla or {}), **kw)


def test_ramp_records_are_counted_and_left_out_of_every_metric() -> None:
    ramp = [rec(i, i * 10, i * 10 + 500, ramp=True) for i in range(2)]  # TTFT 500 ms
    measured = [rec(2 + i, 100 + i * 10, 120 + i * 10) for i in range(3)]  # TTFT 20 ms
    warm = [rec(9, 0, 1, warmup=True)]
    s = summarize(ramp + measured + warm)
    assert (s.requests.total, s.requests.ok, s.requests.ramp, s.requests.warmup) == (3, 3, 2, 1)
    assert s.ttft_ms.count == 3 and s.ttft_ms.max == pytest.approx(20.0)
    assert s.started_ns == 100 * MS  # the window opens with the first measured send
    assert s.tokens.output_total == 6


def test_ttft_of_answer_measures_to_the_first_answer_token() -> None:
    # reasoning starts 10 ms after the send; the answer comes 40 and 60 ms after it
    records = [reasoning_rec(0, 0, 40), reasoning_rec(1, 100, 160)]
    sla = {"ttft_ms": {"p99": 30.0}}
    any_ = summarize(records, sla)
    answer = summarize(records, sla, ttft_of="answer")
    assert (any_.ttft_of, answer.ttft_of) == ("any", "answer")
    assert any_.ttft_ms.mean == pytest.approx(10.0)
    assert answer.ttft_ms.mean == pytest.approx(50.0)
    assert any_.sla.passed and any_.sla.good_requests == 2
    assert not answer.sla.passed and answer.sla.good_requests == 0
    for s in (any_, answer):  # the split is reported whatever ttft_of says
        assert s.ttft_reasoning_ms is not None and s.ttft_reasoning_ms.mean == pytest.approx(10.0)
        assert s.ttft_answer_ms is not None and s.ttft_answer_ms.mean == pytest.approx(50.0)


def test_ttft_of_answer_follows_the_profile_origin_and_the_schedule() -> None:
    r = reasoning_rec(0, 5, 45, start_ns=0, scheduled_ns=0)  # started at 0, on the socket at 5
    vllm = summarize([r], ttft_of="answer", profile=PROFILES["vllm"])
    assert vllm.ttft_ms.mean == pytest.approx(45.0)  # from the start
    rate = summarize_step(0, LoadPoint(mode="rate", rate=1.0), [r], SlaSpec(), ttft_of="answer")
    assert rate.latency_from == "scheduled"
    assert rate.ttft_ms.mean == pytest.approx(45.0)  # from the intended send (the default)
    assert rate.ttft_from_scheduled_ms is not None
    assert rate.ttft_from_scheduled_ms.mean == pytest.approx(45.0)
    assert rate.ttft_from_sent_ms is not None
    assert rate.ttft_from_sent_ms.mean == pytest.approx(40.0)  # from the send
    sent = SlaSpec(latency_from="sent")
    rate = summarize_step(0, LoadPoint(mode="rate", rate=1.0), [r], sent, ttft_of="answer")
    assert rate.latency_from == "sent" and rate.ttft_ms.mean == pytest.approx(40.0)


def test_a_request_with_no_answer_token_fails_an_answer_ttft_bound() -> None:
    r = reasoning_rec(0, 0, 0, first_answer_ns=None)  # all its tokens were reasoning
    s = summarize([r], {"ttft_ms": {"p99": 1000.0}}, ttft_of="answer")
    assert s.ttft_ms.count == 0 and s.sla.good_requests == 0
    assert s.ttft_answer_ms is not None and s.ttft_answer_ms.count == 0


def test_no_reasoning_no_split_and_reasoning_totals() -> None:
    plain = summarize([rec(0, 0, 10)])
    assert plain.ttft_reasoning_ms is None and plain.ttft_answer_ms is None
    assert plain.tokens.reasoning_total == 0
    both = [reasoning_rec(0, 0, 40), reasoning_rec(1, 100, 160, reasoning_tokens_server=7)]
    assert summarize(both).tokens.reasoning_total == 2 + 7  # events, else the server's count


def test_unknown_ttft_of_is_refused() -> None:
    with pytest.raises(ValueError, match="ttft_of"):
        summarize([rec(0, 0, 10)], ttft_of="last")


def test_prompt_length_check() -> None:
    # requested 100 each; the server counted 100, 101, 103, 95, and one sent no count
    servers = [100, 101, 103, 95, None]
    records = [rec(i, i * 10, i * 10 + 5, prompt_tokens_server=n) for i, n in enumerate(servers)]
    records.append(rec(9, 90, 95, ok=False, prompt_tokens_server=500))  # failed: not compared
    s = summarize(records)
    c = s.prompt_lengths
    assert c.compared == 4
    assert c.mean_rel_diff == pytest.approx((0 + 0.01 + 0.03 - 0.05) / 4)
    assert c.worst_rel_diff == pytest.approx(-0.05)
    assert (c.tolerance, c.beyond_tolerance) == (0.02, 2)
    assert summarize(records, prompt_tolerance=0).prompt_lengths.beyond_tolerance == 3
    assert summarize(records, prompt_tolerance=0.04).prompt_lengths.beyond_tolerance == 1
    assert s.tokens.prompt_requested_total == 5 * 100
    assert s.tokens.input_total == 100 + 101 + 103 + 95 + 100  # server count, else requested


def test_prompt_length_check_without_server_counts() -> None:
    c = summarize([rec(0, 0, 5)]).prompt_lengths
    assert (c.compared, c.mean_rel_diff, c.worst_rel_diff, c.beyond_tolerance) == (0, None, None, 0)


def test_short_outputs_are_counted_always_and_flagged_when_full_outputs_were_forced() -> None:
    full = rec(0, 0, 5)  # 2 token events of max_tokens 2
    short = rec(1, 10, 15, output_tokens_server=1)
    s = summarize([full, short])
    assert s.tokens.short_outputs == 1 and not s.tokens.full_output_expected
    assert s.warnings == []
    s = summarize([full, short], expect_full_output=True)
    assert s.tokens.full_output_expected
    assert len(s.warnings) == 1 and s.warnings[0].startswith("1 of 2 requests ended before")
    assert summarize([full], expect_full_output=True).warnings == []


def test_ttft_by_turn() -> None:
    records = [
        rec(0, 0, 10, session=0, turn=0),
        rec(1, 100, 130, session=0, turn=1),
        rec(2, 200, 220, session=1, turn=0),
        rec(3, 300, 300, session=1, turn=1, first_token_ns=None, first_answer_ns=None),
    ]
    s = summarize(records)
    assert s.ttft_by_turn is not None and list(s.ttft_by_turn) == ["0", "1"]
    assert s.ttft_by_turn["0"].count == 2 and s.ttft_by_turn["0"].mean == pytest.approx(15.0)
    assert s.ttft_by_turn["1"].count == 1 and s.ttft_by_turn["1"].mean == pytest.approx(30.0)
    assert summarize([rec(0, 0, 10)]).ttft_by_turn is None


def test_records_of_an_older_loadgen_still_load(tmp_path: Path) -> None:
    old = {  # a row as loadgen wrote it before sessions and reasoning
        "step": 0, "id": 3, "warmup": False, "request_id": "x-0-3",
        "prompt_tokens_requested": 16, "max_tokens": 4, "scheduled_ns": None,
        "start_ns": 10, "sent_ns": 11, "headers_ns": 12, "first_token_ns": 20,
        "last_token_ns": 40, "end_ns": 41, "token_ns": [20, 30, 40], "output_events": 3,
        "output_tokens_server": 3, "prompt_tokens_server": 16, "output_chars": 9,
        "finish_reason": "length", "ok": True, "error_kind": None, "error_detail": None,
        "http_status": 200,
    }  # fmt: skip
    path = tmp_path / "records.jsonl"
    path.write_bytes(orjson.dumps(old) + b"\n" + orjson.dumps({**old, "id": 4, "new_key": 1}))
    rows = list(read_records(path))
    assert [r.id for r in rows] == [3, 4]
    r = rows[0]
    assert (r.ramp, r.session, r.turn, r.reasoning_events, r.answer_text) == (
        False, None, None, 0, None,
    )  # fmt: skip
    assert r.first_answer_ns is None and r.first_reasoning_ns is None
    s = summarize(rows)
    assert s.ttft_ms.count == 2 and s.ttft_reasoning_ms is None


#: a step's telemetry as step_stats wrote it when it was a plain dict
OLD_TELEMETRY = {
    "window": {"start_ns": 1, "end_ns": 2, "duration_s": 1e-9},
    "output_tokens": 9,
    "gpus": [{"agent": "http://a:9347", "gpu": 0, "name": "H100", "samples": 4,
              "util_pct": {"mean": 91.2, "max": 100}, "mem_used_bytes": {"peak": 75000000000},
              "power_w": {"mean": 612.0, "max": 690.0}, "energy_j": 2448.0,
              "energy_source": "counter", "energy_coverage": 1.0,
              "j_per_output_token": 2.448, "output_tokens_per_j": 0.408}],
    "total": {"gpus": 1, "util_pct": {"mean": 91.2, "max": 100},
              "mem_used_bytes": {"peak": 75000000000}, "power_w": {"mean": 612.0},
              "energy_j": 2448.0, "energy_coverage": 1.0,
              "j_per_output_token": 2.448, "output_tokens_per_j": 0.408},
    "hosts": [{"agent": "http://a:9347", "samples": 4, "cpu_util_pct": None,
               "mem_used_bytes": {"peak": 1}}],
    "server": {"source": "http://s/metrics", "engine": None, "scrapes": 4,
               "running": {"mean": 15.5, "max": 16}, "waiting": None, "kv_usage": None,
               "preemptions": 0, "prompt_tokens": None, "generation_tokens": 16000.0},
    "gaps": [{"source": "http://b:9347", "kind": "agent", "failures": 0,
              "error": "no samples in the window"},
             {"source": "http://s/metrics", "kind": "server_metrics", "failures": 2,
              "first_ns": 1, "last_ns": 2, "error": "ConnectError: x"}],
}  # fmt: skip


def test_a_summary_of_an_older_loadgen_still_loads() -> None:
    old_step = {
        "index": 0, "role": "step", "load": {"mode": "concurrency", "concurrency": 4},
        "started_ns": 1, "ended_ns": 2, "duration_s": 1.0,
        "requests": {"total": 3, "ok": 3, "failed": 0, "warmup": 0, "cancelled": 0,
                     "errors": {}, "error_rate": 0.0},
        "ttft_ms": {"count": 3, "mean": 10.0}, "ttft_from_scheduled_ms": None,
        "itl_ms": {"count": 0}, "icl_ms": None, "tpot_ms": {"count": 0}, "e2e_ms": {"count": 0},
        "throughput": {"requests_per_s": 3.0, "output_tokens_per_s": 9.0,
                       "input_tokens_per_s": 48.0, "goodput_requests_per_s": 3.0},
        "tokens": {"output_total": 9, "input_total": 48, "output_events_total": 9,
                   "count_mismatches": 0, "server_counts": 3},
        "sla": {"passed": True, "checks": [], "good_requests": 3},
        "client": {"cpu_util": 0.1, "saturated": False, "warnings": []},
        "little": None, "interrupted": False, "telemetry": OLD_TELEMETRY,
        "cost": {"usd_per_hour": 3.6},  # no throughput: the per-unit keys were left out
    }  # fmt: skip
    old = {
        "loadgen_version": "0.1.0", "name": "n", "run_id": "r", "target_url": "http://x",
        "api": "openai-chat", "model": "m", "clock_anchor": {"monotonic_ns": 0, "wall_ns": 0},
        "metrics_profile": "loadgen", "steps": [old_step], "verdict": None,
        "interrupted": False, "sla": {},
        "target_check": {"healthy": True, "models": ["m"], "warnings": []},
    }  # fmt: skip
    s = Summary.model_validate_json(orjson.dumps(old))
    assert s.prompt_length_source == "approximate" and s.workload is None
    assert s.clock_anchor.monotonic_ns == 0 and s.clock_anchor.wall_ns == 0
    assert s.target_check is not None and s.target_check.models == ["m"]
    assert s.target_check.healthy and s.target_check.http_versions is None
    step = s.steps[0]
    assert step.ttft_of == "any" and step.requests.ramp == 0
    assert step.prefix_cache is None and step.ttft_by_turn is None
    assert step.prompt_lengths.compared == 0 and step.tokens.short_outputs == 0
    assert step.warnings == []
    assert step.cost == Cost(usd_per_hour=3.6)
    t = step.telemetry
    assert t is not None and t.total is not None and t.server is not None
    assert t.gpus[0].util_pct == MeanMax(mean=91.2, max=100.0)
    assert t.total.power_w == Mean(mean=612.0) and t.server.preemptions == 0
    assert t.gaps[0].first_ns is None and t.gaps[1].first_ns == 1
    # and what this version writes reads back the same
    assert Summary.model_validate_json(s.model_dump_json()) == s


def test_step_cost_is_typed_and_leaves_out_what_has_no_throughput() -> None:
    step = StepSummary(index=0, load=LP)
    step.throughput = Throughput(requests_per_s=2.0, output_tokens_per_s=100.0)
    cost = step_cost(step, 3.6)  # 0.001 USD a second
    assert cost.usd_per_million_output_tokens == pytest.approx(10.0)
    assert cost.usd_per_1000_requests == pytest.approx(0.5)
    idle = step_cost(StepSummary(index=1, load=LP), 3.6)
    assert idle == Cost(usd_per_hour=3.6)
    assert Cost.model_validate_json(cost.model_dump_json()) == cost
