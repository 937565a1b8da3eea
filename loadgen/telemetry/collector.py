"""The telemetry collector: polls agents and the server's /metrics in its own thread.

Owns the polling schedule, clock alignment and telemetry.jsonl. It runs in a
background thread with its own asyncio loop and control clients, so nothing it
does ever runs inside (or delays) the load generator's event loop. Every
interval (absolute deadlines ``t0 + k * interval``) it asks each agent for the
samples newer than the last one it has (``/samples?since=``), scrapes the
server's Prometheus endpoint, and appends one JSON line per sample. A source
that fails becomes a ``gap`` line and the collector carries on; nothing here
raises into the run. Every request goes through :mod:`loadgen.control`:
an answer is bounded in size (``AGENT``, ``SAMPLES``, ``METRICS``) and its
deadline is the poll's timeout, not per read; one cut off at its bound is a
gap naming the URL and the bound, and a warning the first time. A source is
known in everything written (telemetry.jsonl, the step's stats) by its URL
without userinfo; only the requests carry the password.
See docs/telemetry.md for the line format.

Imports: the standard library, orjson, :mod:`loadgen.clock`, :mod:`loadgen.control`,
:mod:`loadgen.summary` (the step's telemetry model), :mod:`loadgen.redact` and this
package.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import pathlib
import ssl
import threading
from dataclasses import dataclass
from typing import IO, Any

import orjson

from loadgen import clock
from loadgen.control import AGENT, METRICS, SAMPLES, ControlClient, ControlError, Limit, Reply
from loadgen.redact import redact_text, strip_userinfo
from loadgen.summary import StepTelemetry
from loadgen.telemetry.offset import ClockProbe, OffsetEstimate, best_offset
from loadgen.telemetry.prom import parse_prometheus_text
from loadgen.telemetry.rows import GpuSample, ServerScrape, parse_sample
from loadgen.telemetry.server_metrics import extract_server_metrics
from loadgen.telemetry.stats import Gap, TelemetryStore

__all__ = ["FORMAT_VERSION", "TelemetryCollector"]

log = logging.getLogger("loadgen.telemetry")

FORMAT_VERSION = 1
CLOCK_PROBES_FIRST = 8
CLOCK_PROBES_AGAIN = 3
REESTIMATE_NS = 30 * clock.NS_PER_S
FLUSH_TIMEOUT_S = 2.0
LOOKBACK_NS = 5 * clock.NS_PER_S


@dataclass(slots=True)
class _Agent:
    url: str  # what requests go to (a password in it is sent)
    label: str  # what is written: the URL without userinfo
    since_ns: int | None = None  # agent monotonic of the newest sample we hold
    offset: OffsetEstimate | None = None
    failing: bool = False


class TelemetryCollector:
    """Collects agent samples and server metrics during a run; see the module docstring."""

    def __init__(
        self,
        agents: list[str],
        server_metrics: str | None,
        out_path: pathlib.Path,
        token: str | None = None,
        interval_s: float = 1.0,
        server_tls: ssl.SSLContext | None = None,
    ) -> None:
        """``server_tls``: how to check an https ``server_metrics`` (the target's ``tls``)."""
        if interval_s <= 0:
            msg = f"telemetry interval must be > 0 s, got {interval_s!r}"
            raise ValueError(msg)
        self._agents = [_Agent(u.rstrip("/"), strip_userinfo(u.rstrip("/"))) for u in agents]
        self._userinfo = any("@" in u for u in [*agents, server_metrics or ""])
        self._server = server_metrics
        self._server_label = strip_userinfo(server_metrics) if server_metrics else None
        self._server_tls = server_tls
        self._server_client: ControlClient | None = None
        self._out_path = pathlib.Path(out_path)
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._interval_ns = round(interval_s * clock.NS_PER_S)
        self._timeout_s = min(5.0, max(1.0, interval_s))
        self._store = TelemetryStore([a.label for a in self._agents], self._server_label)
        self._told: set[str] = set()  # sources whose cut-off answer was warned about
        self._lock = threading.Lock()  # guards the store
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_event: asyncio.Event | None = None
        self._poll_lock: asyncio.Lock | None = None
        self._started = threading.Event()
        self._file: IO[bytes] | None = None
        self._client: ControlClient | None = None

    # --- public API --------------------------------------------------------
    def start(self) -> None:
        """Open telemetry.jsonl and start the polling thread; returns at once."""
        if self._thread is not None:
            return
        self._out_path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self._out_path.open("wb")
        a = clock.anchor()
        self._write(
            {
                "type": "meta",
                "format": FORMAT_VERSION,
                "agents": [x.label for x in self._agents],
                "server_metrics": self._server_label,
                "interval_s": self._interval_ns / clock.NS_PER_S,
                "anchor": {
                    "monotonic_ns": a.monotonic_ns,
                    "wall_ns": a.wall_ns,
                    "uncertainty_ns": a.uncertainty_ns,
                },
            }
        )
        self._thread = threading.Thread(target=self._run, name="loadgen-telemetry", daemon=True)
        self._thread.start()
        self._started.wait(timeout=5.0)  # only the loop's creation, no I/O

    def stop(self) -> None:
        """Poll one last time, stop the thread and close telemetry.jsonl."""
        thread, loop, stop_event = self._thread, self._loop, self._stop_event
        if thread is None:
            return
        if loop is not None and stop_event is not None and thread.is_alive():
            loop.call_soon_threadsafe(stop_event.set)
        thread.join(timeout=self._timeout_s * 2 + 5.0)
        if thread.is_alive():
            log.warning("telemetry thread did not stop in time; telemetry.jsonl may be short")
        elif self._file is not None:
            with contextlib.suppress(OSError):  # a refused flush was said in _write
                self._file.close()
        self._thread = None

    def step_stats(self, start_ns: int, end_ns: int, output_tokens: int) -> StepTelemetry:
        """Per-step stats over ``[start_ns, end_ns]`` (loadgen monotonic ns).

        While running, first polls every source once more (waiting at most
        ``FLUSH_TIMEOUT_S``) so samples up to ``end_ns`` are in.
        """
        self._flush()
        with self._lock:
            return self._store.step_stats(start_ns, end_ns, output_tokens)

    def latest(self) -> tuple[ServerScrape | None, list[tuple[str, GpuSample]]]:
        """The newest server scrape and each GPU's newest sample (the live view's), no I/O.

        A GPU is labelled ``GPU <index>``, with its agent's address where there are several.
        """
        with self._lock:
            store = self._store
            server = store.server[-1][1] if store.server else None
            many = len(self._agents) > 1
            gpus = [
                (f"GPU {idx}" + (f" {agent}" if many else ""), series.points[-1])
                for (agent, idx), series in sorted(store.gpus.items())
                if series.points
            ]
        return server, gpus

    # --- the thread --------------------------------------------------------
    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._main())
        except Exception:  # never let a bug take the run down; say so once
            log.exception("telemetry collector stopped early")
        finally:
            self._started.set()
            loop.close()

    async def _main(self) -> None:
        self._stop_event = asyncio.Event()
        self._poll_lock = asyncio.Lock()
        self._started.set()
        async with (
            ControlClient(self._headers, max_connections=len(self._agents) + 4) as client,
            ControlClient(verify=self._server_tls or True, max_connections=2) as server,
        ):
            self._client = client
            self._server_client = server
            await asyncio.gather(*(self._connect(a) for a in self._agents))
            t0, k = clock.now_ns(), 0
            while not self._stop_event.is_set():
                await self._poll_all()
                k += 1
                now = clock.now_ns()
                if now >= t0 + k * self._interval_ns:  # overran: keep the grid, skip ticks
                    k = (now - t0) // self._interval_ns + 1
                await self._wait_until(t0 + k * self._interval_ns)
            await self._poll_all()  # the final poll

    async def _wait_until(self, deadline_ns: int) -> None:
        assert self._stop_event is not None
        remaining = deadline_ns - clock.now_ns()
        if remaining > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop_event.wait(), remaining / clock.NS_PER_S)

    def _flush(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or not thread.is_alive():
            return
        if threading.current_thread() is thread or loop.is_closed():
            return
        future = asyncio.run_coroutine_threadsafe(self._poll_all(), loop)
        try:
            future.result(FLUSH_TIMEOUT_S)
        except Exception:  # timeout or shutdown: use what is there
            future.cancel()

    async def _poll_all(self) -> None:
        assert self._poll_lock is not None
        async with self._poll_lock:
            jobs = [self._poll_agent(a) for a in self._agents]
            if self._server:
                jobs.append(self._scrape(self._server))
            await asyncio.gather(*jobs, return_exceptions=True)
            if self._file is not None:
                self._file.flush()

    # --- agents ------------------------------------------------------------
    async def _get(self, url: str, limit: Limit = AGENT, **params: int) -> Reply:
        assert self._client is not None
        return _ok(await self._client.get(url, limit.within(self._timeout_s), params=params))

    async def _estimate(self, agent: _Agent, tries: int) -> None:
        probes = []
        for _ in range(tries):
            t0 = clock.now_ns()
            response = await self._get(f"{agent.url}/clock")
            t1 = clock.now_ns()
            probes.append(ClockProbe(t0, int(response.json()["mono_ns"]), t1))
        new = best_offset(probes)
        old = agent.offset
        if new is None:
            return
        if old is not None and new.uncertainty_ns > 2 * old.uncertainty_ns + clock.NS_PER_MS:
            agent.offset = OffsetEstimate(old.offset_ns, old.uncertainty_ns, new.measured_at_ns)
            return  # a noisy batch (server under load): keep the tighter estimate
        agent.offset = new
        if agent.since_ns is None:
            # start a little in the past: the agent's ring already holds the
            # seconds before start(), which the first step window may include
            agent.since_ns = max(p.agent_ns for p in probes) - LOOKBACK_NS
        self._write(
            {
                "type": "clock",
                "source": agent.label,
                "t_ns": new.measured_at_ns,
                "offset_ns": new.offset_ns,
                "uncertainty_ns": new.uncertainty_ns,
            }
        )

    async def _connect(self, agent: _Agent) -> None:
        try:
            await self._estimate(agent, CLOCK_PROBES_FIRST)
            health = (await self._get(f"{agent.url}/health")).json()
        except Exception as exc:
            self._gap(agent.label, "agent", exc)
            agent.failing = True
            return
        self._write({"type": "agent", "source": agent.label, "health": health})
        with self._lock:
            self._store.add_health(agent.label, health)

    async def _poll_agent(self, agent: _Agent) -> None:
        try:
            if agent.failing or agent.offset is None:
                await self._connect(agent)
                if agent.failing:
                    return
            assert agent.offset is not None
            if clock.now_ns() - agent.offset.measured_at_ns > REESTIMATE_NS:
                await self._estimate(agent, CLOCK_PROBES_AGAIN)
            response = await self._get(f"{agent.url}/samples", SAMPLES, since=agent.since_ns or 0)
            data = response.json()
        except Exception as exc:
            self._gap(agent.label, "agent", exc)
            agent.failing = True
            return
        agent.failing = False
        self._take_samples(agent, data)

    def _take_samples(self, agent: _Agent, data: dict[str, Any]) -> None:
        assert agent.offset is not None
        rows = data.get("samples") or []
        lines = []
        with self._lock:
            for row in rows:
                agent_t = int(row.pop("t_ns"))
                t_ns = agent.offset.to_local(agent_t)
                self._store.add_sample(agent.label, parse_sample(row, t_ns))
                kind = row.pop("kind", "gpu")
                line = {"type": kind, "source": agent.label, "t_ns": t_ns, "agent_t_ns": agent_t}
                line["agent_wall_ns"] = row.pop("wall_ns", None)
                line.update(row)
                lines.append(line)
                agent.since_ns = max(agent.since_ns or 0, agent_t)
        for line in lines:
            self._write(line)
        if data.get("truncated"):
            self._gap(agent.label, "agent", "agent ring buffer overflowed: samples were lost")

    # --- server metrics ----------------------------------------------------
    async def _scrape(self, url: str) -> None:
        label = self._server_label or ""
        try:
            t0 = clock.now_ns()
            assert self._server_client is not None
            response = await self._server_client.get(url, METRICS.within(self._timeout_s))
            t1 = clock.now_ns()
            samples, bad = parse_prometheus_text(_ok(response).text)
        except Exception as exc:
            self._gap(label, "server_metrics", exc)
            return
        values = extract_server_metrics(samples)
        t_ns = (t0 + t1) // 2
        with self._lock:
            self._store.server.append((t_ns, values))
        line: dict[str, object] = {
            "type": "server",
            "source": label,
            "t_ns": t_ns,
            **values.as_dict(),
        }
        if bad:
            line["malformed_lines"] = bad
        self._write(line)

    # --- output ------------------------------------------------------------
    def _gap(self, source: str, kind: str, error: BaseException | str) -> None:
        if isinstance(error, ControlError):
            text = str(error)
            if error.limit_hit and source not in self._told:  # once a source, not each poll
                self._told.add(source)
                log.warning("telemetry: %s; polls of it are gaps until it answers within it", text)
        elif isinstance(error, _Status):
            text = str(error)
        elif isinstance(error, BaseException):
            text = redact_text(f"{type(error).__name__}: {error}".rstrip(": "))
        else:
            text = error
        gap = Gap(source, kind, clock.now_ns(), text[:300])
        with self._lock:
            self._store.gaps.append(gap)
        self._write(
            {"type": "gap", "source": source, "kind": kind, "t_ns": gap.t_ns, "error": gap.error}
        )

    def _write(self, line: dict[str, object]) -> None:
        if self._file is not None and not self._file.closed:
            data = orjson.dumps(line)
            if self._userinfo:  # a URL password never reaches telemetry.jsonl
                data = redact_text(data.decode()).encode()
            try:
                self._file.write(data + b"\n")
            except OSError as exc:  # disk full: telemetry stops, the run goes on
                log.warning(
                    "%s: cannot write: %s; telemetry after this point is lost",
                    self._out_path,
                    exc.strerror or exc,
                )
                with contextlib.suppress(OSError):
                    self._file.close()


class _Status(Exception):
    """A source answered, but not 2xx (a wrong token: 401)."""


def _ok(reply: Reply) -> Reply:
    """``reply`` if its status is 2xx; :class:`_Status` naming the status otherwise."""
    if not 200 <= reply.status < 300:
        raise _Status(f"answered HTTP {reply.status}")
    return reply
