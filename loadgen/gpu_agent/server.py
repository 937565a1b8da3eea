"""The agent's HTTP side: ``/samples``, ``/metrics``, ``/health``, ``/clock``.

Owns the routes, their JSON shapes and the bearer-token check. Built on
``aiohttp.web``: it is already a loadgen dependency, it is a complete HTTP/1.1
server (keep-alive, pipelining, malformed requests), which matters on a port
that may be bound to 0.0.0.0, and an idle aiohttp server costs nothing per
sample. Connections are accepted by :mod:`loadgen.gpu_agent.listener` (cap, header
read timeout, fd-limit back-off), which aiohttp does not do. Handlers only read the ring (a lock
and a list copy); all NVML work happens in the sampling thread.

``/samples`` and ``/clock`` stamp with the agent's monotonic clock
(``time.monotonic_ns``, CLOCK_MONOTONIC, the same clock as ``t_ns`` in samples).
"""

from __future__ import annotations

import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass

import orjson
from aiohttp import web
from aiohttp.typedefs import Middleware

from loadgen.bearer import bearer_matches
from loadgen.gpu_agent.exposition import render
from loadgen.gpu_agent.listener import Counters, Limits, Listener
from loadgen.gpu_agent.ring import Ring, SamplingThread
from loadgen.gpu_agent.sampler import Sampler

__all__ = ["AgentState", "Serving", "build_app", "start_server"]

VERSION = "1"
PUBLIC_PATHS = frozenset({"/health"})
# aiohttp's own default (about an hour) would let idle clients fill the connection cap.
KEEPALIVE_TIMEOUT_S = 75.0
SHUTDOWN_TIMEOUT_S = 0.5  # connections are already aborted; handlers never block

COUNTERS = web.AppKey("connections", Counters)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(slots=True)
class AgentState:
    ring: Ring
    thread: SamplingThread
    sampler: Sampler | None
    interval_s: float
    buffer_s: float
    host_stats: bool
    fake: bool
    token: str | None


def _json(payload: object, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(payload), status=status, content_type="application/json")


def _auth_middleware(token: str) -> Middleware:
    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        given = request.headers.get("Authorization")
        if request.path not in PUBLIC_PATHS and not bearer_matches(given, token):
            response = _json({"error": "missing or wrong bearer token"}, status=401)
            response.headers["WWW-Authenticate"] = "Bearer"
            return response
        return await handler(request)

    return check


def build_app(state: AgentState) -> web.Application:
    middlewares = [_auth_middleware(state.token)] if state.token else []
    app = web.Application(middlewares=middlewares)

    async def health(request: web.Request) -> web.Response:
        payload = _health(state)
        counters = request.app.get(COUNTERS)
        if counters is not None:
            payload["connections"] = asdict(counters)
        return _json(payload)

    async def clock(_: web.Request) -> web.Response:
        return _json({"mono_ns": time.monotonic_ns(), "wall_ns": time.time_ns()})

    async def samples(request: web.Request) -> web.Response:
        raw = request.query.get("since", "0")
        try:
            since = int(raw)
        except ValueError:
            return _json({"error": f"since must be integer nanoseconds, got {raw!r}"}, 400)
        part = state.ring.since(since)
        head = orjson.dumps(
            {
                "now_ns": time.monotonic_ns(),
                "wall_ns": time.time_ns(),
                "oldest_ns": part.oldest_ns,
                "truncated": part.truncated,
                "interval_s": state.interval_s,
            }
        )
        body = head[:-1] + b',"samples":[' + b",".join(part.rows) + b"]}"
        return web.Response(body=body, content_type="application/json")

    async def metrics(_: web.Request) -> web.Response:
        gpus = state.sampler.gpus if state.sampler else []
        text = render(state.ring.latest, gpus, _stats(state))
        return web.Response(
            text=text,
            content_type="text/plain",
            charset="utf-8",
            headers={"X-Prometheus-Format": "0.0.4"},
        )

    app.router.add_get("/health", health)
    app.router.add_get("/clock", clock)
    app.router.add_get("/samples", samples)
    app.router.add_get("/metrics", metrics)
    return app


def _health(state: AgentState) -> dict[str, object]:
    sampler = state.sampler
    return {
        "status": "ok",
        "agent": "loadgen-agent",
        "version": VERSION,
        "driver_version": sampler.driver_version() if sampler else None,
        "cuda_version": sampler.cuda_version() if sampler else None,
        "fake_nvml": state.fake,
        "gpus": [g.describe() for g in sampler.gpus] if sampler else [],
        "host_stats": state.host_stats,
        "interval_s": state.interval_s,
        "buffer_s": state.buffer_s,
        "buffered_rows": len(state.ring),
        "auth": state.token is not None,
        "clock": "CLOCK_MONOTONIC",
        "stats": _stats(state),
    }


def _stats(state: AgentState) -> dict[str, int]:
    return {
        "sampling_ticks": state.thread.ticks,
        "sampling_overruns": state.thread.overruns,
        "nvml_errors": state.sampler.errors if state.sampler else 0,
    }


@dataclass(slots=True)
class Serving:
    """A running agent HTTP side: the bound port and how to stop it."""

    runner: web.AppRunner
    listener: Listener
    port: int

    async def close(self) -> None:
        """Stop accepting, drop every connection, then let aiohttp finish (bounded)."""
        await self.listener.close()
        await self.runner.cleanup()


async def start_server(
    app: web.Application, host: str, port: int, limits: Limits | None = None
) -> Serving:
    """Bind and start serving within ``limits``; ``port=0`` picks a free port.

    The socket is bound here and accepted by our own :class:`Listener` (connection
    cap, header read timeout, back-off at the fd limit); aiohttp parses and
    answers. Raises ``OSError`` when the bind fails.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family)
    counters = Counters()
    app[COUNTERS] = counters
    runner = web.AppRunner(
        app,
        access_log=None,
        shutdown_timeout=SHUTDOWN_TIMEOUT_S,
        keepalive_timeout=KEEPALIVE_TIMEOUT_S,
    )
    await runner.setup()
    assert runner.server is not None
    listener = Listener(sock, runner.server, limits or Limits(), counters)
    listener.start()
    return Serving(runner, listener, int(sock.getsockname()[1]))
