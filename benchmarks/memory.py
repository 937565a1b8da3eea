"""How much memory one loadgen run holds per finished request: peak RSS over a big burst step.

Runs one closed-loop step against the built-in mock in burst mode (each
response written in one go, no delays) in a child process: ``--requests``
requests (default 1,000,000) of ``--tokens`` output tokens (default 128) at
``--concurrency`` (default 256), or a step of ``--duration-s`` seconds
instead. The child runs the scenario as ``loadgen run`` does, reports
included: ``run_scenario`` with the reports off (the run itself, records.jsonl
and summary.json), its peak RSS read, then ``write_reports`` (steps.csv, the
plots, report.md and report.html, from records.jsonl) as the run would call
it (``--no-reports``: the run alone). Its resident memory is sampled from
/proc every ``--every`` seconds; at the end it prints the run's peak RSS (the
kernel's high-water mark before the reports), the whole process's (reports
included), the growth over the start-up RSS per finished request, requests/s
and how long the reports took.

    python benchmarks/memory.py [--requests 1000000] [--tokens 128] [--concurrency 256]
        [--duration-s S] [--every 1] [--no-reports] [--out DIR]

Which loadgen is measured is whatever ``import loadgen`` finds (PYTHONPATH).
Linux only (reads /proc). Ends only the process it started.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = """
import json, sys, time
from pathlib import Path
from loadgen.run import RunOptions, run_scenario
from loadgen.report.documents.writer import write_reports
from loadgen.scenario.models import Scenario
def hwm_kib():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
sc = Scenario.model_validate(json.loads(sys.argv[1]))
out = Path(sys.argv[2])
run_scenario(sc, RunOptions(out_dir=out, quiet=True, reports=False))
facts = {"run_hwm_kib": hwm_kib()}
if sys.argv[3] == "reports":
    t = time.monotonic()
    write_reports(out)
    facts["reports_s"] = time.monotonic() - t
facts["hwm_kib"] = hwm_kib()
(out / "memory.json").write_text(json.dumps(facts))
"""


def scenario(args: argparse.Namespace) -> dict[str, object]:
    load: dict[str, object] = {
        "mode": "concurrency",
        "concurrency": [args.concurrency],
        "warmup_requests": 0,
        "stop_early": None,
    }
    if args.duration_s:
        load["duration_s"] = args.duration_s
    else:
        load["requests_per_step"] = args.requests
    return {
        "name": "memory",
        "target": {
            "url": "mock",
            "api": "openai-completions",
            "model": "mock-model",
            "extra_body": {"ignore_eos": True},
            "mock": {"args": ["--burst", "--ttft-ms", "0"]},
        },
        "workload": {
            "prompt_tokens": {"dist": "fixed", "value": 8},
            "output_tokens": {"dist": "fixed", "value": args.tokens},
        },
        "load": load,
    }


def status_kib(pid: int) -> dict[str, int] | None:
    """VmRSS and VmHWM (peak RSS) of ``pid`` in KiB, or None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    out = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(rest.split()[0])
    return out if len(out) == 2 else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=1_000_000)
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--concurrency", type=int, default=256)
    ap.add_argument("--duration-s", type=float, default=None, help="a timed step instead")
    ap.add_argument("--every", type=float, default=1.0, help="seconds between samples")
    ap.add_argument("--no-reports", action="store_true", help="the run alone, no reports")
    ap.add_argument("--out", type=Path, default=None, help="results dir (default: a temp dir)")
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="memory-")) / "results"
    sc = json.dumps(scenario(args))
    reports = "none" if args.no_reports else "reports"
    child = subprocess.Popen([sys.executable, "-c", CHILD, sc, str(out), reports])
    what = f"{args.duration_s:g} s" if args.duration_s else f"{args.requests:,} requests"
    print(f"memory: {what} of {args.tokens} tokens at concurrency {args.concurrency}, burst mock")
    t0 = time.monotonic()
    rows: list[tuple[float, int]] = []  # (t, RSS KiB)
    peak = 0
    next_print = 0.0
    try:
        while child.poll() is None:
            got = status_kib(child.pid)
            if got is not None:
                t = time.monotonic() - t0
                rows.append((t, got["VmRSS"]))
                peak = max(peak, got["VmHWM"])
                if t >= next_print:
                    print(f"  {t:7.0f} s  RSS {got['VmRSS'] / 1024:8.1f} MiB", flush=True)
                    next_print = t + max(args.every, 10.0)
            time.sleep(args.every)
    finally:
        if child.poll() is None:
            child.terminate()
            child.wait(30)
    wall = time.monotonic() - t0
    summary = json.loads((out / "summary.json").read_text())
    step = summary["steps"][-1]
    done = step["requests"]["total"]
    base = min((rss for t, rss in rows if t >= 2.0), default=rows[0][1] if rows else 0)
    print(
        f"exit {child.returncode}; {done:,} requests ({step['requests']['ok']:,} ok) "
        f"in {step['duration_s']:.1f} s: {done / step['duration_s']:,.0f} requests/s "
        f"({wall:.0f} s with start-up and summary)"
    )
    facts = json.loads((out / "memory.json").read_text())
    run_peak, peak = facts["run_hwm_kib"], max(peak, facts["hwm_kib"])
    print(
        f"peak RSS of the run {run_peak / 1024:,.1f} MiB; RSS after start-up {base / 1024:,.1f} MiB"
    )
    if "reports_s" in facts:
        print(
            f"peak RSS of the whole process, reports included, {peak / 1024:,.1f} MiB "
            f"(reports written in {facts['reports_s']:.1f} s)"
        )
    if done:
        print(f"(run peak - start-up) per request: {(run_peak - base) * 1024 / done:,.0f} bytes")
    print(f"results: {out}")


if __name__ == "__main__":
    main()
