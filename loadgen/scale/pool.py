"""Worker processes on one machine: the parent's side (``load.workers``).

:class:`WorkerPool` starts N worker processes (:mod:`loadgen.scale.worker`),
and carries out each step with them: every worker plans the step and keeps
its share (:mod:`loadgen.workload.deal`); once all have planned, the parent
gives one common start a little ahead, and the workers send. Their records
stream back as rows, which the parent writes to the one ``records.jsonl``
and hands to the step's summary and progress display as they come.

Saturation is judged per worker, the worst one gating: the step's
:class:`~loadgen.summary.ClientHealth` holds each worker's own figures and,
at the top, the worst of each; ``cpu_util_total`` adds up every loadgen
process, the parent's included (the merging, and a worker's records moved
onto the parent's clock, are :mod:`loadgen.scale.merge`).

Ctrl-C or SIGTERM cancels the parent's step; the parent tells every worker
to stop and waits for what they measured. A worker that dies is reported
(its finished records are kept) and later steps are dealt among the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import pickle
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

import orjson

from loadgen.clock import NS_PER_MS, cpu_ns, now_ns
from loadgen.errors import LoadgenError
from loadgen.execute import Live, OnRecord, Pulse, StepOutcome
from loadgen.records import Record
from loadgen.scale.frames import frame, open_stream, read_frame
from loadgen.scale.merge import WorkerReport, shift_record, step_outcome
from loadgen.scale.messages import Clock, Command, Exit, Go, Step, StepDone, Stop
from loadgen.scale.worker import WorkerConfig, main
from loadgen.scenario import Scenario
from loadgen.workload import StepPlan, Workload, workers_for

__all__ = ["START_TIMEOUT_S", "Worker", "WorkerPool"]

#: how long a worker may take to start (import loadgen, read the workload)
START_TIMEOUT_S = 120.0
#: how long workers may take to stop a step after the parent asked them to
STOP_TIMEOUT_S = 30.0
#: the common start is this far after the last worker said it had planned
START_LEAD_NS = 20 * NS_PER_MS


@dataclass(slots=True)
class Worker:
    """The parent's view of one worker: a local process, or a Ray actor (``process`` None)."""

    index: int
    process: BaseProcess | None
    conn: Connection | None  # a local worker's socket until the event loop takes it over
    alive: bool = True
    reader: asyncio.StreamReader | None = None
    writer: asyncio.StreamWriter | None = None
    pump: asyncio.Task[None] | None = None
    planned: asyncio.Future[None] | None = None
    done: asyncio.Future[StepDone | None] | None = None
    clock: asyncio.Future[int] | None = None
    #: this worker's monotonic clock minus the parent's (0 on one machine: one clock)
    offset_ns: int = 0
    #: half the round trip of the best clock reading (0: not measured, one machine)
    offset_uncertainty_ns: int = 0
    #: finished records this worker sent during the current step
    records: int = 0
    #: requests in flight at its last ``M`` frame (0 between steps)
    in_flight: int = 0
    #: the worker's latest pulse of the current step (in flight, CPU, loop lag)
    pulse: Pulse | None = None

    def exit_text(self) -> str:
        if self.process is None:
            return "its Ray actor ended or its connection broke"
        code = self.process.exitcode
        if code is None:
            return "its connection broke"
        return f"exit code {code}" if code >= 0 else f"killed by signal {-code}"


@dataclass(slots=True)
class _Step:
    on_record: OnRecord
    error: BaseException | None = None
    died: list[str] = field(default_factory=list)


