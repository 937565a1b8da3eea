"""Production-shaped traffic end to end against the built-in mock (real sockets, 127.0.0.1).

Multi-turn sessions, datasets, trace replay in every format, ramp-up and the
/tokenize calibration. The mock counts one prompt token per word of every
message, so what it reports can be predicted exactly from what was sent.
"""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from loadgen.records import Record
from loadgen.scenario import Scenario
from loadgen.summary import Summary

RunFixture = Callable[[Scenario], tuple[Summary, list[Record], Path]]
Make = Callable[..., Scenario]
REPO = Path(__file__).resolve().parents[2]
FAST = ["--ttft-ms", "5", "--itl-ms", "1"]


def test_sessions_carry_earlier_turns_and_real_answers(run: RunFixture, scenario: Make) -> None:
    sc = scenario(
        target={"extra_body": {"ignore_eos": True}, "mock": {"args": FAST}},
        workload={
            "prompt_tokens": {"dist": "fixed", "value": 10},
            "output_tokens": {"dist": "fixed", "value": 6},
            "sessions": {"turns": {"dist": "fixed", "value": 3}},
        },
        load={"concurrency": [2], "requests_per_step": 4},
    )
    summary, records, _ = run(sc)
    assert all(r.ok for r in records), [r.error_detail for r in records if not r.ok]
    by_session: dict[int, list[Record]] = defaultdict(list)
    for r in records:
        assert r.session is not None and r.turn is not None
        by_session[r.session].append(r)
    assert len(by_session) == 4  # requests_per_step counts sessions
    for turns in by_session.values():
        turns.sort(key=lambda r: r.turn or 0)
        assert [r.turn for r in turns] == [0, 1, 2]
        # the mock counts words: each turn adds 10 new words and the words of the answer
        # before it (the mock's answers have some empty-text tokens, as vLLM's do)
        answers = [len((r.answer_text or "").split()) for r in turns]
        server = [r.prompt_tokens_server for r in turns]
        assert server == [10, 20 + answers[0], 30 + answers[0] + answers[1]], (server, answers)
        assert [r.prompt_tokens_requested for r in turns] == server
        assert all(r.answer_text and r.output_tokens == 6 for r in turns)
        for a, b in itertools.pairwise(turns):
            assert b.start_ns >= a.end_ns  # a turn starts once the previous answer is in
    step = summary.steps[0]
    assert step.ttft_by_turn is not None and sorted(step.ttft_by_turn) == ["0", "1", "2"]
    assert step.prompt_lengths.compared == 12 and step.prompt_lengths.beyond_tolerance == 0


def test_open_loop_sessions_with_think_time(run: RunFixture, scenario: Make) -> None:
    sc = scenario(
        target={"mock": {"args": FAST}},
        workload={
            "output_tokens": {"dist": "fixed", "value": 4},
            "sessions": {
                "turns": {"dist": "uniform", "min": 1, "max": 3},
                "think_time_s": {"dist": "fixed", "value": 0.05},
            },
        },
        load={"mode": "rate", "rate": [20], "requests_per_step": 6},
    )
    _, records, _ = run(sc)
    by_session: dict[int, list[Record]] = defaultdict(list)
    for r in records:
        by_session[r.session or 0].append(r)
    assert len(by_session) == 6
    for turns in by_session.values():
        turns.sort(key=lambda r: r.turn or 0)
        for a, b in itertools.pairwise(turns):
            assert b.start_ns - a.end_ns >= 50_000_000  # the think time, from the answer's end
            assert b.scheduled_ns == a.end_ns + 50_000_000


def test_dataset_prompts_and_output_lengths(run: RunFixture, scenario: Make) -> None:
    data = REPO / "scenarios" / "data" / "mini-chat.jsonl"
    sc = scenario(
        target={"extra_body": {"ignore_eos": True}, "mock": {"args": FAST}},
        workload={"dataset": {"path": str(data), "output_tokens": "dataset", "limit": 20}},
        load={"concurrency": [4], "requests_per_step": 20},
    )
    summary, records, _ = run(sc)
    assert all(r.ok for r in records)
    assert summary.prompt_length_source == "dataset"
    # sampled without replacement: 20 distinct rows of the first 20 kept
    assert len({r.prompt_tokens_requested for r in records}) > 5
    for r in records:
        assert r.prompt_tokens_server == r.prompt_tokens_requested  # the mock counts words
        assert r.output_tokens == r.max_tokens
    assert summary.steps[0].prompt_lengths.beyond_tolerance == 0


