"""What ``loadgen compare`` says of the runs' environments and workloads.

Owns three checks across runs, each against the first run (the baseline):

- the workloads: each run's ``workload`` section, ``target.api`` and the
  arrival keys of ``load`` (:data:`LOAD_KEYS`) from its resolved
  ``scenario.yaml``. Any difference refuses the comparison
  (:class:`WorkloadMismatchError`, one line naming the first difference,
  exit 2) unless ``--allow-workload-mismatch``: a faster INT8 run on shorter
  prompts says nothing of INT8. The sweep's load values are not compared:
  steps are matched by load already.
- the environments (``summary.environment``): a side-by-side table, each row
  that differs flagged; the dtype, quantization and KV cache dtype the server
  stated, and apart from them what each scenario declared (``declared dtype``,
  ...: a run that declared nothing shows none there, and is flagged); the
  GPUs' memory held by the server's processes at the pre-flight, and the
  run's peak from the step telemetry.
- the hardware: different GPUs, or different drivers, are one warning line each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import yaml

from loadgen.errors import ScenarioError
from loadgen.report.blocks import Table
from loadgen.summary import Environment, Summary

__all__ = [
    "LOAD_KEYS",
    "WorkloadMismatchError",
    "check_workloads",
    "environment_rows",
    "environment_table",
    "hardware_warnings",
    "workload_differences",
    "workload_of",
]

#: the keys of ``load`` that shape the arrivals (the rest plan the steps)
LOAD_KEYS = ("mode", "arrival", "burstiness", "trace", "trace_format")
#: a table cell with nothing in it
NONE = "–"
#: the row names of ``environment.declared``'s keys (``declared <name>``)
DECLARED_ROWS = {
    "dtype": "dtype",
    "quantization": "quantization",
    "kv_cache_dtype": "KV cache dtype",
}
GIB = float(1 << 30)


class RunLike(Protocol):
    """What is read of a compared run (:class:`loadgen.report.compare.Run`)."""

    @property
    def name(self) -> str: ...
    @property
    def path(self) -> Path: ...
    @property
    def summary(self) -> Summary: ...


class WorkloadMismatchError(ScenarioError):
    """The runs' workloads differ: their numbers answer different questions."""


def _scenario_file(path: Path) -> Path | None:
    """The run's resolved scenario.yaml (a ``--repeat`` folder: its first repeat's)."""
    own = path / "scenario.yaml"
    if own.is_file():
        return own
    return next(iter(sorted(path.glob("*/scenario.yaml"))), None)


