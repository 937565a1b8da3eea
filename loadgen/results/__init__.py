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

Public names: start_summary, step_summary, StepExtras, ServerCounters, StepTally,
load_point, make_sweep, verdict,
Point, judge, error_lines, unusable_reason, TargetFacts, rebuild_summary,
can_rebuild.
"""
