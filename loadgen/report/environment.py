"""The environments of ``loadgen compare``'s runs side by side, and the hardware warnings.

Owns the side-by-side table of ``summary.environment``, each row that differs
flagged: the dtype, quantization and KV cache dtype the server stated, and
apart from them what each scenario declared (``declared dtype``, ...: a run
that declared nothing shows none there, and is flagged); the GPUs' memory
held by the server's processes at the pre-flight, and the run's peak from the
step telemetry. Different GPUs, or different drivers, are one warning line
each (:func:`hardware_warnings`). Whether the workloads allow the comparison
at all is :mod:`loadgen.compare.workloads`'.
"""

from __future__ import annotations

from collections.abc import Sequence

from loadgen.compare import RunLike
from loadgen.report.blocks import Table
from loadgen.summary import Environment, Summary

__all__ = ["environment_rows", "environment_table", "hardware_warnings"]

#: a table cell with nothing in it
NONE = "–"
#: the row names of ``environment.declared``'s keys (``declared <name>``)
DECLARED_ROWS = {
    "dtype": "dtype",
    "quantization": "quantization",
    "kv_cache_dtype": "KV cache dtype",
}
GIB = float(1 << 30)


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
