"""loadgen's own metrics: counts and histograms from records, as Prometheus reads them back."""

from __future__ import annotations

import numpy as np
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from loadgen.execute.live import Live as FakeLive
from loadgen.metrics.latency import e2e_ns, itl_gaps_ns, queue_wait_ns, tpot_ns, ttft_ns
from loadgen.prom_endpoint import METRICS, ClientMetrics, exposed_names
from loadgen.prom_endpoint.hist import Hist
from loadgen.records import Record

MS = 1_000_000


def rec(i: int, *, step: int = 0, ok: bool = True, warmup: bool = False, **kw: object) -> Record:
    sent = 1_000 * MS + i * 7 * MS
    tokens = [sent + (20 + 3 * i) * MS + k * (9 + i % 4) * MS for k in range(40)]
    base: dict[str, object] = {
        "step": step,
        "id": i,
        "warmup": warmup,
        "request_id": f"r{i}",
        "prompt_tokens_requested": 100 + i,
        "max_tokens": 40,
        "scheduled_ns": sent - (i % 3) * MS,
        "start_ns": sent,
        "sent_ns": sent,
        "first_token_ns": tokens[0],
        "last_token_ns": tokens[-1],
        "end_ns": tokens[-1] + MS,
        "token_ns": tokens,
        "output_events": 40,
        "ok": ok,
    }
    if not ok:
        base.update(error_kind="http_503", http_status=503, token_ns=[], output_events=0)
    base.update(kw)
    return Record(**base)  # type: ignore[arg-type]


def scrape(m: ClientMetrics) -> dict[str, list[tuple[str, dict[str, str], float]]]:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(m)
    text = generate_latest(registry).decode()
    out: dict[str, list[tuple[str, dict[str, str], float]]] = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out.setdefault(s.name, []).append((s.name, dict(s.labels), s.value))
    return out


def value(
    samples: dict[str, list[tuple[str, dict[str, str], float]]], name: str, **labels: str
) -> float:
    hits = [
        v for _, lab, v in samples.get(name, []) if all(lab.get(k) == x for k, x in labels.items())
    ]
    assert len(hits) == 1, (name, labels, hits)
    return hits[0]


def test_every_record_is_counted_once_by_step_phase_status_and_error_kind() -> None:
    m = ClientMetrics("run1", "scn", "model-a")
    records = [rec(i) for i in range(10)] + [rec(10, warmup=True), rec(11, ok=False)]
    records += [rec(12, ok=False, cancelled_by_client=True, error_kind="cancelled")]
    records += [rec(13, step=1, ramp=True)]
    for r in records:
        m.record(r)
    s = scrape(m)
    total = sum(v for _, _, v in s["loadgen_requests_total"])
    assert total == len(records)
    assert value(s, "loadgen_requests_total", step="0", phase="measured", status="ok") == 10
    assert value(s, "loadgen_requests_total", phase="warmup", status="ok") == 1
    assert value(s, "loadgen_requests_total", status="error", error_kind="http_503") == 1
    assert value(s, "loadgen_requests_total", status="cancelled", error_kind="cancelled") == 1
    assert value(s, "loadgen_requests_total", step="1", phase="ramp") == 1
    assert value(s, "loadgen_input_tokens_total", step="0") == sum(
        r.prompt_tokens for r in records if r.step == 0
    )
    assert value(s, "loadgen_output_tokens_total", step="0") == sum(
        r.output_tokens for r in records if r.step == 0
    )
    info = s["loadgen_run_info"][0][1]
    assert info == {"run_id": "run1", "scenario": "scn", "model": "model-a"}


def buckets(s: dict[str, list[tuple[str, dict[str, str], float]]], name: str) -> dict[float, float]:
    return {float(lab["le"]): v for _, lab, v in s[f"{name}_bucket"] if lab["step"] == "0"}


def test_histograms_hold_the_formulas_of_measured_successes_only() -> None:
    m = ClientMetrics("r", "s", "m")
    measured = [rec(i) for i in range(12)]
    for r in [*measured, rec(20, warmup=True), rec(21, ok=False), rec(22, ramp=True)]:
        m.record(r)
    s = scrape(m)
    formulas = {
        "loadgen_ttft_seconds": [ttft_ns(r) for r in measured],
        "loadgen_e2e_seconds": [e2e_ns(r) for r in measured],
        "loadgen_tpot_seconds": [tpot_ns(r) for r in measured],
        "loadgen_queue_wait_seconds": [queue_wait_ns(r) for r in measured],
        "loadgen_itl_seconds": [g for r in measured for g in itl_gaps_ns(r)],
    }
    for name, raw in formulas.items():
        values = np.asarray([v for v in raw if v is not None], dtype=float) / 1e9
        assert value(s, f"{name}_count", step="0") == len(values)
        assert abs(value(s, f"{name}_sum", step="0") - values.sum()) < 1e-9
        got = buckets(s, name)
        for le in METRICS[name].buckets:
            assert got[le] == int((values <= le).sum()), (name, le)
        assert got[float("inf")] == len(values)


def test_the_numpy_path_bins_as_the_loop_does_including_values_on_a_bound() -> None:
    bounds = (0.001, 0.01, 0.1)
    rng = np.random.default_rng(0)
    values = [*rng.integers(0, 200_000_000, 500).tolist(), 1_000_000, 10_000_000, 100_000_000]
    a, b = Hist(bounds), Hist(bounds)
    a.observe_ns(values)  # numpy
    for v in values:
        b.observe_ns([v])  # one at a time: bisect
    assert a.counts == b.counts and abs(a.total_s - b.total_s) < 1e-9
    assert a.cumulative()[0] == ("0.001", float(sum(v <= 1_000_000 for v in values)))


def test_load_point_in_flight_and_send_lags_come_from_the_step_and_the_live_source() -> None:
    m = ClientMetrics("r", "s", "m")
    live = FakeLive(in_flight=7, send_lags_ns=[2 * MS, 30 * MS])
    m.set_live_source(lambda: live)
    m.start_step(2, "rate", 12.5, planned=4)
    s = scrape(m)
    assert value(s, "loadgen_step") == 2
    assert value(s, "loadgen_load_point", mode="rate") == 12.5
    assert value(s, "loadgen_steps_planned") == 4
    assert value(s, "loadgen_in_flight_requests") == 7
    assert value(s, "loadgen_send_lag_seconds_count", step="2") == 2
    live.send_lags_ns.append(50 * MS)  # the list grows: only the new one is taken
    s = scrape(m)
    assert value(s, "loadgen_send_lag_seconds_count", step="2") == 3
    live.send_lags_ns = [MS]  # the next step's list
    m.start_step(3, "rate", 25.0, planned=4)
    s = scrape(m)
    assert value(s, "loadgen_send_lag_seconds_count", step="3") == 1
    assert value(s, "loadgen_run_finished") == 0
    m.finish()
    s = scrape(m)
    assert value(s, "loadgen_run_finished") == 1
    assert value(s, "loadgen_in_flight_requests") == 0


def test_every_exposed_name_is_in_the_table() -> None:
    m = ClientMetrics("r", "s", "m")
    m.set_live_source(lambda: FakeLive(1, [MS]))
    m.start_step(0, "concurrency", 4, planned=None)
    for i in range(3):
        m.record(rec(i))
    s = scrape(m)
    names = {n.removesuffix("_created") for n in s}
    assert names <= exposed_names()
    assert names >= {"loadgen_requests_total", "loadgen_itl_seconds_bucket", "loadgen_step"}
