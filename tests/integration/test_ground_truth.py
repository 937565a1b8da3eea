"""Measured TTFT and ITL agree with what the mock server really did, within 1 ms at p99.

The mock writes its own truth (``--truth``): when it received each request and
when it wrote each token, stamped with the same monotonic clock as loadgen.
Matched by the ``x-request-id`` loadgen sends.

Both sides stamp from the kernel: loadgen's h1 transport takes each read's
arrival time from ``SO_TIMESTAMPNS`` and the mock stamps a request's receive
time the same way and each token just before its write, so neither process's
scheduling (a late wake-up, a busy loop) is in either number. Both processes
still share this machine's two CPUs with the kernel and whatever else runs, so
each case gets two attempts and must meet the bound in one full attempt.

The aiohttp transport (``target.transport: aiohttp``) can stamp only when its event
loop reads the socket; on these VMs that is up to 2 ms late at p99 even at
one stream (docs/performance.md), so it is not held to this bound here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import orjson
import pytest

from loadgen.records import Record
from loadgen.scenario import Scenario
from loadgen.summary import Summary

# durations held to tight bounds: run apart from the parallel tests (-m timing)
pytestmark = pytest.mark.timing

RunFixture = Callable[[Scenario], tuple[Summary, list[Record], Path]]
Make = Callable[..., Scenario]
MS = 1e6
ATTEMPTS = 2
BOUND_MS = 1.0


def measure(
    run: RunFixture,
    scenario: Make,
    truth_path: Path,
    concurrency: int,
    requests: int,
    itl: int,
    tls: tuple[Path, Path] | None = None,
) -> tuple[float, float]:
    """One run; returns (TTFT, ITL) p99 absolute error against the truth, in ms.

    With ``tls`` (certificate, key) the mock serves https and loadgen trusts that certificate.
    """
    truth_path.unlink(missing_ok=True)
    args = [*("--ttft-ms", "20", "--itl-ms", str(itl)), *("--truth", str(truth_path))]
    target: dict[str, object] = {"extra_body": {"ignore_eos": True}}
    if tls is not None:
        args += ["--tls-cert", str(tls[0]), "--tls-key", str(tls[1])]
        target["tls"] = {"ca_file": str(tls[0])}
    sc = scenario(
        target={**target, "mock": {"args": args}},
        # uneven lengths keep the closed-loop workers out of lockstep, as real traffic is
        workload={"output_tokens": {"dist": "uniform", "min": 8, "max": 24}},
        load={
            "concurrency": [concurrency],
            "requests_per_step": requests,
            "warmup_requests": concurrency,
        },
    )
    summary, records, out = run(sc)
    scheme = "https" if tls else "http"
    assert f"listening on {scheme}://" in (out / "mock.log").read_text()
    assert summary.steps[0].requests.failed == 0
    assert summary.target_check is not None and summary.target_check.healthy is True
    truth = {}
    for line in truth_path.read_bytes().splitlines():
        row = orjson.loads(line)
        truth[row["request_id"]] = row
    measured = [r for r in records if not r.warmup]
    assert len(measured) == requests
    ttft_err, itl_err = [], []
    for r in measured:
        t = truth[r.request_id]
        assert len(t["token_ns"]) == len(r.token_ns) == r.max_tokens
        assert r.first_token_ns is not None
        ttft_err.append(abs((r.first_token_ns - r.sent_ns) - (t["token_ns"][0] - t["recv_ns"])))
        itl_err.extend(np.abs(np.diff(r.token_ns) - np.diff(t["token_ns"])).tolist())
    return float(np.percentile(ttft_err, 99)) / MS, float(np.percentile(itl_err, 99)) / MS


@pytest.mark.parametrize(
    ("concurrency", "requests", "itl_ms"), [(1, 100, 4), (16, 320, 8), (64, 640, 20)]
)
def test_ttft_and_itl_match_server_truth(
    run: RunFixture,
    scenario: Make,
    tmp_path: Path,
    concurrency: int,
    requests: int,
    itl_ms: int,
) -> None:
    truth = tmp_path / "truth.jsonl"
    within_bound(
        f"c={concurrency}", lambda: measure(run, scenario, truth, concurrency, requests, itl_ms)
    )


def test_over_https_too(
    run: RunFixture, scenario: Make, tmp_path: Path, tls_files: tuple[Path, Path]
) -> None:
    """TLS on both ends (the mock's in memory, h1's in memory): stamps are still the kernel's."""
    truth = tmp_path / "truth.jsonl"
    within_bound("https c=16", lambda: measure(run, scenario, truth, 16, 320, 8, tls=tls_files))


def within_bound(label: str, attempt: Callable[[], tuple[float, float]]) -> None:
    """Both errors under the bound in one of ``ATTEMPTS`` runs."""
    attempts = []
    for _ in range(ATTEMPTS):
        ttft, itl = attempt()
        attempts.append((ttft, itl))
        print(f"{label}: |TTFT - truth| p99 {ttft:.3f} ms, |ITL - truth| p99 {itl:.3f} ms")
        if ttft < BOUND_MS and itl < BOUND_MS:
            break
    assert min(max(a) for a in attempts) < BOUND_MS, attempts
