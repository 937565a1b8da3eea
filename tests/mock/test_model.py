"""The mock's timing on paper (loadgen.mock.model): the step formula, read in steady state."""

from __future__ import annotations

import dataclasses

import pytest

from loadgen.mock.engine import step_ns
from loadgen.mock.model import closed_loop
from loadgen.mock.settings import PROFILES, Settings

TINY = PROFILES["tiny-cpu"]


def test_one_user_waits_for_its_own_prefill_then_one_step_a_token() -> None:
    st = closed_loop(Settings(), 1, 160, 16)
    first = step_ns(TINY, 1, 160) / 1e9
    assert st.ttft_s == pytest.approx(first)
    assert st.e2e_s == pytest.approx(first + 15 * step_ns(TINY, 1, 0) / 1e9)
    assert st.throughput_rps == pytest.approx(1 / st.e2e_s)


def test_throughput_rises_to_the_batch_then_stays_and_ttft_climbs_past_it() -> None:
    rows = {c: closed_loop(Settings(), c, 160, 16) for c in (1, 4, 16, 64, 256)}
    rates = [rows[c].throughput_rps for c in (1, 4, 16)]
    assert rates == sorted(rates) and rates[2] > 4 * rates[0]
    assert rows[64].throughput_rps == pytest.approx(rows[256].throughput_rps)  # the batch is full
    assert rows[64].ttft_s > 10 * rows[16].ttft_s  # 48 requests queue for 16 slots
    assert rows[256].e2e_s == pytest.approx(256 / rows[256].throughput_rps)  # Little's law


def test_the_kv_cache_caps_the_batch_too() -> None:
    small = dataclasses.replace(TINY, kv_cache_tokens=4 * 200)
    wide = closed_loop(Settings(), 16, 184, 16)
    narrow = closed_loop(Settings(profile=small), 16, 184, 16)  # 4 requests of 200 tokens fit
    assert narrow.throughput_rps < 0.75 * wide.throughput_rps
    assert narrow.ttft_s > 5 * wide.ttft_s  # the other 12 queue


def test_fixed_mode_is_ttft_then_one_itl_a_token_per_request() -> None:
    fixed = Settings(fixed=True, ttft_ms=50, itl_ms=10)
    st = closed_loop(fixed, 8, 100, 11)
    assert (st.ttft_s, st.e2e_s) == pytest.approx((0.05, 0.15))
    assert st.throughput_rps == pytest.approx(8 / 0.15)
    burst = closed_loop(dataclasses.replace(fixed, burst=True), 8, 100, 11)
    assert burst.e2e_s == pytest.approx(0.05)
