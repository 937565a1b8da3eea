"""The per-token ladder: the offer rises rung by rung until the client or the mock is the limit."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from loadgen.ceiling.measure import (
    LADDER,
    Ceiling,
    CeilingReport,
    Pinning,
    climb,
    rated_rung,
    rung_limit,
)
from loadgen.ceiling.report import caveats, ceiling_json, estimate, format_ceiling

STREAMS = 256


def rung(offered: float, *, util: float, per_read: float = 1.0, lag_ms: float = 0.2,
         delivered: float | None = None, ok: int = 100) -> Ceiling:  # fmt: skip
    """A 2 s rung: ``delivered`` tokens/s (default: the offer), the client ``util`` busy."""
    tokens = round((offered if delivered is None else delivered) * 2.0)
    return Ceiling(
        regime="per-token", wall_s=2.0, requests_ok=ok, failed=0, output_tokens=tokens,
        client_cpu_s=2.0 * util, mock_cpu_s=1.9, reads=round(tokens / per_read),
        read_lag_p99_ms=lag_ms, itl_ms=STREAMS * 1000 / offered, offered_tokens_per_s=offered,
    )  # fmt: skip


def machine(limit: Callable[[float], Ceiling]) -> tuple[list[Ceiling], str | None, list[float]]:
    """``climb`` against a fake: ``limit(offered)`` is what a rung at that offer measures."""
    gaps: list[float] = []

    def run_rung(k: int, gap_ms: float) -> Ceiling:
        gaps.append(gap_ms)
        c = limit(STREAMS * 1000 / gap_ms)
        c.offered_tokens_per_s = c.itl_ms = None  # climb fills them in
        return c

    ladder, stopped = climb(run_rung, 5.0, STREAMS)
    return ladder, stopped, gaps


def test_the_offer_rises_until_the_client_core_is_full() -> None:
    # the client spends 1 CPU-second per 90,000 tokens: full from 90,000 tokens/s offered
    ladder, stopped, gaps = machine(lambda o: rung(o, util=min(1.0, o / 90_000)))
    assert stopped == "client"
    assert gaps == [5.0, 5.0 / 1.5, 2.5]  # 51,200, 76,800, then 102,400: full
    assert [c.offered_tokens_per_s for c in ladder] == pytest.approx([51_200, 76_800, 102_400])
    assert rated_rung(ladder) is ladder[-1]
    report = CeilingReport(Pinning(2, 0, 1, "pinned"), "h1", STREAMS, 128, 2.0, 5.0,
                           [ladder[-1]], ladder, stopped)  # fmt: skip
    text = format_ceiling(report)
    assert "per-token offered 51,200 -> 76,800 -> 102,400 tokens/s" in text
    assert "stopped: the client's core was 100% busy: its per-token ceiling" in text
    assert text.count("\nper-token ") == 4  # three rows and the ladder line
    assert caveats(report) == []
    est = estimate(report)
    assert est is not None and "floor" not in est.basis
    out = ceiling_json(report)
    assert out["per_token_stopped"] == "client"
    assert len(out["per_token_ladder"]) == 3  # type: ignore[arg-type]


def test_a_mock_that_falls_behind_is_named_the_limit() -> None:
    # the mock writes at most 90,000 tokens/s one by one; past that, several to a write
    def limit(o: float) -> Ceiling:
        if o <= 90_000:
            return rung(o, util=o / 150_000)
        return rung(o, util=0.6, delivered=90_000, per_read=2.5, lag_ms=0.3)

    ladder, stopped, _ = machine(limit)
    assert stopped == "mock"
    rated = rated_rung(ladder)
    assert rated is ladder[1]  # 76,800: the highest still one token per read
    report = CeilingReport(Pinning(2, 0, 1, "pinned"), "h1", STREAMS, 128, 2.0, 5.0,
                           [rated], ladder, stopped)  # fmt: skip
    text = format_ceiling(report)
    assert "stopped: the mock was the limit: it delivered 90,000 tokens/s (88% of the offer" in text
    assert "rated at 76,800 offered (the highest rung with one token per read)" in text
    (line,) = caveats(report)
    assert "the mock was the limit" in line and "a floor, not the client's ceiling" in line
    est = estimate(report)
    assert est is not None and "a floor: the client's core was 51% busy" in est.basis
    assert "(the mock was the limit)" in est.basis


def test_a_rate_that_stops_following_the_offer_is_the_mock() -> None:
    # one token per read, the client half idle, but only 70% of the offer delivered
    assert rung_limit(rung(100_000, util=0.5, delivered=70_000)) == "mock"
    assert rung_limit(rung(100_000, util=0.5, delivered=95_000)) is None


def test_a_client_kept_from_its_core_stops_the_ladder() -> None:
    ladder, stopped, _ = machine(lambda o: rung(o, util=0.4, per_read=4.0, lag_ms=20.0))
    assert stopped == "late" and len(ladder) == 1
    report = CeilingReport(Pinning(2, 0, 1, "pinned"), "h1", STREAMS, 128, 2.0, 5.0,
                           [ladder[0]], ladder, stopped)  # fmt: skip
    assert "4.0 tokens per read, read lag p99 20.0 ms) with its core 40% busy" in format_ceiling(
        report
    )
    # the rated rung is the one that read late: its own caveat says so, once
    (line,) = caveats(report)
    assert "4.0 tokens per read, not one: the client read late" in line


def test_the_top_of_the_ladder_ends_it() -> None:
    ladder, stopped, gaps = machine(lambda o: rung(o, util=0.5))
    assert stopped is None and len(ladder) == len(LADDER)
    assert gaps[-1] == pytest.approx(5.0 / LADDER[-1])
    assert rung_limit(rung(50_000, util=0.5, ok=0)) == "failed"
