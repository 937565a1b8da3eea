"""Whether runs can be compared: their workloads, each against the first run (the baseline).

Owns the check of the workloads: each run's ``workload`` section,
``target.api`` and the arrival keys of ``load`` (:data:`LOAD_KEYS`) from its
resolved ``scenario.yaml``. Any difference refuses the comparison
(:class:`WorkloadMismatchError`, one line naming the first difference, exit
2) unless ``--allow-workload-mismatch``: a faster INT8 run on shorter prompts
says nothing of INT8. The sweep's load values are not compared: steps are
matched by load already (:mod:`loadgen.compare.match`). The environments
side by side are the report's (:mod:`loadgen.report.environment`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import yaml

from loadgen.errors import ScenarioError
from loadgen.summary import Summary

__all__ = [
    "LOAD_KEYS",
    "RunLike",
    "WorkloadMismatchError",
    "check_workloads",
    "workload_differences",
    "workload_of",
]

#: the keys of ``load`` that shape the arrivals (the rest plan the steps)
LOAD_KEYS = ("mode", "arrival", "burstiness", "trace", "trace_format")


class RunLike(Protocol):
    """What is read of a compared run (:class:`loadgen.compare.runs.Run`)."""

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


#: rows that differ between any two runs and are not flagged (they are what runs are)
