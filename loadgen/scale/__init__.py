"""The same plan over processes or hosts: the worker pool, one worker, Ray actors and their frames.

Owns spreading a step over N local worker processes
(:mod:`~loadgen.scale.pool`) or Ray actors (:mod:`~loadgen.scale.ray_pool`),
the worker's side (:mod:`~loadgen.scale.worker`), the frames between them
(:mod:`~loadgen.scale.frames`, :mod:`~loadgen.scale.messages`), the workers'
reports merged into one step outcome (:mod:`~loadgen.scale.merge`) and how
many workers ``load.workers: auto`` means (:mod:`~loadgen.scale.size`).
Every worker plans the step itself and keeps its share
(:mod:`loadgen.workload.deal`); records come back to the parent.

May import: loadgen.clock, errors, records, scenario, summary, workload, and
loadgen.execute (each worker is one executor). Never run, results or report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loadgen.lazy import lazy_exports

if TYPE_CHECKING:
    from loadgen.scale.pool import WorkerPool
    from loadgen.scale.ray_pool import RayPool
    from loadgen.scale.size import resolve_workers

_EXPORTS = {
    "RayPool": "ray_pool",
    "WorkerPool": "pool",
    "resolve_workers": "size",
}

__all__ = [
    "RayPool",
    "WorkerPool",
    "resolve_workers",
]

if not TYPE_CHECKING:  # mypy reads the imports above, and refuses a name not among them
    __getattr__ = lazy_exports(__name__, _EXPORTS)
