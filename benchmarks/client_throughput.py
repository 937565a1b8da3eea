"""How many output tokens per second one loadgen process ingests, per CPU core.

Starts the built-in mock in burst mode (each response written in one go, one
SSE event per token) or paced (``--itl-ms``: every token its own write, as
from a live server) on its own CPU, then drives it from this process, pinned
to another CPU, through loadgen's real client path: transport, SSE splitter,
adapter, records. Prints tokens/s, the client's CPU use and tokens per CPU
second, for each transport: h1 (loadgen's own, the default), aiohttp and
httpx (used for HTTP/2; driven here over HTTP/1.1). The measurement is
``loadgen.ceiling.measure``'s, the one ``loadgen calibrate`` makes.

    python benchmarks/client_throughput.py [--concurrency 256] [--tokens 128] [--seconds 8]
        [--itl-ms 0]   # > 0: tokens paced, one per write, instead of a burst
        [--tls]        # https: a self-signed certificate made now with openssl
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import tempfile
from pathlib import Path

from loadgen.ceiling.measure import drive, mock_flags, pin_one_core_each
from loadgen.client.transport import TlsOptions
from loadgen.execute.loop import loop_factory
from loadgen.target.mock import MockServer


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
        measure(args, cert, Path(tmp))


def measure(args: argparse.Namespace, cert: Path | None, tmp: Path) -> None:
    regime = "per-token" if args.itl_ms > 0 else "burst"
    flags = mock_flags(regime, args.itl_ms)
    if cert is not None:
        flags += ["--tls-cert", str(cert), "--tls-key", str(cert.with_name("key.pem"))]
    tls = TlsOptions(ca_file=str(cert)) if cert else None
    with pin_one_core_each() as pinning:
        cpus = {pinning.mock_cpu} if pinning.mock_cpu is not None else None
        server = MockServer([*flags, "--model", "m"], tmp / "mock.log", cpus=cpus)
        with server as url:
            mode = f"paced at {args.itl_ms:g} ms" if args.itl_ms > 0 else "burst"
            print(f"mock {mode} server {url}; {pinning.note}")
            print(
                f"concurrency {args.concurrency}, {args.tokens} tokens per response, "
                f"{args.seconds:g} s"
            )
            for kind in args.transports.split(","):
                with asyncio.Runner(loop_factory=loop_factory()) as runner:
                    res = runner.run(
                        drive(
                            url,
                            regime,
                            transport=kind,
                            concurrency=args.concurrency,
                            tokens=args.tokens,
                            seconds=args.seconds,
                            tls=tls,
                            mock_pid=server.pid,
                        )
                    )
                mock = f"{res.mock_util:.0%}" if res.mock_util is not None else "-"
                print(
                    f"{kind:8s} {res.tokens_per_s:>10,.0f} tok/s  client CPU {res.client_util:.0%}"
                    f"  {res.tokens_per_cpu_s:>10,.0f} tok per CPU-s  mock CPU {mock}"
                    f"  ok {res.requests_ok}  failed {res.failed}"
                    f"  count mismatches {res.mismatches}"
                )


if __name__ == "__main__":
    main()
