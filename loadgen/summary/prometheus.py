"""The named Prometheus queries over one step (``telemetry.prometheus``, docs/telemetry.md).

Owns :class:`PrometheusStats` (one Prometheus, every named query),
:class:`PromQueryStats` (one query's range result) and :class:`PromSeries`
(one series of it, by its label set). Per series, over the points the range
query returned for the step's window (non-finite values left out):

- ``mean``: the plain mean of the points (they lie on the query's step grid,
  so it is a time mean); ``max``: the largest; ``last``: the latest point's.

A query of one series repeats its figures at the top (``mean``, ``max``,
``last``) so ``steps[].telemetry.prometheus.queries.<name>.mean`` reads
directly; with several series those are null and ``series`` holds each (the
first :data:`MAX_SERIES` in the answer's order; ``series_total`` says how
many came back).
"""

from __future__ import annotations

from pydantic import Field, field_validator

from loadgen.redact import redact_text
from loadgen.strict import Strict

__all__ = ["MAX_SERIES", "PromQueryStats", "PromSeries", "PrometheusStats"]

#: the most series of one query the summary keeps (the rest are counted, not kept)
MAX_SERIES = 16


class PromSeries(Strict):
    """One series of a range query's result over the window."""

    labels: dict[str, str] = Field(
        default_factory=dict, description="The series' label set (`metric` in the answer)."
    )
    points: int = Field(description="Finite points in the window.")
    mean: float | None = Field(None, description="Plain mean of the points (a time mean).")
    max: float | None = Field(None, description="Largest point.")
    last: float | None = Field(None, description="The latest point.")


class PromQueryStats(Strict):
    """One named query over the step window."""

    query: str = Field(description="The PromQL expression, as written in the scenario.")
    step_s: float = Field(description="The range query's resolution step, seconds.")
    mean: float | None = Field(None, description="The one series' mean; null with several.")
    max: float | None = Field(None, description="The one series' max; null with several.")
    last: float | None = Field(None, description="The one series' last; null with several.")
    series: list[PromSeries] = Field(
        default_factory=list, description=f"Each series, at most {MAX_SERIES}."
    )
    series_total: int = Field(0, description="Series in the answer (more than kept: cut).")
    error: str | None = Field(None, description="Why the query gave nothing; null if it did.")

    @field_validator("error")
    @classmethod
    def _no_secret(cls, text: str | None) -> str | None:
        return None if text is None else redact_text(text)


class PrometheusStats(Strict):
    """Every named query of one Prometheus over the step window."""

    source: str = Field(description="The Prometheus base URL (without userinfo).")
    start_unix_s: float = Field(description="The window's start as Unix time (the query's).")
    end_unix_s: float = Field(description="The window's end as Unix time (the query's).")
    queries: dict[str, PromQueryStats] = Field(
        default_factory=dict, description="By the scenario's query name."
    )
    failed: int = Field(0, description="Queries that gave no answer (each has `error`).")

    @field_validator("source")
    @classmethod
    def _no_userinfo(cls, text: str) -> str:
        return redact_text(text)