def _trace_files(tmp: Path) -> dict[str, Path]:
    """One small trace per format: 40 requests, 25 ms apart (40 req/s), 8-20 token prompts."""
    n, gap_ms = 40, 25
    mooncake = tmp / "mooncake.jsonl"
    mooncake.write_text(
        "".join(
            json.dumps(
                {
                    "timestamp": i * gap_ms,
                    "input_length": 8 + i % 13,
                    "output_length": 3,
                    "hash_ids": [i % 2],
                }
            )
            + "\n"
            for i in range(n)
        )
    )
    azure = tmp / "azure.csv"
    azure.write_text(
        "TIMESTAMP,ContextTokens,GeneratedTokens\n"
        + "".join(
            f"2023-11-16 18:15:{46 + (i * gap_ms) // 1000:02d}.{(i * gap_ms) % 1000:03d}0000,"
            f"{8 + i % 13},3\n"
            for i in range(n)
        )
    )
    burst = tmp / "burstgpt.csv"
    burst.write_text(
        "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
        + "".join(
            f"{i * gap_ms / 1000:.3f},ChatGPT,{8 + i % 13},3,{11 + i % 13},Conversation log\n"
            for i in range(n)
        )
        + f"{n * gap_ms / 1000:.3f},ChatGPT,9,0,9,Conversation log\n"  # a failure: skipped
    )
    return {"mooncake": mooncake, "azure": azure, "burstgpt": burst}


def test_trace_replay_in_every_format(run: RunFixture, scenario: Make, tmp_path: Path) -> None:
    files = _trace_files(tmp_path)
    replayed: dict[str, list[Record]] = {}
    for fmt, path in files.items():
        sc = scenario(
            target={"extra_body": {"ignore_eos": True}, "mock": {"args": FAST}},
            load={"mode": "trace", "trace": str(path), "time_scale": [0.5]},
        )
        summary, records, out = run(sc)
        assert len(records) == 40, fmt
        assert all(r.ok for r in records), fmt
        first = min(r.scheduled_ns or 0 for r in records)
        offsets = sorted((r.scheduled_ns or 0) - first for r in records)
        assert offsets == [i * 12_500_000 for i in range(40)], fmt  # 25 ms x 0.5, exactly
        assert sorted(r.prompt_tokens_server or 0 for r in records) == sorted(
            8 + i % 13 for i in range(40)
        )
        assert all(r.output_tokens == 3 for r in records)
        assert summary.steps[0].load.mode == "trace" and summary.steps[0].load.time_scale == 0.5
        assert summary.steps[0].ttft_from_scheduled_ms is not None  # open loop: both TTFTs
        replayed[fmt] = records
        if fmt == "mooncake":
            files_out = out
    # loadgen's own records.jsonl replays the run it came from
    sc = scenario(
        target={"extra_body": {"ignore_eos": True}, "mock": {"args": FAST}},
        load={"mode": "trace", "trace": str(files_out / "records.jsonl")},
    )
    _, again, _ = run(sc)
    first = min(r.scheduled_ns or 0 for r in again)
    assert sorted((r.scheduled_ns or 0) - first for r in again) == [
        i * 12_500_000 for i in range(40)
    ]
    assert sorted(r.prompt_tokens_requested for r in again) == sorted(
        r.prompt_tokens_requested for r in replayed["mooncake"]
    )


