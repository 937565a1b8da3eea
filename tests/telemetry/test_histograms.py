"""Histogram snapshots, step deltas, counter resets and bucket interpolation (issue 24)."""

from __future__ import annotations

import math

import pytest

from loadgen.summary import TimeSplit
from loadgen.target.phases import sum_scrapes, time_split
from loadgen.telemetry.histograms import HistSnapshot, hist_delta, hist_quantile, histograms_from
from loadgen.telemetry.prom import parse_prometheus_text

BOUNDS = (0.1, 0.5, 1.0, math.inf)


def hist(per_bucket: list[float], total: float) -> HistSnapshot:
    """A snapshot from per-bucket (non-cumulative) counts."""
    running, cum = 0.0, []
    for bound, n in zip(BOUNDS, per_bucket, strict=True):
        running += n
        cum.append((bound, running))
    return HistSnapshot(tuple(cum), total, running)


def text(name: str, per_engine: list[tuple[str, list[float], float]]) -> str:
    lines = [f"# TYPE {name} histogram"]
    for engine, cum, total in per_engine:
        for bound, n in zip(("0.1", "0.5", "1.0", "+Inf"), cum, strict=True):
            lines.append(f'{name}_bucket{{engine="{engine}",le="{bound}"}} {n}')
        lines.append(f'{name}_sum{{engine="{engine}"}} {total}')
        lines.append(f'{name}_count{{engine="{engine}"}} {cum[-1]}')
    return "\n".join(lines) + "\n"


def test_snapshot_sums_label_sets_and_orders_buckets() -> None:
    body = text("vllm:e2e_request_latency_seconds", [("0", [1, 3, 4, 4], 2.0)])
    body += text("vllm:e2e_request_latency_seconds", [("1", [0, 1, 2, 2], 1.5)])
    samples, bad = parse_prometheus_text(body)
    got = histograms_from(samples, {"vllm:e2e_request_latency_seconds", "absent"})
    assert bad == 0 and set(got) == {"vllm:e2e_request_latency_seconds"}
    h = got["vllm:e2e_request_latency_seconds"]
    assert h.buckets == ((0.1, 1.0), (0.5, 4.0), (1.0, 6.0), (math.inf, 6.0))
    assert (h.total, h.count) == (3.5, 6.0)


def test_family_without_inf_bucket_is_left_out() -> None:
    body = 'x_bucket{le="1"} 2\nx_sum 1\nx_count 2\n'
    assert histograms_from(parse_prometheus_text(body)[0], {"x"}) == {}


def test_delta_is_the_step_and_mean_is_exact() -> None:
    before = hist([2, 0, 0, 0], 0.1)
    after = hist([2, 4, 2, 0], 0.1 + 4 * 0.3 + 2 * 0.8)
    d = hist_delta(before, after)
    assert d is not None
    assert [n for _, n in d.buckets] == [0, 4, 6, 6]
    assert d.count == 6 and d.mean == pytest.approx((4 * 0.3 + 2 * 0.8) / 6)


@pytest.mark.parametrize(
    "before",
    [
        hist([5, 5, 0, 0], 3.0),  # more than after: the server restarted
        HistSnapshot(((0.2, 0.0), (math.inf, 0.0)), 0.0, 0.0),  # another layout
    ],
)
def test_counter_reset_or_new_layout_gives_none(before: HistSnapshot) -> None:
    assert hist_delta(before, hist([1, 1, 0, 0], 0.5)) is None


def test_first_scrape_missing_gives_none() -> None:
    assert hist_delta(None, hist([1, 0, 0, 0], 0.05)) is None


def test_quantile_interpolates_inside_the_bucket() -> None:
    # 10 in (0, 0.1], 10 in (0.1, 0.5]: the median is the first bucket's top; p75 halfway
    h = hist([10, 10, 0, 0], 1.0)
    assert hist_quantile(h, 0.5) == pytest.approx(0.1)
    assert hist_quantile(h, 0.75) == pytest.approx(0.3)
    assert hist_quantile(h, 0.25) == pytest.approx(0.05)  # first bucket from 0


def test_quantile_in_inf_bucket_is_the_highest_finite_bound() -> None:
    assert hist_quantile(hist([1, 0, 0, 9], 50.0), 0.99) == 1.0


def test_quantile_of_empty_is_none() -> None:
    assert hist_quantile(hist([0, 0, 0, 0], 0.0), 0.5) is None


def test_quantile_skips_empty_buckets() -> None:
    h = hist([0, 0, 4, 0], 3.0)  # all four in (0.5, 1.0]
    assert hist_quantile(h, 0.5) == pytest.approx(0.75)


