"""StepColumns (what a run keeps of each finished request) summarises a step exactly as the
list of records did: the record-based summary of commit c965ee7 (step_oracle.py) is the
oracle, over random steps of every kind of record, every metrics profile, both TTFT
stamps, both latency origins, closed and open loop."""

from __future__ import annotations

import itertools
import pickle
from typing import Any

import numpy as np
import pytest

from loadgen.metrics import summarize_step
from loadgen.metrics.columns import ErrorTally, StepColumns
from loadgen.metrics.profiles import PROFILES
from loadgen.metrics.stats import distribution_ms
from loadgen.records import Record
from loadgen.results.hints import TargetFacts, error_lines
from loadgen.scenario import SlaSpec
from loadgen.summary import LoadPoint
from loadgen.vocab import PERCENTILE_OF, PERCENTILES

from .step_oracle import summarize_step_reference

MS = 1_000_000
T0 = 10**15  # monotonic ns of a host up for ~12 days

LOADS = {
    "closed": LoadPoint(mode="concurrency", concurrency=4),
    "rate": LoadPoint(mode="rate", rate=50.0),
    "trace": LoadPoint(mode="trace", time_scale=1.0),
}
SLAS = {
    "none": {},
    "bounds": {"ttft_ms": {"p99": 40}, "tpot_ms": {"p90": 3}, "e2e_ms": {"mean": 300}},
    "sent": {"ttft_ms": {"p50": 30}, "e2e_ms": {"p95": 250}, "latency_from": "sent"},
    "error rate": {"max_error_rate": 0.1, "itl_ms": {"p99": 5}},
}


def random_record(rng: np.random.Generator, i: int, open_loop: bool) -> Record:
    """One request of any shape: ok or failed, warm-up, ramp, cancelled, reasoning, one
    token, no stamps, a session turn, server counts or not, gaps past an int32."""
    start = T0 + i * 7 * MS + int(rng.integers(0, 5 * MS))
    sent = start + int(rng.integers(0, MS))
    fields: dict[str, Any] = {
        "step": 0,
        "id": i,
        "warmup": bool(rng.random() < 0.05),
        "ramp": bool(rng.random() < 0.05),
        "request_id": f"r-{i}",
        "prompt_tokens_requested": int(rng.choice([0, 50, 100, 400])),
        "max_tokens": int(rng.choice([1, 16, 64])),
        "start_ns": start,
        "sent_ns": sent,
    }
    if open_loop and rng.random() < 0.9:
        fields["scheduled_ns"] = start - int(rng.integers(0, 20 * MS))
    if rng.random() < 0.3:
        fields["session"], fields["turn"] = i // 3, int(rng.integers(0, 4))
    n = int(rng.choice([0, 1, 2, 5, 40]))
    gaps = rng.integers(0, 3 * MS, size=max(n - 1, 0))
    if n > 2 and rng.random() < 0.05:
        gaps[0] = 3 * 10**9  # a stall longer than an int32 of ns holds
    first = sent + int(rng.integers(MS, 60 * MS))
    stamps = [first + int(g) for g in np.cumsum(np.concatenate([[0], gaps]))] if n else []
    if n > 3 and rng.random() < 0.2:
        stamps = stamps[:1] + stamps[-1:]  # events that shared reads: fewer stamps
    reasoning = int(rng.integers(1, n)) if n > 1 and rng.random() < 0.3 else 0
    fields.update(
        token_ns=stamps,
        first_token_ns=stamps[0] if stamps else None,
        first_reasoning_ns=stamps[0] if stamps and reasoning else None,
        first_answer_ns=stamps[min(reasoning, len(stamps) - 1)] if stamps else None,
        last_token_ns=stamps[-1] if stamps else None,
        end_ns=(stamps[-1] if stamps else first) + int(rng.integers(0, 2 * MS)),
        output_events=n,
        reasoning_events=reasoning,
        reconnects=int(rng.random() < 0.05),
    )
    if rng.random() < 0.6:
        fields["output_tokens_server"] = n + int(rng.choice([0, 0, 0, 1, -1]) if n else 0)
        fields["prompt_tokens_server"] = fields["prompt_tokens_requested"] + int(
            rng.integers(-3, 4)
        )
    if rng.random() < 0.3:
        fields["reasoning_tokens_server"] = reasoning + 1
    fail = rng.random()
    if fail < 0.08:
        fields.update(error_kind=str(rng.choice(["http_503", "idle_timeout"])))
        fields["error_detail"] = f"detail {i}" if rng.random() < 0.7 else None
    elif fail < 0.1:
        fields.update(error_kind="cancelled", error_detail="cut short")
    elif fail < 0.11:
        fields.update(error_kind=None, error_detail="no kind")
    else:
        fields["ok"] = True
    return Record(**fields)


