"""Named PromQL queries of an existing Prometheus, read over one step's window.

Owns the range query (``GET <url>/api/v1/query_range?query=&start=&end=&step=``,
start and end the step's window in Unix seconds) and the pure reading of its
documented answer: ``{"status": "success", "data": {"resultType": "matrix",
"result": [{"metric": {labels}, "values": [[unix_s, "value"], ...]}]}}``.
Each series becomes a :class:`~loadgen.summary.PromSeries` (formulas in
:mod:`loadgen.summary.prometheus`): mean, max and last of its finite points
inside the window. A query that fails (refused, timeout, not 2xx, an
``"status": "error"`` answer, not the API's JSON, another ``resultType``)
keeps its ``error`` line and is counted in ``failed``; the others still count.

The resolution ``step`` is ``telemetry.prometheus.step_s`` or, when unset, a
tenth of the window, between 1 and 5 s; never finer than the window / 10,000
(Prometheus refuses more than 11,000 points a series). Queries run at once,
each within :data:`QUERY`'s deadline, with the bearer token when one is set.
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from loadgen.control import ControlClient, ControlError, Limit, Reply
from loadgen.redact import redact_text
from loadgen.summary import MAX_SERIES, PrometheusStats, PromQueryStats, PromSeries, TelemetryGap

__all__ = [
    "QUERY",
    "PromQueries",
    "failure_gap",
    "query_stats",
    "read_window",
    "read_window_blocking",
]

#: one range query's answer: a few series of a few hundred points, within 10 s
QUERY = Limit("Prometheus /api/v1/query_range", 16 * 1024 * 1024, 10.0)
MAX_POINTS = 10_000


@dataclass(frozen=True, slots=True)
class PromQueries:
    """``telemetry.prometheus`` as the collector uses it."""

    url: str  # base URL requests go to (a password in it is sent)
    label: str  # what is written: the URL without userinfo
    queries: dict[str, str]
    step_s: float | None = None
    token: str | None = None

    def step_for(self, window_s: float) -> float:
        """The resolution for a window of ``window_s`` seconds (module docstring)."""
        step = self.step_s if self.step_s is not None else min(5.0, max(1.0, window_s / 10))
        return max(step, window_s / MAX_POINTS)


def query_stats(
    query: str, step_s: float, body: Any, start_s: float, end_s: float
) -> PromQueryStats:
    """One query's stats from its answer's JSON; ``error`` set when it is not a matrix."""
    try:
        result = _matrix(body)
    except ValueError as exc:
        return PromQueryStats(query=query, step_s=step_s, error=str(exc))
    series = [_series(item, start_s, end_s) for item in result[:MAX_SERIES]]
    one = series[0] if len(series) == 1 else None
    return PromQueryStats(
        query=query,
        step_s=step_s,
        mean=one.mean if one else None,
        max=one.max if one else None,
        last=one.last if one else None,
        series=series,
        series_total=len(result),
    )


def _matrix(body: Any) -> list[dict[str, Any]]:
    """The ``result`` list of a matrix answer; a ValueError naming what is wrong."""
    if not isinstance(body, dict):
        raise ValueError("not the Prometheus API's JSON object")
    if body.get("status") != "success":
        kind, error = body.get("errorType", "error"), body.get("error", "no error given")
        raise ValueError(f"Prometheus said {kind}: {error}"[:300])
    data = body.get("data")
    kind = data.get("resultType") if isinstance(data, dict) else None
    if kind != "matrix" or not isinstance(data, dict):
        raise ValueError(f"expected resultType matrix, got {kind!r}")
    result = data.get("result")
    if not isinstance(result, list) or not all(isinstance(r, dict) for r in result):
        raise ValueError("data.result is not a list of series")
    return result


def _series(item: dict[str, Any], start_s: float, end_s: float) -> PromSeries:
    metric = item.get("metric")
    labels = {str(k): str(v) for k, v in metric.items()} if isinstance(metric, dict) else {}
    points: list[tuple[float, float]] = []
    for pair in item.get("values") or []:
        try:
            t, v = float(pair[0]), float(pair[1])  # the value is a string: "NaN", "+Inf" too
        except (TypeError, ValueError, IndexError):
            continue
        if math.isfinite(v) and start_s <= t <= end_s:
            points.append((t, v))
    if not points:
        return PromSeries(labels=labels, points=0)
    values = [v for _, v in points]
    return PromSeries(
        labels=labels,
        points=len(values),
        mean=sum(values) / len(values),
        max=max(values),
        last=max(points)[1],
    )


async def read_window(spec: PromQueries, start_s: float, end_s: float) -> PrometheusStats:
    """Every query of ``spec`` over ``[start_s, end_s]`` (Unix seconds), at once."""
    start_s, end_s = round(start_s, 3), round(end_s, 3)  # as sent: Prometheus keeps ms
    step = spec.step_for(end_s - start_s)
    headers = {"Authorization": f"Bearer {spec.token}"} if spec.token else {}
    url = spec.url.rstrip("/") + "/api/v1/query_range"
    async with ControlClient(headers, max_connections=4) as client:

        async def one(query: str) -> PromQueryStats:
            params: dict[str, str | int] = {"query": query, "step": f"{step:g}"}
            params.update({"start": f"{start_s:.3f}", "end": f"{end_s:.3f}"})
            try:
                reply = await client.get(url, QUERY, params=params)
            except ControlError as exc:
                return PromQueryStats(query=query, step_s=step, error=str(exc))
            return query_stats(query, step, _body(reply), start_s, end_s)

        names = list(spec.queries)
        got = await asyncio.gather(*(one(spec.queries[n]) for n in names))
    queries = dict(zip(names, got, strict=True))
    return PrometheusStats(
        source=spec.label,
        start_unix_s=start_s,
        end_unix_s=end_s,
        queries=queries,
        failed=sum(q.error is not None for q in got),
    )


def _body(reply: Reply) -> Any:
    """The answer's JSON; an error-shaped object naming the status when it is not JSON."""
    try:
        body = reply.json()
    except ValueError:
        head = redact_text(reply.text[:80].strip())
        return {
            "status": "error",
            "errorType": f"HTTP {reply.status}",
            "error": f"not JSON: {head!r}",
        }
    if not 200 <= reply.status < 300:
        got = body if isinstance(body, dict) else {}
        kind = f"HTTP {reply.status} {got.get('errorType', '')}".strip()
        return {"status": "error", "errorType": kind, "error": got.get("error", "no error given")}
    return body


