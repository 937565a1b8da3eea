"""Measured TTFT and ITL agree with what the mock server really did, within 0.1 ms at p99.

The mock writes its own truth (``--truth``): when each request reached its
socket and when each token's write left it, both the kernel's stamps
(``SO_TIMESTAMPNS`` on receive, ``SO_TIMESTAMPING`` transmit stamps on send)
in the same monotonic clock as loadgen. Matched by the ``x-request-id`` loadgen
sends. loadgen's h1 transport takes each read's arrival time from
``SO_TIMESTAMPNS`` too, so neither process's scheduling (a late wake-up, a
preemption between a clock read and a send) is in the truth, and each case
passes or fails on one run.

loadgen's own error is measured, not excused: a process that reads late, on a
machine whose CPUs are busy, reads several tokens at once, and the kernel gives
that read one stamp, the arrival of its last segment. loadgen records, per
token, how much earlier than its stamp it may have come (``token_slack_ns``,
docs/metrics.md "Client error"). Each token must be within that of the truth:
never before it, never later by more than its slack (``Agreement``); what is
left past the slack is held to 0.1 ms at p99, and the tokens the slack did not
cover are counted. The raw differences and the tokens with a slack are printed
beside it. On an idle machine no token has one and the raw p99 is the same.

The aiohttp transport (``target.transport: aiohttp``) can stamp only when its event
loop reads the socket; on these VMs that is up to 2 ms late at p99 even at
one stream (docs/performance.md), so it is not held to this bound here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
#: |loadgen - truth| at p99, TTFT and ITL alike (README: "within 0.1 ms at p99")
BOUND_MS = 0.1
#: the two processes' clock readings of one moment, apart at most (ns)
TOLERANCE_NS = 100_000


@dataclass
class Agreement:
    """loadgen's TTFT and ITL against the truth's, request by request (ns).

    ``ttft``/``itl``: the absolute differences. ``ttft_rest``/``itl_rest``: what is
    left of each past loadgen's own error bound (``Record.token_slack_ns``: a token
    read late together with a later one carries that one's arrival and says by how
    much it may be off); ``uncovered``: tokens whose stamp lies past the truth by
    more than their slack (or before it), beyond the clocks' tolerance.
    """

    ttft: list[float] = field(default_factory=list)
    itl: list[float] = field(default_factory=list)
    ttft_rest: list[float] = field(default_factory=list)
    itl_rest: list[float] = field(default_factory=list)
    slacked: int = 0  # tokens loadgen gave a slack (read together with a later event)
    uncovered: int = 0  # tokens whose error its slack did not cover
    tokens: int = 0

    def add(
        self,
        first_ns: int,
        sent_ns: int,
        token_ns: list[int],
        row: dict[str, Any],
        slack: list[int] | None,
    ) -> None:
        """One request: loadgen's first-token (or first tool-call) stamp, send stamp,
        token stamps and their slack; ``row``, its truth line, whose stamps must be the
        kernel's."""
        assert row["token_stamp"] == "kernel", row
        truth = row["token_ns"]
        n = len(token_ns)
        assert len(truth) == n
        s = np.zeros(n, dtype=np.int64)
        if slack:
            s[: len(slack)] = slack
        late = np.asarray(token_ns, dtype=np.int64) - np.asarray(truth, dtype=np.int64)
        # past the slack, or before the truth: what loadgen's bound did not cover
        rest = np.maximum(late - s, -late).clip(min=0)
        self.uncovered += int(np.count_nonzero(rest > TOLERANCE_NS))
        first = token_ns.index(first_ns)
        ttft = (first_ns - sent_ns) - (truth[first] - row["recv_ns"])
        self.ttft.append(abs(ttft))
        self.ttft_rest.append(max(ttft - int(s[first]), -ttft, 0))
        gaps = np.diff(late)  # loadgen's gap less the truth's: within [-s[i-1], s[i]]
        self.itl.extend(np.abs(gaps).tolist())
        self.itl_rest.extend(np.maximum(gaps - s[1:], -gaps - s[:-1]).clip(min=0).tolist())
        self.slacked += int(np.count_nonzero(s))
        self.tokens += n

    def check(self, label: str, ttft_bound_ms: float = BOUND_MS) -> None:
        """Print the figures; what is left past loadgen's own bound must be under
        ``BOUND_MS`` at p99 (TTFT: ``ttft_bound_ms``), in this one run."""
        for name, err in (("TTFT", self.ttft), ("ITL", self.itl)):
            print(f"{label}: |{name} - truth| {spread(err)}")
        print(f"{label}: {self.slacked} of {self.tokens} tokens with a slack, "
              f"{self.uncovered} not covered by it; past it: TTFT {spread(self.ttft_rest)}, "
              f"ITL {spread(self.itl_rest)}")  # fmt: skip
        ttft, itl = (float(np.percentile(e, 99)) / MS for e in (self.ttft_rest, self.itl_rest))
        assert ttft < ttft_bound_ms and itl < BOUND_MS, (ttft, itl)


def spread(err: list[float]) -> str:
    p50, p99, top = (float(v) / MS for v in np.percentile(err, [50, 99, 100]))
    return f"p50 {p50:.3f} p99 {p99:.3f} max {top:.3f} ms"


def agreement(records: list[Record], truth_path: Path) -> Agreement:
    """Each record against its truth line (matched by ``x-request-id``)."""
    truth = {}
    for line in truth_path.read_bytes().splitlines():
        row = orjson.loads(line)
        truth[row["request_id"]] = row
    found = Agreement()
    for r in records:
        assert r.first_token_ns is not None and len(r.token_ns) == r.max_tokens
        found.add(r.first_token_ns, r.sent_ns, r.token_ns, truth[r.request_id], r.token_slack_ns)
    return found


def measure(
    run: RunFixture,
    scenario: Make,
    truth_path: Path,
    concurrency: int,
    requests: int,
    itl: int,
    tls: tuple[Path, Path] | None = None,
) -> Agreement:
    """One run; its readings against the truth.

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
    measured = [r for r in records if not r.warmup]
    assert len(measured) == requests
    return agreement(measured, truth_path)


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
    measure(run, scenario, truth, concurrency, requests, itl_ms).check(f"c={concurrency}")


def test_over_https_too(
    run: RunFixture, scenario: Make, tmp_path: Path, tls_files: tuple[Path, Path]
) -> None:
    """TLS on both ends (the mock's in memory, h1's in memory): stamps are still the kernel's."""
    truth = tmp_path / "truth.jsonl"
    measure(run, scenario, truth, 16, 320, 8, tls=tls_files).check("https c=16")