def test_trace_replay_keeps_its_schedule_at_200_requests_per_second(
    run: RunFixture, scenario: Make, tmp_path: Path
) -> None:
    """Replay sends each request at its planned time: the step's send lag is measured, and
    small, and the achieved rate is the trace's.

    The figure loadgen holds itself to (p99 under 1 ms on a quiet machine) is
    measured by benchmarks/trace_send_lag.py: a machine busy with other
    work can deschedule the sender past 1 ms (#19). Here the bound is one that only a
    broken schedule misses (a sender that sleeps relative gaps drifts by the sum of
    its wake-up delays: tens of ms over 400 requests).
    """
    path = tmp_path / "steady.jsonl"
    rows = [{"timestamp": i * 5, "input_length": 16, "output_length": 8} for i in range(400)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    sc = scenario(
        target={"extra_body": {"ignore_eos": True}, "mock": {"args": FAST}},
        load={"mode": "trace", "trace": str(path)},
    )
    summary, records, _ = run(sc)
    step = summary.steps[0]
    assert len(records) == 400 and all(r.ok for r in records)
    assert 150 < step.throughput.requests_per_s < 250
    assert step.client.send_lag_p99_ms is not None
    assert step.client.send_lag_p99_ms < 25.0
    planned = sorted(r.scheduled_ns for r in records if r.scheduled_ns is not None)
    assert len(planned) == 400
    gaps = {b - a for a, b in itertools.pairwise(planned)}
    assert gaps == {5_000_000}  # the plan itself is exact: 5 ms apart, to the nanosecond


def test_ramp_up_requests_are_flagged_and_left_out(run: RunFixture, scenario: Make) -> None:
    closed = scenario(
        target={"mock": {"args": FAST}},
        workload={"output_tokens": {"dist": "fixed", "value": 4}},
        load={"concurrency": [4], "requests_per_step": 12, "ramp_up_s": 0.4},
    )
    summary, records, _ = run(closed)
    ramp = [r for r in records if r.ramp]
    measured = [r for r in records if not r.ramp]
    assert ramp and len(measured) == 12
    assert summary.steps[0].requests.ramp == len(ramp)
    assert summary.steps[0].requests.total == 12
    t0 = min(r.start_ns for r in records)
    assert all(r.start_ns - t0 < 420_000_000 for r in ramp)
    # t0 is the first send, after the ramp's own start: by under 1 ms on a quiet machine,
    # by several on a busy one (2 ms of slack failed under two busy loops): 20 ms, well
    # short of the ramp's 400 ms, in which an unflagged request could start
    first = min(r.start_ns for r in measured) - t0
    assert first >= 380_000_000, f"first measured request {first / 1e6:.1f} ms after t0"
    # user k of 4 starts at k/4 of the ramp: in [k, k + 1) x 100 ms at most k + 1 are in flight
    for k in range(4):
        lo, hi = t0 + k * 100_000_000 + 5_000_000, t0 + (k + 1) * 100_000_000 - 5_000_000
        assert _max_in_flight(records, lo, hi) == k + 1, k

    opened = scenario(
        target={"mock": {"args": FAST}},
        workload={"output_tokens": {"dist": "fixed", "value": 4}},
        load={
            "mode": "rate",
            "rate": [50],
            "arrival": "constant",
            "requests_per_step": 20,
            "ramp_up_s": 0.5,
        },
    )
    summary, records, _ = run(opened)
    ramp = sorted((r for r in records if r.ramp), key=lambda r: r.scheduled_ns or 0)
    measured = [r for r in records if not r.ramp]
    assert len(measured) == 20 and summary.steps[0].requests.total == 20
    # the rate rises linearly: rate x ramp / 2 = 12.5 arrivals expected in the ramp
    assert 11 <= len(ramp) <= 14
    t0 = min(r.scheduled_ns or 0 for r in records)
    gaps = [(b.scheduled_ns or 0) - (a.scheduled_ns or 0) for a, b in itertools.pairwise(ramp)]
    assert gaps[0] > gaps[-1]  # arrivals come closer as the rate rises
    assert all((r.scheduled_ns or 0) - t0 >= 500_000_000 for r in measured)


def test_calibration_with_the_servers_tokenize(run: RunFixture, scenario: Make) -> None:
    """The mock's /tokenize counts words: calibrated prompts are exact against it."""
    sc = scenario(
        target={"mock": {"args": FAST}},
        workload={"prompt_tokens": {"dist": "uniform", "min": 20, "max": 60}},
        load={"concurrency": [2], "requests_per_step": 10},
    )
    summary, records, _ = run(sc)
    assert summary.prompt_length_source == "server"
    assert all(r.prompt_tokens_server == r.prompt_tokens_requested for r in records)
    off = scenario(
        target={"mock": {"args": FAST}},
        workload={"calibrate": False},
        load={"concurrency": [1], "requests_per_step": 2},
    )
    summary, _, _ = run(off)
    assert summary.prompt_length_source == "approximate"


def _max_in_flight(records: list[Record], lo: int, hi: int) -> int:
    """Most requests in flight at once between ``lo`` and ``hi``."""
    events = sorted(
        [(max(r.start_ns, lo), 1) for r in records if r.start_ns < hi and r.end_ns > lo]
        + [(r.end_ns, -1) for r in records if r.start_ns < hi and r.end_ns > lo]
    )
    most = now = 0
    for _, delta in events:
        now += delta
        most = max(most, now)
    return most


def test_shared_prefixes_hit_the_mocks_prefix_cache(run: RunFixture, scenario: Make) -> None:
    """Hits are exactly what the plan predicts, and a hit makes TTFT shorter."""
    from loadgen.workload import Workload, plan_step

    sc = scenario(
        target={"extra_body": {"ignore_eos": True}},  # the engine model: prefill costs time
        workload={
            "calibrate": False,
            "prompt_tokens": {"dist": "fixed", "value": 512},
            "output_tokens": {"dist": "fixed", "value": 4},
            "prefix": {"tokens": 384, "groups": 4},
        },
        load={"concurrency": [1], "requests_per_step": 24},
    )
    summary, records, _ = run(sc)
    assert all(r.ok for r in records)
    # replan the step: which requests repeat a group seen before (all 384 words = 24 blocks hit)
    workload = Workload.prepare(sc.workload, chat=True)
    plan = plan_step(workload, sc.load, "concurrency", 1.0, 0)
    specs = [next(plan.requests) for _ in range(24)]
    seen: set[str] = set()
    hit = []
    for spec in specs:
        assert isinstance(spec.prompt, list)
        prefix = next(p for p in workload.prefixes if spec.prompt[0]["content"].startswith(p))
        hit.append(prefix in seen)
        seen.add(prefix)
    cache = summary.steps[0].prefix_cache
    assert cache is not None and cache.queries_tokens == 24 * 512
    assert cache.hits_tokens == 384 * sum(hit)
    assert cache.hit_rate is not None
    assert abs(cache.hit_rate - (24 - 4) / 24 * 0.75) < 0.05  # (N - G) / N of the prefix share
    by_id = {r.id: r for r in records}
    ttft_hit = [
        by_id[s.index].first_token_ns - by_id[s.index].sent_ns
        for s, h in zip(specs, hit, strict=False)
        if h
    ]
    ttft_miss = [
        by_id[s.index].first_token_ns - by_id[s.index].sent_ns
        for s, h in zip(specs, hit, strict=False)
        if not h
    ]
    assert max(ttft_hit) < min(ttft_miss), (sorted(ttft_hit), sorted(ttft_miss))

    plain = scenario(
        target={"extra_body": {"ignore_eos": True}},
        workload={
            "prompt_tokens": {"dist": "fixed", "value": 512},
            "output_tokens": {"dist": "fixed", "value": 4},
        },
        load={"concurrency": [1], "requests_per_step": 8},
    )
    summary, _, _ = run(plain)
    # unique prompts hit nothing, and a workload that shares nothing does not report it
    assert summary.steps[0].prefix_cache is None


def test_reasoning_streams_time_both_first_tokens(run: RunFixture, scenario: Make) -> None:
    """The mock streams 5 reasoning tokens first; ttft_of answer judges the first answer token."""
    for ttft_of in ("any", "answer"):
        sc = scenario(
            target={
                "extra_body": {"ignore_eos": True},
                "mock": {"args": [*FAST, "--reasoning-tokens", "5"]},
            },
            workload={"output_tokens": {"dist": "fixed", "value": 12}},
            load={"concurrency": [2], "requests_per_step": 6},
            sla={"ttft_of": ttft_of},
        )
        summary, records, _ = run(sc)
        assert all(r.ok for r in records)
        for r in records:
            assert r.first_reasoning_ns == r.first_token_ns
            assert r.first_answer_ns == r.token_ns[5]  # the sixth token is the first answer
            assert r.reasoning_tokens == 5 and r.output_tokens == 12
        step = summary.steps[0]
        assert step.ttft_reasoning_ms is not None and step.ttft_answer_ms is not None
        assert step.tokens.reasoning_total == 30
        expected = step.ttft_answer_ms if ttft_of == "answer" else step.ttft_reasoning_ms
        assert step.ttft_ms.p50 == expected.p50
        assert (step.ttft_answer_ms.p50 or 0) > (step.ttft_reasoning_ms.p50 or 0) + 4.0