def read_window_blocking(
    spec: PromQueries, start_s: float, end_s: float, timeout_s: float
) -> PrometheusStats:
    """:func:`read_window` from synchronous code (on its own thread and event loop)."""
    box: list[PrometheusStats | BaseException] = []
    _on_own_thread(lambda: read_window(spec, start_s, end_s), box, timeout_s)
    if box and isinstance(box[0], PrometheusStats):
        return box[0]
    why = box[0] if box else None
    if isinstance(why, BaseException):
        text = redact_text(f"{type(why).__name__}: {why}")
    else:
        text = f"no answer within {timeout_s:g} s"
    queries = {
        n: PromQueryStats(query=q, step_s=spec.step_for(end_s - start_s), error=text)
        for n, q in spec.queries.items()
    }
    return PrometheusStats(
        source=spec.label,
        start_unix_s=start_s,
        end_unix_s=end_s,
        queries=queries,
        failed=len(queries),
    )


def _on_own_thread(
    job: Callable[[], Coroutine[Any, Any, PrometheusStats]],
    box: list[PrometheusStats | BaseException],
    timeout_s: float,
) -> None:
    def run() -> None:
        try:
            box.append(asyncio.run(job()))
        except Exception as exc:  # handed to the caller below
            box.append(exc)

    thread = threading.Thread(target=run, name="loadgen-prometheus", daemon=True)
    thread.start()
    thread.join(timeout_s)


def failure_gap(found: PrometheusStats, t_ns: int) -> TelemetryGap | None:
    """The step's gap for its failed queries (``failures``: how many), None if none failed."""
    failed = [(name, q.error) for name, q in found.queries.items() if q.error is not None]
    if not failed:
        return None
    name, error = failed[0]
    text = f"{len(failed)} of {len(found.queries)} queries failed; {name}: {error}"
    return TelemetryGap(
        source=found.source,
        kind="prometheus",
        failures=len(failed),
        first_ns=t_ns,
        last_ns=t_ns,
        error=text[:300],
    )
