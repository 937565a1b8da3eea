"""Client CPU per output token with 1 and N worker processes (load.workers).

Starts the built-in mock in burst mode (each response in one write, one SSE
event per token) pinned to the last CPU, then runs ``loadgen run`` against it
once per worker count, the whole loadgen process tree pinned to the other
CPUs. CPU is the run's own (parent and workers, reaped by it) from wait4's
rusage, so the mock is never counted. Prints output tokens, CPU seconds,
tokens per CPU-second and the ratio to one worker.

    python benchmarks/workers.py [--workers 1,2] [--concurrency 64] [--requests 4000]
        [--tokens 128] [--repeat 2]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

SCENARIO = """
name: workers-bench
target:
  url: "{url}"
  model: mock-model
  api: openai-completions
  extra_body: {{ignore_eos: true}}
workload:
  prompt_tokens: {{dist: fixed, value: 16}}
  output_tokens: {{dist: fixed, value: {tokens}}}
load: {{concurrency: [{concurrency}], requests_per_step: {requests}}}
"""


def start_mock(cpu: int | None) -> tuple[subprocess.Popen[bytes], str]:
    cmd = [sys.executable, "-m", "loadgen.mock", "--port", "0", "--ttft-ms", "0", "--burst"]
    pre = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, preexec_fn=pre)
    assert proc.stdout is not None
    match = re.search(r"(https?://\S+)", proc.stdout.readline().decode())
    if not match:
        raise SystemExit("the mock did not start")
    return proc, match.group(1)


def run_once(scenario: Path, out: Path, workers: int, cpus: set[int]) -> tuple[int, float, float]:
    """Output tokens; CPU seconds of loadgen and its workers, for the whole run (start-up
    included) and for the steps alone (``client.cpu_util_total`` x the step's length)."""
    cmd = [sys.executable, "-m", "loadgen", "run", str(scenario), "--out", str(out), "-q"]
    cmd += ["--workers", str(workers)]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: os.sched_setaffinity(0, cpus),
    )
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        assert proc.stderr is not None
        raise SystemExit(f"loadgen failed ({proc.returncode}): {proc.stderr.read().decode()}")
    summary = json.loads((out / "summary.json").read_text())
    tokens = sum(s["tokens"]["output_total"] for s in summary["steps"])
    in_steps = sum(
        (s["client"]["cpu_util_total"] or s["client"]["cpu_util"]) * s["duration_s"]
        for s in summary["steps"]
    )
    return tokens, usage.ru_utime + usage.ru_stime, in_steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    mock_cpu = cpus[-1] if len(cpus) > 1 else None
    client_cpus = set(cpus[:-1]) if len(cpus) > 1 else set(cpus)
    mock, url = start_mock(mock_cpu)
    print(f"mock (burst) at {url} on CPU {mock_cpu}; loadgen on CPUs {sorted(client_cpus)}")
    print(f"{args.concurrency} streams, {args.requests} requests of {args.tokens} tokens per run\n")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            scenario = Path(tmp) / "s.yaml"
            scenario.write_text(
                SCENARIO.format(
                    url=url,
                    tokens=args.tokens,
                    concurrency=args.concurrency,
                    requests=args.requests,
                )
            )
            print(
                "| workers | output tokens | CPU s (run) | tokens/CPU-s (run) "
                "| CPU s (steps) | tokens/CPU-s (steps) | CPU per token vs 1 worker (steps) |"
            )
            print("|---|---|---|---|---|---|---|")
            base: float | None = None
            for n in (int(x) for x in args.workers.split(",")):
                runs = [
                    run_once(scenario, Path(tmp) / f"w{n}-{k}", n, client_cpus)
                    for k in range(args.repeat)
                ]
                tokens, cpu, steps = max(runs, key=lambda r: r[0] / r[2])  # the best of them
                base = base or tokens / steps
                print(
                    f"| {n} | {tokens:,} | {cpu:.2f} | {tokens / cpu:,.0f} | {steps:.2f} "
                    f"| {tokens / steps:,.0f} | {base / (tokens / steps):.2f}x |"
                )
    finally:
        mock.terminate()
        mock.wait()


if __name__ == "__main__":
    main()
