"""A long run against the built-in mock with faults on: does loadgen's memory or fd count grow?

Runs ``loadgen run`` as a child process (one step per minute at a moderate
closed-loop load, the mock injecting resets, stalls, 503s, malformed events and
disconnects), samples the child's resident memory and open file descriptors
from /proc every ``--every`` seconds, and prints them over time with the
run's error counts. Not part of CI: the figures go in the closing note.

    python benchmarks/soak.py [--minutes 30] [--concurrency 16] [--every 30] [--out DIR]

Linux only (reads /proc). Ends only the process it started.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FAULTS = "reset=0.01,http503=0.01,stall=0.005,malformed=0.005,disconnect=0.01"


def scenario(minutes: int, concurrency: int) -> str:
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
                "concurrency": [concurrency] * minutes,
                "duration_s": 60,
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=int, default=30)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--every", type=float, default=30.0, help="seconds between samples")
    ap.add_argument("--out", type=Path, default=None, help="results dir (default: a temp dir)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="soak-"))
    out = args.out or work / "results"
    path = work / "soak.yaml"
    path.write_text(scenario(args.minutes, args.concurrency))  # JSON is YAML
    cmd = [sys.executable, "-c", "from loadgen.cli import main; main()", "run", str(path)]
    child = subprocess.Popen([*cmd, "--out", str(out), "-q"], stdout=subprocess.DEVNULL)
    t0 = time.monotonic()
    print(f"soak: {args.minutes} min at concurrency {args.concurrency}, faults {FAULTS}")
    print(f"{'t (s)':>7} {'RSS (MiB)':>10} {'fds':>5}")
    rows: list[tuple[float, float, int]] = []
    try:
        while child.poll() is None:
            got = sample(child.pid)
            if got is not None:
                rows.append((time.monotonic() - t0, *got))
                print(f"{rows[-1][0]:7.0f} {got[0]:10.1f} {got[1]:5d}", flush=True)
            time.sleep(args.every)
    finally:
        if child.poll() is None:
            child.terminate()
            child.wait(30)
    summary = json.loads((out / "summary.json").read_text())
    errors: dict[str, int] = {}
    ok = 0
    for step in summary["steps"]:
        ok += step["requests"]["ok"]
        for kind, n in step["requests"]["errors"].items():
            errors[kind] = errors.get(kind, 0) + n
    print(f"exit {child.returncode}; {len(summary['steps'])} steps; {ok} ok; errors {errors}")
    if len(rows) >= 3:
        later = rows[len(rows) // 3 :]  # after the start-up third
        rss = [r[1] for r in later]
        fds = [r[2] for r in later]
        print(f"RSS after start-up: {min(rss):.1f}-{max(rss):.1f} MiB; fds {min(fds)}-{max(fds)}")
    print(f"results: {out}")


if __name__ == "__main__":
    main()
