"""telemetry.dcgm and telemetry.prometheus end to end: the real mock, fakes made from the docs.

Each run goes against the built-in mock over 127.0.0.1 while a fake
dcgm-exporter or a fake Prometheus (tests/integration/cluster_fakes.py) serves
values that change over time. The summary's GPU rows and named query stats are
checked against what the fakes served, computed here from their logs.
"""

from __future__ import annotations

import bisect
import csv
import itertools
import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest

from loadgen.records import Record
from loadgen.scenario import Scenario
from loadgen.summary import StepSummary, Summary
from tests.integration.cluster_fakes import MODEL, FakeDcgm, FakePrometheus

RunFixture = Callable[[Scenario], tuple[Summary, list[Record], Path]]
Make = Callable[..., Scenario]
FAST = ["--ttft-ms", "5", "--itl-ms", "8"]
MiB = 2**20
LOAD = {"concurrency": [1, 2], "requests_per_step": 6}
WORKLOAD = {"output_tokens": {"dist": "fixed", "value": 16}}


@pytest.fixture
def dcgm() -> Iterator[FakeDcgm]:
    fake = FakeDcgm(gpus=2)
    yield fake
    fake.close()


def _lines(out: Path, kind: str) -> list[dict[str, object]]:
    rows = [orjson.loads(x) for x in (out / "telemetry.jsonl").read_bytes().splitlines()]
    return [r for r in rows if r["type"] == kind]


def _energy_j(points: list[tuple[int, float]], a: int, b: int) -> float:
    """Joules over [a, b] of a cumulative series, linearly interpolated at the edges."""
    times = [t for t, _ in points]

    def at(t: int) -> float:
        i = bisect.bisect_left(times, t)
        (t1, e1), (t2, e2) = points[i - 1], points[i]
        return e1 + (e2 - e1) * (t - t1) / (t2 - t1)

    inner = [e for t, e in points if a < t < b]
    return sum(y - x for x, y in itertools.pairwise([at(a), *inner, at(b)]))


def _check_step(step: StepSummary, fake: FakeDcgm, stamped: list[tuple[int, int]]) -> None:
    """The step's GPU rows against the scrapes served; ``stamped``: (loadgen t_ns, scrape n)."""
    t = step.telemetry
    assert t is not None and t.total is not None
    w = t.window
    inside = [fake.served[n] for t_ns, n in stamped if w.start_ns <= t_ns <= w.end_ns]
    assert len(inside) >= 2, "the exporter is scraped every 0.1 s"
    assert [g.gpu for g in t.gpus] == [0, 1]
    for g in t.gpus:
        served = [s.gpus[g.gpu] for s in inside]
        util = [v["DCGM_FI_DEV_GPU_UTIL"] for v in served]
        power = [v["DCGM_FI_DEV_POWER_USAGE"] for v in served]
        assert g.source == "dcgm" and g.agent == fake.url
        assert g.name == MODEL and g.hostname == "gpu-node-1"
        assert g.uuid is not None and g.uuid.startswith(f"GPU-{g.gpu:08x}")
        assert g.samples == len(inside)
        assert g.util_pct is not None and g.power_w is not None and g.mem_used_bytes is not None
        assert g.util_pct.mean == pytest.approx(sum(util) / len(util))
        assert g.util_pct.max == max(util)
        assert g.power_w.mean == pytest.approx(sum(power) / len(power))
        assert g.power_w.max == max(power)
        assert g.mem_used_bytes.peak == max(v["DCGM_FI_DEV_FB_USED"] for v in served) * MiB
        # energy: the counter the fake served, at the fake's own serve times
        energy = [(s.t_ns, s.gpus[g.gpu]["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"] / 1e3)
                  for s in fake.served]  # fmt: skip
        assert g.energy_source == "counter" and g.energy_coverage >= 0.9
        assert g.energy_j == pytest.approx(_energy_j(energy, w.start_ns, w.end_ns), rel=0.03)
        assert g.j_per_output_token == pytest.approx(g.energy_j / step.tokens.output_total)
    assert t.total.sources == ["dcgm"] and t.total.gpus == 2
    assert t.total.energy_j == pytest.approx(sum(g.energy_j or 0 for g in t.gpus))


