"""Multi-turn sessions: a session's turns in order, each prompt carrying the last answers.

The answer text that really came back goes into the next turn's prompt, so a
prompt grows turn by turn as in a chat product and the server's prefix cache
matters. A failed turn ends its session (a user would not go on). Think time
is waited from the end of the previous answer, to an absolute deadline.

``sessions.state: server`` (the Responses API): each turn after the first
sends only its new message and ``previous_response_id`` (the id the last
answer came back with), and every turn asks the server to keep its answer;
the server then holds the conversation. The prompt is made exactly as for
``state: client`` (the same draws: the two states send the same
conversation), and its planned length counts the whole conversation, as
the server's usage does.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterator

import numpy as np

from loadgen.client import is_messages
from loadgen.clock import sleep_until
from loadgen.execute.drivers import OnRecord, Send
from loadgen.workload import Message, RequestSpec, Session, SessionPlan, Workload

__all__ = ["SessionJob", "SessionRunner"]

#: An open-loop session: the plan and whether it is warm-up or ramp-up.
SessionJob = tuple[Session, bool, bool]


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
        sessions = workload.spec.sessions
        self._server_state = sessions is not None and sessions.state == "server"

    async def run(
        self,
        plan: Session,
        ramping: bool,
        scheduled: int | None,
        *,
        warmup: bool = False,
    ) -> None:
        assert isinstance(plan, SessionPlan)
        history: list[Message] = []
        previous: str | None = None  # state server: the last answer's response id
        for turn in range(plan.turns):
            if turn and self._stop():
                return
            spec = self._workload.turn_request(
                plan, turn, history, next(self._ids), self._rng, warmup=warmup
            )
            prompt = spec.prompt
            assert is_messages(prompt)
            if self._server_state:
                spec = _chained(spec, prompt, len(history), previous)
            if ramping:
                spec = dataclasses.replace(spec, ramp=True)
            rec = await self._send(spec, scheduled)
            self._on_record(rec)
            if not rec.ok or turn + 1 == plan.turns:
                return
            if self._server_state and rec.response_id is None:
                return  # no id to chain: the server cannot go on with this conversation
            previous = rec.response_id
            answer: Message = {"role": "assistant", "content": rec.answer_text or ""}
            history = [*prompt, answer]
            wake = rec.end_ns + plan.think_ns[turn]
            if scheduled is not None:
                scheduled = wake
            if plan.think_ns[turn]:
                await sleep_until(wake)

    async def run_warmup(self, plan: Session, ramping: bool, scheduled: int | None) -> None:
        await self.run(plan, ramping, scheduled, warmup=True)

    async def run_job(self, job: SessionJob, ramping: bool, scheduled: int | None) -> None:
        plan, warmup, ramp = job
        await self.run(plan, ramping or ramp, scheduled, warmup=warmup)


def _chained(
    spec: RequestSpec, prompt: list[Message], known: int, previous: str | None
) -> RequestSpec:
    """A server-state turn: only the messages after the ``known`` ones the server holds
    (all of them on the first turn), chained to the ``previous`` answer."""
    new = prompt[known:] if previous is not None else prompt
    return dataclasses.replace(spec, prompt=new, server_state=True, previous_response_id=previous)
