"""Command line of the agent: ``python -m loadgen.gpu_agent`` / ``loadgen agent``.

Owns argument parsing, start-up checks (token, NVML), the one "listening"
line on stdout, and orderly shutdown on SIGINT/SIGTERM. Exit codes: 0 after a
clean shutdown, 2 for bad input or when there is nothing to watch (no NVML
and no ``--host-stats``) or the port cannot be bound.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import os
import signal
import stat
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from loadgen.bearer import is_loopback as _is_loopback
from loadgen.clihelp import ClickStyleParser
from loadgen.gpu_agent.host import HostSampler
from loadgen.gpu_agent.listener import DEFAULT_HEADER_TIMEOUT_S, DEFAULT_MAX_CONNECTIONS, Limits
from loadgen.gpu_agent.ring import Ring, Row, SamplingThread
from loadgen.gpu_agent.sampler import NvmlLike, Sampler
from loadgen.gpu_agent.server import AgentState, build_app, start_server

__all__ = ["build_parser", "main"]

log = logging.getLogger("loadgen.gpu_agent")
PROG = "loadgen-agent"
DEFAULT_PORT = 9347


def build_parser() -> argparse.ArgumentParser:
    p = ClickStyleParser(
        prog="loadgen agent",
        allow_abbrev=False,
        description="GPU telemetry sidecar: samples NVML and serves it over HTTP.",
        epilog="Example:\n  loadgen agent --port 9347 --token-env AGENT_TOKEN",
    )
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help="port; 0 picks a free one")
    p.add_argument("--interval-ms", type=float, default=100.0, help="sampling interval (100)")
    p.add_argument("--buffer-s", type=float, default=600.0, help="ring buffer span (600 = 10 min)")
    token = p.add_mutually_exclusive_group()
    token.add_argument(
        "--token-env",
        metavar="NAME",
        help="require 'Authorization: Bearer <$NAME>' on every endpoint but /health",
    )
    token.add_argument(
        "--token-file",
        metavar="PATH",
        help="the same, with the token read from a file (surrounding whitespace dropped)",
    )
    p.add_argument(
        "--insecure",
        action="store_true",
        help="allow a non-loopback --host without a token (anyone reaching the port reads it)",
    )
    p.add_argument(
        "--max-connections",
        type=int,
        default=DEFAULT_MAX_CONNECTIONS,
        help=f"open connections served at once; more get a 503 ({DEFAULT_MAX_CONNECTIONS})",
    )
    p.add_argument(
        "--header-timeout-s",
        type=float,
        default=DEFAULT_HEADER_TIMEOUT_S,
        help=f"drop a client whose request head takes longer ({DEFAULT_HEADER_TIMEOUT_S:g})",
    )
    p.add_argument(
        "--host-stats",
        action="store_true",
        help="also report host CPU and memory from /proc; run even without NVML",
    )
    p.add_argument(
        "--log-level",
        default="INFO",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="the agent's log level (default %(default)s)",
    )
    # For tests and benchmarks only (docs/agent.md): N fake GPUs instead of NVML.
    p.add_argument("--fake-nvml", type=int, metavar="N", default=None, help=argparse.SUPPRESS)
    # ... and what those fake GPUs are called (a test compares runs on different GPUs)
    p.add_argument("--fake-gpu-name", default="Fake GPU", help=argparse.SUPPRESS)
    return p


def _fail(message: str) -> int:
    print(f"{PROG}: {message}", file=sys.stderr, flush=True)
    return 2


def _open_nvml(fake: int | None, fake_name: str = "Fake GPU") -> tuple[NvmlLike | None, str]:
    """The NVML to use and, when there is none, why."""
    if fake is not None:
        from loadgen.gpu_agent.fake_nvml import FakeNvml

        return FakeNvml(fake, animate=True, name=fake_name), ""
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception as exc:  # ImportError, NVMLError_LibraryNotFound, DriverNotLoaded, ...
        return None, str(exc) or type(exc).__name__
    return pynvml, ""


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    if _refused_token_flag(sys.argv[1:] if argv is None else argv):
        return _fail(
            "--token is not accepted (a token on the command line shows in ps); "
            "use --token-file PATH or --token-env NAME"
        )
    try:
        args = parser.parse_args(None if argv is None else list(argv))
    except SystemExit as exc:  # --help or a usage error; argparse has printed
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    bad = _check_numbers(args)
    if bad:
        return _fail(bad)
    logging.basicConfig(stream=sys.stderr, level=args.log_level, format=f"{PROG}: %(message)s")
    token, bad = _read_token(args)
    if bad:
        return _fail(bad)
    if not _is_loopback(args.host) and not token and not args.insecure:
        return _fail(
            f"--host {args.host} without a token would serve telemetry to anyone who can "
            "reach it; pass --token-file PATH or --token-env NAME, or --insecure"
        )
    nvml, why = _open_nvml(args.fake_nvml, args.fake_gpu_name)
    sampler = Sampler(nvml) if nvml is not None else None
    if sampler is not None and not sampler.gpus:
        why = "NVML found no GPU"
        sampler = None
    if sampler is None and not args.host_stats:
        return _fail(f"no NVML ({why}); nothing to sample. Use --host-stats for host CPU/memory")
    if not _is_loopback(args.host) and not token:
        log.warning(
            "--insecure: listening on %s without a token; anyone who can reach this port "
            "can read the telemetry",
            args.host,
        )
    state = _state(args, sampler, token)
    limits = Limits(args.max_connections, args.header_timeout_s)
    try:
        return asyncio.run(_serve(state, args.host, args.port, limits))
    finally:
        if nvml is not None and sampler is not None:
            nvml.nvmlShutdown()


def _check_numbers(args: argparse.Namespace) -> str:
    """What is wrong with the numeric flags, or ''."""
    if args.interval_ms <= 0 or args.buffer_s <= 0 or not 0 <= args.port <= 65535:
        return "--interval-ms and --buffer-s must be > 0 and --port in 0..65535"
    if args.max_connections < 1:
        return f"--max-connections must be >= 1, got {args.max_connections}"
    if not 0 < args.header_timeout_s <= 3600:
        return f"--header-timeout-s must be in (0, 3600], got {args.header_timeout_s:g}"
    return ""


#: the most a --token-file may hold: a token is one line
TOKEN_FILE_LIMIT = 4096


def _read_token(args: argparse.Namespace) -> tuple[str | None, str]:
    """The bearer token from --token-env or --token-file (or None), and what went wrong."""
    if args.token_env:
        token = os.environ.get(args.token_env)
        if not token:
            return None, f"--token-env {args.token_env}: that environment variable is empty"
        return token, ""
    if args.token_file:
        try:
            path = Path(args.token_file)
            if not stat.S_ISREG(path.stat().st_mode):  # /dev/zero, a pipe: never ends
                return None, f"--token-file {args.token_file}: not a regular file"
            with path.open("rb") as f:
                raw = f.read(TOKEN_FILE_LIMIT + 1)
            if len(raw) > TOKEN_FILE_LIMIT:
                return None, (
                    f"--token-file {args.token_file}: over {TOKEN_FILE_LIMIT:,} bytes; "
                    "expected one line holding the token"
                )
            token = raw.decode("utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            return None, f"--token-file {args.token_file}: cannot read it ({why})"
        if not token or "\n" in token:
            return None, f"--token-file {args.token_file}: expected one non-empty line"
        return token, ""
    return None, ""


def _refused_token_flag(argv: Sequence[str]) -> bool:
    """``--token VALUE`` would put the secret in ps and shell history: say what to use."""
    return any(a == "--token" or a.startswith("--token=") for a in argv)


def _state(args: argparse.Namespace, sampler: Sampler | None, token: str | None) -> AgentState:
    """The ring, the sampling thread and what /health reports, from the flags."""
    sources: list[Callable[[], Sequence[Row]]] = []
    if sampler is not None:
        sources.append(sampler.sample)
    if args.host_stats:
        host = HostSampler()
        sources.append(lambda: [host.sample()])
    rows_per_tick = (len(sampler.gpus) if sampler else 0) + (1 if args.host_stats else 0)
    interval_ns = round(args.interval_ms * 1e6)
    ring = Ring(math.ceil(args.buffer_s * 1e9 / interval_ns) * rows_per_tick)
    return AgentState(
        ring=ring,
        thread=SamplingThread(ring, sources, interval_ns),
        sampler=sampler,
        interval_s=interval_ns / 1e9,
        buffer_s=args.buffer_s,
        host_stats=args.host_stats,
        fake=args.fake_nvml is not None,
        token=token,
    )


async def _serve(state: AgentState, host: str, port: int, limits: Limits) -> int:
    state.thread.tick()  # one synchronous sample: /health knows what is supported
    state.thread.start()
    try:
        serving = await start_server(build_app(state), host, port, limits)
    except OSError as exc:
        state.thread.stop()
        return _fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    shown = f"[{host}]" if ":" in host else host
    print(f"loadgen-agent listening on http://{shown}:{serving.port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await serving.close()
        state.thread.stop()
        state.thread.join(timeout=2.0)
    log.info("stopped after %d sampling ticks", state.thread.ticks)
    return 0
