"""One worker: carries out its share of each step and streams its records back.

A local worker is a process started by :mod:`loadgen.scale.pool` (the
spawn method: a fresh interpreter, no inherited threads or event loop),
entering at :func:`main`; a Ray actor (:mod:`loadgen.scale.ray_pool`)
enters at :func:`serve` over a TCP connection. The worker prepares the
same workload as the parent and plans each step itself (planning is
deterministic), keeping the share :func:`loadgen.workload.deal.deal` gives
it. Every latency is computed inside this process, from its own readings of
the monotonic clock, which on one machine is the parent's clock too.

A local worker ignores SIGINT and SIGTERM (the parent tells it when to
stop, so it can keep what it measured) and dies with its parent
(PR_SET_PDEATHSIG).

Protocol, in :mod:`loadgen.scale.frames` frames over a socket:

- parent to worker, pickled :data:`~loadgen.scale.messages.Command` values:
  ``Step`` (plan it: ``rank`` of ``ranks`` is the worker's share, -1 sits the
  step out), ``Go(t0_ns)`` (start at ``t0_ns``, in the worker's clock),
  ``Clock()`` (answered at once), ``Stop()``, ``Exit()``.
- worker to parent, frames whose first byte says what follows: ``H`` + a
  name (a Ray actor's first frame); ``S`` ready; ``E`` + text: setup failed;
  ``C`` + the worker's clock; ``P`` planned; ``R`` + records.jsonl rows;
  ``M`` + JSON ``[in flight, [send lags since the last M]]`` every
  :data:`LIVE_EVERY_S` of a step and once at its end (loadgen's own metrics);
  ``L`` + a :class:`~loadgen.execute.monitor.Pulse` in JSON (every
  :data:`PULSE_EVERY_S` during a step: in flight, CPU, loop lag, for the
  parent's live view); ``D`` + a :class:`~loadgen.scale.messages.StepDone`
  in JSON: the step is done.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import pickle
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection

import orjson

from loadgen.clock import now_ns, pause, sleep_until
from loadgen.errors import LoadgenError
from loadgen.execute import LocalExecutor, loop_factory, make_requester, pool_limit, quiet_gc
from loadgen.records import Record
from loadgen.scale.frames import frame, open_stream, read_frame
from loadgen.scale.messages import Clock, Command, Exit, Go, Step, StepDone, Stop
from loadgen.scenario import Scenario, TraceLoad
from loadgen.workload import Calibration, Workload, plan_step, with_own_media
from loadgen.workload.deal import deal

__all__ = ["FLUSH_AFTER_S", "PULSE_EVERY_S", "Connect", "WorkerConfig", "main", "serve"]

#: opens the worker's streams to the parent
Connect = Callable[[], Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]]

#: how long a finished request's row may wait in the worker before it goes to the parent
FLUSH_AFTER_S = 0.05
#: rows sent at once at most
FLUSH_ROWS = 256
#: how often a worker tells the parent its requests in flight and new send lags
LIVE_EVERY_S = 0.5
#: how often a worker tells the parent its pulse during a step
PULSE_EVERY_S = 0.25


@dataclass(slots=True)
class WorkerConfig:
    """What a worker needs to know: picklable, handed to the new process."""

    scenario: Scenario
    urls: list[str]  # the endpoints' base URLs (one, or several: target.routing)
    run_id: str
    calibration: Calibration | None
    index: int
    count: int
    parent_pid: int


def main(conn: Connection, config: WorkerConfig) -> None:
    """A local worker process's entry point: talks to the parent over ``conn``."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # the parent's to handle
        signal.signal(sig, signal.SIG_IGN)
    _die_with_parent(config.parent_pid)
    serve(lambda: open_stream(conn), config)


