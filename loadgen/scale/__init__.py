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

Public names: WorkerPool, RayPool, WorkerConfig, resolve_workers, frame,
read_frame, open_stream.
"""
