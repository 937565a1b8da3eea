"""Does the mock keep to one token per write at a given pace? Its --truth file says.

For each ``--itl-ms`` given, starts the built-in mock (pinned to one CPU, this
process to another, as ``loadgen calibrate`` does) with ``--truth``, drives it
through loadgen's client for a few seconds, and prints the tokens/s delivered,
the share of tokens the mock wrote under 0.5 ms after the previous token of
their stream (written together, not paced), and the client's tokens per read.
The figures behind ``loadgen calibrate``'s default ``--itl-ms`` (docs/performance.md).

    python benchmarks/per_token_pace.py [--seconds 3] [--concurrency 256] 2 3 5
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import tempfile
from pathlib import Path

import orjson

from loadgen.ceiling.measure import drive, mock_flags, pin_one_core_each
from loadgen.execute.loop import loop_factory
from loadgen.target.mock import MockServer

TOGETHER_NS = 500_000


def together(truth: Path) -> float:
    """Share of a stream's token writes under 0.5 ms after the one before."""
    gaps = close = 0
    for line in truth.read_bytes().splitlines():
        stamps = orjson.loads(line)["token_ns"]
        for a, b in itertools.pairwise(stamps):
            gaps += 1
            close += b - a < TOGETHER_NS
    return close / gaps if gaps else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("itl_ms", type=float, nargs="+")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--concurrency", type=int, default=256)
    args = ap.parse_args()
    for itl in args.itl_ms:
        with pin_one_core_each() as pin, tempfile.TemporaryDirectory() as tmp:
            truth = Path(tmp) / "truth.jsonl"
            cpus = {pin.mock_cpu} if pin.mock_cpu is not None else None

            def mock_cpus(cpus: set[int] | None = cpus) -> set[int] | None:
                return cpus

            flags = [*mock_flags("per-token", itl), "--model", "m", "--truth", str(truth)]
            server = MockServer(flags, Path(tmp) / "mock.log", cpus=mock_cpus)
            with server as url, asyncio.Runner(loop_factory=loop_factory()) as runner:
                c = runner.run(
                    drive(
                        url,
                        "per-token",
                        concurrency=args.concurrency,
                        seconds=args.seconds,
                        mock_pid=server.pid,
                    )
                )
            per_read = f"{c.tokens_per_read:.2f}" if c.tokens_per_read else "-"
            print(
                f"itl {itl:g} ms: offered {args.concurrency * 1000 / itl:,.0f} tok/s, "
                f"delivered {c.tokens_per_s:,.0f}; mock wrote {together(truth):.1%} together, "
                f"mock CPU {c.mock_util or 0:.0%}; client {c.client_util:.0%} of its core, "
                f"{per_read} tokens per read, read lag p99 {c.read_lag_p99_ms or 0:.1f} ms",
                flush=True,
            )


if __name__ == "__main__":
    main()
