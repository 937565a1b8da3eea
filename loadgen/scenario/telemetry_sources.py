"""``telemetry.dcgm`` and ``telemetry.prometheus``: sources a cluster already has.

- ``dcgm``: one dcgm-exporter URL or a list of them (a URL without a path means
  ``<url>/metrics``), scraped every ``telemetry.interval_s`` into the same GPU
  rows as the agent's (:mod:`loadgen.telemetry.dcgm`).
- ``prometheus``: :class:`PrometheusSpec`, a Prometheus base URL and named
  PromQL queries, each read with a range query over every step's window
  (:mod:`loadgen.telemetry.promql`).

Bad input is one line naming the field (the loader's ScenarioError): a URL
that is not http(s), an empty or too long list, no queries, a query name that
is not an identifier, an empty query.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, field_validator

from loadgen.scenario.target_spec import check_base_url
from loadgen.strict import Spec

__all__ = [
    "MAX_DCGM",
    "MAX_QUERIES",
    "MAX_QUERY_CHARS",
    "DcgmUrls",
    "PrometheusSpec",
    "check_source_url",
    "dcgm_metrics_url",
]

#: the most dcgm-exporters one scenario scrapes (one per GPU node)
MAX_DCGM = 256
#: the most named queries of one Prometheus
MAX_QUERIES = 32
#: the longest PromQL expression taken
MAX_QUERY_CHARS = 4096
#: a query's name: it keys ``summary.json`` and names CSV columns
_QUERY_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def check_source_url(url: str) -> str:
    """``url`` if it is http(s)://host[:port][/path] with no query; a ValueError otherwise."""
    expected = "expected http[s]://host[:port][/path]"
    if url == "mock":
        raise ValueError(f"{expected}: `mock` is no telemetry source")
    try:
        return check_base_url(url)
    except ValueError as exc:  # its words name `mock`, which is no source here
        words = str(exc).replace("expected http[s]://host[:port][/base-path] or mock", expected)
        raise ValueError(words) from None


def _one_or_list(value: Any) -> Any:
    """``dcgm: URL`` is a list of one."""
    return [value] if isinstance(value, str) else value


def _urls(urls: list[str]) -> list[str]:
    if len(urls) > MAX_DCGM:
        raise ValueError(f"at most {MAX_DCGM} dcgm-exporter URLs, got {len(urls)}")
    if len(set(urls)) != len(urls):
        raise ValueError("each dcgm-exporter URL once")
    for url in urls:
        check_source_url(url)
    return urls


#: ``telemetry.dcgm``: a URL or a list of URLs, each checked
DcgmUrls = Annotated[list[str], BeforeValidator(_one_or_list), AfterValidator(_urls)]


def dcgm_metrics_url(url: str) -> str:
    """The URL to scrape: ``url`` itself, or ``<url>/metrics`` when it has no path."""
    rest = url.partition("://")[2]
    return url.rstrip("/") + "/metrics" if "/" not in rest.rstrip("/") else url


class PrometheusSpec(Spec):
    """An existing Prometheus, read over each step's window with range queries."""

    url: str = Field(
        description="Prometheus's base URL, e.g. http://prometheus:9090 (a path prefix is "
        "kept: the API is <url>/api/v1/query_range)."
    )
    queries: dict[str, str] = Field(
        description="Name -> PromQL expression; each is read over every step's window."
    )
    step_s: float | None = Field(
        None,
        ge=0.001,
        le=3600,
        description="The range query's resolution in seconds; null: a tenth of the step's "
        "window, between 1 and 5 s.",
    )
    token_env: str | None = Field(
        None, description="Environment variable holding a bearer token for Prometheus."
    )

    @field_validator("url")
    @classmethod
    def _url(cls, url: str) -> str:
        return check_source_url(url)

    @field_validator("queries")
    @classmethod
    def _queries(cls, queries: dict[str, str]) -> dict[str, str]:
        if not queries:
            raise ValueError("give at least one named PromQL query (name: expression)")
        if len(queries) > MAX_QUERIES:
            raise ValueError(f"at most {MAX_QUERIES} queries, got {len(queries)}")
        for name, query in queries.items():
            if not _QUERY_NAME.fullmatch(name):
                raise ValueError(
                    f"query name {name!r}: expected letters, digits and _, not starting "
                    "with a digit, at most 64 characters"
                )
            if not query.strip():
                raise ValueError(f"query {name!r} is empty: expected a PromQL expression")
            if len(query) > MAX_QUERY_CHARS:
                raise ValueError(f"query {name!r}: at most {MAX_QUERY_CHARS} characters")
        return queries