def serve(connect: Connect, config: WorkerConfig, hello: bytes | None = None) -> None:
    """Run a worker until the parent says exit or goes away.

    ``connect`` opens the streams to the parent; ``hello``, when given, is the
    first frame sent (a Ray actor names itself on a TCP connection with it).
    """
    try:
        with quiet_gc(), asyncio.Runner(loop_factory=loop_factory()) as runner:
            runner.run(_Worker(connect, config, hello).serve())
    except (BrokenPipeError, EOFError, ConnectionError):
        pass  # the parent is gone: nothing left to tell


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with_parent(parent_pid: int) -> None:
    """SIGKILL this process when the parent dies, even by kill -9 (Linux)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return
    prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent_pid:  # the parent died before the line above
        os._exit(1)


class _Worker:
    def __init__(self, connect: Connect, config: WorkerConfig, hello: bytes | None) -> None:
        self.connect = connect
        self.config = config
        self.hello = hello
        self.rows: list[bytes] = []
        self._flush_handle: asyncio.TimerHandle | None = None
        self._lags_sent = 0  # of the step's send lags, how many went to the parent
        self._commands: asyncio.Queue[Command] = asyncio.Queue()
        self._out: asyncio.StreamWriter | None = None

    async def serve(self) -> None:
        c = self.config
        sc = c.scenario
        reader, self._out = await self.connect()
        if self.hello is not None:
            self._write(self.hello)
        try:
            trace = sc.load if isinstance(sc.load, TraceLoad) else None
            workload = Workload.prepare(
                sc.workload,
                chat=sc.target.chat,
                trace=trace,
                calibration=c.calibration,
                models=sc.target.mix,
                api=sc.target.api,
            )
            limit = pool_limit(sc.load, c.count)
            executor = LocalExecutor(
                make_requester(sc, c.urls, c.run_id, limit, worker=c.index), workload
            )
        except (LoadgenError, OSError, ValueError) as exc:
            self._write(b"E" + str(exc).encode())
            await self._out.drain()
            self._out.close()
            return
        self._write(b"S")
        listener = asyncio.create_task(self._listen(reader))
        try:
            while True:
                command = await self._commands.get()
                if isinstance(command, Exit):
                    return
                if isinstance(command, Step):
                    await self._step(executor, workload, command)
                    await self._out.drain()
        finally:
            listener.cancel()
            await executor.aclose()
            self._out.close()

    async def _listen(self, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                command = pickle.loads(await read_frame(reader))
                if isinstance(command, Clock):  # answered at once: the parent times the round trip
                    self._write(b"C" + str(now_ns()).encode())
                else:
                    self._commands.put_nowait(command)
        except (asyncio.IncompleteReadError, OSError):
            self._commands.put_nowait(Exit())  # the parent is gone

    async def _step(self, executor: LocalExecutor, workload: Workload, step: Step) -> None:
        index, rank, ranks = step.index, step.rank, step.ranks
        if rank < 0:
            self._done(StepDone(sat_out=True))
            return
        sc = self.config.scenario
        plan = plan_step(workload, sc.load, step.mode, step.value, index, defer_media=True)
        share = with_own_media(workload, deal(plan, rank, ranks))  # its own media, no others'
        self._write(b"P")
        command = await self._commands.get()
        if not isinstance(command, Go):  # stopped before the start
            if isinstance(command, Exit):
                self._commands.put_nowait(command)
            self._done(StepDone(sat_out=True, interrupted=True))
            return
        t0_ns = command.t0_ns
        await sleep_until(t0_ns)  # every worker starts the step at the same moment
        run = asyncio.ensure_future(
            executor.run(share, index, self._on_record, t0_ns=t0_ns, worker=rank, workers=ranks)
        )
        live = asyncio.create_task(self._report_live(executor))
        pulses = asyncio.ensure_future(self._pulses(executor))
        while not run.done():
            waiter = asyncio.ensure_future(self._commands.get())
            await asyncio.wait({run, waiter}, return_when=asyncio.FIRST_COMPLETED)
            if waiter.done():
                if isinstance(waiter.result(), Stop | Exit):
                    run.cancel()  # the executor keeps what finished, cut requests as rows
                    await asyncio.wait({run})
                    if isinstance(waiter.result(), Exit):
                        self._commands.put_nowait(Exit())
            else:
                waiter.cancel()
        pulses.cancel()
        outcome = run.result()
        live.cancel()
        self._flush()
        self._live_frame(0, executor.live().send_lags_ns)  # the last lags; nothing in flight
        self._done(
            StepDone(
                health=outcome.health,
                interrupted=outcome.interrupted,
                in_flight=outcome.in_flight[0] if outcome.in_flight else [],
                http_versions=sorted(outcome.http_versions),
            )
        )

    async def _report_live(self, executor: LocalExecutor) -> None:
        """Every LIVE_EVERY_S: requests in flight and the send lags since the last report."""
        self._lags_sent = 0
        while True:
            await pause(LIVE_EVERY_S)
            live = executor.live()
            self._live_frame(live.in_flight, live.send_lags_ns)

    def _live_frame(self, in_flight: int, lags: list[int]) -> None:
        new = lags[self._lags_sent :]
        self._lags_sent += len(new)
        self._write(b"M" + orjson.dumps([in_flight, new]))

    async def _pulses(self, executor: LocalExecutor) -> None:
        """The executor's pulse to the parent every PULSE_EVERY_S, until cancelled."""
        while True:
            await pause(PULSE_EVERY_S)
            pulse = executor.pulse()
            if pulse is not None:
                self._write(b"L" + orjson.dumps(pulse))

    def _on_record(self, rec: Record) -> None:
        self.rows.append(orjson.dumps(rec, option=orjson.OPT_APPEND_NEWLINE))
        if len(self.rows) >= FLUSH_ROWS:
            self._flush()
        elif self._flush_handle is None:
            self._flush_handle = asyncio.get_running_loop().call_later(FLUSH_AFTER_S, self._flush)

    def _flush(self) -> None:
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        if self.rows:
            self._write(b"R" + b"".join(self.rows))
            self.rows.clear()

    def _write(self, message: bytes) -> None:
        """Queue ``message`` for the parent: never blocks the event loop."""
        assert self._out is not None
        self._out.write(frame(message))

    def _done(self, report: StepDone) -> None:
        self._write(b"D" + report.model_dump_json().encode())