def test_dcgm_exporter_figures_are_the_gpu_rows(
    run: RunFixture, scenario: Make, dcgm: FakeDcgm
) -> None:
    sc = scenario(
        target={"mock": {"args": FAST}},
        workload=WORKLOAD,
        load=LOAD,
        telemetry={"dcgm": dcgm.url, "interval_s": 0.1},
    )
    summary, records, out = run(sc)
    assert len(records) == 12 and all(r.ok for r in records)
    gpu_lines = _lines(out, "gpu")
    # every scrape served is in telemetry.jsonl, one line per GPU, in the units of docs
    assert len(gpu_lines) == 2 * len(dcgm.served) and len(dcgm.served) >= 5
    stamped = []
    for scrape, pair in zip(
        dcgm.served, zip(gpu_lines[::2], gpu_lines[1::2], strict=True), strict=True
    ):
        for line in pair:
            v = scrape.gpus[int(str(line["gpu"]))]
            assert line["via"] == "dcgm" and line["source"] == dcgm.url
            assert line["util_gpu_pct"] == v["DCGM_FI_DEV_GPU_UTIL"]
            assert line["mem_used_bytes"] == v["DCGM_FI_DEV_FB_USED"] * MiB
            assert line["mem_free_bytes"] == v["DCGM_FI_DEV_FB_FREE"] * MiB
            assert line["power_w"] == v["DCGM_FI_DEV_POWER_USAGE"]
            assert line["energy_j"] == v["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"] / 1e3
            assert line["sm_clock_mhz"] == v["DCGM_FI_DEV_SM_CLOCK"]
            assert line["temp_c"] == v["DCGM_FI_DEV_GPU_TEMP"]
        stamped.append((int(str(pair[0]["t_ns"])), scrape.n))
    assert len(summary.steps) == 2
    for step in summary.steps:
        _check_step(step, dcgm, stamped)
        assert step.telemetry is not None and step.telemetry.gaps == []


def test_a_failing_exporter_is_counted_said_once_and_the_run_goes_on(
    run: RunFixture, scenario: Make, dcgm: FakeDcgm, caplog: pytest.LogCaptureFixture
) -> None:
    dcgm.fail = ["500", "500", "500", "garbage", "garbage"]
    sc = scenario(
        target={"mock": {"args": FAST}},
        workload=WORKLOAD,
        load=LOAD,
        telemetry={"dcgm": [dcgm.url], "interval_s": 0.1},
    )
    with caplog.at_level(logging.WARNING, logger="loadgen.telemetry"):
        summary, records, out = run(sc)
    assert all(r.ok for r in records) and len(summary.steps) == 2
    assert dcgm.failed == 5
    gaps = [g for g in _lines(out, "gap") if g["kind"] == "dcgm"]
    assert len(gaps) == 5  # every failure is a gap line
    assert sum("HTTP 500" in str(g["error"]) for g in gaps) == 3
    assert sum("no DCGM_FI_DEV_* series" in str(g["error"]) for g in gaps) == 2
    in_steps = sum(
        g.failures for s in summary.steps if s.telemetry for g in s.telemetry.gaps
        if g.kind == "dcgm"
    )  # fmt: skip
    assert in_steps <= 5
    said = [r for r in caplog.records if "dcgm-exporter" in r.getMessage()]
    assert len(said) == 1 and "HTTP 500" in said[0].getMessage()
    last = summary.steps[-1].telemetry
    assert last is not None and [g.source for g in last.gpus] == ["dcgm", "dcgm"]


QUERIES = {
    "running": "sum(vllm:num_requests_running)",
    "gpu_util": "avg by (Hostname) (DCGM_FI_DEV_GPU_UTIL)",
    "bad": "sum(rate(",
    "proxy": "up{job='behind-a-broken-proxy'}",
    "down": "up{job='down'}",
}


