"""How many output tokens per second one loadgen process ingests, per CPU core.

Starts the built-in mock in burst mode (each response written in one go, one
SSE event per token) or paced (``--itl-ms``: every token its own write, as
from a live server) on its own CPU, then drives it from this process, pinned
to another CPU, through loadgen's real client path: transport, SSE splitter,
adapter, records. Prints tokens/s, the client's CPU use and tokens per CPU
second, for each transport: h1 (loadgen's own, the default), aiohttp and
httpx (used for HTTP/2; driven here over HTTP/1.1).

    python benchmarks/client_throughput.py [--concurrency 256] [--tokens 128] [--seconds 8]
        [--itl-ms 0]   # > 0: tokens paced, one per write, instead of a burst
        [--tls]        # https: a self-signed certificate made now with openssl
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from loadgen.client import ADAPTERS, Requester, RequestTimeouts, make_transport
from loadgen.client.transport import TlsOptions
from loadgen.records import Record
from loadgen.runner.drivers import Budget, closed_loop, send_each
from loadgen.scenario import WorkloadSpec
from loadgen.workload import Workload, step_rng


def start_mock(
    cpu: int | None, itl_ms: float, cert: Path | None
) -> tuple[subprocess.Popen[bytes], str]:
    cmd = [sys.executable, "-m", "loadgen.mock", "--port", "0", "--ttft-ms", "0"]
    cmd += ["--itl-ms", str(itl_ms)] if itl_ms > 0 else ["--burst"]
    if cert is not None:
        cmd += ["--tls-cert", str(cert), "--tls-key", str(cert.with_name("key.pem"))]
    pre = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, preexec_fn=pre)
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    match = re.search(r"(https?://\S+)", line)
    if not match:
        raise SystemExit(f"mock did not start: {line!r}")
    return proc, match.group(1)


def make_certificate(folder: Path) -> Path:
    """A self-signed certificate for 127.0.0.1 (``cert.pem``, key in ``key.pem`` beside it)."""
    cert = folder / "cert.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(folder / "key.pem"), "-out", str(cert), "-subj", "/CN=localhost"),
            *("-addext", "subjectAltName=IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
    )
    return cert


async def drive(
    url: str, kind: str, concurrency: int, tokens: int, seconds: float, cert: Path | None
) -> dict[str, float]:
    tls = TlsOptions(ca_file=str(cert)) if cert else None
    transport = make_transport(kind, limit=concurrency, connect_timeout_s=10, tls=tls)
    requester = Requester(
        transport,
        ADAPTERS["openai-completions"],
        base_url=url,
        model="m",
        extra_body={"ignore_eos": True},
        headers={},
        timeouts=RequestTimeouts.from_seconds(60, 60, 120),
        run_id="bench",
    )
    workload = WorkloadSpec.model_validate(
        {
            "prompt_tokens": {"dist": "fixed", "value": 8},
            "output_tokens": {"dist": "fixed", "value": tokens},
        }
    )
    endless = Workload.prepare(workload, chat=False).endless(step_rng(0, 0, 0))
    done: list[Record] = []

    def specs():  # type: ignore[no-untyped-def]
        yield from endless

    async def send(spec, scheduled):  # type: ignore[no-untyped-def]
        return await requester.send(spec, 0, scheduled)

    # warm the pool, then measure
    run = send_each(send, done.append)
    warm = [next(endless) for _ in range(concurrency)]
    await closed_loop(run, iter(warm), concurrency)
    done.clear()
    r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    await closed_loop(run, specs(), concurrency, budget=Budget(duration_ns=int(seconds * 1e9)))
    r1, t1 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    await transport.aclose()
    ok = [r for r in done if r.ok]
    toks = sum(r.output_tokens for r in ok)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    wall = t1 - t0
    return {
        "requests_ok": len(ok),
        "failed": len(done) - len(ok),
        "tokens_per_s": toks / wall,
        "cpu_util": cpu / wall,
        "tokens_per_cpu_s": toks / cpu if cpu else 0.0,
        "mismatches": sum(1 for r in ok if r.count_mismatch),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--concurrency", type=int, default=256)
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--transports", default="h1,aiohttp,httpx")
    ap.add_argument(
        "--itl-ms",
        type=float,
        default=0,
        help="0: burst (each response in one write); else the mock paces tokens this far "
        "apart, so each arrives on its own, as from a live server",
    )
    ap.add_argument("--tls", action="store_true", help="https, with a certificate made now")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cert = make_certificate(Path(tmp)) if args.tls else None
        measure(args, cert)


def measure(args: argparse.Namespace, cert: Path | None) -> None:
    cpus = sorted(os.sched_getaffinity(0))
    mock_cpu = cpus[-1] if len(cpus) > 1 else None
    if mock_cpu is not None:
        os.sched_setaffinity(0, {cpus[0]})
    proc, url = start_mock(mock_cpu, args.itl_ms, cert)
    try:
        import uvloop

        runner = uvloop.run
    except ImportError:
        runner = asyncio.run
    try:
        mode = f"paced at {args.itl_ms:g} ms" if args.itl_ms > 0 else "burst"
        print(f"mock {mode} server {url}; client on CPU {cpus[0]}, mock on CPU {mock_cpu}")
        print(
            f"concurrency {args.concurrency}, {args.tokens} tokens per response, {args.seconds:g} s"
        )
        for kind in args.transports.split(","):
            res = runner(drive(url, kind, args.concurrency, args.tokens, args.seconds, cert))
            print(
                f"{kind:8s} {res['tokens_per_s']:>10,.0f} tok/s  client CPU {res['cpu_util']:.0%}"
                f"  {res['tokens_per_cpu_s']:>10,.0f} tok per CPU-s  ok {res['requests_ok']:.0f}"
                f"  failed {res['failed']:.0f}  count mismatches {res['mismatches']:.0f}"
            )
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    main()
