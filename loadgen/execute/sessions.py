"""Multi-turn sessions: a session's turns in order, each prompt carrying the last answers.

The answer text that really came back goes into the next turn's prompt, so a
prompt grows turn by turn as in a chat product and the server's prefix cache
matters. A failed turn ends its session (a user would not go on). Think time
is waited from the end of the previous answer, to an absolute deadline.

Imports: numpy, loadgen.clock, loadgen.records, loadgen.workload, loadgen.execute.drivers.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterator

import numpy as np

from loadgen.clock import sleep_until
from loadgen.execute.drivers import OnRecord, Send
from loadgen.workload.plan import Message
from loadgen.workload.source import SessionPlan, Workload

__all__ = ["SessionJob", "SessionRunner"]

#: An open-loop session: the plan and whether it is warm-up or ramp-up.
SessionJob = tuple[SessionPlan, bool, bool]


class SessionRunner:
    """Runs sessions for one step; request ids are numbered in the order turns are sent."""

    def __init__(
        self,
        workload: Workload,
        send: Send,
        on_record: OnRecord,
        rng: np.random.Generator,
        *,
        stop: Callable[[], bool] = lambda: False,
        ids: Iterator[int] | None = None,
    ) -> None:
        """``ids``: the request ids to number turns with (worker k of n: k, k+n, ...)."""
        self._workload = workload
        self._send = send
        self._on_record = on_record
        self._rng = rng
        self._stop = stop
        self._ids = ids if ids is not None else itertools.count()

    async def run(
        self,
        plan: SessionPlan,
        ramping: bool,
        scheduled: int | None,
        *,
        warmup: bool = False,
    ) -> None:
        history: list[Message] = []
        for turn in range(plan.turns):
            if turn and self._stop():
                return
            spec = self._workload.turn_request(
                plan, turn, history, next(self._ids), self._rng, warmup=warmup
            )
            if ramping:
                spec = dataclasses.replace(spec, ramp=True)
            rec = await self._send(spec, scheduled)
            self._on_record(rec)
            if not rec.ok or turn + 1 == plan.turns:
                return
            assert isinstance(spec.prompt, list)
            answer: Message = {"role": "assistant", "content": rec.answer_text or ""}
            history = [*spec.prompt, answer]
            wake = rec.end_ns + plan.think_ns[turn]
            if scheduled is not None:
                scheduled = wake
            if plan.think_ns[turn]:
                await sleep_until(wake)

    async def run_warmup(self, plan: SessionPlan, ramping: bool, scheduled: int | None) -> None:
        await self.run(plan, ramping, scheduled, warmup=True)

    async def run_job(self, job: SessionJob, ramping: bool, scheduled: int | None) -> None:
        plan, warmup, ramp = job
        await self.run(plan, ramping or ramp, scheduled, warmup=warmup)
