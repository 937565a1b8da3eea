"""``loadgen export DIR --parquet [OUT]``: a results directory as typed Parquet files.

Writes into OUT (default ``DIR/parquet``):

- ``records.parquet``: records.jsonl, one row per request, streamed in batches of
  :data:`BATCH_ROWS` (the run's records are never all held);
- ``steps.parquet``: summary.json's steps as steps.csv has them, typed, with each
  step's window stamps;
- ``telemetry_gpu.parquet``, ``telemetry_host.parquet``, ``telemetry_server.parquet``,
  ``telemetry_gaps.parquet``: telemetry.jsonl's lines by type, when the run had
  telemetry (each written, empty or not, so a query over it always finds it).

The schemas are :mod:`loadgen.export.schemas`'. Each file's key-value metadata
holds ``loadgen.run_id``, ``loadgen.version``, ``loadgen.metrics_profile`` and
``loadgen.clock_anchor`` (JSON ``{monotonic_ns, wall_ns}``: wall = wall_ns +
(t_ns - monotonic_ns)). A file is written beside its final name and renamed,
so a reader never sees half of one. A folder of ``--repeat`` runs (repeat-1 ...)
is exported repeat by repeat into OUT/repeat-k.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Iterator
from dataclasses import astuple
from pathlib import Path
from typing import Any

import orjson

from loadgen.errors import OutputError
from loadgen.export.extras import need
from loadgen.export.schemas import (
    STEP_TYPES,
    STEP_WINDOW,
    TELEMETRY,
    arrow_schema,
    family_type,
    record_columns,
)
from loadgen.records import Record, read_records
from loadgen.report.step_table import steps_table
from loadgen.results.files import load_summary
from loadgen.summary import Summary

__all__ = ["BATCH_ROWS", "repeat_folders", "write_parquet"]

#: records written per row group
BATCH_ROWS = 16_384


def repeat_folders(results_dir: Path) -> list[Path]:
    """A ``--repeat`` run's repeat-k folders that hold a summary, in k order (else [])."""
    found = [
        p
        for p in results_dir.glob("repeat-*")
        if p.name.removeprefix("repeat-").isdigit() and (p / "summary.json").is_file()
    ]
    return sorted(found, key=lambda p: int(p.name.removeprefix("repeat-")))


