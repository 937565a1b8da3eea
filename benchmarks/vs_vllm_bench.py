"""loadgen against ``vllm bench serve``: the same workload on the same server, side by side.

Workload (both tools): random prompts of exactly ``--input-len`` tokens (vLLM's
random dataset; loadgen ``workload.prompt_as: token_ids``), exactly
``--output-len`` output tokens (``ignore_eos``), ``--num-prompts`` requests at
most ``--concurrency`` in flight (vLLM: ``--max-concurrency`` with an infinite
rate; loadgen: a closed loop of that many workers), on ``/v1/completions``.

The two tools run back to back, alternating, ``--rounds`` times. Each loadgen
run is summarised twice from the same records: with ``--metrics-profile vllm``
(vLLM's definitions) and with loadgen's default ones. The table prints the mean
over rounds and each round's value (min..max).

    python benchmarks/vs_vllm_bench.py [--state FILE | --url URL --model M --model-dir DIR]
        [--input-len 64] [--output-len 32] [--num-prompts 48] [--concurrency 8] [--rounds 3]

Without ``--state``/``--url`` a compiled server is started with
``scripts/vllm-cpu.sh start`` (its own state file) and stopped at the end.
docs/performance.md ("Agreement with vLLM's benchmark") explains the differences.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from loadgen.metrics import summarize_step
from loadgen.metrics.profiles import PROFILES
from loadgen.records import read_records
from loadgen.run import RunOptions, run_scenario
from loadgen.scenario import Scenario
from loadgen.summary import StepSummary

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "vllm-cpu.sh"
BENCH = REPO / "benchmarks" / "vllm_bench_serve.sh"

#: (row label, vLLM result key, loadgen getter); loadgen latencies are in ms already
ROWS: tuple[tuple[str, str, str], ...] = (
    ("request throughput (req/s)", "request_throughput", "throughput.requests_per_s"),
    ("output throughput (tok/s)", "output_throughput", "throughput.output_tokens_per_s"),
    ("TTFT mean (ms)", "mean_ttft_ms", "ttft_ms.mean"),
    ("TTFT p50 (ms)", "median_ttft_ms", "ttft_ms.p50"),
    ("TTFT p99 (ms)", "p99_ttft_ms", "ttft_ms.p99"),
    ("TPOT mean (ms)", "mean_tpot_ms", "tpot_ms.mean"),
    ("TPOT p99 (ms)", "p99_tpot_ms", "tpot_ms.p99"),
    ("ITL mean (ms)", "mean_itl_ms", "itl_ms.mean"),
    ("ITL p99 (ms)", "p99_itl_ms", "itl_ms.p99"),
    ("E2E mean (ms)", "mean_e2el_ms", "e2e_ms.mean"),
)


def parse_state(text: str) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line)
    return {k.strip(): v.strip() for k, v in pairs}


def run_vllm_bench(args: argparse.Namespace, server: dict[str, str], out: Path) -> dict[str, Any]:
    env = {
        **os.environ,
        "INPUT_LEN": str(args.input_len),
        "OUTPUT_LEN": str(args.output_len),
        "NUM_PROMPTS": str(args.num_prompts),
        "CONCURRENCY": str(args.concurrency),
        "RESULT_DIR": str(out),
    }
    cmd = ["bash", str(BENCH), server["url"], server["model"], server["model_dir"]]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    fields = parse_state(proc.stdout)
    if proc.returncode != 0 or "result" not in fields:
        sys.exit(f"vllm bench serve failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(Path(fields["result"]).read_text())
    if result.get("failed"):
        sys.exit(f"vllm bench serve: {result['failed']} requests failed")
    return result


def run_loadgen(
    args: argparse.Namespace, server: dict[str, str], out: Path
) -> dict[str, StepSummary]:
    vocab = json.loads((Path(server["model_dir"]) / "config.json").read_text())["vocab_size"]
    sc = Scenario.model_validate(
        {
            "name": "vs-vllm-bench",
            "target": {
                "url": server["url"],
                "api": "openai-completions",
                "model": server["model"],
                "extra_body": {"ignore_eos": True},
            },
            "workload": {
                "prompt_as": "token_ids",
                "vocab_size": vocab,
                "prompt_tokens": {"dist": "fixed", "value": args.input_len},
                "output_tokens": {"dist": "fixed", "value": args.output_len},
            },
            "load": {
                "mode": "concurrency",
                "concurrency": [args.concurrency],
                "requests_per_step": args.num_prompts,
            },
        }
    )
    summary = run_scenario(
        sc, RunOptions(out_dir=out, quiet=True, reports=False, metrics_profile="vllm")
    )
    step = summary.steps[0]
    if step.requests.failed:
        sys.exit(f"loadgen: {step.requests.errors}")
    records = list(read_records(out / "records.jsonl"))
    default = summarize_step(0, step.load, records, sc.sla, profile=PROFILES["loadgen"])
    return {"vllm": step, "loadgen": default}


def getter(step: StepSummary, path: str) -> float:
    obj: Any = step
    for part in path.split("."):
        obj = getattr(obj, part)
    return float(obj)


def cell(values: list[float]) -> str:
    mean = statistics.fmean(values)
    return f"{mean:9.3f} ({min(values):.3f}..{max(values):.3f})"


def table(bench: list[dict[str, Any]], lg: list[dict[str, StepSummary]]) -> str:
    head = (
        "| metric | vllm bench serve | loadgen --metrics-profile vllm | diff "
        "| loadgen default | diff |"
    )
    lines = [head, "|---|---|---|---|---|---|"]
    for label, key, path in ROWS:
        v = [float(b[key]) for b in bench]
        p = [getter(r["vllm"], path) for r in lg]
        d = [getter(r["loadgen"], path) for r in lg]
        mv = statistics.fmean(v)

        def diff(xs: list[float], mv: float = mv) -> str:
            return f"{(statistics.fmean(xs) / mv - 1) * 100:+.1f}%" if mv else "n/a"

        lines.append(f"| {label} | {cell(v)} | {cell(p)} | {diff(p)} | {cell(d)} | {diff(d)} |")
    return "\n".join(lines)


def start_server(state: Path) -> dict[str, str]:
    env = {**os.environ, "STATE_FILE": str(state)}
    proc = subprocess.run(
        ["bash", str(SCRIPT), "start"], env=env, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        sys.exit(f"could not start vLLM:\n{proc.stderr[-3000:]}")
    return parse_state(proc.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--state", type=Path, help="state file of a running vllm-cpu.sh server")
    ap.add_argument("--url")
    ap.add_argument("--model", default="tiny-llama")
    ap.add_argument("--model-dir", help="the model's directory (tokenizer, config.json)")
    ap.add_argument("--input-len", type=int, default=64)
    ap.add_argument("--output-len", type=int, default=32)
    ap.add_argument("--num-prompts", type=int, default=48)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path, default=REPO / "results" / "vs-vllm-bench")
    args = ap.parse_args()

    started: Path | None = None
    if args.state:
        server = parse_state(args.state.read_text())
    elif args.url:
        if not args.model_dir:
            ap.error("--url needs --model-dir")
        server = {"url": args.url, "model": args.model, "model_dir": args.model_dir}
    else:
        started = Path(tempfile.mkdtemp(prefix="vs-vllm-")) / "server.state"
        server = start_server(started)
    try:
        bench: list[dict[str, Any]] = []
        lg: list[dict[str, StepSummary]] = []
        for i in range(args.rounds):
            bench.append(run_vllm_bench(args, server, args.out / f"round{i}" / "vllm"))
            lg.append(run_loadgen(args, server, args.out / f"round{i}" / "loadgen"))
            print(
                f"round {i}: vllm {bench[-1]['request_throughput']:.2f} req/s, "
                f"loadgen {lg[-1]['vllm'].throughput.requests_per_s:.2f} req/s",
                file=sys.stderr,
            )
    finally:
        if started is not None:
            subprocess.run(
                ["bash", str(SCRIPT), "stop"],
                env={**os.environ, "STATE_FILE": str(started)},
                check=False,
            )
    print(
        f"input {args.input_len}, output {args.output_len} (ignore_eos), "
        f"{args.num_prompts} prompts, concurrency {args.concurrency}, {args.rounds} rounds; "
        "mean (min..max); diff = loadgen mean / vLLM mean - 1"
    )
    print(table(bench, lg))


if __name__ == "__main__":
    main()
