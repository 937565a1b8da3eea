"""The regression gate's false-alarm rate on real A/A runs: twins of one seeded scenario.

Runs N pairs of twin runs (the same small seeded scenario against the
built-in mock, one after the other, a few seconds each), then
``loadgen compare A B --fail-if ...`` on each pair with a gate on TTFT, ITL
and E2E (p50, p99 and the mean, each ``> +0%``: any rise fails unless the
bootstrap calls it noise). A twin is the same server under the same load, so
every flag is a false alarm. Prints, per gate, how many pairs it flagged and
how many it could not test, then the fraction of pairs with any flag and a
one-line summary (docs/reports.md quotes it).

    python benchmarks/aa_gate.py [--pairs 20] [--requests 240] [--concurrency 8]
        [--keep DIR [--reuse]]

``--reuse`` compares the pairs already in ``--keep`` (a run with a summary.json
is not run again): the same twins judged by a changed gate.

Each run is a subprocess ``loadgen run`` (its own mock), each compare a
subprocess ``loadgen compare`` (the command a CI job runs); exit 1 of compare
is a flagged pair. A pair's twin runs one after the other on the same machine,
so load from elsewhere that changes between them is a real difference the
gate may see: run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GATES = tuple(
    f"{metric}.{stat} > +0%"
    for metric in ("ttft_ms", "itl_ms", "e2e_ms")
    for stat in ("p50", "p99", "mean")
)

SCENARIO = """\
name: aa
target:
  url: mock
  api: openai-chat
  model: aa-model
  extra_body: {{ignore_eos: true}}
workload:
  seed: 0
  prompt_tokens: {{dist: uniform, min: 64, max: 256}}
  output_tokens: {{dist: uniform, min: 8, max: 24}}
load:
  mode: concurrency
  concurrency: [{concurrency}]
  requests_per_step: {requests}
  warmup_requests: 4
"""


def _loadgen(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "loadgen", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def _run(scenario: Path, out: Path) -> None:
    done = _loadgen("run", str(scenario), "--out", str(out), "-q")
    if not (out / "summary.json").is_file():
        sys.exit(f"aa_gate: {out}: the run wrote no summary (exit {done.returncode}): "
                 f"{done.stderr.strip()[-300:]}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--requests", type=int, default=240, help="measured requests per run")
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--keep", type=Path, help="keep the runs here (default: a temp dir)")
    ap.add_argument("--reuse", action="store_true", help="compare the runs already in --keep")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        scenario = root / "aa.yaml"
        scenario.write_text(SCENARIO.format(concurrency=args.concurrency, requests=args.requests))
        flagged: dict[str, int] = dict.fromkeys(GATES, 0)
        untested: dict[str, int] = dict.fromkeys(GATES, 0)
        any_flag = 0
        t0 = time.monotonic()
        gate_args = [a for g in GATES for a in ("--fail-if", g)]
        for i in range(args.pairs):
            a, b = root / f"pair{i:02d}-a", root / f"pair{i:02d}-b"
            for run in (a, b):
                if not (args.reuse and (run / "summary.json").is_file()):
                    _run(scenario, run)
            done = _loadgen("compare", str(a), str(b), "--seed", str(i), *gate_args)
            if done.returncode not in (0, 1):
                sys.exit(f"aa_gate: compare exit {done.returncode}: {done.stderr.strip()}")
            lines = done.stdout.splitlines()  # each step's line: "GATE at LOAD: ..."
            for gate in GATES:
                mine = [ln for ln in lines if ln.startswith(f"{gate} at ")]
                flagged[gate] += any(": REGRESSION" in ln for ln in mine)
                untested[gate] += any("inconclusive" in ln for ln in mine)
            any_flag += done.returncode == 1
            print(f"pair {i + 1:2d}: {'FLAGGED' if done.returncode else 'ok'}", flush=True)
    n = args.pairs
    print(f"\n{'gate':<22}{'flagged':>9}{'untested':>10}")
    for gate in GATES:
        print(f"{gate:<22}{flagged[gate]:>5}/{n:<3}{untested[gate]:>6}/{n:<3}")
    checks = n * len(GATES)
    flags = sum(flagged.values())
    print(
        f"\nA/A gate: {any_flag} of {n} twin pairs flagged ({any_flag / n:.0%}) with "
        f"{len(GATES)} gates each; {flags} of {checks} gate checks ({flags / checks:.1%}); "
        f"c={args.concurrency}, {args.requests} requests a run, "
        f"{time.monotonic() - t0:.0f} s"
    )


if __name__ == "__main__":
    main()
