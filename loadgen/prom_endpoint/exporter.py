"""One run's exporter: the counts, the registry they render into, the HTTP side, the linger.

:meth:`Exporter.start` binds (an address taken: one ScenarioError line, exit 2)
and serves at once, so Prometheus sees the run from before its first step.
:meth:`Exporter.close` marks the run finished (``loadgen_run_finished 1``),
keeps serving ``linger_s`` so a scraper reads the final counts, then stops.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from loadgen.clock import block_for
from loadgen.errors import ScenarioError
from loadgen.prom_endpoint.server import MetricsServer
from loadgen.prom_endpoint.state import ClientMetrics

__all__ = ["Exporter"]


class Exporter:
    def __init__(self, metrics: ClientMetrics, server: MetricsServer, linger_s: float) -> None:
        self.metrics = metrics
        self.server = server
        self.linger_s = linger_s

    @classmethod
    def start(
        cls,
        host: str,
        port: int,
        *,
        token: str | None,
        linger_s: float,
        run_id: str,
        scenario: str,
        model: str,
    ) -> Exporter:
        metrics = ClientMetrics(run_id, scenario, model)
        registry = CollectorRegistry(auto_describe=False)
        registry.register(metrics)
        try:
            server = MetricsServer(registry, host, port, token)
        except OSError as exc:
            where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
            msg = f"telemetry.serve_metrics: cannot listen on {where}: {exc.strerror or exc}"
            raise ScenarioError(msg) from None
        server.start()
        return cls(metrics, server, linger_s)

    def close(self, *, linger: bool = True) -> None:
        """Finish the counts, serve ``linger_s`` more (unless ``linger`` is False), stop."""
        self.metrics.finish()
        if linger and self.linger_s > 0:
            block_for(self.linger_s)
        self.server.close()
