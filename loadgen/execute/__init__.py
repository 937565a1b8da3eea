"""One process sends one plan: the executor, the drivers, sessions and the loop monitor.

Owns carrying out a step's :class:`~loadgen.workload.step.StepPlan` in this
process's event loop (:mod:`~loadgen.execute.executor`): closed and open loop
drivers that sleep until absolute deadlines (:mod:`~loadgen.execute.drivers`),
multi-turn sessions (:mod:`~loadgen.execute.sessions`), agent tasks
(:mod:`~loadgen.execute.agents`), the watch on this
process's CPU, loop lag and memory (:mod:`~loadgen.execute.monitor`), the
requester built from the scenario (:mod:`~loadgen.execute.requester`), the
event loop and garbage-collection settings measuring runs under
(:mod:`~loadgen.execute.loop`), and the open-file limit the planned load needs
(:mod:`~loadgen.execute.open_files`, checked before the run). The same code
runs in the run's process and in every worker.

May import: loadgen.clock, errors, records, scenario, summary, workload,
client, target (headers and TLS options). Never scale, run, results or report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loadgen.lazy import lazy_exports

if TYPE_CHECKING:
    from loadgen.execute.drivers import Budget, OnRecord, closed_loop, send_each
    from loadgen.execute.executor import Executor, LocalExecutor, StepOutcome
    from loadgen.execute.live import Live
    from loadgen.execute.loop import loop_factory, quiet_gc
    from loadgen.execute.monitor import Pulse, rss_bytes
    from loadgen.execute.open_files import ensure_open_files
    from loadgen.execute.requester import make_requester, pool_limit

_EXPORTS = {
    "Budget": "drivers",
    "Executor": "executor",
    "Live": "live",
    "LocalExecutor": "executor",
    "OnRecord": "drivers",
    "Pulse": "monitor",
    "StepOutcome": "executor",
    "closed_loop": "drivers",
    "ensure_open_files": "open_files",
    "loop_factory": "loop",
    "make_requester": "requester",
    "pool_limit": "requester",
    "quiet_gc": "loop",
    "rss_bytes": "monitor",
    "send_each": "drivers",
}

__all__ = [
    "Budget",
    "Executor",
    "Live",
    "LocalExecutor",
    "OnRecord",
    "Pulse",
    "StepOutcome",
    "closed_loop",
    "ensure_open_files",
    "loop_factory",
    "make_requester",
    "pool_limit",
    "quiet_gc",
    "rss_bytes",
    "send_each",
]

if not TYPE_CHECKING:  # mypy reads the imports above, and refuses a name not among them
    __getattr__ = lazy_exports(__name__, _EXPORTS)
