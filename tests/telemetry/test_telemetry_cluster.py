"""The pure parts of telemetry.dcgm and telemetry.prometheus: parsing and per-window stats."""

from __future__ import annotations

import math

import pytest

from loadgen.summary import PrometheusStats
from loadgen.telemetry import PromQueries, parse_dcgm, parse_prometheus_text, query_stats
from loadgen.telemetry.dcgm import DcgmSource
from loadgen.telemetry.promql import failure_gap, read_window

S = 1_000_000_000
L = 'UUID="GPU-a",modelName="NVIDIA A100-SXM4-80GB",Hostname="n1"'

TEXT = f"""# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{{gpu="1", {L}}} 55
DCGM_FI_DEV_GPU_UTIL{{gpu="0", {L}}} 42
DCGM_FI_DEV_GPU_UTIL{{gpu="0", {L},GPU_I_ID="1"}} 99
DCGM_FI_DEV_FB_USED{{gpu="0", {L}}} 1024
DCGM_FI_DEV_POWER_USAGE{{gpu="0", {L}}} 212.5
DCGM_FI_DEV_POWER_USAGE{{gpu="1", {L}}} 140737488355328
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{gpu="0", {L}}} 123456789
DCGM_FI_DEV_MEMORY_TEMP{{gpu="0", {L}}} 9223372036854775794
DCGM_FI_DEV_GPU_TEMP{{gpu="0", {L}}} 2147483632
DCGM_FI_DEV_SM_CLOCK{{gpu="0", {L}}} NaN
DCGM_FI_DEV_SM_CLOCK{{gpu="all"}} 1
DCGM_FI_DEV_SM_CLOCK{{UUID="x"}} 2
vllm:num_requests_running 3
"""


def test_parse_dcgm_maps_units_skips_blanks_and_keeps_the_first_series() -> None:
    samples, bad = parse_prometheus_text(TEXT)
    assert bad == 0
    g0, g1 = parse_dcgm(samples)
    assert (g0.gpu, g1.gpu) == (0, 1)  # in index order, whatever the text's order
    assert (g0.name, g0.uuid, g0.hostname) == ("NVIDIA A100-SXM4-80GB", "GPU-a", "n1")
    # MIG's second series of util is not the GPU's; blanks (FP64/INT32 sentinels) and NaN go
    assert g0.values == {
        "util_gpu_pct": 42,
        "mem_used_bytes": 1024 * 2**20,
        "power_w": 212.5,
        "energy_j": 123456.789,
    }
    assert g1.values == {"util_gpu_pct": 55}


def test_rows_integrate_power_when_the_exporter_has_no_energy_counter() -> None:
    src = DcgmSource("http://u:p@x:9400/metrics", "http://x:9400/metrics")
    text = 'DCGM_FI_DEV_POWER_USAGE{gpu="0"} %s\n'
    energies = []
    for i, watts in enumerate([100.0, 300.0, 300.0]):
        gpus = parse_dcgm(parse_prometheus_text(text % watts)[0])
        ((sample, line),) = src.rows(gpus, i * S // 2)
        energies.append(sample.energy_j)
        assert sample.energy_source == line["energy_source"] == "integrated"
        assert line["source"] == "http://x:9400/metrics" and line["via"] == "dcgm"
    assert energies == [0.0, 100.0, 250.0]  # trapezoids over 0.5 s: (100+300)/2/2, then 150


def test_rows_take_the_counter_when_there_is_one() -> None:
    src = DcgmSource("http://x/metrics", "http://x/metrics")
    gpus = parse_dcgm(parse_prometheus_text(TEXT)[0])
    rows = src.rows(gpus, 7)
    assert rows[0][0].energy_j == 123456.789 and rows[0][0].energy_source == "counter"
    assert rows[1][0].energy_j is None and "energy_source" not in rows[1][1]


def _matrix(*series: tuple[dict[str, str], list[list[object]]]) -> dict[str, object]:
    result = [{"metric": m, "values": v} for m, v in series]
    return {"status": "success", "data": {"resultType": "matrix", "result": result}}


def test_query_stats_of_one_series_and_of_several() -> None:
    one = _matrix(({}, [[10, "1"], [11, "4"], [12, "NaN"], [13, "+Inf"], [14, "2.5"], [99, "7"]]))
    stats = query_stats("q", 1.0, one, 10.0, 14.0)
    assert stats.series[0].points == 3  # non-finite points and those past the window left out
    assert (stats.mean, stats.max, stats.last) == (2.5, 4.0, 2.5)
    several = _matrix(({"pod": "a"}, [[10, "1"]]), ({"pod": "b"}, [[10, "3"], [11, "5"]]))
    stats = query_stats("q", 1.0, several, 10.0, 14.0)
    assert stats.mean is None and stats.series_total == 2
    assert [(s.labels, s.mean, s.last) for s in stats.series] == [
        ({"pod": "a"}, 1.0, 1.0),
        ({"pod": "b"}, 4.0, 5.0),
    ]
    many = _matrix(*(({"i": str(i)}, [[10, str(i)]]) for i in range(40)))
    stats = query_stats("q", 1.0, many, 10.0, 14.0)
    assert len(stats.series) == 16 and stats.series_total == 40


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"status": "error", "errorType": "bad_data", "error": "parse error"}, "bad_data: parse"),
        ({"status": "success", "data": {"resultType": "vector", "result": []}}, "vector"),
        ({"status": "success", "data": {"resultType": "matrix", "result": 3}}, "not a list"),
        ([1, 2], "not the Prometheus API's JSON object"),
    ],
)
def test_query_stats_says_why_an_answer_is_no_matrix(body: object, words: str) -> None:
    stats = query_stats("q", 1.0, body, 0.0, 1.0)
    assert stats.error is not None and words in stats.error and stats.series == []


def test_the_step_is_a_tenth_of_the_window_between_1_and_5_s_unless_given() -> None:
    spec = PromQueries("http://p", "http://p", {"a": "up"})
    assert [spec.step_for(w) for w in (4.0, 30.0, 600.0)] == [1.0, 3.0, 5.0]
    assert spec.step_for(100_000.0) == 10.0  # never more than 10,000 points
    assert PromQueries("http://p", "http://p", {"a": "up"}, step_s=0.25).step_for(600) == 0.25


def test_nothing_listening_is_an_error_per_query_and_one_gap() -> None:
    import asyncio

    spec = PromQueries("http://127.0.0.1:9", "http://127.0.0.1:9", {"a": "up", "b": "x"})
    found = asyncio.run(read_window(spec, 1000.0, 1010.0))
    assert isinstance(found, PrometheusStats) and found.failed == 2
    assert all(q.error and "127.0.0.1:9" in q.error for q in found.queries.values())
    gap = failure_gap(found, 5)
    assert gap is not None and gap.failures == 2 and gap.kind == "prometheus"
    assert gap.error.startswith("2 of 2 queries failed; a: ")
    assert math.isclose(found.end_unix_s - found.start_unix_s, 10.0)
