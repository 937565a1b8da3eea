"""The GPU agent's own CPU use: 8 fake GPUs sampled every 100 ms, polled like loadgen does.

Starts ``python -m loadgen.gpu_agent --fake-nvml 8 --interval-ms 100 --port 0`` as a
child, lets it warm up, then reads the child's user+system CPU time from
``/proc/<pid>/stat`` over a measured stretch while polling ``/samples?since=``
once a second (what the collector does). Prints CPU seconds per wall second
(1.0 = one core busy), resident memory, and the agent's tick/overrun counts.

The fake answers in microseconds of Python; real NVML calls are ioctls of
tens of microseconds each, so on a GPU host add that (about 9 calls per GPU
per tick) to the figure printed here.

    python benchmarks/agent_overhead.py [--seconds 10] [--gpus 8] [--interval-ms 100]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15 of proc(5)
    return (utime + stime) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--gpus", type=int, default=8)
    p.add_argument("--interval-ms", type=float, default=100.0)
    args = p.parse_args()
    cmd = [
        sys.executable,
        "-m",
        "loadgen.gpu_agent",
        "--port",
        "0",
        "--fake-nvml",
        str(args.gpus),
        "--interval-ms",
        str(args.interval_ms),
    ]
    child = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        url = child.stdout.readline().strip().rsplit(" ", 1)[1]
        time.sleep(1.0)  # start-up (imports) is not steady-state cost
        with httpx.Client(base_url=url, timeout=5) as client:
            since = client.get("/clock").json()["mono_ns"]
            cpu0, wall0 = cpu_seconds(child.pid), time.monotonic()
            rows = 0
            while time.monotonic() - wall0 < args.seconds:
                time.sleep(1.0)
                samples = client.get("/samples", params={"since": since}).json()["samples"]
                rows += len(samples)
                since = samples[-1]["t_ns"] if samples else since
            cpu1, wall1 = cpu_seconds(child.pid), time.monotonic()
            stats = client.get("/health").json()["stats"]
        share = (cpu1 - cpu0) / (wall1 - wall0)
        print(
            f"agent: {args.gpus} fake GPUs, {args.interval_ms:g} ms sampling, "
            f"polled every 1 s for {wall1 - wall0:.1f} s"
        )
        print(f"cpu: {share:.4f} CPU-s per wall-s ({100 * share:.2f}% of one core)")
        print(
            f"rss: {rss_mib(child.pid):.1f} MiB; rows served: {rows}; "
            f"ticks: {stats['sampling_ticks']}, overruns: {stats['sampling_overruns']}"
        )
    finally:
        child.send_signal(signal.SIGTERM)
        child.wait(timeout=10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