class WorkerPool:
    """N worker processes that carry out the run's steps together."""

    def __init__(self, workers: list[Worker]) -> None:
        self._workers = workers
        self._step: _Step | None = None
        self._send_lags: list[int] = []  # the step's, from every worker's M frames

    @classmethod
    def start(
        cls, scenario: Scenario, urls: list[str], run_id: str, workload: Workload, n: int
    ) -> WorkerPool:
        """Start ``n`` workers and wait until each is ready (LoadgenError if one is not)."""
        ctx = multiprocessing.get_context("spawn")
        workers = []
        for i in range(n):
            ours, theirs = ctx.Pipe(duplex=True)
            config = WorkerConfig(
                scenario, urls, run_id, workload.maker.calibration, i, n, os.getpid()
            )
            process = ctx.Process(
                target=main, args=(theirs, config), name=f"loadgen-worker-{i}", daemon=True
            )
            process.start()
            theirs.close()
            workers.append(Worker(i, process, ours))
        pool = cls(workers)
        try:
            for w in workers:
                pool._wait_ready(w)
        except BaseException:
            pool.close()
            raise
        return pool

    def _wait_ready(self, w: Worker) -> None:
        problem = f"did not start within {START_TIMEOUT_S:g} s"
        assert w.conn is not None and w.process is not None
        try:
            if w.conn.poll(START_TIMEOUT_S):
                message = w.conn.recv_bytes()
                if message == b"S":
                    return
                problem = message[1:].decode(errors="replace")
        except (EOFError, OSError):
            w.process.join(timeout=5)
            problem = f"ended at start ({w.exit_text()})"
        raise LoadgenError(f"worker {w.index}: {problem}")

    def live(self) -> Live:
        """Every live worker's requests in flight (as of its last report, within
        LIVE_EVERY_S) and the step's send lags they reported."""
        return Live(sum(w.in_flight for w in self._workers if w.alive), self._send_lags)

    @property
    def size(self) -> int:
        return sum(w.alive for w in self._workers)

    async def step(
        self, plan: StepPlan, index: int, mode: str, value: float, on_record: OnRecord
    ) -> StepOutcome:
        """Carry out step ``index`` with every live worker; see the module docstring."""
        loop = asyncio.get_running_loop()
        await self.connect()
        alive = [w for w in self._workers if w.alive]
        if not alive:
            raise LoadgenError("every worker process has died")
        ranks = workers_for(plan, len(alive))
        state = self._step = _Step(on_record)
        self._send_lags = []
        cpu0, wall0 = cpu_ns(), now_ns()
        for w in alive:
            w.planned, w.done, w.records = loop.create_future(), loop.create_future(), 0
            w.pulse = None
        interrupted = False
        try:
            for rank, w in enumerate(alive):
                self._send(w, Step(index, mode, value, rank if rank < ranks else -1, ranks))
            await self._wait(alive, "planned")
            t0 = now_ns() + START_LEAD_NS
            for w in alive:
                self._send(w, Go(t0 + w.offset_ns))
            await self._wait(alive, "done")
        except asyncio.CancelledError:
            interrupted = True
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            for w in alive:
                self._send(w, Stop())
            async with asyncio.timeout(STOP_TIMEOUT_S):
                await self._wait(alive, "done")
        finally:
            self._step = None
        if state.error is not None:
            raise state.error
        wall = now_ns() - wall0
        parent_cpu = (cpu_ns() - cpu0) / wall if wall > 0 else 0.0
        reports = [
            WorkerReport(w.index, w.offset_ns, w.done.result()) for w in alive if w.done is not None
        ]
        outcome = step_outcome(reports, parent_cpu)
        outcome.interrupted = outcome.interrupted or interrupted
        outcome.health.warnings += state.died
        return outcome

    def pulse(self) -> Pulse | None:
        """The workers' latest pulses as one: in flight summed, the worst CPU and lag."""
        pulses = [(w.index, w.pulse) for w in self._workers if w.alive and w.pulse is not None]
        if self._step is None or not pulses:
            return None
        cpus = [p.cpu_util for _, p in pulses if p.cpu_util is not None]
        lags = [p.loop_lag_p99_ms for _, p in pulses if p.loop_lag_p99_ms is not None]
        return Pulse(
            in_flight=sum(p.in_flight for _, p in pulses),
            cpu_util=max(cpus) if cpus else None,
            loop_lag_p99_ms=max(lags) if lags else None,
            warnings=tuple(f"worker {i}: {t}" for i, p in pulses for t in p.warnings),
        )

    async def connect(self) -> None:
        """The event loop takes every worker's socket over (once) and reads from it."""
        loop = asyncio.get_running_loop()
        for w in self._workers:
            if w.alive and w.writer is None and w.conn is not None:
                w.reader, w.writer = await open_stream(w.conn)
                w.conn = None
            if w.alive and w.pump is None and w.reader is not None:
                w.pump = loop.create_task(self._pump(w, w.reader))

    async def measure_clocks(self, rounds: int = 8) -> None:
        """Each worker's clock offset from the parent's: the reading with the shortest round trip.

        For workers on other machines (Ray): their monotonic clocks share no
        zero with the parent's. offset = worker reading - midpoint of the round
        trip, good to half the round trip.
        """
        await self.connect()
        loop = asyncio.get_running_loop()
        for w in self._workers:
            best: tuple[int, int] | None = None
            for _ in range(rounds):
                w.clock = loop.create_future()
                sent = now_ns()
                self._send(w, Clock())
                async with asyncio.timeout(10):
                    theirs = await w.clock
                back = now_ns()
                sample = (back - sent, theirs - (sent + back) // 2)
                best = sample if best is None or sample < best else best
            assert best is not None
            w.offset_uncertainty_ns, w.offset_ns = (best[0] + 1) // 2, best[1]

    @property
    def clock_uncertainty_ns(self) -> int:
        """The worst worker's clock-offset uncertainty (0: one machine, one clock)."""
        return max((w.offset_uncertainty_ns for w in self._workers), default=0)

    def _send(self, w: Worker, command: Command) -> None:
        if w.alive and w.writer is not None:
            w.writer.write(frame(pickle.dumps(command)))

    async def _wait(self, workers: list[Worker], what: str) -> None:
        # asyncio.wait, not gather: a cancelled step must leave these futures to wait on again
        futures = {getattr(w, what) for w in workers}
        await asyncio.wait(futures)
        state = self._step
        if state is not None and state.error is not None:
            raise state.error

    async def _pump(self, w: Worker, reader: asyncio.StreamReader) -> None:
        """Every message worker ``w`` sends, until its end."""
        try:
            while True:
                self._message(w, await read_frame(reader))
        except (asyncio.IncompleteReadError, OSError):
            self._died(w)

    def _message(self, w: Worker, message: bytes) -> None:
        """One message from ``w``: rows, planned, or done."""
        state = self._step
        kind, body = message[:1], message[1:]
        if kind == b"R" and state is not None:
            try:
                for line in body.splitlines():
                    rec = Record(**orjson.loads(line))
                    if w.offset_ns:
                        shift_record(rec, -w.offset_ns)
                    w.records += 1
                    state.on_record(rec)
            except Exception as exc:  # the parent could not keep it (a full disk): end the step
                state.error = exc
                self._resolve_all()
        elif kind == b"M":
            in_flight, lags = orjson.loads(body)
            w.in_flight = int(in_flight)
            self._send_lags.extend(lags)
        elif kind == b"L" and state is not None:
            fields = orjson.loads(body)
            w.pulse = Pulse(**{**fields, "warnings": tuple(fields.get("warnings", ()))})
        elif kind == b"C" and w.clock is not None and not w.clock.done():
            w.clock.set_result(int(body))
        elif kind == b"P" and w.planned is not None and not w.planned.done():
            w.planned.set_result(None)
        elif kind == b"D" and w.done is not None and not w.done.done():
            w.in_flight = 0
            if w.planned is not None and not w.planned.done():
                w.planned.set_result(None)
            w.done.set_result(StepDone.model_validate_json(body))

    def _died(self, w: Worker) -> None:
        if not w.alive:
            return
        w.alive = False
        state = self._step
        if state is not None:  # mid-step: say how it ended (closing, close() reaps it)
            if w.process is not None:
                w.process.join(timeout=1)
            state.died.append(
                f"worker {w.index} died during the step ({w.exit_text()}): its {w.records} "
                "finished records are kept, its share of the load was missing from then on"
                + (f"; later steps run on {self.size}" if self.size else "")
            )
        for future in (w.planned, w.done):
            if future is not None and not future.done():
                future.set_result(None)

    def _resolve_all(self) -> None:
        for w in self._workers:
            self._send(w, Stop())
            for future in (w.planned, w.done):
                if future is not None and not future.done():
                    future.set_result(None)

    async def aclose(self) -> None:
        """Tell every worker to exit and wait for it (a little; then it is killed)."""
        for w in self._workers:
            self._send(w, Exit())
            if w.writer is not None:
                with contextlib.suppress(OSError):
                    await w.writer.drain()
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self.close)
        for w in self._workers:
            if w.pump is not None:
                w.pump.cancel()
            if w.writer is not None:
                w.writer.close()

    def close(self) -> None:
        """Wait a little for every worker to exit, then kill what is left."""
        for w in self._workers:
            if w.alive and w.conn is not None:  # never taken over by the loop: still blocking
                with contextlib.suppress(OSError):
                    w.conn.send(Exit())
        for w in self._workers:
            if w.process is not None:
                w.process.join(timeout=5)
                if w.process.is_alive():
                    w.process.kill()
                    w.process.join(timeout=5)
            w.alive = False
            if w.conn is not None:
                w.conn.close()
        self.release()

    def release(self) -> None:
        """What else the pool holds (a Ray pool: its actors and cluster connection)."""