def workload_of(path: Path, summary: Summary) -> dict[str, Any]:
    """The compared part of a run's scenario, flattened to dotted keys.

    From its ``scenario.yaml``; a run without one falls back on its summary's
    workload description and api.
    """
    file = _scenario_file(path)
    data: Any = None
    if file is not None:
        try:
            data = yaml.safe_load(file.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError):
            data = None
    if not isinstance(data, dict):
        described = summary.workload.model_dump() if summary.workload else {}
        return _flat({"api": summary.api, "workload": described})
    target, load = (
        part if isinstance(part := data.get(key), dict) else {} for key in ("target", "load")
    )
    return _flat(
        {
            "api": target.get("api"),
            "workload": data.get("workload") or {},
            "load": {k: load[k] for k in LOAD_KEYS if k in load},
        }
    )


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, inner in value.items():
            out.update(_flat(inner, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: value}


def workload_differences(runs: Sequence[RunLike]) -> list[str]:
    """Each key on which a later run's workload differs from the first's, as words."""
    base = workload_of(runs[0].path, runs[0].summary)
    out: list[str] = []
    for run in runs[1:]:
        other = workload_of(run.path, run.summary)
        for key in sorted(set(base) | set(other)):
            a, b = base.get(key), other.get(key)
            if a != b:
                out.append(f"{key}: {_said(a)} ({runs[0].name}) vs {_said(b)} ({run.name})")
    return out


def _said(value: Any) -> str:
    return "unset" if value is None else str(value)


def check_workloads(runs: Sequence[RunLike], *, allow_mismatch: bool = False) -> list[str]:
    """Raise :class:`WorkloadMismatchError` naming the first difference; with
    ``allow_mismatch``, the differences as warning lines instead."""
    diffs = workload_differences(runs)
    if not diffs:
        return []
    if allow_mismatch:
        return [f"warning: the workloads differ: {d}" for d in diffs]
    more = f" (and {len(diffs) - 1} more)" if len(diffs) > 1 else ""
    msg = (
        f"compare: the runs' workloads differ: {diffs[0]}{more}; the same inputs are "
        "needed to compare, or pass --allow-workload-mismatch"
    )
    raise WorkloadMismatchError(msg)


def _gib(n: float | None) -> str:
    return NONE if n is None else f"{n / GIB:.1f} GiB"


def _gpus(env: Environment) -> str:
    if not env.gpus:
        return NONE
    names: dict[str, int] = {}
    for g in env.gpus:
        key = g.name or "unnamed"
        names[key] = names.get(key, 0) + 1
    return ", ".join(f"{n} x {name}" for name, n in names.items())


def _process_mem(env: Environment) -> float | None:
    used = [
        p.used_bytes for g in env.gpus or [] for p in g.processes or [] if p.used_bytes is not None
    ]
    return float(sum(used)) if used else None


def peak_process_mem(summary: Summary) -> tuple[float | None, str]:
    """The run's peak GPU memory from its step telemetry, and what it counts: the
    server's processes (summed over GPUs, the largest step), else all memory used."""
    best: dict[str, float] = {}
    for step in summary.steps:
        t = step.telemetry
        if t is None:
            continue
        for key in ("processes_mem_bytes", "mem_used_bytes"):
            peaks = [getattr(g, key).peak for g in t.gpus if getattr(g, key) is not None]
            if peaks:
                best[key] = max(best.get(key, 0.0), float(sum(peaks)))
    if "processes_mem_bytes" in best:
        return best["processes_mem_bytes"], "server processes"
    if "mem_used_bytes" in best:
        return best["mem_used_bytes"], "all memory used"
    return None, ""


def environment_rows(summary: Summary) -> dict[str, str]:
    """The environment of one run as (row name -> cell), in table order."""
    env = summary.environment
    if env is None:
        return {"recorded": "no (a run made before the environment block)"}
    rows = {
        "engine": env.engine or NONE,
        "engine version": env.engine_version or NONE,
        "model": env.model or NONE,
        "max_model_len": NONE if env.max_model_len is None else str(env.max_model_len),
        "dtype": env.dtype or NONE,
        "quantization": env.quantization or NONE,
        "KV cache dtype": env.kv_cache_dtype or NONE,
    }
    for key, value in env.declared.items():  # what the user said, apart from what was stated
        rows[f"declared {DECLARED_ROWS.get(key, key)}"] = value
    for key, value in sorted((env.cache_config or {}).items()):
        rows[f"cache {key}"] = value
    total = [g.mem_total_bytes for g in env.gpus or [] if g.mem_total_bytes is not None]
    rows |= {
        "GPUs": _gpus(env),
        "GPU memory": _gib(float(sum(total)) if total else None),
        "GPU driver": env.gpu_driver or NONE,
        "CUDA": env.cuda_version or NONE,
        "server GPU memory at start": _gib(_process_mem(env)),
    }
    peak, what = peak_process_mem(summary)
    rows["peak GPU memory"] = NONE if peak is None else f"{_gib(peak)} ({what})"
    rows |= {
        "loadgen": env.loadgen_version,
        "client host": env.client.hostname,
        "client CPUs": NONE if env.client.cpu_count is None else str(env.client.cpu_count),
        "client Python": env.client.python,
        "client OS": env.client.os,
    }
    return rows


#: rows that differ between any two runs and are not flagged (they are what runs are)
_UNFLAGGED = frozenset({"peak GPU memory", "server GPU memory at start"})


def environment_table(runs: Sequence[RunLike]) -> tuple[Table, list[str]]:
    """The environments side by side (``differs`` marks a row that is not the same in
    every run), and the names of the flagged rows."""
    each = [environment_rows(r.summary) for r in runs]
    names: list[str] = []
    for rows in each:
        names += [n for n in rows if n not in names]
    table_rows = []
    flagged = []
    for name in names:
        cells = [rows.get(name, NONE) for rows in each]
        differs = len(set(cells)) > 1 and name not in _UNFLAGGED
        if differs:
            flagged.append(name)
        table_rows.append((name, *cells, "differs" if differs else ""))
    header = ("environment", *(r.name for r in runs), "")
    return Table(header, tuple(table_rows)), flagged


def hardware_warnings(runs: Sequence[RunLike]) -> list[str]:
    """One warning line for different GPUs, one for different drivers (against the first run;
    runs that recorded none are not counted)."""
    envs = [(r.name, r.summary.environment) for r in runs]
    known = [(name, env) for name, env in envs if env is not None]
    out = []
    for what, read in (("GPUs", _gpus), ("GPU drivers", lambda e: e.gpu_driver or NONE)):
        said = [(name, v) for name, env in known if (v := read(env)) != NONE]
        if len({v for _, v in said}) > 1:
            each = "; ".join(f"{name}: {v}" for name, v in said)
            out.append(f"warning: the runs ran on different {what} ({each})")
    return out
