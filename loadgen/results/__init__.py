"""Records and an outcome -> summaries, live or after the fact.

Owns assembling the run's summary (:mod:`~loadgen.results.assemble`: one
function the live run and the rebuild both call, the only writer of a step's
summary; :mod:`~loadgen.results.tally`: the one fan-out of a step's records into
the columns it is made from), the sweep and its verdict
(:mod:`~loadgen.results.sweep`), what a run amounts to and so its exit code
(:mod:`~loadgen.results.outcome`), the hints that say why requests failed
(:mod:`~loadgen.results.hints`) and the rebuild of a killed run's summary
from its records (:mod:`~loadgen.results.rebuild`).

May import: loadgen._version, errors, redact, records, metrics, scenario,
summary, vocab. Never the load path (client, execute, scale, target, run) nor
report: the results are what the outputs are made from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loadgen.lazy import lazy_exports

if TYPE_CHECKING:
    from loadgen.results.assemble import (
        ServerCounters,
        StepExtras,
        load_point,
        start_summary,
        step_summary,
    )
    from loadgen.results.bins import EXACT_UP_TO, LOG_EDGES, ValueColumn
    from loadgen.results.context_points import MAX_POINTS
    from loadgen.results.files import (
        load_summary,
        read_summary,
        write_atomic,
        write_resolved_scenario,
        write_summary,
    )
    from loadgen.results.hints import TargetFacts, error_lines
    from loadgen.results.outcome import judge
    from loadgen.results.rebuild import PROFILE, can_rebuild, rebuild_summary
    from loadgen.results.samples import (
        SAMPLED_METRICS,
        RunSamples,
        StepSamples,
        read_run_samples,
        read_telemetry,
    )
    from loadgen.results.steps import inputs_word, is_pooling, load_label, load_value
    from loadgen.results.sweep import Point, make_sweep, verdict
    from loadgen.results.tally import StepTally

_EXPORTS = {
    "EXACT_UP_TO": "bins",
    "LOG_EDGES": "bins",
    "MAX_POINTS": "context_points",
    "PROFILE": "rebuild",
    "Point": "sweep",
    "RunSamples": "samples",
    "SAMPLED_METRICS": "samples",
    "ServerCounters": "assemble",
    "StepExtras": "assemble",
    "StepSamples": "samples",
    "StepTally": "tally",
    "TargetFacts": "hints",
    "ValueColumn": "bins",
    "can_rebuild": "rebuild",
    "error_lines": "hints",
    "inputs_word": "steps",
    "is_pooling": "steps",
    "judge": "outcome",
    "load_label": "steps",
    "load_point": "assemble",
    "load_summary": "files",
    "load_value": "steps",
    "make_sweep": "sweep",
    "read_run_samples": "samples",
    "read_summary": "files",
    "read_telemetry": "samples",
    "rebuild_summary": "rebuild",
    "start_summary": "assemble",
    "step_summary": "assemble",
    "verdict": "sweep",
    "write_atomic": "files",
    "write_resolved_scenario": "files",
    "write_summary": "files",
}

__all__ = [
    "EXACT_UP_TO",
    "LOG_EDGES",
    "MAX_POINTS",
    "PROFILE",
    "SAMPLED_METRICS",
    "Point",
    "RunSamples",
    "ServerCounters",
    "StepExtras",
    "StepSamples",
    "StepTally",
    "TargetFacts",
    "ValueColumn",
    "can_rebuild",
    "error_lines",
    "inputs_word",
    "is_pooling",
    "judge",
    "load_label",
    "load_point",
    "load_summary",
    "load_value",
    "make_sweep",
    "read_run_samples",
    "read_summary",
    "read_telemetry",
    "rebuild_summary",
    "start_summary",
    "step_summary",
    "verdict",
    "write_atomic",
    "write_resolved_scenario",
    "write_summary",
]

if not TYPE_CHECKING:  # mypy reads the imports above, and refuses a name not among them
    __getattr__ = lazy_exports(__name__, _EXPORTS)
