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
        [--live]       # with the live view drawn, as `loadgen run` on a terminal draws it

``--live`` hands every record to a :class:`loadgen.report.terminal.live.LiveView` too
and runs the run's own feed (:func:`loadgen.run.live_feed.feed_view`: a pulse
and a redraw every 0.25 s) beside the load, drawing to a forced terminal on
/dev/null (all the rendering, none of a real terminal's speed), so the
figures with and without it are the view's cost.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import tempfile
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from loadgen.ceiling.measure import drive, mock_flags, pin_one_core_each
from loadgen.client.transport import TlsOptions
from loadgen.clock import now_ns
from loadgen.execute.loop import loop_factory
from loadgen.execute.monitor import LoopMonitor, Pulse
from loadgen.report.terminal.live import LiveView
from loadgen.run.live_feed import feed_view
from loadgen.target.mock import MockServer

T = TypeVar("T")


class _Pulses:
    """What feed_view asks an executor for: a monitor's pulse (over a window of 200 lags)."""

    def __init__(self) -> None:
        self.monitor = LoopMonitor(lags_ns=[50_000] * 200)

    def pulse(self) -> Pulse:
        return self.monitor.pulse()


async def with_view(work: Coroutine[Any, Any, T], view: LiveView) -> T:
    """``work`` with the live view fed and redrawn beside it, as in a run's step."""
    feed = asyncio.get_running_loop().create_task(feed_view(view, _Pulses(), None))
    try:
        return await work
    finally:
        feed.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await feed
        view.stop()


class TimedView(LiveView):
    """A live view that counts its ticks and the CPU time (this thread's) they took."""

    ticks = 0
    tick_cpu_ns = 0

    def tick(self, *args: Any, **kwargs: Any) -> None:
        t0 = time.thread_time_ns()
        super().tick(*args, **kwargs)
        self.tick_cpu_ns += time.thread_time_ns() - t0
        self.ticks += 1


def live_view(concurrency: int) -> TimedView:
    from rich.console import Console

    sink = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the view
    console = Console(file=sink, force_terminal=True, width=100, height=50)
    view = TimedView(now=now_ns, console=console, steps_planned=1)
    view.start_step(f"[1/1] concurrency {concurrency}", None, None)
    return view


def record_cost_ns(tokens: int, n: int = 200_000) -> float:
    """CPU ns of one LiveState.record call, for a streamed answer of ``tokens`` token events."""
    from loadgen.records import Record
    from loadgen.report.terminal.live_state import LiveState

    stamps = list(range(1_000_000, 1_000_000 + tokens * 1000, 1000))
    rec = Record(0, 0, False, "r", 8, tokens, sent_ns=0, end_ns=stamps[-1] + 1, ok=True)
    rec.first_token_ns, rec.last_token_ns, rec.token_ns = stamps[0], stamps[-1], stamps
    rec.output_events = tokens
    state = LiveState()
    state.start_step("x", None, None, 0)
    t0 = time.thread_time_ns()
    for _ in range(n):
        state.record(rec)
    return (time.thread_time_ns() - t0) / n


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
    ap.add_argument(
        "--live", action="store_true", help="with the live view fed and drawn (to /dev/null)"
    )
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
                view = live_view(args.concurrency) if args.live else None
                with asyncio.Runner(loop_factory=loop_factory()) as runner:
                    work = drive(
                        url,
                        regime,
                        transport=kind,
                        concurrency=args.concurrency,
                        tokens=args.tokens,
                        seconds=args.seconds,
                        tls=tls,
                        mock_pid=server.pid,
                        observe=view.record if view is not None else None,
                    )
                    res = runner.run(work if view is None else with_view(work, view))
                mock = f"{res.mock_util:.0%}" if res.mock_util is not None else "-"
                if view is not None:
                    kind += "+live"
                    per_tick = view.tick_cpu_ns / max(view.ticks, 1) / 1e6
                    per_record = record_cost_ns(args.tokens)
                    client_per_record = res.client_cpu_s * 1e9 / max(res.requests_ok, 1)
                    print(
                        f"  view: {view.ticks / res.wall_s:.1f} redraws/s, {per_tick:.2f} ms CPU "
                        f"each ({view.tick_cpu_ns / 1e9 / res.client_cpu_s:.1%} of the client's "
                        f"CPU); record() {per_record:.0f} ns each "
                        f"({per_record / client_per_record:.2%} of the client's CPU a request)"
                    )
                print(
                    f"{kind:8s} {res.tokens_per_s:>10,.0f} tok/s  client CPU {res.client_util:.0%}"
                    f"  {res.tokens_per_cpu_s:>10,.0f} tok per CPU-s  mock CPU {mock}"
                    f"  ok {res.requests_ok}  failed {res.failed}"
                    f"  count mismatches {res.mismatches}"
                )


if __name__ == "__main__":
    main()
