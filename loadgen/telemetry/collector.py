"""The telemetry collector: polls agents, dcgm-exporters and /metrics in its own thread.

Owns the polling schedule (when each agent's clock is probed again) and
telemetry.jsonl. It runs in a background thread with its own asyncio loop and
control clients, so nothing it does ever runs inside (or delays) the load
generator's event loop. Every interval (absolute deadlines
``t0 + k * interval``) it asks each agent for the samples newer than the last
one it has (``/samples?since=``), scrapes the server's Prometheus endpoint and
each dcgm-exporter (:mod:`~loadgen.telemetry.dcgm`: the same GPU rows as an
agent's), and appends one JSON line per sample. After each step,
:meth:`TelemetryCollector.step_stats` reads the named queries of
``telemetry.prometheus`` over the step's window (:mod:`~loadgen.telemetry.promql`).
What is asked of each agent, and its clock offset, is
:class:`~loadgen.telemetry.agent_source.AgentSource`'s. A source that fails
becomes a ``gap`` line (a dcgm-exporter's or Prometheus's first failure also a
warning) and the collector carries on; nothing here raises into the run.
Every request goes through :mod:`loadgen.control`: an answer is bounded in
size (``AGENT``, ``SAMPLES``, ``METRICS``) and its deadline is the poll's
timeout, not per read; one cut off at its bound is a gap naming the URL and
the bound, and a warning the first time. A source is known in everything
written (telemetry.jsonl, the step's stats) by its URL without userinfo; only
the requests carry the password. See docs/telemetry.md for the line format.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import pathlib
import ssl
import threading
from typing import Any

from loadgen import clock
from loadgen.control import AGENT, METRICS, SAMPLES, ControlClient, ControlError
from loadgen.redact import redact_text, strip_userinfo
from loadgen.summary import StepTelemetry
from loadgen.telemetry.agent_source import AgentSource
from loadgen.telemetry.answer import SourceStatus, ok_reply
from loadgen.telemetry.dcgm import DcgmSource
from loadgen.telemetry.jsonl import LineFile
from loadgen.telemetry.prom import parse_prometheus_text
from loadgen.telemetry.promql import PromQueries, failure_gap, read_window_blocking
from loadgen.telemetry.rows import GpuSample, ServerScrape
from loadgen.telemetry.server_metrics import extract_server_metrics
from loadgen.telemetry.stats import Gap, TelemetryStore

__all__ = ["FORMAT_VERSION", "TelemetryCollector"]

log = logging.getLogger("loadgen.telemetry")

FORMAT_VERSION = 1
CLOCK_PROBES_FIRST = 8
CLOCK_PROBES_AGAIN = 3
REESTIMATE_NS = 30 * clock.NS_PER_S
FLUSH_TIMEOUT_S = 2.0
#: the most a step's Prometheus queries may add between steps
PROMETHEUS_TIMEOUT_S = 15.0


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
        *,
        dcgm: list[str] | None = None,
        prometheus: PromQueries | None = None,
    ) -> None:
        """``server_tls``: how to check an https ``server_metrics`` (the target's ``tls``);
        ``dcgm``: dcgm-exporter /metrics URLs, scraped like the server's; ``prometheus``:
        the named queries read over each step's window in :meth:`step_stats`."""
        if interval_s <= 0:
            msg = f"telemetry interval must be > 0 s, got {interval_s!r}"
            raise ValueError(msg)
        self._agents = [AgentSource(u.rstrip("/"), strip_userinfo(u.rstrip("/"))) for u in agents]
        self._dcgm = [DcgmSource(u, strip_userinfo(u)) for u in dcgm or []]
        self._prometheus = prometheus
        urls = [*agents, server_metrics or "", *(dcgm or []), prometheus.url if prometheus else ""]
        self._userinfo = any("@" in u for u in urls)
        self._server = server_metrics
        self._server_label = strip_userinfo(server_metrics) if server_metrics else None
        self._server_tls = server_tls
        self._server_client: ControlClient | None = None
        self._file = LineFile(out_path, redact=self._userinfo)
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._interval_ns = round(interval_s * clock.NS_PER_S)
        self._timeout_s = min(5.0, max(1.0, interval_s))
        self._store = TelemetryStore(
            [a.label for a in self._agents], self._server_label, [d.label for d in self._dcgm]
        )
        self._anchor = clock.anchor()
        self._told: set[str] = set()  # sources whose cut-off answer was warned about
        self._lock = threading.Lock()  # guards the store
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_event: asyncio.Event | None = None
        self._poll_lock: asyncio.Lock | None = None
        self._started = threading.Event()
        self._client: ControlClient | None = None
        self._dcgm_client: ControlClient | None = None

    # --- public API --------------------------------------------------------
    def start(self) -> None:
        """Open telemetry.jsonl and start the polling thread; returns at once."""
        if self._thread is not None:
            return
        self._file.open()
        a = self._anchor = clock.anchor()
        self._write(
            {
                "type": "meta",
                "format": FORMAT_VERSION,
                "agents": [x.label for x in self._agents],
                "server_metrics": self._server_label,
                "dcgm": [d.label for d in self._dcgm],
                "prometheus": self._prometheus.label if self._prometheus else None,
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
        else:
            self._file.close()
        self._thread = None

    def step_stats(self, start_ns: int, end_ns: int, output_tokens: int) -> StepTelemetry:
        """Per-step stats over ``[start_ns, end_ns]`` (loadgen monotonic ns).

        While running, first polls every source once more (waiting at most
        ``FLUSH_TIMEOUT_S``) so samples up to ``end_ns`` are in.
        """
        self._flush()
        with self._lock:
            stats = self._store.step_stats(start_ns, end_ns, output_tokens)
        if self._prometheus is not None:
            self._read_prometheus(stats, self._prometheus)
        return stats

    def _read_prometheus(self, stats: StepTelemetry, spec: PromQueries) -> None:
        """The named queries over the step's window, into ``stats`` and telemetry.jsonl."""
        start_s, end_s = (
            self._anchor.to_wall_ns(t) / clock.NS_PER_S
            for t in (stats.window.start_ns, stats.window.end_ns)
        )
        found = read_window_blocking(spec, start_s, end_s, PROMETHEUS_TIMEOUT_S)
        stats.prometheus = found
        self._write({"type": "prometheus", "t_ns": clock.now_ns(), **found.model_dump(mode="json")})
        gap = failure_gap(found, clock.now_ns())
        if gap is not None:
            stats.gaps.append(gap)
            line = gap.model_dump(include={"source", "kind", "error"})
            self._write({"type": "gap", "t_ns": gap.last_ns, **line})
            self._say_once(spec.label, f"Prometheus {spec.label}: {gap.error}")

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
            ControlClient(max_connections=len(self._dcgm) + 1) as dcgm,
        ):
            self._dcgm_client = dcgm
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
            jobs += [self._scrape_dcgm(d) for d in self._dcgm]
            await asyncio.gather(*jobs, return_exceptions=True)
            self._file.flush()

    # --- agents ------------------------------------------------------------
    async def _estimate(self, agent: AgentSource, tries: int) -> None:
        assert self._client is not None
        line = await agent.estimate(self._client, AGENT.within(self._timeout_s), tries)
        if line is not None:
            self._write(line)

    async def _connect(self, agent: AgentSource) -> None:
        try:
            await self._estimate(agent, CLOCK_PROBES_FIRST)
            assert self._client is not None
            health = await agent.health(self._client, AGENT.within(self._timeout_s))
        except Exception as exc:
            self._gap(agent.label, "agent", exc)
            agent.failing = True
            return
        self._write({"type": "agent", "source": agent.label, "health": health})
        with self._lock:
            self._store.add_health(agent.label, health)

    async def _poll_agent(self, agent: AgentSource) -> None:
        try:
            if agent.failing or agent.offset is None:
                await self._connect(agent)
                if agent.failing:
                    return
            assert agent.offset is not None and self._client is not None
            if clock.now_ns() - agent.offset.measured_at_ns > REESTIMATE_NS:
                await self._estimate(agent, CLOCK_PROBES_AGAIN)
            data = await agent.samples(self._client, SAMPLES.within(self._timeout_s))
        except Exception as exc:
            self._gap(agent.label, "agent", exc)
            agent.failing = True
            return
        agent.failing = False
        self._take_samples(agent, data)

    def _take_samples(self, agent: AgentSource, data: dict[str, Any]) -> None:
        rows = data.get("samples") or []
        lines = []
        with self._lock:
            for row in rows:
                sample, line = agent.take(row)
                self._store.add_sample(agent.label, sample)
                lines.append(line)
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
            samples, bad = parse_prometheus_text(ok_reply(response).text)
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

    # --- dcgm-exporters ----------------------------------------------------
    async def _scrape_dcgm(self, source: DcgmSource) -> None:
        assert self._dcgm_client is not None
        try:
            t_ns, gpus = await source.scrape(self._dcgm_client, METRICS.within(self._timeout_s))
        except Exception as exc:
            error = self._gap(source.label, "dcgm", exc)
            self._say_once(source.label, f"dcgm-exporter {source.label}: {error}")
            return
        rows = source.rows(gpus, t_ns)
        with self._lock:
            for g in gpus:
                self._store.add_gpu_identity(source.label, g.gpu, g.name, g.uuid, g.hostname)
            for sample, _ in rows:
                self._store.add_sample(source.label, sample)
        for _, line in rows:
            self._write(line)

    def _say_once(self, source: str, text: str) -> None:
        """A source's first failure on stderr; every one is a gap in the step's stats."""
        if source not in self._told:
            self._told.add(source)
            log.warning("telemetry: %s; retried, each failure counted in the step's gaps", text)

    # --- output ------------------------------------------------------------
    def _gap(self, source: str, kind: str, error: BaseException | str) -> str:
        """Record a failed poll (store, telemetry.jsonl); returns its one-line error."""
        if isinstance(error, ControlError):
            text = str(error)
            if error.limit_hit and source not in self._told:  # once a source, not each poll
                self._told.add(source)
                log.warning("telemetry: %s; polls of it are gaps until it answers within it", text)
        elif isinstance(error, SourceStatus):
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
        return gap.error

    def _write(self, line: dict[str, object]) -> None:
        self._file.write(line)
