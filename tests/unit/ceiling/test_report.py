"""The calibrate estimate and caveats: pure functions of measured figures (no server)."""

from __future__ import annotations

import pytest

from loadgen.ceiling.measure import Ceiling, CeilingReport, Pinning
from loadgen.ceiling.report import about, caveats, ceiling_json, estimate, format_ceiling


def ceiling(regime: str, **kw: float | int | None) -> Ceiling:
    base: dict[str, float | int | None] = {
        "wall_s": 2.0,
        "requests_ok": 100,
        "failed": 0,
        "output_tokens": 200_000,
        "client_cpu_s": 2.0,  # 100,000 tokens per CPU-second, a full core
        "mock_cpu_s": 0.5,
        "reads": 200_000,
        "read_lag_p99_ms": 0.2,
    }
    base.update(kw)
    return Ceiling(regime=regime, **base)  # type: ignore[arg-type]


def report(cores: int, *ceilings: Ceiling) -> CeilingReport:
    pin = Pinning(cores, 0, cores - 1, "client pinned to CPU 0")
    return CeilingReport(pin, "h1", 256, 128, 2.0, 5.0, list(ceilings))


def test_figures_are_ratios_of_what_was_measured() -> None:
    c = ceiling("burst", output_tokens=600_000, client_cpu_s=1.5, reads=6_000)
    assert c.tokens_per_s == 300_000
    assert c.tokens_per_cpu_s == 400_000
    assert c.client_util == 0.75
    assert c.mock_util == 0.25
    assert c.tokens_per_read == 100


@pytest.mark.parametrize(("cores", "workers"), [(1, 1), (2, 1), (3, 1), (4, 2), (16, 14)])
def test_workers_leave_a_core_for_the_system_and_one_for_the_mock(cores: int, workers: int) -> None:
    burst = ceiling("burst", output_tokens=600_000)  # 300,000 per CPU-second
    est = estimate(report(cores, burst, ceiling("per-token")))
    assert est is not None
    assert est.workers == workers
    assert est.tokens_per_s == workers * 100_000  # the one-token-per-write figure leads
    assert est.burst_tokens_per_s == workers * 300_000
    assert f"= {cores} cores - 1 for the system - 1 for the mock" in est.basis


def test_the_text_says_what_the_machine_can_drive() -> None:
    text = format_ceiling(report(4, ceiling("burst", output_tokens=600_000), ceiling("per-token")))
    assert "this machine can drive about 200,000 output tokens/s with 2 workers" in text
    assert "up to 600,000 where the server writes tokens in bursts" in text
    assert "cores: 4 (client pinned to CPU 0)" in text


def test_no_estimate_without_a_successful_request() -> None:
    failed = ceiling("per-token", requests_ok=0, failed=5, output_tokens=0)
    assert estimate(report(2, failed)) is None
    assert caveats(report(2, failed)) == ["per-token: no request succeeded (5 failed): no figure"]


def test_a_busy_mock_is_named_as_the_limit() -> None:
    busy = ceiling("burst", mock_cpu_s=1.96)
    (line,) = caveats(report(2, busy))
    assert "the mock's core was 98% busy: the mock, not the client, was the limit" in line


def test_a_starved_client_is_named() -> None:
    starved = ceiling("burst", client_cpu_s=1.0)
    (line,) = caveats(report(2, starved))
    assert "the client used 50% of its core while the mock had time to spare" in line


def test_tokens_read_together_say_who_fell_behind() -> None:
    mock_behind = ceiling("per-token", reads=50_000, read_lag_p99_ms=0.1)
    client_late = ceiling("per-token", reads=50_000, read_lag_p99_ms=12.0)
    assert "the mock fell behind" in caveats(report(2, mock_behind))[0]
    assert "the client read late (read lag p99 12.0 ms)" in caveats(report(2, client_late))[0]
    assert caveats(report(2, ceiling("per-token"))) == []  # one token per read: nothing to say


def test_json_has_every_figure() -> None:
    out = ceiling_json(report(2, ceiling("burst"), ceiling("per-token")))
    assert set(out["regimes"]) == {"burst", "per-token"}  # type: ignore[arg-type]
    assert out["estimate"]["workers"] == 1  # type: ignore[index]
    assert out["cores"] == 2


def test_about_keeps_three_significant_figures() -> None:
    assert about(146_606) == "147,000"
    assert about(1_234_567) == "1,230,000"


def test_an_unfilled_client_core_makes_the_estimate_a_floor() -> None:
    paced = ceiling("per-token", client_cpu_s=1.5)  # 75% of its core, one token per read
    est = estimate(report(2, paced))
    assert est is not None
    assert "a floor: the client's core was 75% busy" in est.basis
    full = estimate(report(2, ceiling("per-token")))
    assert full is not None
    assert "floor" not in full.basis
    late = estimate(report(2, ceiling("per-token", client_cpu_s=1.5, reads=50_000)))
    assert late is not None
    assert "floor" not in late.basis  # tokens read together: flattering, not a floor
