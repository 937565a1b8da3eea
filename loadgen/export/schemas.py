"""The Parquet schemas: records, steps and telemetry, each column's type stated.

Types are written as short names (``int64``, ``float64``, ``bool``, ``string``,
``list<int64>``, ``map<string,int64>``) and turned into pyarrow types by
:func:`arrow_schema`, so this module imports no pyarrow and a test can read
it without the extra. A name ending in ``?`` is nullable.

- records: one column per :class:`loadgen.records.Record` field, in its order,
  the type taken from the field's annotation by :data:`ANNOTATION_TYPES` (a new
  field type without an entry fails :func:`record_columns`): ``int`` int64,
  ``bool`` bool, ``float`` float64, ``str`` string, ``list[int]`` (token_ns)
  list<int64>; ``X | None`` nullable. Every time is int64 ns of loadgen's
  monotonic clock (the file's metadata holds the anchor that turns one into a
  date).
- steps: the columns of steps.csv (loadgen.report.step_table.step_row), typed by
  :data:`STEP_TYPES` and, for the families whose names are made per run
  (``endpoint<i>_*``, ``model<i>_*``, ``session*``, ``cost_*``, ``frontier_*``,
  ``telemetry_*``, validity's), by :func:`family_type` from the Python type
  of their values; ``errors`` is a map kind -> count, not steps.csv's text;
  then each step's window stamps (:data:`STEP_WINDOW`).
- telemetry: one table per line type of telemetry.jsonl (:data:`TELEMETRY`);
  fields a line lacks are null, fields this version does not know are left out.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from loadgen.records import Record
from loadgen.report import CI_COLUMNS, LATENCY_COLUMNS, SPEC_DECODE_COLUMNS

__all__ = [
    "ANNOTATION_TYPES",
    "STEP_TYPES",
    "STEP_WINDOW",
    "TELEMETRY",
    "arrow_schema",
    "arrow_type",
    "family_type",
    "record_columns",
]

#: Record's annotation (without ``| None``) -> the column type
ANNOTATION_TYPES = {
    "int": "int64",
    "bool": "bool",
    "float": "float64",
    "str": "string",
    "list[int]": "list<int64>",
}


def record_columns() -> list[tuple[str, str]]:
    """(name, type) of every Record field, in field order; ``?``: the field may be None."""
    out = []
    for f in fields(Record):
        annotation = str(f.type)
        base = annotation.removesuffix(" | None")
        if base not in ANNOTATION_TYPES:
            msg = f"Record.{f.name}: no Parquet type for {annotation!r} (add it to schemas.py)"
            raise TypeError(msg)
        out.append((f.name, ANNOTATION_TYPES[base] + ("?" if base != annotation else "")))
    return out


def _latency_type(column: str) -> str:
    return "int64?" if column.endswith("_count") else "float64?"


#: steps.csv's fixed and optional columns -> type (every one nullable but ``step``)
STEP_TYPES: dict[str, str] = {
    "step": "int64",
    "load_mode": "string?",
    "load_value": "float64?",
    "concurrency": "int64?",
    "rate": "float64?",
    "arrival": "string?",
    "max_concurrency": "int64?",
    "interrupted": "bool?",
    "duration_s": "float64?",
    "requests_total": "int64?",
    "requests_ok": "int64?",
    "requests_failed": "int64?",
    "requests_warmup": "int64?",
    "error_rate": "float64?",
    "errors": "map<string,int64>?",
    **{c: _latency_type(c) for c in LATENCY_COLUMNS},
    **dict.fromkeys(CI_COLUMNS, "float64?"),
    **dict.fromkeys(
        ("requests_per_s", "output_tokens_per_s", "input_tokens_per_s", "goodput_requests_per_s"),
        "float64?",
    ),
    "output_tokens_total": "int64?",
    "input_tokens_total": "int64?",
    "token_count_mismatches": "int64?",
    **dict.fromkeys(("sla_verdict", "sla_cause", "sla_reason", "sla_failed_checks"), "string?"),
    "client_cpu_util": "float64?",
    "client_rss_peak_mib": "float64?",
    "client_loop_lag_p99_ms": "float64?",
    "client_read_lag_p99_ms": "float64?",
    "client_send_lag_p99_ms": "float64?",
    "client_saturated": "bool?",
    "little_mean_in_flight": "float64?",
    "little_predicted": "float64?",
    "little_ratio": "float64?",
    "little_flagged": "bool?",
    "role": "string?",
    "metrics_profile": "string?",
    "time_scale": "float64?",
    "requests_ramp": "int64?",
    "ttft_of": "string?",
    **dict.fromkeys(
        ("ttft_reasoning_ms_p50", "ttft_reasoning_ms_p99", "ttft_answer_ms_p50"),
        "float64?",
    ),
    "ttft_answer_ms_p99": "float64?",
    "prefix_cache_hit_rate": "float64?",
    # -- speculative decoding (summary StepSummary.spec_decode)
    **dict.fromkeys(SPEC_DECODE_COLUMNS, "float64?"),
    "prompt_len_mean_rel_diff": "float64?",
    "prompt_len_worst_rel_diff": "float64?",
    "prompt_len_beyond_tolerance": "int64?",
    "short_outputs": "int64?",
    # -- pooling APIs (report.pooling.csv_fields)
    "inputs_per_s": "float64?",
    "inputs_total": "int64?",
    "inputs_mean": "float64?",
    "vector_dims": "string?",
    # -- cached prompt tokens as the answers counted them (report.cache)
    "cache_tokens_per_request": "float64?",
    "cache_hit_rate": "float64?",
    "cache_requests_with_hits": "float64?",
    # -- users who stop (workload.cancel)
    "requests_cancelled_by_client": "int64?",
    "cancelled_by_client_share": "float64?",
    "cancelled_output_tokens": "int64?",
    # -- request phases (report.phases.PHASE_COLUMNS)
    **dict.fromkeys(("conn_new_requests", "conn_reused_requests"), "int64?"),
    **dict.fromkeys(("connect_ms_p50", "connect_ms_p99", "tls_ms_p50", "tls_ms_p99"), "float64?"),
    **dict.fromkeys(("ttft_new_conn_ms_p50", "ttft_reused_conn_ms_p50"), "float64?"),
}

#: the step's window, after steps.csv's columns: loadgen monotonic ns (summary.json's)
STEP_WINDOW: tuple[tuple[str, str], ...] = (
    ("started_ns", "int64?"),
    ("ended_ns", "int64?"),
    ("steady_started_ns", "int64?"),
    ("steady_ended_ns", "int64?"),
)


def family_type(column: str, values: list[Any]) -> str:
    """The type of a column made per run (endpoint, model, session, cost, telemetry...):
    bool, int64 or float64 by its values (ints and floats mixed: float64), else string."""
    present = [v for v in values if v is not None]
    if present and all(type(v) is bool for v in present):
        return "bool?"
    if present and all(type(v) is int for v in present):
        return "int64?"
    if present and all(type(v) in (int, float) for v in present):
        return "float64?"
    return "string?"


_SOURCE = (("source", "string?"), ("t_ns", "int64?"))
_AGENT = (*_SOURCE, ("agent_t_ns", "int64?"), ("agent_wall_ns", "int64?"))
_GPU_FLOATS = ("util_gpu_pct", "util_mem_pct", "power_w", "energy_j")
_COUNTERS = ("pcie_tx_bytes", "pcie_rx_bytes", "nvlink_tx_bytes", "nvlink_rx_bytes")

#: telemetry.jsonl line type -> (file stem, columns): docs/telemetry.md has the fields
TELEMETRY: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    "gpu": (
        "telemetry_gpu",
        (
            *_AGENT,
            ("gpu", "int64?"),
            *((name, "float64?") for name in _GPU_FLOATS),
            ("mem_used_bytes", "int64?"),
            ("mem_total_bytes", "int64?"),
            ("energy_source", "string?"),
            ("sm_clock_mhz", "float64?"),
            ("mem_clock_mhz", "float64?"),
            ("temp_c", "float64?"),
            *((name, "int64?") for name in _COUNTERS),
            *((f"{name}_per_s", "float64?") for name in _COUNTERS),
        ),
    ),
    "host": (
        "telemetry_host",
        (
            *_AGENT,
            ("cpu_util_pct", "float64?"),
            ("mem_used_bytes", "int64?"),
            ("mem_total_bytes", "int64?"),
        ),
    ),
    "server": (
        "telemetry_server",
        (
            *_SOURCE,
            ("engine", "string?"),
            *(
                (name, "float64?")
                for name in (
                    "running",
                    "waiting",
                    "kv_usage",
                    "preemptions_total",
                    "prompt_tokens_total",
                    "generation_tokens_total",
                )
            ),
            ("malformed_lines", "int64?"),
        ),
    ),
    "gap": (
        "telemetry_gaps",
        (*_SOURCE, ("kind", "string?"), ("error", "string?")),
    ),
}


def arrow_type(name: str) -> Any:
    """A short type name (without ``?``) as a pyarrow type."""
    import pyarrow as pa

    simple = {"int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_()}
    if name in simple:
        return simple[name]
    if name == "string":
        return pa.string()
    if name == "list<int64>":
        return pa.list_(pa.field("item", pa.int64(), nullable=False))
    if name == "map<string,int64>":
        return pa.map_(pa.string(), pa.int64())
    raise ValueError(f"no arrow type for {name!r}")


def arrow_schema(columns: list[tuple[str, str]], metadata: dict[str, str] | None = None) -> Any:
    """A pyarrow schema of (name, type) pairs; ``*_ns`` columns say their clock."""
    import pyarrow as pa

    out = []
    for name, kind in columns:
        meta = {"unit": "ns, loadgen monotonic clock"} if name.endswith("_ns") else None
        if name == "agent_wall_ns":
            meta = {"unit": "ns since the Unix epoch, the agent's wall clock"}
        base = kind.removesuffix("?")
        out.append(pa.field(name, arrow_type(base), nullable=kind != base, metadata=meta))
    return pa.schema(out, metadata=metadata)