def random_step(seed: int, n: int, open_loop: bool) -> list[Record]:
    rng = np.random.default_rng(seed)
    return [random_record(rng, i, open_loop) for i in range(n)]


def both(records: list[Record], load: LoadPoint, sla: SlaSpec, **kw: Any) -> tuple[Any, Any]:
    ref = summarize_step_reference(0, load, records, sla, **kw).model_dump()
    new = summarize_step(0, load, StepColumns.of(records), sla, **kw).model_dump()
    for check in new["sla"]["checks"]:
        # the oracle predates these estimates (tests/unit/metrics/test_confidence.py covers them)
        check["requests_needed"] = check["reason"] = None
    # ... and so do the words the step's verdict gives for them (test_one_verdict.py does)
    for d in (ref, new):
        d["sla"]["cause"] = d["sla"]["reason"] = None
    for key in ("throughput", "throughput_whole"):
        if new[key] is not None:
            new[key]["requests_per_s_ci"] = None
    new["sessions"] = None  # newer than the oracle (tests/unit/metrics/test_sessions.py)
    new["client_error"] = None  # ... and so is this (tests/unit/metrics/test_client_error.py)
    new["steady_unrated"] = None  # ... and this (tests/unit/metrics/test_window.py)
    return ref, new


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("load", list(LOADS))
def test_every_profile_and_option_gives_the_summary_the_records_gave(seed: int, load: str) -> None:
    records = random_step(seed, 300, open_loop=load != "closed")
    for profile, (sla_name, sla), ttft_of in itertools.product(
        PROFILES, SLAS.items(), ("any", "answer")
    ):
        kw: dict[str, Any] = {
            "profile": PROFILES[profile],
            "ttft_of": ttft_of,
            "mean_in_flight": 3.5,
            "expect_full_output": seed % 2 == 0,
            "prompt_tolerance": 0.02 if seed % 3 else 0.0,
        }
        ref, new = both(records, LOADS[load], SlaSpec.model_validate(sla), **kw)
        assert new == ref, (profile, sla_name, ttft_of)


def test_the_oracle_sees_every_kind_of_record() -> None:
    """The random steps above hold what they claim to (so the equality means something)."""
    records = random_step(0, 300, open_loop=True)
    ref = summarize_step_reference(
        0, LOADS["rate"], records, SlaSpec.model_validate(SLAS["bounds"])
    )
    r = ref.requests
    assert r.ok > 150 and r.failed > 5 and r.warmup and r.ramp and r.cancelled and r.reconnects
    assert set(r.errors) == {"http_503", "idle_timeout", "unknown"}
    assert ref.ttft_reasoning_ms is not None and ref.ttft_by_turn is not None
    assert ref.steady_duration_s is not None and ref.queue_wait_ms.count > 0
    assert 0 < ref.sla.good_requests < r.ok
    assert ref.tokens.count_mismatches and ref.prompt_lengths.compared
    assert max(g for rec in records for g in np.diff(rec.token_ns)) > 2**31  # int64 gaps


def test_empty_and_all_failed_steps() -> None:
    failed = [r for r in random_step(1, 200, open_loop=False) if not r.ok]
    for records in ([], failed):
        ref, new = both(records, LOADS["closed"], SlaSpec(), mean_in_flight=1.0)
        assert new == ref


