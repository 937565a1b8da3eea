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

Public names: Executor, LocalExecutor, StepOutcome, carry_out, LoopMonitor,
SATURATION, make_requester, pool_limit, loop_factory, quiet_gc.
"""
