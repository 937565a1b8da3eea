"""Metric-definition profiles on one hand-built request."""

from __future__ import annotations

import pytest

from loadgen.metrics import summarize_step
from loadgen.metrics.profiles import PROFILES
from loadgen.records import Record
from loadgen.scenario import SlaSpec
from loadgen.summary import LoadPoint

MS = 1_000_000


def request() -> Record:
    # started at 0, on the socket at 1 ms, tokens at 11, 21, 31, 41 ms, stream ended at 42 ms
    return Record(
        step=0,
        id=0,
        warmup=False,
        request_id="r",
        prompt_tokens_requested=4,
        max_tokens=4,
        start_ns=0,
        sent_ns=1 * MS,
        first_token_ns=11 * MS,
        last_token_ns=41 * MS,
        end_ns=42 * MS,
        token_ns=[11 * MS, 21 * MS, 31 * MS, 41 * MS],
        output_events=4,
        output_tokens_server=4,
        ok=True,
    )


def summarize(profile: str):  # type: ignore[no-untyped-def]
    lp = LoadPoint(mode="concurrency", concurrency=1)
    return summarize_step(0, lp, [request()], SlaSpec(), profile=PROFILES[profile])


def test_loadgen_profile() -> None:
    s = summarize("loadgen")
    assert s.ttft_ms.mean == pytest.approx(10.0)  # from the socket write
    assert s.itl_ms.count == 3 and s.itl_ms.mean == pytest.approx(10.0)
    assert s.tpot_ms.mean == pytest.approx(10.0)
    assert s.e2e_ms.mean == pytest.approx(41.0)
    assert s.icl_ms is None


def test_vllm_profile() -> None:
    s = summarize("vllm")
    assert s.ttft_ms.mean == pytest.approx(11.0)  # from the start, like vLLM's client
    assert s.tpot_ms.mean == pytest.approx((41 - 11) / 3)
    assert s.e2e_ms.mean == pytest.approx(41.0)  # to the last token
    assert s.itl_ms.count == 3


def test_aiperf_profile_calls_the_per_request_average_itl() -> None:
    s = summarize("aiperf")
    assert s.itl_ms.count == 1 and s.itl_ms.mean == pytest.approx(10.0)
    assert s.icl_ms is not None and s.icl_ms.count == 3
    assert s.e2e_ms.mean == pytest.approx(41.0)


def test_guidellm_tpot_includes_the_first_token() -> None:
    s = summarize("guidellm")
    assert s.tpot_ms.mean == pytest.approx(41 / 4)
    assert s.itl_ms.mean == pytest.approx(10.0)
    assert s.e2e_ms.mean == pytest.approx(42.0)
