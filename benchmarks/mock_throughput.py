"""Tokens per second the built-in mock emits on one core, 256 streams.

Starts ``python -m loadgen.mock`` pinned to one CPU, then drives it from this
process (pinned to another CPU when there is one) with a deliberately cheap
client: a raw asyncio protocol per connection that sends a streaming
completions request, counts ``data: {`` events as bytes arrive, and sends the
next request on the same connection when the chunked body ends. Two modes:

- paced: fixed mode, ``--ttft-ms 0 --itl-ms 1`` (each stream gets a token every 1 ms)
- burst: ``--burst`` (each response written in one go, one SSE event per token)

With ``--truth`` the mock writes its ground-truth file too (to a temporary
file), and so asks the kernel for a transmit stamp of every write.

Usage: python benchmarks/mock_throughput.py [--mode paced|burst|both]
       [--streams 256] [--tokens 128] [--seconds 5] [--truth]
Targets (issue 3): paced >= 120,000 tok/s, burst >= 500,000 tok/s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Coroutine
from typing import Any

import orjson

TARGETS = {"paced": 120_000, "burst": 500_000}
PATTERN = b"data: {"
END = b"\r\n0\r\n\r\n"


class Stream(asyncio.Protocol):
    """One keep-alive connection sending request after request, counting events."""

    def __init__(self, request: bytes, counter: list[int], done: asyncio.Future[None]):
        self.request = request
        self.counter = counter
        self.done = done
        self.tail = b""
        self.transport: asyncio.Transport | None = None
        self.stopped = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        transport.write(self.request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        self.counter[1] += 1
        window = self.tail + data
        self.counter[0] += window.count(PATTERN)
        self.tail = window[-(len(PATTERN) - 1) :]
        if window.endswith(END):
            self.tail = b""
            if self.stopped:
                self.transport.close()  # type: ignore[union-attr]
            else:
                self.transport.write(self.request)  # type: ignore[union-attr]

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(None)


def build_request(port: int, tokens: int) -> bytes:
    body = orjson.dumps(
        {
            "model": "bench",
            "prompt": "hello " * 16,
            "max_tokens": tokens,
            "ignore_eos": True,
            "stream": True,
        }
    )
    head = (
        f"POST /v1/completions HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n"
        f"content-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def drive(
    port: int, streams: int, tokens: int, seconds: float, pid: int
) -> tuple[float, float]:
    loop = asyncio.get_running_loop()
    counter = [0, 0]  # events, reads
    request = build_request(port, tokens)
    protocols = []
    for _ in range(streams):
        done: asyncio.Future[None] = loop.create_future()
        _, proto = await loop.create_connection(
            lambda d=done: Stream(request, counter, d), "127.0.0.1", port
        )
        protocols.append(proto)
    await asyncio.sleep(1.0)  # warm-up
    c0, r0, t0 = counter[0], counter[1], time.perf_counter()
    cpu0, own0 = cpu_seconds(pid), time.process_time()
    await asyncio.sleep(seconds)
    c1, r1, t1 = counter[0], counter[1], time.perf_counter()
    cpu1, own1 = cpu_seconds(pid), time.process_time()
    print(
        f"       load client used {(own1 - own0) / (t1 - t0):.0%} of a core; "
        f"{(c1 - c0) / max(r1 - r0, 1):.2f} events per read (1.00 = every event alone)",
        flush=True,
    )
    for proto in protocols:
        proto.stopped = True
    await asyncio.wait([p.done for p in protocols], timeout=5.0)
    return (c1 - c0) / (t1 - t0), (cpu1 - cpu0) / (t1 - t0)


def run(coro: Coroutine[Any, Any, tuple[float, float]]) -> tuple[float, float]:
    """Run the load client on uvloop when installed (the asyncio loop costs ~3x more)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    return uvloop.run(coro)


def start_server(
    mode: str, cpu: int | None, truth: str | None = None
) -> tuple[subprocess.Popen[str], int]:
    flags = ["--ttft-ms", "0", "--itl-ms", "1"] if mode == "paced" else ["--burst"]
    if truth is not None:
        flags += ["--truth", truth]
    proc = subprocess.Popen(
        [sys.executable, "-m", "loadgen.mock", "--port", "0", *flags],
        stdout=subprocess.PIPE,
        text=True,
    )
    if cpu is not None:
        os.sched_setaffinity(proc.pid, {cpu})
    line = proc.stdout.readline() if proc.stdout else ""
    if "listening on" not in line:
        proc.kill()
        raise SystemExit(f"mock did not start: {line!r}")
    return proc, int(line.rsplit(":", 1)[1])


def run_mode(mode: str, args: argparse.Namespace) -> float:
    cpus = sorted(os.sched_getaffinity(0))
    server_cpu = cpus[0]
    if len(cpus) > 1:
        os.sched_setaffinity(0, set(cpus[1:]))
    truth = None
    if args.truth:
        fd, truth = tempfile.mkstemp(suffix=".jsonl")
        os.close(fd)
    proc, port = start_server(mode, server_cpu, truth)
    try:
        rate, cpu = run(drive(port, args.streams, args.tokens, args.seconds, proc.pid))
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        os.sched_setaffinity(0, set(cpus))
        if truth is not None:
            os.unlink(truth)
    verdict = "ok" if rate >= TARGETS[mode] else "BELOW TARGET"
    print(
        f"{mode:5s}: {rate:12,.0f} tok/s  server CPU {cpu:4.0%} of one core (pinned to CPU "
        f"{server_cpu}; {rate / max(cpu, 1e-9):,.0f} tok per server CPU-second)  "
        f"streams={args.streams} tokens/request={args.tokens}{' truth' if args.truth else ''}  "
        f"target {TARGETS[mode]:,}: {verdict}",
        flush=True,
    )
    return rate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=["paced", "burst", "both"], default="both")
    parser.add_argument("--streams", type=int, default=256)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--truth", action="store_true", help="the mock writes --truth too")
    args = parser.parse_args()
    modes = ["paced", "burst"] if args.mode == "both" else [args.mode]
    for mode in modes:
        run_mode(mode, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
