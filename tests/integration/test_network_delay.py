"""Where the time went, against a known network: the mock's ``--network-delay-ms``.

The mock delays what the client sends by D before its server sees it, and each
write by D after the server made it, so the client's E2E and TTFT are the server's
plus 2 * D (and loopback), while /metrics' histograms leave the delay out. The
step's time split must find it: ``network_ms`` (client E2E mean - server E2E mean)
is 2 * D, and 0 without a delay; the tokens' spacing is the pacer's, unchanged.
The truth file's stamps are the socket's, so the client's TTFT still matches them.
Fixed mode (TTFT 20 ms, ITL 10 ms); four and then eight streams at once, and four
over https.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import orjson
import pytest

from loadgen.records import Record
from loadgen.scenario import Scenario
from loadgen.summary import StepSummary, Summary

# durations held to tight bounds: run apart from the parallel tests (-m timing)
pytestmark = pytest.mark.timing

RunFixture = Callable[[Scenario], tuple[Summary, list[Record], Path]]
ITL_MS = 10.0
DELAY_MS = 30.0
#: the allowance on 2 * D: loopback, the client's parsing and a busy shared machine
SLACK_MS = 5.0


def delayed_step(
    run: RunFixture,
    scenario: Callable[..., Scenario],
    delay_ms: float,
    concurrency: int,
    truth: Path,
    tls: tuple[Path, Path] | None = None,
) -> tuple[StepSummary, list[Record], dict[str, dict[str, object]]]:
    """One step; with ``tls`` (certificate, key) over https."""
    args = ["--ttft-ms", "20", "--itl-ms", str(ITL_MS), "--network-delay-ms", str(delay_ms)]
    args += ["--truth", str(truth)]
    target: dict[str, object] = {"extra_body": {"ignore_eos": True}}
    if tls is not None:
        args += ["--tls-cert", str(tls[0]), "--tls-key", str(tls[1])]
        target["tls"] = {"ca_file": str(tls[0])}
    sc = scenario(
        target={**target, "mock": {"args": args}},
        workload={"output_tokens": {"dist": "fixed", "value": 8}},
        load={
            "concurrency": [concurrency],
            "requests_per_step": 6 * concurrency,
            "warmup_requests": 0,
        },
    )
    summary, records, _ = run(sc)
    step = summary.steps[0]
    assert step.requests.failed == 0 and len(records) == 6 * concurrency
    rows = [orjson.loads(line) for line in truth.read_bytes().splitlines()]
    by_id = {str(row["request_id"]): row for row in rows if row["request_id"] is not None}
    return step, records, by_id


@pytest.mark.parametrize(("scheme", "concurrency"), [("http", 4), ("http", 8), ("https", 4)])
def test_the_split_finds_twice_the_one_way_delay(
    run: RunFixture,
    scenario: Callable[..., Scenario],
    tmp_path: Path,
    tls_files: tuple[Path, Path],
    scheme: str,
    concurrency: int,
) -> None:
    """One run; every figure must hold in it. Over https the handshake is not delayed,
    the records are."""
    tls = tls_files if scheme == "https" else None
    label = f"{scheme} c={concurrency}"
    truth = tmp_path / "truth.jsonl"
    step, records, rows = delayed_step(run, scenario, DELAY_MS, concurrency, truth, tls)
    figures = delay_figures(step, records, rows)
    print(f"{label}: " + ", ".join(f"{k} {v:.3f}" for k, v in figures.items()))
    assert within(figures), figures


def delay_figures(
    step: StepSummary, records: list[Record], truth: dict[str, dict[str, object]]
) -> dict[str, float]:
    """What the delay should show, in ms: network, client - server TTFT mean, ITL p50,
    the truth's TTFT error (median), the server's TTFT mean."""
    split = step.time_split
    assert split is not None and split.server_e2e and split.server_ttft
    assert split.server_e2e.count == len(records)
    assert split.network_ms is not None and split.server_ttft.mean_ms is not None
    assert step.ttft_ms.mean is not None and step.itl_ms.p50 is not None
    errors = []
    for r in records:
        row = truth[r.request_id]
        assert row["network_delay_ns"] == int(DELAY_MS * 1e6)
        assert row["token_stamp"] == "kernel", row  # when each write left the socket
        token_ns, recv_ns = row["token_ns"], row["recv_ns"]
        assert isinstance(token_ns, list) and isinstance(recv_ns, int)
        assert r.first_token_ns is not None
        errors.append(abs((r.first_token_ns - r.sent_ns) - (token_ns[0] - recv_ns)) / 1e6)
    return {
        "network": split.network_ms,
        "ttft_gap": step.ttft_ms.mean - split.server_ttft.mean_ms,
        "itl_p50": step.itl_ms.p50,
        "truth_err": float(np.median(errors)),
        "server_ttft": split.server_ttft.mean_ms,
    }


def within(f: dict[str, float]) -> bool:
    return (
        abs(f["network"] - 2 * DELAY_MS) <= SLACK_MS
        and abs(f["ttft_gap"] - 2 * DELAY_MS) <= SLACK_MS
        and abs(f["itl_p50"] - ITL_MS) <= 1.0  # every write shifted, none spread apart
        and f["truth_err"] < 0.1  # the truth's stamps are the socket's (kernel): the client's
        and f["server_ttft"] >= 20.0 - 0.01  # the server's own TTFT leaves the path out
    )


def test_no_delay_no_network_time(
    run: RunFixture, scenario: Callable[..., Scenario], tmp_path: Path
) -> None:
    step, records, truth = delayed_step(run, scenario, 0.0, 4, tmp_path / "truth.jsonl")
    split = step.time_split
    assert split is not None and split.network_ms is not None
    print(f"no delay: network {split.network_ms:.2f} ms")
    assert abs(split.network_ms) < SLACK_MS
    assert all("network_delay_ns" not in row for row in truth.values())
    assert len(truth) == len(records)
