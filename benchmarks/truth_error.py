"""How far loadgen's TTFT and ITL are from what the server did, at a given load.

Runs one closed-loop step against the built-in mock in fixed mode with
``--truth`` (the mock writes when each request reached its socket and when it
wrote each token, in the same monotonic clock), then prints, per request
matched by ``x-request-id``, the absolute TTFT and ITL errors, the error split
by direction (``up``: mock receive - loadgen send; ``down``: loadgen arrival -
mock write), and the step's own saturation figures (CPU, loop lag, read lag).

    python benchmarks/truth_error.py [--concurrency 64] [--requests 640] [--ttft-ms 20]
        [--itl-ms 20] [--transport auto|h1|aiohttp|httpx]

``tests/integration/test_ground_truth.py`` holds the default transport to 1 ms
at 1, 16 and 64 streams; this script is for other loads and for comparing
transports (docs/performance.md quotes both). The saturation thresholds
(``loadgen.execute.monitor.SATURATION``) were chosen from its figures at loads
where the error stays tiny and where it grows: docs/metrics.md has the table.
Prefix the command with ``taskset -c 0`` to give loadgen and the mock one core.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
import orjson

from loadgen.execute.monitor import SATURATION
from loadgen.records import read_records
from loadgen.run import RunOptions, run_scenario
from loadgen.scenario import Scenario

MS = 1e6


def row(name: str, values: list[float]) -> str:
    a = np.asarray(values) / MS
    p50, p90, p99 = np.percentile(a, [50, 90, 99])
    return f"{name:34s} p50 {p50:7.3f}  p90 {p90:7.3f}  p99 {p99:7.3f}  max {a.max():7.3f} ms"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--requests", type=int, default=640)
    ap.add_argument("--ttft-ms", type=float, default=20)
    ap.add_argument("--itl-ms", type=float, default=20)
    ap.add_argument("--transport", default="auto")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="truth-error-"))
    truth_path = work / "truth.jsonl"
    mock_args = ["--ttft-ms", str(args.ttft_ms), "--itl-ms", str(args.itl_ms)]
    sc = Scenario.model_validate(
        {
            "name": "truth-error",
            "target": {
                "transport": args.transport,
                "extra_body": {"ignore_eos": True},
                "mock": {"args": [*mock_args, "--truth", str(truth_path)]},
            },
            "workload": {
                "prompt_tokens": {"dist": "fixed", "value": 16},
                # uneven lengths keep closed-loop workers out of lockstep, as real traffic is
                "output_tokens": {"dist": "uniform", "min": 8, "max": 24},
            },
            "load": {
                "mode": "concurrency",
                "concurrency": [args.concurrency],
                "requests_per_step": args.requests,
                "warmup_requests": args.concurrency,
            },
        }
    )
    summary = run_scenario(sc, RunOptions(out_dir=work / "run", quiet=True, reports=False))
    truth = {}
    for line in truth_path.read_bytes().splitlines():
        t = orjson.loads(line)
        truth[t["request_id"]] = t
    up, down, ttft, itl = [], [], [], []
    for r in read_records(work / "run" / "records.jsonl"):
        if r.warmup or not r.ok or r.first_token_ns is None:
            continue
        t = truth[r.request_id]
        tokens = np.asarray(t["token_ns"])
        up.append(t["recv_ns"] - r.sent_ns)
        down.extend((np.asarray(r.token_ns) - tokens).tolist())
        ttft.append(abs((r.first_token_ns - r.sent_ns) - (t["token_ns"][0] - t["recv_ns"])))
        itl.extend(np.abs(np.diff(r.token_ns) - np.diff(tokens)).tolist())
    step = summary.steps[0]
    print(
        f"concurrency {args.concurrency}, {len(ttft)} requests, mock TTFT {args.ttft_ms:g} ms "
        f"ITL {args.itl_ms:g} ms, transport {args.transport}; "
        f"{step.throughput.output_tokens_per_s:,.0f} output tok/s"
    )
    print(row("|TTFT - truth|", ttft))
    print(row("|ITL - truth|", itl))
    print(row("up: mock receive - loadgen send", up))
    print(row("down: loadgen arrival - mock write", down))
    c = step.client
    read_lag = "n/a" if c.read_lag_p99_ms is None else f"{c.read_lag_p99_ms:.2f} ms"
    print(
        f"client: CPU {c.cpu_util:.0%}, loop lag p99 {c.loop_lag_p99_ms or 0:.2f} ms, "
        f"read lag p99 {read_lag}, saturated {c.saturated} "
        f"(flagged past CPU {SATURATION['cpu_util']:.0%}, loop lag "
        f"{SATURATION['loop_lag_p99_ms']:g} ms, read lag {SATURATION['read_lag_p99_ms']:g} ms); "
        f"SLA {step.sla.verdict or 'none'}"
    )


if __name__ == "__main__":
    main()