def test_prometheus_queries_over_each_step_window(
    run: RunFixture,
    scenario: Make,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    token = "prom-secret-token-8c1f"
    monkeypatch.setenv("LOADGEN_TEST_PROM_TOKEN", token)
    fake = FakePrometheus(
        refuse=(QUERIES["bad"],), garbage=(QUERIES["proxy"],), broken=(QUERIES["down"],)
    )
    try:
        sc = scenario(
            target={"mock": {"args": FAST}},
            workload=WORKLOAD,
            load=LOAD,
            telemetry={
                "prometheus": {
                    "url": fake.url,
                    "queries": QUERIES,
                    "step_s": 0.1,
                    "token_env": "LOADGEN_TEST_PROM_TOKEN",
                }
            },
        )
        with caplog.at_level(logging.WARNING, logger="loadgen.telemetry"):
            summary, records, out = run(sc, reports=True)
    finally:
        fake.close()
    assert all(r.ok for r in records) and len(summary.steps) == 2
    assert len(fake.served) == 2 * len(QUERIES)  # each query once a step
    assert {a.auth for a in fake.served} == {f"Bearer {token}"}
    anchor = summary.clock_anchor
    for step in summary.steps:
        t = step.telemetry
        assert t is not None and t.prometheus is not None
        p = t.prometheus
        start = (t.window.start_ns - anchor.monotonic_ns + anchor.wall_ns) / 1e9
        end = (t.window.end_ns - anchor.monotonic_ns + anchor.wall_ns) / 1e9
        assert p.start_unix_s == pytest.approx(start, abs=0.005)
        assert p.end_unix_s == pytest.approx(end, abs=0.005)
        assert p.source == fake.url and list(p.queries) == list(QUERIES)
        answers = {a.query: a for a in fake.served if abs(a.start - p.start_unix_s) < 0.002}
        assert set(answers) == set(QUERIES.values())
        for name in ("running", "gpu_util"):
            stats, served = p.queries[name], answers[QUERIES[name]]
            assert served.step == 0.1 and stats.step_s == 0.1
            assert stats.error is None and stats.series_total == len(served.series)
            for got, (labels, points) in zip(stats.series, served.series, strict=True):
                values = [v for _, v in points]
                assert got.labels == labels and got.points == len(values) >= 3
                assert got.mean == pytest.approx(sum(values) / len(values))
                assert got.max == max(values) and got.last == values[-1]
        one = p.queries["running"]
        assert (one.mean, one.max, one.last) == (
            one.series[0].mean, one.series[0].max, one.series[0].last
        )  # fmt: skip
        assert len(p.queries["gpu_util"].series) == 3 and p.queries["gpu_util"].mean is None
        bad, proxy, down = p.queries["bad"], p.queries["proxy"], p.queries["down"]
        assert bad.error is not None and "bad_data" in bad.error and "parse error" in bad.error
        assert proxy.error is not None and "not JSON" in proxy.error
        assert down.error is not None and "HTTP 500" in down.error
        assert p.failed == 3
        gap = next(g for g in t.gaps if g.kind == "prometheus")
        assert gap.failures == 3 and gap.source == fake.url
    said = [r for r in caplog.records if "Prometheus" in r.getMessage()]
    assert len(said) == 1  # once, though every step had failures
    assert len([g for g in _lines(out, "gap") if g["kind"] == "prometheus"]) == 2
    assert len(_lines(out, "prometheus")) == 2
    rows = list(csv.DictReader((out / "steps.csv").open()))  # named columns, one series
    for row, step in zip(rows, summary.steps, strict=True):
        assert step.telemetry is not None and step.telemetry.prometheus is not None
        running = step.telemetry.prometheus.queries["running"]
        assert float(row["telemetry_prom_running_mean"]) == pytest.approx(running.mean)
        assert float(row["telemetry_prom_running_last"]) == running.last
        assert not any(k.startswith("telemetry_prom_gpu_util") for k in row)  # 3 series
    for name in os.listdir(out):
        if (out / name).is_file():
            assert token not in (out / name).read_text(errors="replace"), name
