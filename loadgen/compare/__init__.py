"""Comparing runs: what ``loadgen compare`` and ``loadgen run --repeat`` decide.

Owns the runs read back from their results directories (``runs``), whether
their workloads may be compared at all (``workloads``), their steps matched
by load (``match``), the regression gate's expression and rule (``gate``)
with its request bootstrap (``resample``), the gate run over the matched
steps (``regression``), the run-to-run spread of repeats (``repeats``), and
what is decided differently for pooling runs (``pooling``). It decides; the
report renders what it decided (tables, overlays, comparison.md) and never
judges a regression itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loadgen.lazy import lazy_exports

if TYPE_CHECKING:
    from loadgen.compare.gate import GateResult, conclusions, parse_gate, step_value
    from loadgen.compare.match import MATCH_TOLERANCE, matched_steps
    from loadgen.compare.pooling import all_pooling, table_metrics
    from loadgen.compare.regression import run_gates
    from loadgen.compare.repeats import RepeatSpread, repeat_dirs, spread
    from loadgen.compare.runs import TABLE_METRICS, Run, default_out_dir, load_runs, profiles_text
    from loadgen.compare.workloads import RunLike, check_workloads

_EXPORTS = {
    "GateResult": "gate",
    "MATCH_TOLERANCE": "match",
    "RepeatSpread": "repeats",
    "Run": "runs",
    "RunLike": "workloads",
    "TABLE_METRICS": "runs",
    "all_pooling": "pooling",
    "check_workloads": "workloads",
    "conclusions": "gate",
    "default_out_dir": "runs",
    "load_runs": "runs",
    "matched_steps": "match",
    "parse_gate": "gate",
    "profiles_text": "runs",
    "repeat_dirs": "repeats",
    "run_gates": "regression",
    "spread": "repeats",
    "step_value": "gate",
    "table_metrics": "pooling",
}

__all__ = [
    "MATCH_TOLERANCE",
    "TABLE_METRICS",
    "GateResult",
    "RepeatSpread",
    "Run",
    "RunLike",
    "all_pooling",
    "check_workloads",
    "conclusions",
    "default_out_dir",
    "load_runs",
    "matched_steps",
    "parse_gate",
    "profiles_text",
    "repeat_dirs",
    "run_gates",
    "spread",
    "step_value",
    "table_metrics",
]

if not TYPE_CHECKING:  # mypy reads the imports above, and refuses a name not among them
    __getattr__ = lazy_exports(__name__, _EXPORTS)
