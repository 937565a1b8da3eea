"""A long run against the built-in mock with every fault on: is anything lost, does memory grow?

Runs ``loadgen run`` as a child process (closed loop at a moderate concurrency,
one step a minute, each step a fixed number of requests so that "planned" is
known), the mock injecting resets, 503s, stalls, malformed events, disconnects,
SSE ``event: error`` frames mid-stream, a UTF-8 BOM before the first
``data:``, and ``408`` + ``connection: close`` on an idle kept-alive connection.
It samples the child's resident memory and open file descriptors from /proc
every ``--every`` seconds, then reports:

- nothing lost: records.jsonl holds one row per planned request, every id once,
  and every step's counts add up to its requests;
- RSS flat: the mean of the first minute's samples against the last minute's,
  while the load runs (past a first minute of start-up growth, before the
  reports are drawn); a change over ``--rss-tolerance`` is flagged;
- the counts by error kind over the whole run (how the client classes the new
  faults is not asserted here: only counted).

Exit 0 when nothing is lost and RSS is flat, 1 otherwise. Not part of CI:
``--minutes 0.5`` is a smoke test of the script itself.

    python benchmarks/soak.py [--minutes 10] [--concurrency 16] [--every 5] [--out DIR]

Linux only (reads /proc). Ends only the process it started.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

FAULTS = (
    "reset=0.01,http503=0.01,stall=0.005,malformed=0.005,disconnect=0.01,"
    "error_event=0.01,bom=0.01,idle_408=0.02"
)
STEP_S = 60.0  # a step's target length: requests_per_step is sized to it


def scenario(minutes: float, concurrency: int, requests: int) -> str:
    steps = max(1, math.ceil(minutes * 60 / STEP_S))
    return json.dumps(
        {
            "name": "soak",
            "target": {
                "url": "mock",
                "api": "openai-chat",
                "model": "mock-model",
                "extra_body": {"ignore_eos": True},
                "timeouts_s": {"first_token": 10, "idle": 5, "total": 30},
                "mock": {
                    "args": [
                        *("--ttft-ms", "20", "--itl-ms", "5", "--stall-s", "0.5"),
                        *("--fault", FAULTS),
                    ]
                },
            },
            "workload": {
                "prompt_tokens": {"dist": "uniform", "min": 32, "max": 512},
                "output_tokens": {"dist": "uniform", "min": 16, "max": 128},
            },
            "load": {
                "mode": "concurrency",
                "concurrency": [concurrency] * steps,
                "requests_per_step": requests,
                "warmup_requests": 0,
                "stop_early": None,
            },
        }
    )


def sample(pid: int) -> tuple[float, int] | None:
    """(RSS in MiB, open fds) of ``pid``, or None once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None
    rss_kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS"))
    return rss_kb / 1024, fds