def names(
    q: HistSnapshot, p: HistSnapshot, d: HistSnapshot, e: HistSnapshot
) -> dict[str, HistSnapshot]:
    return {
        "vllm:request_queue_time_seconds": q,
        "vllm:request_prefill_time_seconds": p,
        "vllm:request_decode_time_seconds": d,
        "vllm:e2e_request_latency_seconds": e,
    }


def test_time_split_from_two_scrapes() -> None:
    zero = hist([0, 0, 0, 0], 0.0)
    before = names(zero, zero, zero, zero)
    after = names(
        hist([4, 0, 0, 0], 0.2), hist([4, 0, 0, 0], 0.32), hist([0, 0, 4, 0], 3.0),
        hist([0, 0, 4, 0], 3.52),
    )  # fmt: skip
    split = time_split(before, after, client_e2e_mean_ms=900.0)
    assert isinstance(split, TimeSplit) and split.engine == "vllm"
    assert split.queue is not None and split.queue.mean_ms == pytest.approx(50.0)
    assert split.prefill is not None and split.prefill.mean_ms == pytest.approx(80.0)
    assert split.decode is not None and split.decode.p50_ms_approx == pytest.approx(750.0)
    assert split.server_e2e is not None and split.server_e2e.mean_ms == pytest.approx(880.0)
    assert split.server_ttft is None  # not exported
    assert split.network_ms == pytest.approx(20.0)


def test_no_histograms_or_nothing_moved_gives_none() -> None:
    zero = hist([0, 0, 0, 0], 0.0)
    assert time_split(None, None, 10.0) is None
    assert time_split(names(zero, zero, zero, zero), names(zero, zero, zero, zero), 10.0) is None


def test_sglang_names_give_queue_and_e2e_only() -> None:
    zero = hist([0, 0, 0, 0], 0.0)
    one = hist([1, 0, 0, 0], 0.05)
    split = time_split(
        {"sglang:queue_time_seconds": zero, "sglang:e2e_request_latency_seconds": zero},
        {"sglang:queue_time_seconds": one, "sglang:e2e_request_latency_seconds": one},
        None,
    )
    assert split is not None and split.engine == "sglang"
    assert split.queue is not None and split.prefill is None and split.network_ms is None
    assert split.frontend_ms is None  # no prefill or decode to take from the E2E


def test_endpoints_summed_and_one_missing_gives_none() -> None:
    a = {"x": hist([1, 0, 0, 0], 0.05)}
    b = {"x": hist([0, 2, 0, 0], 0.6)}
    both = sum_scrapes([a, b])
    assert both is not None and both["x"].count == 3 and both["x"].total == pytest.approx(0.65)
    assert sum_scrapes([a, None]) is None


def test_frontend_is_the_servers_e2e_less_its_engine_parts() -> None:
    # dyadic sums over 4 requests, so the ms are exact in binary floating point
    zero = hist([0, 0, 0, 0], 0.0)
    after = names(
        hist([4, 0, 0, 0], 0.25), hist([0, 4, 0, 0], 0.5), hist([0, 0, 4, 0], 3.0),
        hist([0, 0, 0, 4], 4.0),
    )  # fmt: skip
    split = time_split(names(zero, zero, zero, zero), after, client_e2e_mean_ms=1040.0)
    assert split is not None and split.server_e2e is not None
    assert split.frontend_ms == 1000.0 - (62.5 + 125.0 + 750.0) == 62.5
    assert split.network_ms == 40.0
    # queue, prefill, decode, frontend, network: in a request's order, adding up to the client's
    assert split.part_means() == {
        "queue": 62.5, "prefill": 125.0, "decode": 750.0, "frontend": 62.5, "network": 40.0,
    }  # fmt: skip
    assert list(split.part_means()) == ["queue", "prefill", "decode", "frontend", "network"]
    assert sum(split.part_means().values()) == split.client_e2e_mean_ms


def test_frontend_needs_all_four_histograms() -> None:
    zero = hist([0, 0, 0, 0], 0.0)
    four = hist([0, 4, 0, 0], 1.0)
    before, after = names(zero, zero, zero, zero), names(four, four, four, four)
    del before["vllm:request_prefill_time_seconds"], after["vllm:request_prefill_time_seconds"]
    split = time_split(before, after, client_e2e_mean_ms=300.0)
    assert split is not None and split.queue is not None and split.prefill is None
    assert split.frontend_ms is None and "frontend" not in split.part_means()
    assert split.network_ms == 50.0  # the E2E is still there: 300 - 250
    still = names(zero, zero, zero, zero)  # nothing moved in the decode histogram
    split = time_split(still, {**names(four, four, zero, four)}, client_e2e_mean_ms=None)
    assert split is not None and split.decode is None and split.frontend_ms is None
