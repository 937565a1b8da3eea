"""The flat step table: one row per step, the columns steps.csv, Parquet and MLflow share.

Owns the column names (see docs/reports.md), :func:`steps_table` (the columns
and rows, Python values) and steps.csv's text (:func:`render_steps_csv`).
Empty cells are values the step does not have (no successful request, no
telemetry). Booleans are ``True``/``False``, which pandas reads as bool. The
fixed columns are always there; each group of :data:`OPTIONAL_COLUMNS` only
when some step has a value that says something (a plain run has none of them).
Every other column is a section's field (:mod:`loadgen.report.sections`: the
endpoints' ``endpoint<i>_<field>``, the models' ``model<i>_<field>``,
``session*``, ``cost_*``, ...), in the sections' order, those a section marks
``late_columns`` (the frontier's, the telemetry's) last; the table names no
feature but for the optional groups it places.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

from loadgen.report import pooling
from loadgen.report.phases import PHASE_COLUMNS
from loadgen.report.sections import step_sections
from loadgen.report.spec_decode import SPEC_DECODE_COLUMNS
from loadgen.results import is_pooling, load_value
from loadgen.summary import StepSummary, Summary
from loadgen.vocab import CURVE_STATS, DISTRIBUTION_STATS

__all__ = [
    "BASE_COLUMNS",
    "CI_COLUMNS",
    "LATENCY_COLUMNS",
    "OPTIONAL_COLUMNS",
    "STATS",
    "csv_columns",
    "render_steps_csv",
    "step_row",
    "steps_table",
    "write_steps_csv",
]

#: Statistics of each latency distribution, as named in summary.json.
STATS = DISTRIBUTION_STATS
_LATENCY_METRICS = ("ttft_ms", "ttft_from_scheduled_ms", "itl_ms", "tpot_ms", "e2e_ms")
LATENCY_COLUMNS = tuple(f"{m}_{s}" for m in _LATENCY_METRICS for s in STATS)
#: each curve percentile's confidence interval (Distribution.ci), its low and high ends
CI_COLUMNS = tuple(
    f"{m}_{s}_ci_{end}"
    for m in ("ttft_ms", "itl_ms", "tpot_ms", "e2e_ms")
    for s in CURVE_STATS
    for end in ("low", "high")
)
BASE_COLUMNS = (
    "step",
    "load_mode",
    "load_value",
    "concurrency",
    "rate",
    "arrival",
    "max_concurrency",
    "interrupted",
    "duration_s",
    "requests_total",
    "requests_ok",
    "requests_failed",
    "requests_warmup",
    "error_rate",
    "errors",
    *LATENCY_COLUMNS,
    *CI_COLUMNS,
    "requests_per_s",
    "output_tokens_per_s",
    "input_tokens_per_s",
    "goodput_requests_per_s",
    "output_tokens_total",
    "input_tokens_total",
    "token_count_mismatches",
    "sla_verdict",
    "sla_cause",
    "sla_reason",
    "sla_failed_checks",
    "client_cpu_util",
    "client_rss_peak_mib",
    "client_loop_lag_p99_ms",
    "client_read_lag_p99_ms",
    "client_send_lag_p99_ms",
    "client_saturated",
    "little_mean_in_flight",
    "little_predicted",
    "little_ratio",
    "little_flagged",
    "role",
    "metrics_profile",
)


def _some(values: list[Any]) -> bool:
    return any(v is not None for v in values)


def _counted(values: list[Any]) -> bool:
    return any(v for v in values)


#: Column groups, in this order, each written only when the values of its first column
#: (over all steps) pass its test: some value, some count above 0, some "answer".
OPTIONAL_COLUMNS: tuple[tuple[tuple[str, ...], Callable[[list[Any]], bool]], ...] = (
    (("time_scale",), _some),
    (("requests_ramp",), _counted),
    (("ttft_of",), lambda vs: "answer" in vs),
    (
        (
            "ttft_reasoning_ms_p50",
            "ttft_reasoning_ms_p99",
            "ttft_answer_ms_p50",
            "ttft_answer_ms_p99",
        ),
        _some,
    ),
    (("prefix_cache_hit_rate",), _some),
    (SPEC_DECODE_COLUMNS, _some),
    (("cache_tokens_per_request", "cache_hit_rate", "cache_requests_with_hits"), _counted),
    (
        ("prompt_len_mean_rel_diff", "prompt_len_worst_rel_diff", "prompt_len_beyond_tolerance"),
        _some,
    ),
    (("short_outputs",), _counted),
    (
        ("requests_cancelled_by_client", "cancelled_by_client_share", "cancelled_output_tokens"),
        _counted,
    ),
    (PHASE_COLUMNS, _some),
)
_OPTIONAL = {name for names, _ in OPTIONAL_COLUMNS for name in names}


def _optional_fields(step: StepSummary) -> dict[str, Any]:
    """The step's own values of :data:`OPTIONAL_COLUMNS`, every other optional column None
    (the sections fill theirs)."""
    row: dict[str, Any] = dict.fromkeys(_OPTIONAL)
    row.update(
        time_scale=step.load.time_scale,
        requests_ramp=step.requests.ramp,
        ttft_of=step.ttft_of,
        short_outputs=step.tokens.short_outputs,
        requests_cancelled_by_client=step.requests.cancelled_by_client,
        cancelled_by_client_share=step.requests.cancelled_by_client_share,
        cancelled_output_tokens=step.tokens.cancelled_output_total,
    )
    for metric in ("ttft_reasoning_ms", "ttft_answer_ms"):
        dist = getattr(step, metric)
        for stat in CURVE_STATS:
            row[f"{metric}_{stat}"] = None if dist is None else getattr(dist, stat)
    return row


def step_row(step: StepSummary, metrics_profile: str = "loadgen") -> dict[str, Any]:
    """Every column of one step: the fixed ones, every optional one (None where the step
    has no value), and its sections' fields.
    ``metrics_profile``: the run's (``summary.metrics_profile``), repeated on every row."""
    load, r, t, c = step.load, step.requests, step.throughput, step.client
    row: dict[str, Any] = {
        "step": step.index,
        "load_mode": load.mode,
        "load_value": load_value(step),
        "concurrency": load.concurrency,
        "rate": load.rate,
        "arrival": load.arrival,
        "max_concurrency": load.max_concurrency,
        "interrupted": step.interrupted,
        "duration_s": step.duration_s,
        "requests_total": r.total,
        "requests_ok": r.ok,
        "requests_failed": r.failed,
        "requests_warmup": r.warmup,
        "error_rate": r.error_rate,
        "errors": ";".join(f"{k}:{n}" for k, n in r.errors.items()),
    }
    for metric in _LATENCY_METRICS:
        dist = getattr(step, metric)
        for stat in STATS:
            row[f"{metric}_{stat}"] = None if dist is None else getattr(dist, stat)
    for name in CI_COLUMNS:
        metric, _, rest = name.partition("_ms_")
        stat, _, end = rest.partition("_ci_")
        ci = getattr(step, f"{metric}_ms").ci
        pair = getattr(ci, stat) if ci is not None else None
        row[name] = None if pair is None else pair[0 if end == "low" else 1]
    row.update(sla_verdict=step.standing, sla_cause=step.sla.cause, sla_reason=step.sla.reason)
    row.update(
        requests_per_s=t.requests_per_s,
        output_tokens_per_s=t.output_tokens_per_s,
        input_tokens_per_s=t.input_tokens_per_s,
        goodput_requests_per_s=t.goodput_requests_per_s,
        output_tokens_total=step.tokens.output_total,
        input_tokens_total=step.tokens.input_total,
        token_count_mismatches=step.tokens.count_mismatches,
        sla_failed_checks=";".join(
            f"{x.metric}.{x.stat}" for x in step.sla.checks if x.verdict == "missed"
        ),
        client_cpu_util=c.cpu_util,
        client_rss_peak_mib=c.rss_peak_mib,
        client_loop_lag_p99_ms=c.loop_lag_p99_ms,
        client_read_lag_p99_ms=c.read_lag_p99_ms,
        client_send_lag_p99_ms=c.send_lag_p99_ms,
        client_saturated=c.saturated,
    )
    little = step.little
    row.update(
        little_mean_in_flight=little.mean_in_flight if little else None,
        little_predicted=little.predicted if little else None,
        little_ratio=little.ratio if little else None,
        little_flagged=little.flagged if little else None,
        role=step.role,
        metrics_profile=metrics_profile,
    )
    row.update(_optional_fields(step))
    sections = step_sections(step)
    for section in sorted(sections, key=lambda s: s.late_columns):  # stable: in their order
        row.update(section.fields)
    return row


