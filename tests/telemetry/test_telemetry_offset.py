"""Offset estimation: the midpoint of the shortest round trip."""

from __future__ import annotations

from loadgen.telemetry import ClockProbe, best_offset


def test_best_probe_wins_and_bounds_the_error() -> None:
    true_offset = 5_000_000_000
    probes = [
        # slow reply, stamped late: would be off by 40 ms
        ClockProbe(t0_ns=100, agent_ns=100 + true_offset + 90_000_000, t1_ns=100_000_100),
        # fast, symmetric round trip
        ClockProbe(t0_ns=200_000_000, agent_ns=200_050_000 + true_offset, t1_ns=200_100_000),
        ClockProbe(t0_ns=300_000_000, agent_ns=300_400_000 + true_offset, t1_ns=301_000_000),
    ]
    est = best_offset(probes)
    assert est is not None
    assert est.offset_ns == true_offset
    assert est.uncertainty_ns == 50_000
    assert est.measured_at_ns == 200_100_000
    assert est.to_local(1_000 + true_offset) == 1_000


def test_asymmetric_probe_stays_within_its_bound() -> None:
    probe = ClockProbe(t0_ns=0, agent_ns=1_000 + 9_000, t1_ns=10_000)  # reply stamped late
    est = best_offset([probe])
    assert est is not None
    assert abs(est.offset_ns - 1_000) <= est.uncertainty_ns


def test_no_probes() -> None:
    assert best_offset([]) is None
