"""The step's telemetry as flat numbers, and the line report.md writes of them.

Owns :func:`telemetry_fields`, the flat view of a step's ``telemetry`` block
that steps.csv (``telemetry_<key>``, after every other column), the plots and
report.md use, and :func:`section`. The console says nothing of it.
"""

from __future__ import annotations

from loadgen.report.section import Section
from loadgen.summary import Mean, MeanMax, StepSummary

__all__ = ["section", "telemetry_fields"]


def _mean_max(block: MeanMax | Mean | None, prefix: str, out: dict[str, float]) -> None:
    if block is not None:
        out.update({f"{prefix}_{k}": float(v) for k, v in block.model_dump().items()})


def telemetry_fields(step: StepSummary) -> dict[str, float]:
    """The step's telemetry as flat numbers: all GPUs together and the server's gauges.

    Keys: ``gpu_count``, ``gpu_util_pct_mean/max``, ``gpu_mem_used_gib_peak``,
    ``gpu_power_w_mean``, ``gpu_energy_j``, ``gpu_j_per_output_token``,
    ``gpu_output_tokens_per_j``, ``server_{running,waiting}_{mean,max}``,
    ``server_kv_usage_pct_{mean,max}``, ``server_preemptions``, and
    ``prom_<name>_{mean,max,last}`` for each ``telemetry.prometheus`` query of
    one series; a key is absent when the step has no such value.
    """
    out: dict[str, float] = {}
    t = step.telemetry
    total = t.total if t is not None else None
    if total is not None:
        out["gpu_count"] = float(total.gpus)
        _mean_max(total.util_pct, "gpu_util_pct", out)
        if total.mem_used_bytes is not None:
            out["gpu_mem_used_gib_peak"] = total.mem_used_bytes.peak / 2**30
        _mean_max(total.power_w, "gpu_power_w", out)
        energy = {
            "gpu_energy_j": total.energy_j,
            "gpu_j_per_output_token": total.j_per_output_token,
            "gpu_output_tokens_per_j": total.output_tokens_per_j,
        }
        out.update({k: v for k, v in energy.items() if v is not None})
    server = t.server if t is not None else None
    if server is not None:
        _mean_max(server.running, "server_running", out)
        _mean_max(server.waiting, "server_waiting", out)
        kv: dict[str, float] = {}
        _mean_max(server.kv_usage, "server_kv_usage_pct", kv)
        out.update({k: v * 100.0 for k, v in kv.items()})
        if server.preemptions is not None:
            out["server_preemptions"] = float(server.preemptions)
    prom = t.prometheus if t is not None else None
    for name, q in prom.queries.items() if prom is not None else ():
        found = {"mean": q.mean, "max": q.max, "last": q.last}
        out.update({f"prom_{name}_{k}": v for k, v in found.items() if v is not None})
    return out


#: report.md's telemetry line: a field, and how it reads
_TELEMETRY_TEXT = {
    "gpu_util_pct_mean": "GPU util mean {:.0f}%",
    "gpu_util_pct_max": "max {:.0f}%",
    "gpu_mem_used_gib_peak": "memory peak {:.1f} GiB",
    "gpu_power_w_mean": "power mean {:.0f} W",
    "gpu_energy_j": "energy {:,.0f} J",
    "gpu_j_per_output_token": "{:.3g} J/output token",
    "server_running_mean": "server running mean {:.1f}",
    "server_waiting_mean": "waiting mean {:.1f}",
    "server_waiting_max": "max {:.0f}",
    "server_kv_usage_pct_mean": "KV usage mean {:.0f}%",
    "server_kv_usage_pct_max": "max {:.0f}%",
    "server_preemptions": "preemptions {:.0f}",
}


def section(step: StepSummary) -> Section | None:
    """``telemetry: GPU util mean 71%, max 98%, ...`` (report.md; a step with only
    Prometheus queries' figures has no line) and the columns; None without telemetry."""
    tf = telemetry_fields(step)
    if not tf:
        return None
    text = ", ".join(p.format(tf[k]) for k, p in _TELEMETRY_TEXT.items() if k in tf)
    return Section(
        "telemetry",
        (f"telemetry: {text}",) if text else (),
        console=(),
        fields={f"telemetry_{k}": v for k, v in tf.items()},
        late_columns=True,
    )