def check_records(
    out: Path, summary: dict[str, Any], per_step: int
) -> tuple[list[str], Counter[str], int]:
    """(what is lost or miscounted, rows by outcome, rows) from records.jsonl and the summary."""
    problems: list[str] = []
    kinds: Counter[str] = Counter()
    ids: Counter[tuple[int, int]] = Counter()
    rows = 0
    with (out / "records.jsonl").open("rb") as fh:
        for line in fh:
            row = json.loads(line)
            rows += 1
            ids[(row["step"], row["id"])] += 1
            kinds["ok" if row["ok"] else str(row["error_kind"])] += 1
    steps = summary["steps"]
    planned = per_step * len(steps)
    if rows != planned:
        problems.append(f"lost: records.jsonl holds {rows} rows for {planned} planned requests")
    twice = [k for k, n in ids.items() if n > 1]
    if twice:
        problems.append(f"lost: {len(twice)} request id(s) recorded twice, e.g. {twice[0]}")
    for s in steps:
        r = s["requests"]
        parts = r["ok"] + r["failed"] + r["cancelled"] + r["warmup"] + r["ramp"]
        if not r["total"] == parts == per_step:
            problems.append(f"lost: step {s['index']} counts {r} do not add up to {per_step}")
    return problems, kinds, rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--every", type=float, default=5.0, help="seconds between samples")
    ap.add_argument(
        "--requests",
        type=int,
        default=None,
        help="requests per step (default: about a minute's worth at the concurrency)",
    )
    ap.add_argument("--rss-tolerance", type=float, default=0.05, help="flat: within this share")
    ap.add_argument("--out", type=Path, default=None, help="results dir (default: a temp dir)")
    args = ap.parse_args()
    # ~0.37 s a request (20 ms + 72 tokens x 5 ms): a minute at C streams, or the whole
    # run when it is shorter than a minute
    per_step_s = min(STEP_S, args.minutes * 60)
    requests = args.requests or max(args.concurrency, int(per_step_s * args.concurrency / 0.4))
    work = Path(tempfile.mkdtemp(prefix="soak-"))
    out = args.out or work / "results"
    path = work / "soak.yaml"
    path.write_text(scenario(args.minutes, args.concurrency, requests))  # JSON is YAML
    cmd = [sys.executable, "-c", "from loadgen.cli import main; main()", "run", str(path)]
    cmd += ["--out", str(out), "-q", "--replace"]
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    t0 = time.monotonic()
    print(f"soak: {args.minutes:g} min at concurrency {args.concurrency}, {requests} a step")
    print(f"faults: {FAULTS}")
    print(f"{'t (s)':>7} {'RSS (MiB)':>10} {'fds':>5}")
    # (t, RSS, fds, records.jsonl's size) of every sample
    taken: list[tuple[float, float, int, int]] = []
    try:
        while child.poll() is None:
            got = sample(child.pid)
            if got is not None:
                taken.append((time.monotonic() - t0, *got, _size(out / "records.jsonl")))
                print(f"{taken[-1][0]:7.0f} {got[0]:10.1f} {got[1]:5d}", flush=True)
            time.sleep(args.every)
    finally:
        if child.poll() is None:
            child.terminate()
            child.wait(30)
    wall = time.monotonic() - t0
    summary = json.loads((out / "summary.json").read_text())
    problems, kinds, n_rows = check_records(out, summary, requests)
    steps = summary["steps"]
    planned = requests * len(steps)
    print(f"exit {child.returncode}; {wall:.0f} s; {len(steps)} steps; {planned} planned")
    print(f"records: {n_rows} rows; ok {kinds.pop('ok', 0)}")
    print("errors by kind: " + (", ".join(f"{k} {n}" for k, n in kinds.most_common()) or "none"))
    reconnects = sum(s["requests"]["reconnects"] for s in steps)
    print(f"reconnects (summary): {reconnects}")
    # while the load ran: records.jsonl grew both before and after the sample (not the
    # set-up, nor the reports drawn at the end, whose matplotlib is no leak)
    rows = [
        (t, rss, fds)
        for (t, rss, fds, size), (_, _, _, before), (_, _, _, after) in zip(
            taken[1:-1], taken, taken[2:], strict=False
        )
        if before < size < after
    ]
    flat = _rss_verdict(rows, args.rss_tolerance)
    if flat is not None:
        problems.append(flat)
    if child.returncode not in (0, 3):
        problems.append(f"loadgen exited {child.returncode}")
    print("nothing lost" if not any(p.startswith("lost") for p in problems) else "LOST")
    for line in problems:
        print(f"problem: {line}")
    print(f"results: {out}")
    return 1 if problems else 0


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _rss_verdict(rows: list[tuple[float, float, int]], tolerance: float) -> str | None:
    """Print the first and last minute's mean RSS (after start-up); a problem line or None."""
    if len(rows) < 4:
        print("RSS: too few samples to compare")
        return None
    end = rows[-1][0]
    start = rows[0][0] + min(60.0, (end - rows[0][0]) / 4)  # past the start-up's growth
    span = min(60.0, (end - start) / 2)
    first = [r for r in rows if start <= r[0] < start + span]
    last = [r for r in rows if r[0] > end - span]
    a = sum(r[1] for r in first) / len(first)
    b = sum(r[1] for r in last) / len(last)
    fds = [r[2] for r in rows if r[0] >= start]
    change = (b - a) / a
    print(
        f"RSS: first {span:.0f} s {a:.1f} MiB, last {span:.0f} s {b:.1f} MiB ({change:+.1%}); "
        f"fds {min(fds)}-{max(fds)}"
    )
    if abs(change) > tolerance:
        return f"RSS changed {change:+.1%} from the first to the last {span:.0f} s"
    return None


if __name__ == "__main__":
    sys.exit(main())
