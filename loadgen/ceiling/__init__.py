"""``loadgen calibrate``: the client's own ceiling against the pinned built-in mock.

Owns measuring output tokens per CPU-second in two regimes, bursts and one
token per write (:mod:`~loadgen.ceiling.measure`), and saying what the
figures mean for this machine (:mod:`~loadgen.ceiling.report`).

May import: loadgen.clock, client, records, scenario, workload, target
(the mock process), execute (the drivers and the event loop). Never run,
scale, results or report.
"""

from loadgen.ceiling.measure import measure_ceiling
from loadgen.ceiling.report import caveats, ceiling_json, format_ceiling

__all__ = ["caveats", "ceiling_json", "format_ceiling", "measure_ceiling"]