def write_parquet(results_dir: Path, out_dir: Path | None = None) -> list[Path]:
    """Write the Parquet files of ``results_dir`` into ``out_dir``; the paths written."""
    need("pyarrow", "parquet", "--parquet")
    out_dir = results_dir / "parquet" if out_dir is None else out_dir
    if not (results_dir / "summary.json").is_file() and (repeats := repeat_folders(results_dir)):
        return [p for r in repeats for p in write_parquet(r, out_dir / r.name)]
    summary = load_summary(results_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        return _write_all(results_dir, out_dir, summary)
    except OSError as exc:
        msg = f"{out_dir}: cannot write there: {exc.strerror or exc}"
        raise OutputError(msg) from None


def _write_all(results_dir: Path, out_dir: Path, summary: Summary) -> list[Path]:
    meta = _metadata(summary)
    written = [_write(out_dir / "steps.parquet", _steps_table(summary, meta))]
    records = results_dir / "records.jsonl"
    if records.is_file():
        written.append(_write_records(records, out_dir / "records.parquet", meta))
    telemetry = results_dir / "telemetry.jsonl"
    if telemetry.is_file():
        written += _write_telemetry(telemetry, out_dir, meta)
    return written


def _metadata(summary: Summary) -> dict[str, str]:
    return {
        "loadgen.run_id": summary.run_id,
        "loadgen.version": summary.loadgen_version,
        "loadgen.metrics_profile": summary.metrics_profile,
        "loadgen.clock_anchor": summary.clock_anchor.model_dump_json(),
    }


def _write(path: Path, table: Any) -> Path:
    import pyarrow.parquet as pq

    part = path.with_name(path.name + ".part")
    pq.write_table(table, part)
    os.replace(part, path)
    return path


# -- records


def _write_records(src: Path, path: Path, meta: dict[str, str]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = record_columns()
    schema = arrow_schema(columns, {**meta, "loadgen.source": "records.jsonl"})
    part = path.with_name(path.name + ".part")
    with pq.ParquetWriter(part, schema) as writer:
        for batch in _batches(read_records(src)):
            arrays = [pa.array(col, type=f.type) for col, f in zip(batch, schema, strict=True)]
            writer.write_table(pa.Table.from_arrays(arrays, schema=schema))
    os.replace(part, path)
    return path


def _batches(records: Iterable[Record]) -> Iterator[list[list[Any]]]:
    """Column lists of :data:`BATCH_ROWS` records at a time (Record's field order)."""
    rows: list[tuple[Any, ...]] = []
    for r in records:
        rows.append(astuple(r))
        if len(rows) == BATCH_ROWS:
            yield [list(col) for col in zip(*rows, strict=True)]
            rows = []
    if rows:
        yield [list(col) for col in zip(*rows, strict=True)]


# -- steps


def _steps_table(summary: Summary, meta: dict[str, str]) -> Any:
    import pyarrow as pa

    names, rows = steps_table(summary)
    for step, row in zip(summary.steps, rows, strict=True):
        row["errors"] = dict(step.requests.errors)  # a map, not steps.csv's text
        row.update({name: getattr(step, name) for name, _ in STEP_WINDOW})
        if row["started_ns"] == 0 and row["ended_ns"] == 0:  # never started
            row["started_ns"] = row["ended_ns"] = None
    columns = [
        (c, STEP_TYPES.get(c) or family_type(c, [row.get(c) for row in rows])) for c in names
    ]
    columns += list(STEP_WINDOW)
    schema = arrow_schema(columns, {**meta, "loadgen.source": "summary.json"})
    data = {name: [_cell(row.get(name), kind, name) for row in rows] for name, kind in columns}
    return pa.Table.from_pydict(data, schema=schema)


def _cell(value: Any, kind: str, column: str) -> Any:
    """A step value checked against its column's type (pyarrow would cut 1.5 to 1)."""
    base = kind.removesuffix("?")
    if value is None:
        return None
    ok = {
        "int64": type(value) is int,
        "float64": type(value) in (int, float),
        "bool": type(value) is bool,
    }.get(base, True)
    if base == "string":
        return str(value)
    if not ok:
        raise TypeError(f"steps.parquet: {column}: {value!r} is no {base}")
    return float(value) if base == "float64" else value


# -- telemetry


def _write_telemetry(src: Path, out_dir: Path, meta: dict[str, str]) -> list[Path]:
    import pyarrow as pa

    rows: dict[str, list[dict[str, Any]]] = {kind: [] for kind in TELEMETRY}
    with src.open("rb") as fh:
        for line in fh:
            try:
                row = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue  # a torn last line of a killed run
            if isinstance(row, dict) and row.get("type") in rows:
                rows[row["type"]].append(row)
    written = []
    for kind, (stem, columns) in TELEMETRY.items():
        schema = arrow_schema(list(columns), {**meta, "loadgen.source": "telemetry.jsonl"})
        data = {
            name: [_telemetry_cell(r.get(name), t.removesuffix("?")) for r in rows[kind]]
            for name, t in columns
        }
        written.append(_write(out_dir / f"{stem}.parquet", pa.Table.from_pydict(data, schema)))
    return written


def _telemetry_cell(value: Any, base: str) -> Any:
    """A telemetry value as its column's type; a value of another type is null."""
    if value is None or type(value) is bool:
        return None
    if base == "string":
        return value if isinstance(value, str) else None
    if not isinstance(value, int | float) or not math.isfinite(value):
        return None
    if base == "int64":
        return int(value) if float(value).is_integer() else None
    return float(value)