def csv_columns(rows: list[dict[str, Any]]) -> list[str]:
    """The base columns; the optional groups that say something; then the sections'
    columns any row has, in first-seen order."""
    optional = [
        name
        for names, informative in OPTIONAL_COLUMNS
        if informative([row.get(names[0]) for row in rows])
        for name in names
    ]
    extra: dict[str, None] = {}
    for row in rows:
        extra.update({k: None for k in row if k not in BASE_COLUMNS and k not in _OPTIONAL})
    return [*BASE_COLUMNS, *optional, *extra]


def steps_table(summary: Summary) -> tuple[list[str], list[dict[str, Any]]]:
    """steps.csv's columns and its rows (Python values, None for an empty cell); the
    Parquet export (loadgen.export) types the same rows."""
    rows = [step_row(s, summary.metrics_profile) for s in summary.steps]
    columns = csv_columns(rows)
    if is_pooling(summary):  # no token timing; inputs/s and vector dimensions
        for step, row in zip(summary.steps, rows, strict=True):
            row.update(pooling.csv_fields(step))
        columns = pooling.csv_columns(columns)
    return columns, rows


def render_steps_csv(summary: Summary) -> str:
    columns, rows = steps_table(summary)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if (v := row.get(k)) is None else v) for k in columns})
    return buf.getvalue()


def write_steps_csv(summary: Summary, path: Path) -> None:
    path.write_text(render_steps_csv(summary), encoding="utf-8")