def test_a_list_of_records_is_summarised_through_the_columns() -> None:
    records = random_step(2, 100, open_loop=False)
    direct = summarize_step(0, LOADS["closed"], records, SlaSpec()).model_dump()
    for key in ("throughput", "throughput_whole"):  # newer than the oracle
        if direct[key] is not None:
            direct[key]["requests_per_s_ci"] = None
    direct["sessions"] = None  # newer too (tests/unit/metrics/test_sessions.py)
    direct["client_error"] = None  # ... and this (tests/unit/metrics/test_client_error.py)
    direct["steady_unrated"] = None  # ... and this (tests/unit/metrics/test_window.py)
    assert direct == summarize_step_reference(0, LOADS["closed"], records, SlaSpec()).model_dump()


def test_merged_accumulators_equal_one_fed_everything() -> None:
    records = random_step(3, 400, open_loop=True)
    parts = [records[:100], records[100:101], [], records[101:]]
    merged = StepColumns()
    for part in parts:
        merged.merge(StepColumns.of(part))
    sla = SlaSpec.model_validate(SLAS["bounds"])
    whole = summarize_step(0, LOADS["rate"], StepColumns.of(records), sla).model_dump()
    assert summarize_step(0, LOADS["rate"], merged, sla).model_dump() == whole
    merged.add(records[0])  # summarising let go of its views of the columns: they can grow
    assert merged.failures.counts == ErrorTally.of(records[:1] + records).counts
    assert merged.failures.examples == ErrorTally.of(records).examples


def test_an_accumulator_survives_pickling() -> None:
    """Worker processes can send theirs to the parent to merge."""
    records = random_step(6, 200, open_loop=True)
    cols = StepColumns.of(records)
    back = pickle.loads(pickle.dumps(cols))
    sla = SlaSpec.model_validate(SLAS["bounds"])
    assert summarize_step(0, LOADS["rate"], back, sla) == summarize_step(
        0, LOADS["rate"], cols, sla
    )
    assert (back.failures.counts, back.failures.examples) == (
        cols.failures.counts,
        cols.failures.examples,
    )


def test_int32_gaps_merge_with_int64_gaps() -> None:
    records = random_step(4, 300, open_loop=False)
    big = next(
        i for i, r in enumerate(records) if r.ok and max(np.diff(r.token_ns), default=0) > 2**31
    )
    small, large = StepColumns.of(records[:big]), StepColumns.of(records[big:])
    assert small.gaps().dtype == np.int32 and large.gaps().dtype == np.int64
    small.merge(large)
    assert small.gaps().tolist() == StepColumns.of(records).gaps().tolist()


def test_error_lines_from_the_tally_match_those_from_the_records() -> None:
    records = random_step(5, 300, open_loop=False)
    facts = TargetFacts("http://127.0.0.1:9", "m")
    lines = error_lines(records, facts)
    assert any("http_503" in line for line in lines)
    assert error_lines(StepColumns.of(records).failures, facts) == lines


def test_a_column_row_costs_bytes_not_a_record() -> None:
    """What stays per request: the columns and the int32 gaps, about 0.76 KB for 128 tokens."""
    rng = np.random.default_rng(0)
    cols = StepColumns()
    for i in range(1000):
        r = random_record(rng, i, open_loop=False)
        r.ok, r.error_kind, r.warmup, r.ramp = True, None, False, False
        r.token_ns = [T0 + k * MS for k in range(128)]
        cols.add(r)
    held = sum(c.buffer_info()[1] * c.itemsize for c in (*cols._ok.values(), cols._gaps))
    # 31 int64 columns (4 of them loadgen's own error), int32 gaps, and a little slack
    assert held / 1000 < 8 * 31 + 4 * 127 + 16


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64])
def test_distribution_ms_matches_numpy_on_a_fresh_array(dtype: type) -> None:
    """The in-place statistics are numpy's own, bit for bit, and leave the input alone."""
    rng = np.random.default_rng(7)
    values = rng.integers(0, 2**31 - 1, size=100_003).astype(dtype)
    before = values.copy()
    a = np.asarray(values, dtype=np.float64) / 1e6
    d = distribution_ms(values).model_dump()
    assert (values == before).all()
    assert [d["mean"], d["std"], d["min"], d["max"]] == [a.mean(), a.std(), a.min(), a.max()]
    keys = list(PERCENTILE_OF)
    assert [d[k] for k in keys] == np.percentile(a, PERCENTILES).tolist()
