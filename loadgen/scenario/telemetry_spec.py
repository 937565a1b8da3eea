"""The ``telemetry`` section: agents, server metrics, loadgen's own metrics, cluster sources.

Owns :class:`TelemetrySpec` and its checks on one section (URLs, the address
loadgen serves its metrics on, a token beyond loopback); the cluster sources
it names are in :mod:`~loadgen.scenario.telemetry_sources`.
"""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from loadgen.scenario.limits import MAX_SECONDS
from loadgen.scenario.listen import needs_token, parse_listen
from loadgen.scenario.target_spec import check_base_url
from loadgen.scenario.telemetry_sources import DcgmUrls, PrometheusSpec
from loadgen.strict import Spec

__all__ = ["TelemetrySpec"]


class TelemetrySpec(Spec):
    agents: list[str] = Field(
        default_factory=list, description="URLs of `loadgen agent` sidecars to poll."
    )
    server_metrics: str | None = Field(
        None,
        description="URL of the server's Prometheus /metrics endpoint to scrape; "
        "`target` means <target url>/metrics.",
    )
    token_env: str | None = Field(
        None, description="Environment variable holding the agents' bearer token."
    )
    interval_s: float = Field(
        1.0, ge=0.01, le=MAX_SECONDS, description="Polling interval in seconds."
    )
    # -- loadgen's own metrics for Prometheus (docs/prometheus.md)
    serve_metrics: str | None = Field(
        None,
        description="Serve loadgen's own client metrics for Prometheus on [HOST:]PORT while "
        "the run lasts (a bare port binds 127.0.0.1; beyond loopback needs "
        "serve_metrics_token_env).",
    )
    serve_metrics_token_env: str | None = Field(
        None,
        description="Environment variable holding the bearer token a scraper must send to "
        "serve_metrics (required for a bind beyond loopback).",
    )
    serve_metrics_linger_s: float = Field(
        0.0,
        ge=0,
        le=3600,
        description="Keep serving the metrics this many seconds after the last step, so a "
        "scraper reads the final counts (at least its scrape interval).",
    )

    # -- sources a cluster already has (loadgen.scenario.telemetry_sources)
    dcgm: DcgmUrls = Field(
        default_factory=list,
        description="dcgm-exporter URLs (one or a list; no path: <url>/metrics) scraped "
        "for GPU figures every interval_s, in place of agents.",
    )
    prometheus: PrometheusSpec | None = Field(
        None, description="An existing Prometheus read over each step's window."
    )

    @field_validator("agents")
    @classmethod
    def _agents_are_urls(cls, urls: list[str]) -> list[str]:
        for url in urls:
            check_base_url(url)
        return urls

    @field_validator("server_metrics")
    @classmethod
    def _metrics_is_url(cls, url: str | None) -> str | None:
        if url is not None and url != "target":
            check_base_url(url)
        return url

    @field_validator("serve_metrics")
    @classmethod
    def _serve_metrics_is_an_address(cls, value: str | None) -> str | None:
        if value is not None:
            parse_listen(value)
        return value

    @model_validator(mode="after")
    def _beyond_loopback_needs_a_token(self) -> TelemetrySpec:
        address = self.serve_metrics
        if address and needs_token(address) and not self.serve_metrics_token_env:
            msg = (
                f"serve_metrics {address} binds beyond loopback: anyone who can reach it "
                "reads the run; set serve_metrics_token_env (the bearer token Prometheus "
                "sends) or bind 127.0.0.1"
            )
            raise ValueError(msg)
        return self
